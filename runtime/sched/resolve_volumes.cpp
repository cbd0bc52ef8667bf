#include "runtime/sched/resolve_volumes.h"

#include <algorithm>

#include "k8s/selectors.h"

namespace policy::rt {
namespace {

// VolumeZone's topology labels, in its order (volume_zone.go topologyLabels).
constexpr std::string_view kZoneLabels[] = {
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};

// volumehelpers.LabelZonesToSet: `a__b` allows a and b; a malformed value
// (an empty part) is skipped, as VolumeZone skips it.
std::optional<std::vector<std::string>> ZoneSet(std::string_view value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = value.find("__", start);
    std::string_view part = value.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.empty()) return std::nullopt;
    out.emplace_back(part);
    if (end == std::string_view::npos) break;
    start = end + 2;
  }
  return out;
}

bool HasAll(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  return std::all_of(want.begin(), want.end(),
                     [&](const std::string& m) { return std::find(have.begin(), have.end(), m) != have.end(); });
}

// FindMatchingVolume's filters for one PV against an unbound claim, without
// the node (its affinity is the policy's to check per node).
bool Matches(const k8s::PersistentVolume& pv, const k8s::PersistentVolumeClaim& claim, const std::string& class_name) {
  if (pv.storage_class != class_name || pv.capacity < claim.request || pv.volume_mode != claim.volume_mode ||
      pv.deleting) {
    return false;
  }
  return pv.phase == "Available" && pv.claim_name.empty() &&
         (!claim.selector || k8s::Matches(*claim.selector, pv.labels)) &&
         HasAll(pv.access_modes, claim.access_modes);
}

bool PreBoundTo(const k8s::PersistentVolume& pv, const k8s::PersistentVolumeClaim& claim, const std::string& class_name) {
  return pv.storage_class == class_name && !(pv.capacity < claim.request) && pv.volume_mode == claim.volume_mode &&
         !pv.deleting && pv.claim_name == claim.name && pv.claim_namespace == claim.namespace_name;
}

}  // namespace

void ResolveVolumes(k8s::Pod& pod, const NodeTable& table) {
  const StorageObjects& storage = table.Storage();
  pod.resolved_volumes.clear();
  for (const k8s::Volume& v : pod.volumes) {
    k8s::ResolvedVolume r = k8s::ResolvedVolume::Of(v);
    const k8s::PersistentVolumeClaim* claim =
        v.kind == k8s::Volume::Kind::kOther ? nullptr : storage.Claim(pod.namespace_name, v.claim);
    if (claim != nullptr) {
      r.claim_found = true;
      r.claim_lost = claim->phase == "Lost";
      r.claim_deleting = claim->deleting;
      r.read_write_once_pod =
          std::find(claim->access_modes.begin(), claim->access_modes.end(), "ReadWriteOncePod") != claim->access_modes.end();
      r.in_use = table.ClaimInUse(pod.namespace_name, v.claim);
      r.volume_name = claim->volume_name;
      r.selected_node = claim->selected_node;
      r.bound = !claim->volume_name.empty() && claim->bind_completed;
      r.class_name = claim->storage_class.value_or("");
      if (const k8s::StorageClass* sc = r.class_name.empty() ? nullptr : StorageObjects::Get(storage.classes, r.class_name)) {
        r.class_found = true;
        r.wait_for_first_consumer = sc->wait_for_first_consumer;
        r.provisionable = !sc->provisioner.empty() && sc->provisioner != "kubernetes.io/no-provisioner";
        r.allowed_topologies = sc->allowed_topologies;
      }
      r.delay_binding = !r.bound && r.wait_for_first_consumer && claim->volume_name.empty();
      if (const k8s::PersistentVolume* pv =
              claim->volume_name.empty() ? nullptr : StorageObjects::Get(storage.volumes, claim->volume_name)) {
        r.pv_found = true;
        r.pv_affinity = pv->node_affinity;
        for (std::string_view key : kZoneLabels) {
          const std::string* value = k8s::Find(pv->labels, key);
          if (value == nullptr) continue;
          std::optional<std::vector<std::string>> zones = ZoneSet(*value);
          if (!zones) continue;
          k8s::SelectorRequirement req;
          req.key = std::string(key);
          req.values = std::move(*zones);
          r.pv_topology.push_back(std::move(req));
        }
      }
      if (r.delay_binding && r.selected_node.empty()) {
        // A volume pre-bound to this claim is the only match there is
        // (FindMatchingVolume returns it, or nothing where its affinity fails).
        std::vector<const k8s::PersistentVolume*> found;
        for (const auto& [name, pv] : storage.volumes) {
          if (PreBoundTo(pv, *claim, r.class_name)) {
            found = {&pv};
            break;
          }
          if (Matches(pv, *claim, r.class_name)) found.push_back(&pv);
        }
        std::sort(found.begin(), found.end(), [](const k8s::PersistentVolume* a, const k8s::PersistentVolume* b) {
          if (a->capacity < b->capacity || b->capacity < a->capacity) return a->capacity < b->capacity;
          return a->name < b->name;
        });
        for (const k8s::PersistentVolume* pv : found) r.candidates.push_back(*pv);
      }
      std::tie(r.attach_driver, r.attach_handle) = AttachedVolumeOf(storage, *claim);
    }
    pod.resolved_volumes.push_back(std::move(r));
  }
}

void ResolvePriority(k8s::Pod& pod, const NodeTable& table) { pod.priority = table.Storage().PriorityOf(pod); }

}  // namespace policy::rt
