#pragma once
/// A pod's volumes with the snapshot's claims, volumes and classes looked
/// up: what kube-scheduler's volume plugins (VolumeRestrictions,
/// NodeVolumeLimits, VolumeBinding, VolumeZone) decide from, resolved once
/// per pod so the policies in stdlib/ read plain values.

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

/// Fills pod.resolved_volumes, one per pod.volumes entry, from the table's
/// storage objects and bound pods.
void ResolveVolumes(k8s::Pod& pod, const NodeTable& table);

/// The pod's priority when it sets none: its PriorityClass's value, or the
/// global default class's (the Priority admission plugin). Unchanged when
/// the snapshot has no such class.
void ResolvePriority(k8s::Pod& pod, const NodeTable& table);

}  // namespace policy::rt
