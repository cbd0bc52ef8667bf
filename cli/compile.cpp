// `policyc compile`: runs the compiler pipeline on a policy file and prints
// the requested stage.

#include <cstdio>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "compiler/passes/pipeline.h"
#include "compiler/syntax/parser.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc compile FILE.policy --emit=ast|ir

Compiles a policy file and prints the requested stage:
  ast   the syntax tree, as an indented S-expression
  ir    the typed IR after lowering (names resolved, defs inlined)
Errors are reported with file:line:col and exit status 2.
)";

}  // namespace

int RunCompile(const std::vector<std::string>& argv) {
  std::string error;
  auto args = Args::Parse(argv, {{"emit"}, {"help", false}}, &error);
  if (!args) {
    fmt::print(stderr, "policyc compile: {}\n\n{}", error, kUsage);
    return kExitBadInput;
  }
  if (args->Has("help")) {
    fmt::print("{}", kUsage);
    return kExitOk;
  }
  if (args->Positional().size() != 1) {
    fmt::print(stderr, "policyc compile: give exactly one policy file\n\n{}", kUsage);
    return kExitBadInput;
  }
  std::string emit = args->Get("emit", "ast");
  if (emit != "ast" && emit != "ir") {
    fmt::print(stderr, "policyc compile: `--emit={}` is not available; this build emits `ast` and `ir`\n", emit);
    return kExitBadInput;
  }
  const std::string& path = args->Positional()[0];
  DiagnosticSink diags;
  std::unique_ptr<Source> source = ReadInput(path, diags);
  if (!source) {
    std::fputs(RenderAll(diags).c_str(), stderr);
    return kExitBadInput;
  }
  if (emit == "ast") {
    std::optional<syntax::Module> module = syntax::ParsePolicyFile(*source, diags);
    if (!module) {
      std::fputs(RenderAll(diags).c_str(), stderr);
      return kExitBadInput;
    }
    fmt::print("{}", syntax::PrintModule(*module));
    return kExitOk;
  }
  sema::TypeTable types;
  sema::Schema schema(types);
  std::unique_ptr<passes::CompiledFile> compiled = passes::CompileFile(*source, types, schema, diags);
  if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);
  if (!compiled) return kExitBadInput;
  fmt::print("{}", ir::Print(compiled->program));
  return kExitOk;
}

}  // namespace policy::cli
