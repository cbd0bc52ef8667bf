#include "compiler/passes/pipeline.h"

#include <cstdio>
#include <cstdlib>

#include "compiler/passes/lower.h"
#include "compiler/syntax/parser.h"

namespace policy::passes {

std::unique_ptr<CompiledFile> CompileFile(const Source& source, sema::TypeTable& types, const sema::Schema& schema,
                                          DiagnosticSink& diags) {
  std::optional<syntax::Module> module = syntax::ParseAnyPolicyFile(source, diags);
  if (!module) return nullptr;
  auto file = std::make_unique<CompiledFile>();
  file->module = std::move(*module);
  std::optional<sema::CheckedModule> checked = sema::Check(file->module, types, schema, diags);
  if (!checked) return nullptr;
  file->checked = std::move(*checked);
  file->checked.module = &file->module;
  file->program = Lower(file->checked, types);
  // The verifier is cheap: it runs in every build, and a problem is a compiler bug.
  for (const std::string& problem : ir::Verify(file->program)) {
    std::fprintf(stderr, "policyc: IR verifier: %s\n", problem.c_str());
    std::abort();
  }
  return file;
}

}  // namespace policy::passes
