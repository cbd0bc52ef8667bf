#pragma once
/// Parses policy files (grammar/Policy.g4) into the AST. ANTLR stays inside
/// this folder: callers see only the Module and diagnostics.

#include <optional>

#include "compiler/support/diagnostic.h"
#include "compiler/syntax/ast.h"

namespace policy::syntax {

/// Parses `source`. On any syntax error returns nullopt; every error found
/// is a diagnostic (the parser recovers and goes on to find more).
std::optional<Module> ParsePolicyFile(const Source& source, DiagnosticSink& diags);

}  // namespace policy::syntax
