#pragma once
/// Suggestions that edit what a pod's DRA claims ask, while DynamicResources
/// rejects it (suggest.h).
///
/// A claim is an object of its own (made from the pod's template, or
/// named by the pod): each edit replaces the claim in the cluster while
/// the pod is decided again, and puts it back. For every request of every
/// claim still to allocate: the most devices fewer than asked that open a
/// node (a bisection over the count), each CEL selector dropped, and each
/// other DeviceClass in its place. They share the single edits' budget.

#include <cstddef>
#include <optional>
#include <set>
#include <vector>

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"
#include "runtime/engine/suggest.h"

namespace policy::engine {

class ClaimEditor {
 public:
  /// `feasible`: the rows the pod fits already (a suggestion names only
  /// others); `budget`: claim edits tried at most (SuggestOptions::edits).
  ClaimEditor(Engine& engine, Cluster& cluster, const std::set<rt::RowId>& feasible, size_t budget);
  /// A pod whose template claims are not made yet (kube-scheduler: `pod
  /// "NS/NAME": ResourceClaim not created yet`): the resourceclaim
  /// controller's work, tried as a cluster change — alone, else with each
  /// claim edit (in the template) that then opens a node. False when the
  /// pod has no claim to make.
  bool TemplateClaims(const k8s::Pod& pod, std::vector<Suggestion>& out);
  /// For every request of every claim still to allocate: fewer devices,
  /// each CEL selector dropped, each other DeviceClass.
  void Edits(const k8s::Pod& pod, std::vector<Suggestion>& out);

 private:
  std::optional<Suggestion> TryClaim(const k8s::Pod& pod, const k8s::ResourceClaim& original,
                                     k8s::ResourceClaim edited, Change change);

  Engine& engine_;
  Cluster& cluster_;
  const std::set<rt::RowId>& feasible_;
  size_t budget_;
  size_t tried_ = 0;  // claim edits tried
};

}  // namespace policy::engine
