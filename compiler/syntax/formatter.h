#pragma once
/// `policyc fmt`: the one canonical layout of a `.policy` file
/// (docs/language.md, "Layout"). A policy starts its line, a blank line
/// before it; each member starts a line indented two spaces; `reason` and
/// `detail` start lines indented four; tokens are spaced one way
/// (`a + b`, `f(x, y)`, `m[k]`, `-x`, `x: list<string>?`); a line break the
/// author put inside a member is kept, the next line two columns past its
/// member's; comments stay where they were, on their own lines or at the
/// end of a line; runs of blank lines become one. Formatting reads back to
/// the same program (the tokens are the same, in the same order) and is
/// idempotent.

#include <optional>
#include <string>

#include "support/diagnostic.h"
#include "support/source.h"

namespace policy::syntax {

/// The file in the canonical layout; nullopt with diagnostics when it does
/// not parse (a file with errors is never rewritten).
std::optional<std::string> FormatPolicyFile(const Source& source, DiagnosticSink& diags);

}  // namespace policy::syntax
