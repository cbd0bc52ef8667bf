#pragma once
/// What kube-scheduler's node-level predicates match, written once for every
/// C++ caller (the engine's volume checks, suggestions, the interpreter's
/// cluster view, manifest lints); the stdlib's NodeAffinity and
/// TaintToleration policies say the same in the policy language, and
/// tests/unit/k8s/node_match_test.cpp holds the two to one answer.
///
///   RequirementHolds  a NodeSelectorRequirement (labels.Requirement.Matches):
///                     In, NotIn, Exists, DoesNotExist; Gt and Lt compare
///                     integers — a value or an operand that is not one (or
///                     not exactly one operand) matches nothing
///   TermMatches       a NodeSelectorTerm: every requirement holds, matchFields
///                     against the node's name; an empty term matches nothing
///   Tolerates         v1.Toleration.ToleratesTaint: effect (empty: any), key
///                     (empty: any), then Exists, or Equal with equal values
///   Repels            TaintToleration's filter for one taint: NoSchedule or
///                     NoExecute (PreferNoSchedule only scores), and no
///                     toleration of the pod tolerates it

#include <optional>
#include <string_view>

#include "k8s/objects.h"

namespace policy::k8s {

/// `have`: the node's value for the requirement's key, nullopt when absent.
bool RequirementHolds(const SelectorRequirement& r, std::optional<std::string_view> have);

/// Whether `value` is a valid label value (validation.IsValidLabelValue: at
/// most 63 characters, alphanumerics with `-`, `_`, `.` inside).
bool IsLabelValue(std::string_view value);
/// Whether kube's labels.NewRequirement accepts each of the term's label
/// requirements: a term that does not parse matches no node
/// (nodeaffinity's lazy-error selector), whatever its other requirements.
bool TermParses(const NodeSelectorTerm& term);

/// `label(key)` gives a node label (std::optional<std::string_view>); `name`
/// is what matchFields' metadata.name sees (volume node affinity checks a
/// node made of labels alone: its name is empty).
template <class Label>
bool TermMatches(const NodeSelectorTerm& term, Label&& label, std::string_view name) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  if (!TermParses(term)) return false;
  for (const SelectorRequirement& r : term.match_expressions) {
    if (!RequirementHolds(r, label(std::string_view(r.key)))) return false;
  }
  for (const SelectorRequirement& r : term.match_fields) {
    if (!RequirementHolds(r, r.key == "metadata.name" ? std::optional<std::string_view>(name) : std::nullopt)) return false;
  }
  return true;
}

bool Tolerates(const Toleration& t, std::string_view key, std::string_view value, TaintEffect effect);
inline bool Tolerates(const Toleration& t, const Taint& taint) { return Tolerates(t, taint.key, taint.value, taint.effect); }
/// Whether one of `tolerations` tolerates the taint.
bool ToleratedBy(const std::vector<Toleration>& tolerations, std::string_view key, std::string_view value,
                 TaintEffect effect);
inline bool ToleratedBy(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return ToleratedBy(tolerations, taint.key, taint.value, taint.effect);
}
/// Whether the taint keeps a pod with `tolerations` off its node at filtering.
inline bool Repels(const std::vector<Toleration>& tolerations, std::string_view key, std::string_view value,
                   TaintEffect effect) {
  return effect != TaintEffect::kPreferNoSchedule && !ToleratedBy(tolerations, key, value, effect);
}
inline bool Repels(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return Repels(tolerations, taint.key, taint.value, taint.effect);
}

}  // namespace policy::k8s
