#pragma once
/// `policyc lint`'s scheduling lints of workload manifests (docs/lints.md):
/// every Pod and workload of a manifest is read with its YAML at hand, so
/// each finding points at the field it is about, and is checked against
/// the snapshot's nodes — a selector no node satisfies, a topology key no
/// node has, more replicas than anti-affinity allows, too few domains for
/// minDomains, a request larger than any node, a toleration of no taint, a
/// GPU-memory request without a unit, an unknown PriorityClass, a
/// preference that changes nothing.

#include <memory>
#include <vector>

#include "k8s/objects.h"
#include "support/diagnostic.h"

namespace policy::engine {
class Cluster;
}

namespace policy::tooling {

/// Lints every pod of `manifest` against `cluster` (null: only the
/// manifest's own errors, which need no snapshot). Returns the pods read,
/// for the policy lints.
std::vector<k8s::Pod> LintManifest(const Source& manifest, const engine::Cluster* cluster, DiagnosticSink& diags);

}  // namespace policy::tooling
