#pragma once
/// Pods of one template (a Deployment's replicas, a Job's pods): equal but
/// for their name and timestamps, and without volumes (their claims change
/// as pods bind, and an ephemeral volume's claim is named after its pod).
/// Such pods may share one PodPlan when Engine::SharesPlans().

#include <cstddef>

#include "compiler/k8s/objects.h"

namespace policy::engine {

bool SameTemplate(const k8s::Pod& a, const k8s::Pod& b);
/// Equal for pods of one template (a hash for buckets of them).
size_t TemplateHash(const k8s::Pod& pod);

}  // namespace policy::engine
