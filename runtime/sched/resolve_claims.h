#pragma once
/// A pod's DRA claims looked up once per pod, as the volumes are
/// (resolve_volumes.h): what the DynamicResources PreFilter would refuse,
/// for stdlib/dynamic_resources.policy's `pod.resourceClaimsProblem`.

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

/// Sets pod.resource_claims_problem from the table's DRA objects.
void ResolveClaims(k8s::Pod& pod, const NodeTable& table);

}  // namespace policy::rt
