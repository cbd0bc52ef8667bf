#pragma once
/// Kubernetes watch events applied to a Cluster, as an informer feeds
/// kube-scheduler's cache: `{"type": "ADDED"|"MODIFIED"|"DELETED",
/// "object": {...}}` (JSON or YAML), one object at a time.
///
/// Nodes, Pods, Namespaces, the selector owners default spreading reads
/// (Services, ReplicationControllers, ReplicaSets, StatefulSets), storage
/// objects and PriorityClasses change the cluster; a `BOOKMARK` and other
/// kinds change nothing. A pod counts while it is bound (spec.nodeName) and
/// not finished; an event replaces what the cluster had of that object.

#include <optional>
#include <string>

#include "support/diagnostic.h"
#include "runtime/engine/cluster.h"

namespace policy::engine {

/// What an event did.
struct EventOutcome {
  std::string type;  ///< ADDED, MODIFIED, DELETED or BOOKMARK
  std::string kind;  ///< the object's kind
  bool changed = false;
  /// A Node event's object (DELETED: its name only), for hosts that keep
  /// node objects (host::ClusterState::KeepNodeObjects).
  std::optional<k8s::Node> node;
  std::string pod;  ///< a Pod event's namespace/name
};

/// Applies the event in `source` to `cluster`; nullopt with diagnostics
/// (and the cluster unchanged) when it does not read or decode, or is an
/// ERROR event (the watch must then be listed again).
std::optional<EventOutcome> ApplyWatchEvent(Cluster& cluster, const Source& source, DiagnosticSink& diags);

}  // namespace policy::engine
