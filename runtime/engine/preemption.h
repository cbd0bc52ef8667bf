#pragma once
/// kube-scheduler 1.31's DefaultPreemption (PostFilter) for a pod that fits
/// nowhere: which pods to evict, and from which node, so that it fits.
///
/// Candidates are the nodes whose first failing plugin failed in a way
/// removing pods can resolve (not UnschedulableAndUnresolvable). On each,
/// every pod of lower priority is removed; if the pod then fits, as many as
/// possible are put back (those whose eviction would violate a
/// PodDisruptionBudget first, the more important first), and the rest are
/// the victims (SelectVictimsOnNode: `schedule` and the extender's preempt
/// verb alike). The node is picked by kube's criteria in order: fewest PDB
/// violations, lowest highest victim priority, smallest sum of victim
/// priorities, fewest victims, latest start of the highest-priority
/// victims, then the first in node order. Every candidate is evaluated.
///
/// Pods are read as the table holds them (rt::NodeTable::PodsBoundTo:
/// priority, start time, uid) and budgets from the cluster's storage
/// objects; trying a node sets pods aside and puts them back, so the
/// cluster is left as it was.

#include <optional>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/explain.h"

namespace policy::engine {

/// A pod to evict, as the table knows it.
struct Victim {
  std::string key;  ///< namespace/name
  std::string uid;  ///< metadata.uid; empty when the pod had none
  int32_t priority = 0;
  std::string start_time;
};

/// The victims one node needs (kube's SelectVictimsOnNode).
struct NodeVictims {
  std::vector<Victim> victims;  ///< the more important first
  int violations = 0;           ///< how many of them a PodDisruptionBudget protects
};

struct Preemption {
  std::optional<std::string> node;  ///< where the pod fits once the victims are gone
  std::vector<Victim> victims;       ///< in eviction order
  /// kube-scheduler's postscript when no node was found:
  /// `preemption: 0/N nodes are available: ...`.
  std::string postscript;
};

/// Whether the plan's pod passes every filter on `row` now.
bool FitsOn(Engine& engine, const Cluster& cluster, PodPlan& plan, rt::RowId row);

/// The pods of `row` to evict so that the plan's pod fits there: every pod
/// of lower priority than it set aside; if it then fits, each is put back
/// where it still fits — those a budget protects first, the more important
/// first within each — and the rest are the victims. nullopt when no pod
/// has lower priority or the pod does not fit with them all gone. The
/// cluster is left as it was.
std::optional<NodeVictims> SelectVictimsOnNode(Engine& engine, Cluster& cluster, PodPlan& plan, rt::RowId row);

/// Finds the node and victims for `pod`, which `placement` (every node
/// explained, none feasible) says fits nowhere; with `evict` false (no
/// bound pod has lower priority) only the postscript. The cluster is left
/// as it was; the caller evicts the victims and binds the pod.
Preemption Preempt(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const rt::Placement& placement, bool evict);

}  // namespace policy::engine
