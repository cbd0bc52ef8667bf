#include "k8s/object_reader.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace policy::k8s {

std::string_view ItemKindOf(std::string_view list_kind) {
  if (list_kind.size() > 4 && list_kind.substr(list_kind.size() - 4) == "List") {
    return list_kind.substr(0, list_kind.size() - 4);
  }
  return {};
}

bool ReadObjects(const Source& source, ObjectVisitor& visitor, DiagnosticSink& diags, InputFormat format) {
  if (format == InputFormat::kYaml) return ReadYamlObjects(source, visitor, diags);
  if (format == InputFormat::kJson) return ReadJsonObjects(source, visitor, diags);
  std::string_view text = source.Text();
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  // JSON (which goes on as YAML at a `---` line: a YAML stream whose first
  // documents are JSON).
  if (i < text.size() && (text[i] == '{' || text[i] == '[')) return ReadJsonObjects(source, visitor, diags);
  return ReadYamlObjects(source, visitor, diags);
}

bool CheckDuplicateKeys(const Document& doc, uint32_t id, DiagnosticSink& diags) {
  const Document::Node& map = doc.node(id);
  uint32_t pairs = map.count / 2;
  if (pairs < 2) return true;
  auto key = [&](uint32_t i) { return doc.node(doc.child(map.first + 2 * i)).text; };
  auto report = [&](uint32_t first, uint32_t second) {
    NodeRef a(&doc, doc.child(map.first + 2 * first));
    NodeRef b(&doc, doc.child(map.first + 2 * second));
    if (a.GetSpan().begin > b.GetSpan().begin) std::swap(a, b);
    Diagnostic& d = diags.Error(DiagCode::kDuplicateKey, b.GetSpan(),
                                fmt::format("duplicate key `{}`", b.Text()), "defined again here");
    d.secondary.push_back({a.GetSpan(), "first defined here"});
    d.help = "a key may appear once per mapping; Kubernetes would keep only one of the values";
    return false;
  };
  if (pairs <= 16) {
    for (uint32_t i = 1; i < pairs; ++i) {
      for (uint32_t j = 0; j < i; ++j) {
        if (key(i) == key(j)) return report(j, i);
      }
    }
    return true;
  }
  std::vector<uint32_t> order(pairs);
  for (uint32_t i = 0; i < pairs; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return key(a) != key(b) ? key(a) < key(b) : a < b;
  });
  for (uint32_t i = 1; i < pairs; ++i) {
    if (key(order[i]) == key(order[i - 1])) return report(order[i - 1], order[i]);
  }
  return true;
}

}  // namespace policy::k8s
