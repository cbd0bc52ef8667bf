#pragma once
/// kubectl's strict field validation for the pod a person gives policyc: a
/// field the Kubernetes API does not know (`spec.nodeselector`) is silently
/// dropped by a lenient decoder, so the pod would be checked without it.
/// Warns, with a did-you-mean, about unknown fields of the object, its
/// metadata, its pod spec (a Pod's, or a workload's template's) and its
/// containers. Snapshots are not checked: the API server wrote them, and a
/// newer server's fields are not mistakes.

#include <string_view>

#include "k8s/document.h"
#include "support/diagnostic.h"

namespace policy::k8s {

/// Warnings (W0303) for the unknown fields of `object`, a `kind`.
void WarnUnknownFields(NodeRef object, std::string_view kind, DiagnosticSink& diags);

}  // namespace policy::k8s
