#pragma once
/// Label selectors as the API machinery evaluates them
/// (metav1.LabelSelectorAsSelector): matchLabels and matchExpressions with
/// In, NotIn, Exists and DoesNotExist, all ANDed. A present selector with no
/// requirements matches everything; an absent one (nullopt) nothing.

#include <algorithm>
#include <optional>
#include <string_view>

#include "k8s/objects.h"

namespace policy::k8s {

/// Matches over labels held in any form: `find(key)` gives the value of
/// label `key` (std::optional<std::string_view>), nullopt when absent.
template <class Find>
bool MatchesWith(const LabelSelector& selector, Find&& find) {
  for (const auto& [key, value] : selector.match_labels) {
    std::optional<std::string_view> have = find(std::string_view(key));
    if (!have || *have != value) return false;
  }
  for (const SelectorRequirement& r : selector.match_expressions) {
    std::optional<std::string_view> have = find(std::string_view(r.key));
    bool in = have && std::find(r.values.begin(), r.values.end(), *have) != r.values.end();
    switch (r.op) {
      case SelectorOp::kIn: if (!in) return false; break;
      case SelectorOp::kNotIn: if (in) return false; break;  // an absent label is not in
      case SelectorOp::kExists: if (!have) return false; break;
      case SelectorOp::kDoesNotExist: if (have) return false; break;
      default: return false;  // Gt/Lt are not label selector operators (validation refuses them)
    }
  }
  return true;
}

bool Matches(const LabelSelector& selector, const StringMap& labels);
bool Matches(const std::optional<LabelSelector>& selector, const StringMap& labels);

/// The selector as kubectl prints one: `app=web,tier in (a,b),debug,!canary`;
/// `<none>` for an absent selector, `<everything>` for an empty one.
/// A requirement as kubectl prints it: `gpu in (a100,h100)`, `!spot`, `gen > 3`.
std::string RequirementText(const SelectorRequirement& r);
std::string SelectorText(const std::optional<LabelSelector>& selector);

/// A canonical text of the selector: equal for selectors that select the same
/// pods by the same requirements (keys sorted, values sorted).
std::string CanonicalText(const std::optional<LabelSelector>& selector);

}  // namespace policy::k8s
