#pragma once
/// kube-scheduler 1.31's DefaultPreemption (PostFilter) for a pod that fits
/// nowhere: which pods to evict, and from which node, so that it fits.
///
/// Candidates are the nodes whose first failing plugin failed in a way
/// removing pods can resolve (not UnschedulableAndUnresolvable). On each,
/// every pod of lower priority is removed; if the pod then fits, as many as
/// possible are put back (those whose eviction would violate a
/// PodDisruptionBudget first, the more important first), and the rest are
/// the victims. The node is picked by kube's criteria in order: fewest PDB
/// violations, lowest highest victim priority, smallest sum of victim
/// priorities, fewest victims, latest start of the highest-priority
/// victims, then the first in node order. Every candidate is evaluated.

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/k8s/objects.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/explain.h"

namespace policy::engine {

struct Preemption {
  std::optional<std::string> node;  ///< where the pod fits once the victims are gone
  std::vector<const k8s::Pod*> victims;  ///< in eviction order
  /// kube-scheduler's postscript when no node was found:
  /// `preemption: 0/N nodes are available: ...`.
  std::string postscript;
};

/// Whether kube-scheduler reports this first failing reason as
/// UnschedulableAndUnresolvable (preemption cannot help on that node).
bool Unresolvable(const std::string& plugin, const std::string& reason);

/// Finds the node and victims for `pod`, which `placement` (every node
/// explained, none feasible) says fits nowhere. `bound` holds every pod
/// bound to a node of `cluster`, by namespace/name. The cluster is left as
/// it was; the caller evicts the victims and binds the pod.
Preemption Preempt(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const rt::Placement& placement,
                   const std::unordered_map<std::string, k8s::Pod>& bound,
                   const std::vector<k8s::PodDisruptionBudget>& pdbs);

}  // namespace policy::engine
