#pragma once
/// Diagnostics: user mistakes, collected so that one run shows every problem.
///
/// A diagnostic has a stable code (diagnostic_codes.def), a severity, a
/// message, a primary span with a label, secondary spans, notes and help.
/// Render() prints it with the source line and a caret, rustc-style.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/source.h"

namespace policy {

enum class DiagCode : uint16_t {
#define DIAG(name, code, short_name, description) name,
#include "support/diagnostic_codes.def"
#undef DIAG
};

/// The stable code, e.g. `K0203`.
std::string_view CodeString(DiagCode code);
/// The short name, e.g. `unknown-operator`.
std::string_view CodeName(DiagCode code);
/// The one-line description from the table.
std::string_view CodeDescription(DiagCode code);
/// Every code, in table order (for documentation and tests).
std::vector<DiagCode> AllCodes();

enum class Severity : uint8_t { kError, kWarning, kNote };

/// A span and what to say under it.
struct Label {
  Span span;
  std::string message;
};

struct Diagnostic {
  DiagCode code = DiagCode::kIoError;
  Severity severity = Severity::kError;
  std::string message;  ///< lower case, no final period, values in backticks
  Label primary;
  std::vector<Label> secondary;
  std::vector<std::string> notes;
  std::string help;
};

/// Renders one diagnostic: `error[K0203]: file:line:col: message`, then the
/// source line, a `^~~~` marker under the span with its label, secondary
/// spans the same way, then `= note:` and `= help:` lines.
std::string Render(const Diagnostic& diagnostic);

/// Collects diagnostics; the producer goes on after each one. A source held
/// by a std::shared_ptr stays alive while a diagnostic in the sink points
/// into it.
class DiagnosticSink {
 public:
  /// Adds `diagnostic`; returns it so callers may add notes.
  Diagnostic& Report(Diagnostic diagnostic);
  /// Shorthand for an error with a primary span and label.
  Diagnostic& Error(DiagCode code, Span span, std::string message, std::string label = {});
  Diagnostic& Warning(DiagCode code, Span span, std::string message, std::string label = {});
  /// Adds a secondary label to `diagnostic` (one of this sink's) and keeps
  /// its source alive; use it for a span into another file than the
  /// primary's (a label pushed directly is kept alive only through the
  /// primary's source).
  void AddSecondary(Diagnostic& diagnostic, Span span, std::string label);

  bool HasErrors() const { return error_count_ > 0; }
  size_t ErrorCount() const { return error_count_; }
  const std::vector<Diagnostic>& All() const { return diagnostics_; }
  /// Diagnostics ordered by file, then position (stable for equal positions).
  std::vector<Diagnostic> Sorted() const;
  /// Stop recording errors past this many (the count still grows).
  void SetErrorLimit(size_t limit) { error_limit_ = limit; }
  void Clear();

 private:
  void KeepAlive(const Span& span);

  std::vector<Diagnostic> diagnostics_;
  std::vector<std::shared_ptr<const Source>> sources_;  // what diagnostics point into
  size_t error_count_ = 0;
  size_t error_limit_ = 100;
};

/// Renders every diagnostic of `sink`, sorted, with a closing count line.
std::string RenderAll(const DiagnosticSink& sink);

}  // namespace policy
