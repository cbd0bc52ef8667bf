#pragma once
/// Reads a cluster snapshot file object by object into typed objects.
///
/// Nodes, Pods, Namespaces, storage objects, PriorityClasses, and the selectors of Services,
/// ReplicationControllers, ReplicaSets and StatefulSets, are decoded and
/// handed to a ClusterVisitor as they are read; other kinds are counted and
/// skipped (kubectl dumps hold Events, ConfigMaps, ...). Problems are diagnostics; after any error the
/// caller must discard what it received.

#include <map>
#include <string>

#include "k8s/dra.h"
#include "k8s/object_reader.h"
#include "k8s/objects.h"
#include "support/diagnostic.h"

namespace policy::k8s {

class ClusterVisitor {
 public:
  virtual ~ClusterVisitor() = default;
  virtual void OnNode(Node&& node, Span where) = 0;
  virtual void OnPod(Pod&& pod, Span where) = 0;
  virtual void OnNamespace(Namespace&& ns, Span where) = 0;
  /// Services, ReplicationControllers, ReplicaSets and StatefulSets (their
  /// selectors make kube-scheduler's default spread constraints).
  virtual void OnSelectorOwner(SelectorOwner&& owner, Span where) {
    (void)owner;
    (void)where;
  }
  /// PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes
  /// (the volume plugins), PriorityClasses (the queue) and
  /// PodDisruptionBudgets (preemption).
  virtual void OnClaim(PersistentVolumeClaim&&, Span) {}
  virtual void OnVolume(PersistentVolume&&, Span) {}
  virtual void OnStorageClass(StorageClass&&, Span) {}
  virtual void OnCsiNode(CsiNode&&, Span) {}
  virtual void OnPriorityClass(PriorityClass&&, Span) {}
  virtual void OnPodDisruptionBudget(PodDisruptionBudget&&, Span) {}
  /// Dynamic Resource Allocation (the DynamicResources plugin).
  virtual void OnDeviceClass(DeviceClass&&, Span) {}
  virtual void OnResourceSlice(ResourceSlice&&, Span) {}
  virtual void OnResourceClaim(ResourceClaim&&, Span) {}
  virtual void OnResourceClaimTemplate(ResourceClaimTemplate&&, Span) {}
};

struct ClusterReadStats {
  size_t objects = 0;
  std::map<std::string, size_t> skipped_kinds;  ///< kind -> count

  /// Adds another file's counts.
  void Add(const ClusterReadStats& other) {
    objects += other.objects;
    for (const auto& [kind, count] : other.skipped_kinds) skipped_kinds[kind] += count;
  }
};

/// Decodes one object (`default_kind`: its enclosing typed list's item
/// kind, or empty) and hands it to `visitor`, or counts its kind as
/// skipped in `stats`; problems are diagnostics.
void DispatchObject(NodeRef object, std::string_view default_kind, ClusterVisitor& visitor, DiagnosticSink& diags,
                    ClusterReadStats* stats);

/// Reads `source` (YAML or JSON); false after any error.
bool ReadCluster(const Source& source, ClusterVisitor& visitor, DiagnosticSink& diags, ClusterReadStats* stats,
                 InputFormat format = InputFormat::kAuto);

}  // namespace policy::k8s
