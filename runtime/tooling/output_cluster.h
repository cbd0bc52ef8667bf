#pragma once
/// `policyc schedule --output-cluster FILE`: the snapshot as a run left it,
/// as a `v1/List` in the format of the input (../shared/spec/
/// policyc-schedule.md), so it can be checked or scheduled again.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "k8s/dra.h"
#include "support/source.h"

namespace policy::tooling {

/// One pod of the run as it ended.
struct ScheduledPod {
  std::string namespace_name, name;
  std::string source_name;          ///< the Pod object it came from (a --fill copy's source); empty: itself
  std::string template_of;          ///< `Kind/name` for a workload's pod, else empty
  std::optional<std::string> node;  ///< where it was bound; none: Pending
  std::string uid;                  ///< metadata.uid (given one when its claims were made from templates)
  /// status.resourceClaimStatuses (entry, claim) and the entries' templates
  /// (entry, ResourceClaimTemplate): the claims made for it, as the
  /// resourceclaim controller records them.
  std::vector<std::pair<std::string, std::string>> claim_statuses, claim_templates;
};

/// A claim a placed pod's bind assumed: bound to `volume`, or (volume
/// empty) waiting for a volume provisioned on `selected_node`.
struct BoundClaim {
  std::string namespace_name, claim, volume, selected_node;
};

struct RunResult {
  std::vector<ScheduledPod> pods;     ///< every pod of the queue and every --fill copy that fitted
  std::vector<std::string> evicted;   ///< namespace/name of each victim
  std::vector<BoundClaim> claims;     ///< in the order of the binds
  /// Every ResourceClaim as the run left it: made from templates,
  /// allocated, reserved for the pods placed (Dynamic Resource Allocation).
  std::vector<k8s::ResourceClaim> resource_claims;
};

/// The List: every object of `snapshot` (victims left out, Pending pods
/// that were placed given spec.nodeName, claims the binds assumed bound
/// with spec.volumeName, or the selected-node annotation kube-scheduler
/// sets for provisioning, and their volumes with spec.claimRef); every
/// object of `inputs` (the
/// --pending files and the --fill pod) other than pods and workloads; and a
/// Pod for each pod of `result` that came from `inputs` (a workload's made
/// from its template), with spec.nodeName when it was placed. Every
/// ResourceClaim as the run left it: those of the files with their status
/// (allocation, reservedFor), those the run made from templates whole (the
/// template's spec, the pod as controller); pods carry the claims made for
/// them in status.resourceClaimStatuses, so a run on the output answers as
/// the same run would go on. JSON when the first snapshot file is, else YAML.
std::string ClusterAfter(const std::vector<std::shared_ptr<const Source>>& snapshot,
                         const std::vector<std::shared_ptr<Source>>& inputs, const RunResult& result);

}  // namespace policy::tooling
