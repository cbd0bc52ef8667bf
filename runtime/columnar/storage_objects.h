#pragma once
/// The snapshot's storage objects, PriorityClasses and PodDisruptionBudgets,
/// by name: what the volume plugins look a pod's claims up in
/// (rt::ResolveVolumes), what a node's attached volumes are resolved
/// through, and what priorities and preemption read.

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "k8s/dra.h"
#include "k8s/objects.h"

namespace policy::rt {

/// A device an allocated ResourceClaim took (+1) or gave back (-1): what
/// NodeTable::SetResourceClaim logs for the device table (device_table.h).
struct ClaimDeviceChange {
  std::string driver, pool, device;
  int delta = 0;
};

struct StorageObjects {
  std::unordered_map<std::string, k8s::PersistentVolumeClaim> claims;  ///< namespace/name ->
  std::unordered_map<std::string, k8s::PersistentVolume> volumes;
  std::unordered_map<std::string, k8s::StorageClass> classes;
  std::unordered_map<std::string, k8s::CsiNode> csi_nodes;
  std::unordered_map<std::string, k8s::PriorityClass> priority_classes;
  std::unordered_map<std::string, k8s::PodDisruptionBudget> budgets;  ///< namespace/name ->
  // Dynamic Resource Allocation: what the DynamicResources plugin reads.
  std::unordered_map<std::string, k8s::DeviceClass> device_classes;
  std::unordered_map<std::string, k8s::ResourceSlice> resource_slices;
  /// Moves whenever resource_slices changes: a DeviceTable's device columns
  /// and selector answers are kept while it stays (device_columns.h).
  uint64_t slices_version = 0;
  std::unordered_map<std::string, k8s::ResourceClaim> resource_claims;  ///< namespace/name ->
  std::unordered_map<std::string, k8s::ResourceClaimTemplate> claim_templates;  ///< namespace/name ->

  static std::string ClaimKey(std::string_view namespace_name, std::string_view name) {
    return std::string(namespace_name) + "/" + std::string(name);
  }
  const k8s::PersistentVolumeClaim* Claim(std::string_view namespace_name, std::string_view name) const {
    auto it = claims.find(ClaimKey(namespace_name, name));
    return it == claims.end() ? nullptr : &it->second;
  }
  template <typename T>
  static const T* Get(const std::unordered_map<std::string, T>& map, std::string_view name) {
    auto it = map.find(std::string(name));
    return it == map.end() ? nullptr : &it->second;
  }
  size_t Count() const {
    return claims.size() + volumes.size() + classes.size() + csi_nodes.size() + priority_classes.size() + budgets.size() +
           device_classes.size() + resource_slices.size() + resource_claims.size() + claim_templates.size();
  }
  /// A pod's priority as admission sets it: spec.priority, else its
  /// PriorityClass's (the two system classes are built in), else the
  /// global default's when it names no class; nullopt when none applies
  /// (a class the snapshot lacks).
  std::optional<int32_t> PriorityOf(const k8s::Pod& pod) const { return PriorityOf(pod.priority, pod.priority_class_name); }
  std::optional<int32_t> PriorityOf(std::optional<int32_t> priority, std::string_view class_name) const;
};

/// The CSI driver and volume handle NodeVolumeLimits counts a claim under
/// (CSILimits.getCSIDriverInfo): the bound PV's csi source; for a claim not
/// bound yet, its class's provisioner and a handle no real volume has.
/// Empty when the volume is not counted.
std::pair<std::string, std::string> AttachedVolumeOf(const StorageObjects& storage,
                                                     const k8s::PersistentVolumeClaim& claim);

}  // namespace policy::rt
