// `policyc check`: with policy files only, type-checks and lints them.
// (Placing a pod against a cluster, `--cluster` and `--pod`, comes with the
// interpreter.)

#include <cstdio>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "compiler/sema/check.h"
#include "compiler/syntax/parser.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc check POLICY.policy...

Type-checks and lints policy files: every error and warning with its file,
line and column. Exit status 0 when there are no errors, 2 otherwise.
)";

}  // namespace

int RunCheck(const std::vector<std::string>& argv) {
  std::string error;
  auto args = Args::Parse(argv, {{"policy", true, true}, {"help", false}}, &error);
  if (!args) {
    fmt::print(stderr, "policyc check: {}\n\n{}", error, kUsage);
    return kExitBadInput;
  }
  if (args->Has("help")) {
    fmt::print("{}", kUsage);
    return kExitOk;
  }
  std::vector<std::string> files = args->Positional();
  for (const std::string& f : args->GetAll("policy")) files.push_back(f);
  if (files.empty()) {
    fmt::print(stderr, "policyc check: give at least one policy file\n\n{}", kUsage);
    return kExitBadInput;
  }
  sema::TypeTable types;
  sema::Schema schema(types);
  bool failed = false;
  std::vector<std::unique_ptr<Source>> sources;  // diagnostics point into them
  for (const std::string& path : files) {
    DiagnosticSink diags;
    std::unique_ptr<Source> source = Source::FromFile(path, &error);
    if (!source) {
      diags.Report({DiagCode::kIoError, Severity::kError, fmt::format("cannot read `{}`: {}", path, error), {}, {}, {}, {}});
      std::fputs(RenderAll(diags).c_str(), stderr);
      failed = true;
      continue;
    }
    std::optional<syntax::Module> module = syntax::ParsePolicyFile(*source, diags);
    std::optional<sema::CheckedModule> checked;
    if (module) checked = sema::Check(*module, types, schema, diags);
    if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);
    if (!checked) {
      failed = true;
      continue;
    }
    std::vector<std::string> names;
    for (const syntax::PolicyDecl& p : module->policies) names.push_back(p.name);
    size_t warnings = diags.All().size();
    fmt::print("{}: {} polic{} ({}), {}\n", path, names.size(), names.size() == 1 ? "y" : "ies",
               fmt::join(names, ", "),
               warnings == 0 ? std::string("no problems")
                             : fmt::format("{} warning{}", warnings, warnings == 1 ? "" : "s"));
    sources.push_back(std::move(source));
  }
  return failed ? kExitBadInput : kExitOk;
}

}  // namespace policy::cli
