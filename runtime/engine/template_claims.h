#pragma once
/// The resourceclaim controller's work for a pod about to be scheduled
/// (pkg/controller/resourceclaim): each entry of spec.resourceClaims that
/// names a ResourceClaimTemplate and has no claim yet gets one, made from
/// the template as POD-ENTRY, controlled by the pod, and recorded in the
/// pod's status.resourceClaimStatuses. `schedule` does it for its queue;
/// `check` answers as kube-scheduler does before it is done (`ResourceClaim
/// not created yet`) and suggests it, verified, as a cluster change.

#include <string>
#include <vector>

#include "k8s/objects.h"
#include "runtime/engine/cluster.h"

namespace policy::engine {

/// Makes the pod's missing template claims in `cluster`; the names of the
/// claims made. A template the cluster lacks makes nothing (the controller
/// waits for it too: the pod's claim is not created yet). A pod without a
/// uid (one from a workload's template) is given one, so that it owns its
/// claims.
std::vector<std::string> MakeTemplateClaims(k8s::Pod& pod, Cluster& cluster);

}  // namespace policy::engine
