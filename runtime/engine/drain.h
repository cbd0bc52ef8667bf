#pragma once
/// Cluster compression, as kluster-capacity asks it: which nodes could be
/// drained with every pod they run placed elsewhere — by the engine, pod
/// by pod, with every plugin of the profile — and what the cluster would
/// lose in headroom. Greedy and exact: nodes are tried one after another
/// (the least requested first); a node whose pods all find a place is
/// drained (cordoned, its pods bound where they went) and the next is tried
/// against the cluster as that left it; a node with a pod that fits nowhere
/// is put back as it was, and that pod is what pins it.
///
/// Pods that go with their node are not moved: DaemonSet pods and mirror
/// (static) pods. The cluster is left drained as planned.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/objects.h"

namespace policy::engine {

class Engine;
class Cluster;

struct DrainOptions {
  /// The nodes to try, in this order; empty: every node, the least
  /// requested first (cpu and memory requested over allocatable).
  std::vector<std::string> nodes;
  size_t max_drained = SIZE_MAX;  ///< stop after this many nodes drained
};

struct PodMove {
  std::string pod;   ///< namespace/name
  std::string node;  ///< where it went
};

struct DrainedNode {
  std::string node;
  std::vector<PodMove> moves;         ///< in the order they were placed
  std::vector<std::string> go_along;  ///< DaemonSet and mirror pods, which leave with the node
};

struct PinnedNode {
  std::string node;
  std::string pod;      ///< the first of its pods that fit nowhere (namespace/name)
  std::string summary;  ///< why: kube-scheduler's summary for it then
  size_t movable = 0;   ///< how many of the node's pods were tried
};

struct Headroom {
  std::string resource;
  int64_t allocatable_before = 0, allocatable_after = 0;  ///< kube-scheduler's units (milli-cpu)
  int64_t free_before = 0, free_after = 0;
};

struct DrainPlan {
  std::vector<DrainedNode> drained;  ///< in the order they were drained
  std::vector<PinnedNode> pinned;
  std::vector<std::string> skipped;  ///< asked for but cordoned already or unknown
  std::vector<Headroom> headroom;    ///< cpu, memory and every extended resource a node has
};

/// Whether `pod` leaves with its node rather than being placed elsewhere.
bool GoesWithNode(const k8s::Pod& pod);

/// Plans the drain. `bound`: every pod bound to a node of `cluster`, whole;
/// `nodes`: the snapshot's nodes as objects (to cordon them).
DrainPlan PlanDrain(Engine& engine, Cluster& cluster, const std::unordered_map<std::string, k8s::Pod>& bound,
                    const std::vector<k8s::Node>& nodes, const DrainOptions& options = {});

}  // namespace policy::engine
