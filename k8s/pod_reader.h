#pragma once
/// Reads the pod to place from a file: one Pod, or one workload whose pod
/// template is the pod (policyc check --pod).

#include <optional>
#include <string>
#include <vector>

#include "k8s/dra.h"
#include "k8s/objects.h"
#include "k8s/strict_fields.h"
#include "support/diagnostic.h"

namespace policy::k8s {

/// The pod in `source`; nullopt with diagnostics when the file is invalid,
/// holds no object, more than one, or an object that is not a pod. Unknown
/// fields are refused, warned about or let be as `validation` says
/// (strict_fields.h); a pod a person gives is checked as kubectl's default
/// does (kStrict), one the API server wrote is not (kIgnore).
std::optional<Pod> ReadPod(const Source& source, DiagnosticSink& diags, FieldValidation validation);

}  // namespace policy::k8s

namespace policy::k8s {

/// What a manifest file (`--pod`: a Pod, a workload, or a Helm-rendered
/// mix) holds: every Pod and workload as the pod to place (a workload's
/// template), and the objects that join the snapshot while they are
/// checked. Other kinds (ConfigMaps, Secrets, ...) are counted and skipped.
struct Manifest {
  std::vector<Pod> pods;
  std::vector<SelectorOwner> owners;  ///< Services, ReplicaSets, StatefulSets, ReplicationControllers
  std::vector<Namespace> namespaces;
  std::vector<PersistentVolumeClaim> claims;
  std::vector<PersistentVolume> volumes;
  std::vector<StorageClass> classes;
  std::vector<PriorityClass> priority_classes;
  std::vector<DeviceClass> device_classes;            ///< DRA: what the pod's claims may ask for
  std::vector<ResourceClaim> resource_claims;
  std::vector<ResourceClaimTemplate> claim_templates;
  std::vector<std::string> skipped;  ///< kinds of the objects not read, in order
};

/// The manifest in `source`; nullopt with diagnostics when the file is
/// invalid, an object in it is, or it holds no Pod or workload.
std::optional<Manifest> ReadManifest(const Source& source, DiagnosticSink& diags, FieldValidation validation);

}  // namespace policy::k8s
