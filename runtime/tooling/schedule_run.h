#pragma once
/// `policyc schedule`'s run without its flags and printing
/// (../shared/spec/policyc-schedule.md): the queue a snapshot and manifests
/// make (workloads stand for their replicas, a DaemonSet for one pod per
/// node), priorities as admission gives them, --fill's copies, a pod's
/// `-o jsonl` record and the result --output-cluster writes.

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "k8s/objects.h"
#include "runtime/tooling/output_cluster.h"

namespace policy::rt {
class NodeTable;
}
namespace policy::engine {
struct Outcome;
class Scheduler;
class Cluster;
}  // namespace policy::engine

namespace policy::tooling {

/// A DaemonSet pod pinned to `node` as its controller pins it
/// (ReplaceDaemonSetPodNodeNameNodeAffinity): every required term gets
/// `metadata.name In [node]` as its only field requirement.
void PinToNode(k8s::Pod& pod, const std::string& node);

/// Adds `pod` to `queue`: a workload's template as its replicas
/// (`NAME-0`, `NAME-1`, ...), a DaemonSet's as one pod per node of `table`
/// (`NAME-NODE`, pinned), any other pod as it is.
void ExpandWorkload(k8s::Pod pod, const rt::NodeTable& table, std::vector<k8s::Pod>& queue);

/// Each pod's priority: spec.priority, else its PriorityClass's, else the
/// global default. A class the snapshot does not have is refused, as
/// admission refuses it: the message, and the queue is left as it was read.
std::optional<std::string> ResolveQueuePriorities(std::vector<k8s::Pod>& queue, const rt::NodeTable& table);

/// --fill: copies of `pod` (`NAME-fill-0`, ...) placed without preemption
/// until one stays Pending; every copy's outcome, the Pending one last.
std::vector<const engine::Outcome*> FillUntilPending(engine::Scheduler& scheduler, const k8s::Pod& pod);

/// One line of `schedule -o jsonl`: pod, node, attempts, score, feasible,
/// preempted, and for a Pending pod its summary and its reasons: grouped
/// (Outcome::groups) or, without groups, every node's.
std::string OutcomeRecord(const engine::Outcome& outcome);

/// What --output-cluster writes for a run: every outcome in `finished` but
/// the --fill copy that did not fit (`fills`, copies of `fill_source`), the
/// victims, the claims the scheduler assumed bound, and every ResourceClaim
/// of `cluster` (the run's) as it is now.
RunResult ResultOf(const std::vector<const engine::Outcome*>& finished,
                   const std::unordered_set<const engine::Outcome*>& fills, const std::string& fill_source,
                   const engine::Scheduler& scheduler, const engine::Cluster& cluster);

}  // namespace policy::tooling
