#pragma once
/// Parses policy files (grammar/Policy.g4) into the AST. ANTLR stays inside
/// this folder: callers see only the Module and diagnostics.

#include <optional>

#include "support/diagnostic.h"
#include "compiler/syntax/ast.h"

namespace policy::syntax {

/// Parses `source`. On any syntax error returns nullopt; every error found
/// is a diagnostic (the parser recovers and goes on to find more).
std::optional<Module> ParsePolicyFile(const Source& source, DiagnosticSink& diags);

// Pieces embedded in other files (the YAML policy form): `text` stands at
// byte `base` of `source`, so spans land where the user typed. Each adds to
// `module` and returns nullopt after reporting errors.
std::optional<ExprId> ParseEmbeddedExpr(const Source& source, uint32_t base, std::string_view text, Module& module,
                                        DiagnosticSink& diags);
/// `x in C` or `(k, v) in C`.
std::optional<std::pair<Binder, ExprId>> ParseEmbeddedEach(const Source& source, uint32_t base, std::string_view text,
                                                           Module& module, DiagnosticSink& diags);
/// A reason or detail: the text of a string without its quotes.
std::optional<Template> ParseEmbeddedTemplate(const Source& source, uint32_t base, std::string_view text, Module& module,
                                              DiagnosticSink& diags);
/// Parses a policy file in the YAML form (objects of `kind: Policy`).
std::optional<Module> ParseYamlPolicyFile(const Source& source, DiagnosticSink& diags);
/// The YAML form for `.yaml`, `.yml` and `.json` files, the DSL otherwise.
std::optional<Module> ParseAnyPolicyFile(const Source& source, DiagnosticSink& diags);

std::optional<TypeExpr> ParseEmbeddedType(const Source& source, uint32_t base, std::string_view text,
                                          DiagnosticSink& diags);

}  // namespace policy::syntax
