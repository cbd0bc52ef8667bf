#pragma once
/// Pods of one template (a Deployment's replicas, a ReplicaSet's bare pods,
/// a Job's pods): equal but for their name, timestamps and the volumes no
/// plugin reads (the service-account token's volume is named per pod).
/// Such pods may share one PodPlan when Engine::OwnPlanBecause is empty
/// for them (no plugin reads the name; no claim, which changes as pods
/// bind, and no ephemeral volume, whose claim is named after its pod).

#include <cstddef>

#include "compiler/k8s/objects.h"

namespace policy::engine {

/// Leaves out of `pod` the volumes no plugin reads (k8s::ReadByVolumePlugins).
void DropIncidentalVolumes(k8s::Pod& pod);
/// `incidental_volumes_ignored`: Engine::IgnoresIncidentalVolumes().
bool SameTemplate(const k8s::Pod& a, const k8s::Pod& b, bool incidental_volumes_ignored);
/// Equal for pods of one template (a hash for buckets of them).
size_t TemplateHash(const k8s::Pod& pod);

}  // namespace policy::engine
