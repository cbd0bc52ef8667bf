#pragma once
/// What would make a pod fit: the smallest changes to the pod or to the
/// cluster that make nodes feasible, each verified by deciding again with
/// the change applied — never a guess (docs/suggestions.md).
///
/// On the pod, one edit at a time: tolerate one taint, lower one resource
/// request to what a node has free, drop one nodeSelector entry or one
/// required node-affinity requirement, raise a spread constraint's maxSkew
/// (or let it be ScheduleAnyway), drop one required (anti-)affinity term,
/// drop one host port; of the pod's DRA claims (while DynamicResources
/// rejects): ask fewer devices, drop one CEL selector, use another
/// DeviceClass. When no single edit opens a node, the edits each
/// rejected node needs are put together, one combination per distinct set.
/// On the cluster: one more node like an existing one with nothing running
/// on it, and the fewest pods whose removal frees a node (ignoring
/// priority, which preemption would not). The cluster is changed while a
/// cluster-side change is tried and left as it was.

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include "k8s/objects.h"
#include "runtime/sched/explain.h"

namespace policy::engine {

class Engine;
class Cluster;

/// One edit of a suggestion.
struct Change {
  /// What kind of edit, stable for programs: `tolerate`, `lower-request`,
  /// `drop-node-selector`, `drop-node-affinity-requirement`,
  /// `drop-node-affinity`, `raise-max-skew`, `schedule-anyway`,
  /// `drop-pod-affinity-term`, `drop-pod-anti-affinity-term`,
  /// `drop-host-port`, `drop-node-name`, `lower-device-count`,
  /// `drop-device-selector`, `use-device-class`, `create-claims`, `add-node`,
  /// `remove-pods`.
  std::string kind;
  std::string words;  ///< the edit, for a person
  /// The edit for a program, by kind (docs/suggestions.md): `key`, `value`,
  /// `effect` (tolerate); `resource`, `from`, `to` (lower-request); `key`
  /// (drop-node-selector); `term`, `requirement` (drop-node-affinity-requirement);
  /// `constraint`, `topologyKey`, `maxSkew` (raise-max-skew, schedule-anyway);
  /// `term` (drop-pod-(anti-)affinity-term); `container`, `hostPort`,
  /// `protocol` (drop-host-port); `nodeName` (drop-node-name); `template` or
  /// `claim`, `request` and `from`/`to` or `selector` (the DRA edits);
  /// `claims` (create-claims, comma-separated); `like` (add-node,
  /// comma-separated); `node` (remove-pods).
  /// Indexes count from 0 in the pod's lists. Indexes, ports and maxSkew
  /// are numbers; the rest strings.
  std::vector<std::pair<std::string, std::variant<std::string, int64_t>>> fields;
};

struct Suggestion {
  bool cluster = false;             ///< a change to the cluster, not to the pod
  std::vector<Change> changes;      ///< applied together
  std::vector<std::string> nodes;   ///< the nodes it makes feasible, in table order (add-node: the new one)
  std::vector<std::string> pods;    ///< remove-pods: the pods removed, namespace/name
  std::string note;                 ///< what the verification did not cover, when anything
};

/// Bounds on the work, so that no input makes it grow faster than its size
/// times the cluster's: each edit tried costs one decision over the nodes it
/// could open.
struct SuggestOptions {
  size_t edits = 48;         ///< single pod edits tried at most (in the order of the pod's fields)
  size_t combinations = 4;   ///< combined pod edits verified at most (the most nodes first)
  size_t node_shapes = 8;    ///< kinds of node tried for add-node
  size_t removal_nodes = 16; ///< nodes tried for remove-pods
  size_t removals_kept = 3;  ///< remove-pods suggestions kept (the fewest pods first)
  size_t pods_per_removal = 128;  ///< nodes running more pods are not tried for remove-pods
};

/// Suggestions for `pod` (as read, before planning) whose `placement`
/// explains every live row of `cluster`. Pod edits first (the most nodes
/// opened first), then combinations, then cluster changes. For a pod that
/// fits somewhere only single pod edits are tried (what opens more nodes).
std::vector<Suggestion> Suggest(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const rt::Placement& placement,
                                const SuggestOptions& options = {});

}  // namespace policy::engine
