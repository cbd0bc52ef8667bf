#pragma once
/// The front half of the compiler as one call: parse, check, lower.

#include <memory>
#include <optional>

#include "compiler/ir/ir.h"
#include "compiler/passes/lower.h"
#include "compiler/sema/check.h"
#include "compiler/syntax/ast.h"

namespace policy::passes {

/// Everything compiling one policy file produced; keep it alive while the
/// program is used (spans point into the source).
struct CompiledFile {
  syntax::Module module;
  sema::CheckedModule checked;
  ir::Program program;
};

/// Compiles `source`; null with diagnostics on any error. The IR verifier
/// runs on the result; its problems abort (they are compiler bugs).
/// `params` (a profile's plugin args) must name params the file declares,
/// with values of their types; a mismatch is a diagnostic at the param.
std::unique_ptr<CompiledFile> CompileFile(const Source& source, sema::TypeTable& types, const sema::Schema& schema,
                                          DiagnosticSink& diags, const ParamValues* params = nullptr);

}  // namespace policy::passes
