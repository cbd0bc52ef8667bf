#include "support/diagnostic.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/utf8.h"

namespace policy {
namespace {

struct CodeInfo {
  std::string_view code;
  std::string_view name;
  std::string_view description;
};

constexpr CodeInfo kCodes[] = {
#define DIAG(name, code, short_name, description) {code, short_name, description},
#include "support/diagnostic_codes.def"
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

// How much of a line a snippet shows: a line longer than kLongLine bytes
// is cut to the bytes around the span (a one-line 50 MB JSON file must not
// print 100 MB).
constexpr uint32_t kLongLine = 160;
constexpr uint32_t kContextBefore = 60;
constexpr uint32_t kContextAfter = 80;

// The part [from, to) of a source line as a person can read it: control
// characters and bytes that are not UTF-8 as `\xNN`, the rest as it is.
// `columns` gets, for each byte offset from `from` to `to` inclusive, the
// display column it starts at.
std::string Printable(std::string_view text, uint32_t from, uint32_t to, std::vector<size_t>& columns) {
  std::string out;
  size_t column = 0;
  columns.assign(to - from + 1, 0);
  for (uint32_t i = from; i < to;) {
    columns[i - from] = column;
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = Utf8SequenceLength(text.substr(0, to), i);
    if (c == '\t' || (len > 0 && c >= 0x20 && c != 0x7F)) {
      out.append(text.substr(i, len == 0 ? 1 : len));
      for (size_t k = 1; k < len; ++k) columns[i - from + k] = column;
      column += 1;
      i += len == 0 ? 1 : static_cast<uint32_t>(len);
    } else {
      out += fmt::format("\\x{:02X}", c);
      column += 4;
      ++i;
    }
  }
  columns[to - from] = column;
  return out;
}

// Appends the source line of `label` (a window of it when it is long), a
// caret marker under its span and the label text. `gutter` is the width
// of the line-number column.
void RenderSnippet(const Label& label, size_t gutter, std::string& out) {
  const Source& source = *label.span.source;
  std::string_view text = source.Text();
  LineCol start = source.Locate(label.span.begin);
  uint32_t line_begin = source.LineStart(start.line);
  uint32_t line_end = line_begin + static_cast<uint32_t>(source.LineText(start.line).size());
  uint32_t begin = std::clamp(label.span.begin, line_begin, line_end);
  uint32_t end = std::clamp(label.span.end, begin, line_end);
  // The window: the whole line, or the span with some context, cut at
  // character boundaries.
  uint32_t from = line_begin, to = line_end;
  if (line_end - line_begin > kLongLine) {
    from = begin - std::min(begin - line_begin, kContextBefore);
    to = std::min(line_end, std::max(end, begin + 1) + kContextAfter);
  }
  auto continuation = [&](uint32_t i) { return i < line_end && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
  while (from < begin && continuation(from)) ++from;
  while (to < line_end && continuation(to)) ++to;
  end = std::min(end, to);
  std::vector<size_t> columns;
  std::string shown = Printable(text, from, to, columns);
  std::string prefix = from > line_begin ? "..." : "";
  if (to < line_end) shown += "...";
  size_t caret = prefix.size() + columns[begin - from];
  size_t width = std::max<size_t>(1, columns[end - from] - columns[begin - from]);
  std::string marker(caret, ' ');
  marker += '^';
  marker.append(width - 1, '~');
  // Tabs keep their width so the caret lines up.
  std::string line = prefix + shown;
  for (size_t i = 0; i < line.size() && i < caret; ++i) {
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
