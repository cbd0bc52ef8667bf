#include "runtime/columnar/storage_objects.h"

namespace policy::rt {

std::pair<std::string, std::string> AttachedVolumeOf(const StorageObjects& storage,
                                                     const k8s::PersistentVolumeClaim& claim) {
  if (!claim.volume_name.empty()) {
    if (const k8s::PersistentVolume* pv = StorageObjects::Get(storage.volumes, claim.volume_name)) {
      // An in-tree volume (not migrated to CSI here) is not a CSI attachment.
      if (pv->csi_driver.empty() || pv->csi_handle.empty()) return {};
      return {pv->csi_driver, pv->csi_handle};
    }
  }
  // Not bound yet (or its volume is gone): the class's provisioner will
  // attach it, under a handle of its own (getCSIDriverInfoFromSC).
  std::string class_name = claim.storage_class.value_or("");
  const k8s::StorageClass* sc = class_name.empty() ? nullptr : StorageObjects::Get(storage.classes, class_name);
  if (sc == nullptr || sc->provisioner.empty()) return {};
  return {sc->provisioner, "(claim " + claim.namespace_name + "/" + claim.name + ")"};
}

std::optional<int32_t> StorageObjects::PriorityOf(std::optional<int32_t> priority, std::string_view class_name) const {
  if (priority) return priority;
  if (!class_name.empty()) {
    if (const k8s::PriorityClass* pc = Get(priority_classes, class_name)) return pc->value;
    if (class_name == "system-node-critical") return 2000001000;  // built into every cluster
    if (class_name == "system-cluster-critical") return 2000000000;
    return std::nullopt;
  }
  for (const auto& [name, pc] : priority_classes) {
    if (pc.global_default) priority = pc.value;
  }
  return priority;
}

}  // namespace policy::rt
