#include "runtime/dra/selector_check.h"

#include <fmt/format.h>

#include "compiler/cel/compile.h"

namespace policy::dra {
namespace {

// Bytes [begin, end) of a selector's expression in its file, when it is
// written on one line there; else the object.
Span SelectorSpan(Span object, const k8s::CelSelector& s, uint32_t begin, uint32_t end) {
  if (!object.Valid() || s.line == 0 || s.expression.find('\n') != std::string::npos) return object;
  uint32_t at = object.source->LineStart(s.line);
  std::string_view text = object.source->Text();
  for (uint32_t column = 1; column < s.column && at < text.size();) {  // columns count characters
    ++at;
    if (at >= text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80) ++column;
  }
  uint32_t from = std::min<uint32_t>(at + begin, static_cast<uint32_t>(text.size()));
  return Span{object.source, from, std::min<uint32_t>(std::max(at + end, from + 1), static_cast<uint32_t>(text.size()))};
}

}  // namespace

void CheckCelSelectors(const std::vector<k8s::CelSelector>& selectors, Span where, DiagnosticSink& diags) {
  for (const k8s::CelSelector& s : selectors) {
    std::shared_ptr<const cel::Program> program = cel::Compile(s.expression);
    for (const cel::Problem& p : program->problems) {
      Span at = SelectorSpan(where, s, p.begin, p.end);
      Diagnostic& d = diags.Warning(p.syntax ? DiagCode::kCelSyntax : DiagCode::kCelType, at, p.message,
                                    p.syntax ? "not CEL" : "here");
      d.help = "kube-scheduler fails allocating any claim that meets this selector (`CEL compile error`)";
    }
    if (program->TooComplex()) {
      Diagnostic& d = diags.Warning(DiagCode::kCelTooComplex,
                                    SelectorSpan(where, s, 0, static_cast<uint32_t>(s.expression.size())),
                                    "the API server would refuse this selector: " + cel::TooComplexMessage(program->cost),
                                    "this selector");
      d.help = fmt::format("kube validates a selector's worst-case cost when it is written; evaluated here, it is "
                           "cancelled at cost {} as kube-scheduler's is (`actual cost limit exceeded`)", cel::kCostLimit);
    }
  }
}

void CheckCelSelectors(const k8s::DeviceClaimSpec& spec, Span where, DiagnosticSink& diags) {
  for (const k8s::DeviceRequest& r : spec.requests) {
    for (const k8s::DeviceSubRequest& sub : r.alternatives) CheckCelSelectors(sub.selectors, where, diags);
  }
}

}  // namespace policy::dra
