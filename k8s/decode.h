#pragma once
/// Documents to typed Kubernetes objects, with API defaulting and the API
/// validation that placement depends on. Every problem is a diagnostic that
/// points at the offending field; an object with an error is refused whole.

#include <optional>
#include <string_view>

#include "k8s/document.h"
#include "k8s/dra.h"
#include "k8s/objects.h"
#include "support/diagnostic.h"

namespace policy::k8s {

/// The object's `kind`, or `default_kind` when it has none.
std::string_view KindOf(NodeRef object, std::string_view default_kind);

/// Kinds that carry a pod template (`Deployment`, `StatefulSet`, ...).
bool IsWorkloadKind(std::string_view kind);

/// Decodes one object; nullopt when it had errors (all reported).
std::optional<Node> DecodeNode(NodeRef object, DiagnosticSink& diags);
std::optional<Pod> DecodePod(NodeRef object, DiagnosticSink& diags);
std::optional<Namespace> DecodeNamespace(NodeRef object, DiagnosticSink& diags);
/// A list of topology spread constraints (a scheduler profile's
/// defaultConstraints), validated as a pod's are; nullopt after diagnostics.
std::optional<std::vector<TopologySpreadConstraint>> DecodeSpreadConstraints(NodeRef list, DiagnosticSink& diags);
/// A Service, ReplicationController, ReplicaSet or StatefulSet: its name, namespace and selector.
std::optional<SelectorOwner> DecodeSelectorOwner(NodeRef object, std::string_view kind, DiagnosticSink& diags);
/// Storage objects and PriorityClasses (decode_storage.cpp).
std::optional<PersistentVolumeClaim> DecodePersistentVolumeClaim(NodeRef object, DiagnosticSink& diags);
std::optional<PersistentVolume> DecodePersistentVolume(NodeRef object, DiagnosticSink& diags);
std::optional<StorageClass> DecodeStorageClass(NodeRef object, DiagnosticSink& diags);
std::optional<CsiNode> DecodeCsiNode(NodeRef object, DiagnosticSink& diags);
std::optional<PriorityClass> DecodePriorityClass(NodeRef object, DiagnosticSink& diags);
std::optional<PodDisruptionBudget> DecodePodDisruptionBudget(NodeRef object, DiagnosticSink& diags);
/// Dynamic Resource Allocation objects (decode_dra.cpp, k8s/dra.h).
std::optional<DeviceClass> DecodeDeviceClass(NodeRef object, DiagnosticSink& diags);
std::optional<ResourceSlice> DecodeResourceSlice(NodeRef object, DiagnosticSink& diags);
std::optional<ResourceClaim> DecodeResourceClaim(NodeRef object, DiagnosticSink& diags);
std::optional<ResourceClaimTemplate> DecodeResourceClaimTemplate(NodeRef object, DiagnosticSink& diags);
/// A workload's pod template as a pod in the workload's namespace, named
/// after the workload when the template has no name.
std::optional<Pod> DecodeWorkloadTemplate(NodeRef object, std::string_view kind, DiagnosticSink& diags);
/// A Pod or a workload's template; anything else is reported as not a pod.
std::optional<Pod> DecodePodOrTemplate(NodeRef object, std::string_view default_kind, DiagnosticSink& diags);

}  // namespace policy::k8s
