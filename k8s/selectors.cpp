#include "k8s/selectors.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/json_writer.h"

namespace policy::k8s {

bool Matches(const LabelSelector& selector, const StringMap& labels) {
  return MatchesWith(selector, [&](std::string_view key) -> std::optional<std::string_view> {
    const std::string* have = Find(labels, key);
    if (have == nullptr) return std::nullopt;
    return *have;
  });
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
