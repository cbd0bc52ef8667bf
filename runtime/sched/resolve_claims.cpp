#include "runtime/sched/resolve_claims.h"

#include "runtime/dra/allocator.h"

namespace policy::rt {

void ResolveClaims(k8s::Pod& pod, const NodeTable& table) {
  pod.resource_claims_problem.clear();
  if (pod.resource_claims.empty()) return;
  pod.resource_claims_problem = dra::ResolvePodClaims(pod, table.Storage()).problem;
}

}  // namespace policy::rt
