#pragma once
/// kube-scheduler's system default topology spread constraints (the
/// PodTopologySpread plugin with defaultingType System, the default).

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

/// When `pod` declares no topology spread constraints and the snapshot's
/// Services, or its controller (a ReplicationController, ReplicaSet or
/// StatefulSet of the snapshot; for a workload's template, the workload's
/// selector), select it: gives it kube-scheduler's defaults,
/// kubernetes.io/hostname maxSkew 3 and topology.kubernetes.io/zone maxSkew
/// 5, both ScheduleAnyway, over the merged selectors (helper.DefaultSelector),
/// and marks them as defaulted. Otherwise leaves the pod as it is.
/// With `list` (a profile's defaultingType List), its constraints take the
/// selector instead, and the pod is not marked as system-defaulted.
void ApplyDefaultSpread(k8s::Pod& pod, const NodeTable& table,
                        const std::vector<k8s::TopologySpreadConstraint>* list = nullptr);

}  // namespace policy::rt
