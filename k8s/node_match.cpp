#include "k8s/node_match.h"

#include <algorithm>

#include "support/decimal.h"

namespace policy::k8s {

bool RequirementHolds(const SelectorRequirement& r, std::optional<std::string_view> have) {
  bool in = have && std::find(r.values.begin(), r.values.end(), *have) != r.values.end();
  switch (r.op) {
    case SelectorOp::kIn: return in;
    case SelectorOp::kNotIn: return !in;
    case SelectorOp::kExists: return have.has_value();
    case SelectorOp::kDoesNotExist: return !have.has_value();
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      if (!have || r.values.size() != 1) return false;
      std::optional<int64_t> a = ParseDecimalInt(*have), b = ParseDecimalInt(r.values[0]);
      if (!a || !b) return false;
      return r.op == SelectorOp::kGt ? *a > *b : *a < *b;
    }
  }
  return false;
}

bool Tolerates(const Toleration& t, std::string_view key, std::string_view value, TaintEffect effect) {
  if (t.effect && *t.effect != effect) return false;
  if (!t.key.empty() && t.key != key) return false;
  return t.op == TolerationOp::kExists || t.value == value;
}

bool ToleratedBy(const std::vector<Toleration>& tolerations, std::string_view key, std::string_view value,
                 TaintEffect effect) {
  for (const Toleration& t : tolerations) {
    if (Tolerates(t, key, value, effect)) return true;
  }
  return false;
}

bool IsLabelValue(std::string_view value) {
  if (value.empty()) return true;
  if (value.size() > 63) return false;
  auto alnum = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alnum(value.front()) || !alnum(value.back())) return false;
  for (char c : value) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool TermParses(const NodeSelectorTerm& term) {
  for (const SelectorRequirement& r : term.match_expressions) {
    // In, NotIn, Gt and Lt values are label values (Gt/Lt: integers, checked when matching).
    if (r.op != SelectorOp::kIn && r.op != SelectorOp::kNotIn) continue;
    for (const std::string& v : r.values) {
      if (!IsLabelValue(v)) return false;
    }
  }
  return true;
}

}  // namespace policy::k8s
