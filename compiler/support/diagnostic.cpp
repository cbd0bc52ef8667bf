#include "compiler/support/diagnostic.h"

#include <algorithm>

#include <fmt/format.h>

namespace policy {
namespace {

struct CodeInfo {
  std::string_view code;
  std::string_view name;
  std::string_view description;
};

constexpr CodeInfo kCodes[] = {
#define DIAG(name, code, short_name, description) {code, short_name, description},
#include "compiler/support/diagnostic_codes.def"
#undef DIAG
};

std::string_view SeverityWord(Severity severity) {
  switch (severity) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

// Number of characters (not bytes) in `text`.
size_t CharCount(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// Appends the source line of `label`, a caret marker under its span and the
// label text. `gutter` is the width of the line-number column.
void RenderSnippet(const Label& label, size_t gutter, std::string& out) {
  const Source& source = *label.span.source;
  LineCol start = source.Locate(label.span.begin);
  std::string_view line = source.LineText(start.line);
  uint32_t line_begin = source.LineStart(start.line);
  uint32_t line_end = line_begin + static_cast<uint32_t>(line.size());
  uint32_t span_end = std::clamp(label.span.end, label.span.begin, line_end);
  size_t width = CharCount(source.Text().substr(label.span.begin, span_end - std::min(span_end, label.span.begin)));
  if (width == 0) width = 1;
  std::string marker(start.column - 1, ' ');
  marker += '^';
  marker.append(width - 1, '~');
  // Tabs keep their width so the caret lines up.
  for (size_t i = 0; i < line.size() && i < marker.size(); ++i) {
    if (line[i] == '\t') marker[i] = '\t';
  }
  out += fmt::format("{:>{}} |\n", "", gutter);
  out += fmt::format("{:>{}} | {}\n", start.line, gutter, line);
  out += fmt::format("{:>{}} | {}", "", gutter, marker);
  if (!label.message.empty()) out += fmt::format(" {}", label.message);
  out += '\n';
}

}  // namespace

std::string_view CodeString(DiagCode code) { return kCodes[static_cast<size_t>(code)].code; }
std::string_view CodeName(DiagCode code) { return kCodes[static_cast<size_t>(code)].name; }
std::string_view CodeDescription(DiagCode code) {
  return kCodes[static_cast<size_t>(code)].description;
}

std::vector<DiagCode> AllCodes() {
  std::vector<DiagCode> codes;
  for (size_t i = 0; i < std::size(kCodes); ++i) codes.push_back(static_cast<DiagCode>(i));
  return codes;
}

std::string Render(const Diagnostic& d) {
  std::string out = fmt::format("{}[{}]: ", SeverityWord(d.severity), CodeString(d.code));
  if (d.primary.span.Valid()) {
    LineCol at = d.primary.span.source->Locate(d.primary.span.begin);
    out += fmt::format("{}:{}:{}: ", d.primary.span.source->Name(), at.line, at.column);
  }
  out += d.message;
  out += '\n';
  size_t gutter = 1;
  auto widen = [&](const Label& l) {
    if (!l.span.Valid()) return;
    gutter = std::max(gutter, fmt::format("{}", l.span.source->Locate(l.span.begin).line).size());
  };
  widen(d.primary);
  for (const Label& l : d.secondary) widen(l);
  if (d.primary.span.Valid()) RenderSnippet(d.primary, gutter, out);
  for (const Label& l : d.secondary) {
    if (!l.span.Valid()) continue;
    LineCol at = l.span.source->Locate(l.span.begin);
    out += fmt::format("{:>{}} = {}:{}:{}:\n", "", gutter, l.span.source->Name(), at.line, at.column);
    RenderSnippet(l, gutter, out);
  }
  for (const std::string& note : d.notes) out += fmt::format("{:>{}} = note: {}\n", "", gutter, note);
  if (!d.help.empty()) out += fmt::format("{:>{}} = help: {}\n", "", gutter, d.help);
  return out;
}

Diagnostic& DiagnosticSink::Report(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::kError) {
    ++error_count_;
    if (error_count_ > error_limit_) {
      static thread_local Diagnostic dropped;
      dropped = std::move(diagnostic);
      return dropped;
    }
  }
  KeepAlive(diagnostic.primary.span);
  for (const Label& label : diagnostic.secondary) KeepAlive(label.span);
  diagnostics_.push_back(std::move(diagnostic));
  return diagnostics_.back();
}

void DiagnosticSink::AddSecondary(Diagnostic& diagnostic, Span span, std::string label) {
  KeepAlive(span);
  diagnostic.secondary.push_back({span, std::move(label)});
}

void DiagnosticSink::KeepAlive(const Span& span) {
  if (!span.Valid()) return;
  if (!sources_.empty() && sources_.back().get() == span.source) return;
  std::shared_ptr<const Source> shared = span.source->weak_from_this().lock();
  if (shared && std::find(sources_.begin(), sources_.end(), shared) == sources_.end()) sources_.push_back(std::move(shared));
}

Diagnostic& DiagnosticSink::Error(DiagCode code, Span span, std::string message, std::string label) {
  return Report({code, Severity::kError, std::move(message), {span, std::move(label)}, {}, {}, {}});
}

Diagnostic& DiagnosticSink::Warning(DiagCode code, Span span, std::string message, std::string label) {
  return Report({code, Severity::kWarning, std::move(message), {span, std::move(label)}, {}, {}, {}});
}

std::vector<Diagnostic> DiagnosticSink::Sorted() const {
  std::vector<Diagnostic> sorted = diagnostics_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    const Span& x = a.primary.span;
    const Span& y = b.primary.span;
    if (x.Valid() != y.Valid()) return !x.Valid();
    if (!x.Valid()) return false;
    if (x.source != y.source) return x.source->Name() < y.source->Name();
    return x.begin < y.begin;
  });
  return sorted;
}

void DiagnosticSink::Clear() {
  diagnostics_.clear();
  sources_.clear();
  error_count_ = 0;
}

std::string RenderAll(const DiagnosticSink& sink) {
  std::string out;
  size_t warnings = 0;
  for (const Diagnostic& d : sink.Sorted()) {
    if (!out.empty()) out += '\n';
    out += Render(d);
    warnings += d.severity == Severity::kWarning;
  }
  if (sink.ErrorCount() > 0) {
    out += fmt::format("\n{} error{}", sink.ErrorCount(), sink.ErrorCount() == 1 ? "" : "s");
    if (sink.ErrorCount() > sink.All().size() - warnings) {
      out += fmt::format(" ({} shown)", sink.All().size() - warnings);
    }
    out += '\n';
  }
  return out;
}

}  // namespace policy
