#pragma once
/// Label selectors as the API machinery evaluates them
/// (metav1.LabelSelectorAsSelector): matchLabels and matchExpressions with
/// In, NotIn, Exists and DoesNotExist, all ANDed. A present selector with no
/// requirements matches everything; an absent one (nullopt) nothing.

#include <optional>

#include "compiler/k8s/objects.h"

namespace policy::k8s {

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
