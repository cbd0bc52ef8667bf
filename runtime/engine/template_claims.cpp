#include "runtime/engine/template_claims.h"

#include <algorithm>

#include <fmt/format.h>

namespace policy::engine {

std::vector<std::string> MakeTemplateClaims(k8s::Pod& pod, Cluster& cluster) {
  std::vector<std::string> made;
  for (const k8s::PodResourceClaim& entry : pod.resource_claims) {
    if (entry.template_name.empty()) continue;
    bool recorded = std::any_of(pod.resource_claim_statuses.begin(), pod.resource_claim_statuses.end(),
                                [&](const k8s::PodResourceClaimStatus& s) { return s.name == entry.name; });
    if (recorded) continue;
    const k8s::ResourceClaimTemplate* t = rt::StorageObjects::Get(
        cluster.Table().Storage().claim_templates, rt::StorageObjects::ClaimKey(pod.namespace_name, entry.template_name));
    if (t == nullptr) continue;
    if (pod.uid.empty()) pod.uid = fmt::format("policyc:{}/{}", pod.namespace_name, pod.name);
    k8s::ResourceClaim claim;
    // POD-ENTRY, as the controller's generateName starts it; a name taken
    // by another claim gets a suffix, as generateName's random one would.
    claim.name = fmt::format("{}-{}", pod.name, entry.name);
    const auto& existing = cluster.Table().Storage().resource_claims;
    for (int n = 1; existing.contains(rt::StorageObjects::ClaimKey(pod.namespace_name, claim.name)); ++n) {
      claim.name = fmt::format("{}-{}-{}", pod.name, entry.name, n);
    }
    claim.namespace_name = pod.namespace_name;
    claim.uid = fmt::format("policyc:{}/{}", claim.namespace_name, claim.name);
    claim.controller_kind = "Pod";
    claim.controller_uid = pod.uid;
    claim.spec = t->spec;
    pod.resource_claim_statuses.push_back({entry.name, claim.name});
    made.push_back(claim.name);
    cluster.SetResourceClaim(std::move(claim));
  }
  return made;
}

}  // namespace policy::engine
