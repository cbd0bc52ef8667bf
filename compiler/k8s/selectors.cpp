#include "compiler/k8s/selectors.h"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/support/json_writer.h"

namespace policy::k8s {

bool Matches(const LabelSelector& selector, const StringMap& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    const std::string* have = Find(labels, key);
    if (have == nullptr || *have != value) return false;
  }
  for (const SelectorRequirement& r : selector.match_expressions) {
    const std::string* have = Find(labels, r.key);
    bool in = have != nullptr && std::find(r.values.begin(), r.values.end(), *have) != r.values.end();
    switch (r.op) {
      case SelectorOp::kIn: if (!in) return false; break;
      case SelectorOp::kNotIn: if (in) return false; break;  // an absent label is not in
      case SelectorOp::kExists: if (have == nullptr) return false; break;
      case SelectorOp::kDoesNotExist: if (have != nullptr) return false; break;
      default: return false;  // Gt/Lt are not label selector operators (validation refuses them)
    }
  }
  return true;
}

bool Matches(const std::optional<LabelSelector>& selector, const StringMap& labels) {
  return selector.has_value() && Matches(*selector, labels);
}

std::string RequirementText(const SelectorRequirement& r) {
  switch (r.op) {
    case SelectorOp::kIn: return fmt::format("{} in ({})", r.key, fmt::join(r.values, ","));
    case SelectorOp::kNotIn: return fmt::format("{} notin ({})", r.key, fmt::join(r.values, ","));
    case SelectorOp::kExists: return r.key;
    case SelectorOp::kDoesNotExist: return "!" + r.key;
    case SelectorOp::kGt: return fmt::format("{} > {}", r.key, r.values.empty() ? "" : r.values[0]);
    case SelectorOp::kLt: return fmt::format("{} < {}", r.key, r.values.empty() ? "" : r.values[0]);
  }
  return r.key;
}

std::string SelectorText(const std::optional<LabelSelector>& selector) {
  if (!selector) return "<none>";
  std::vector<std::string> parts;
  for (const auto& [key, value] : selector->match_labels) parts.push_back(fmt::format("{}={}", key, value));
  for (const SelectorRequirement& r : selector->match_expressions) parts.push_back(RequirementText(r));
  return parts.empty() ? "<everything>" : fmt::format("{}", fmt::join(parts, ","));
}

std::string CanonicalText(const std::optional<LabelSelector>& selector) {
  if (!selector) return "nothing";
  std::vector<std::string> parts;
  for (const auto& [key, value] : selector->match_labels) {
    parts.push_back(fmt::format("{} In [{}]", JsonQuote(key), JsonQuote(value)));
  }
  for (const SelectorRequirement& r : selector->match_expressions) {
    std::vector<std::string> values;
    for (const std::string& v : r.values) values.push_back(JsonQuote(v));
    std::sort(values.begin(), values.end());
    parts.push_back(fmt::format("{} {} [{}]", JsonQuote(r.key), ToString(r.op), fmt::join(values, ",")));
  }
  std::sort(parts.begin(), parts.end());
  return fmt::format("{{{}}}", fmt::join(parts, "; "));
}

}  // namespace policy::k8s
