// NodeTable: binding and unbinding pods.
//
// Each bound pod remembers what it added to its node, so unbinding subtracts
// exactly that. Pods of a node hang off the row in a doubly linked list (for
// O(1) unbind and O(pods on node) removal); pods that name a node the table
// does not have wait in a list per node name until it is added.

#include "runtime/columnar/node_table.h"

#include <algorithm>

#include "compiler/k8s/pod_resources.h"
#include "compiler/k8s/quantity.h"

namespace policy::rt {

std::vector<const k8s::HostPort*> NodeTable::UsedPorts(RowId row) const {
  std::vector<const k8s::HostPort*> ports;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    for (const k8s::HostPort& p : pods_[slot].host_ports) ports.push_back(&p);
  }
  return ports;
}

std::vector<std::pair<const std::string*, bool>> NodeTable::Disks(RowId row) const {
  std::vector<std::pair<const std::string*, bool>> disks;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    for (const k8s::Volume& v : pods_[slot].volumes) {
      for (const std::string& id : v.disks) disks.emplace_back(&id, v.read_only);
    }
  }
  return disks;
}

std::vector<std::pair<std::string, std::string>> NodeTable::AttachedVolumes(RowId row) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    const BoundPod& pod = pods_[slot];
    for (const k8s::Volume& v : pod.volumes) {
      if (v.kind == k8s::Volume::Kind::kOther) continue;
      // A claim the snapshot lacks is not counted for a pod already placed.
      const k8s::PersistentVolumeClaim* claim = storage_.Claim(pod.namespace_name, v.claim);
      if (claim == nullptr) continue;
      std::pair<std::string, std::string> attached = AttachedVolumeOf(storage_, *claim);
      if (attached.first.empty()) continue;
      if (std::find(out.begin(), out.end(), attached) == out.end()) out.push_back(std::move(attached));
    }
  }
  return out;
}

std::vector<std::pair<std::string, int64_t>> NodeTable::VolumeLimits(RowId row) const {
  constexpr std::string_view kPrefix = "attachable-volumes-csi-";
  std::vector<std::pair<std::string, int64_t>> limits;
  for (const ResourceColumn& column : resources_) {
    std::string_view name = pool_.Get(column.name);
    if (name.starts_with(kPrefix) && column.allocatable[row] > 0) {
      limits.emplace_back(std::string(name.substr(kPrefix.size())), column.allocatable[row]);
    }
  }
  if (const k8s::CsiNode* csi = StorageObjects::Get(storage_.csi_nodes, pool_.Get(name_[row]))) {
    for (const std::pair<std::string, int64_t>& driver : csi->limits) {
      auto it = std::find_if(limits.begin(), limits.end(), [&](const auto& l) { return l.first == driver.first; });
      if (it != limits.end()) {
        it->second = driver.second;
      } else {
        limits.push_back(driver);
      }
    }
  }
  return limits;
}

bool NodeTable::ClaimInUse(std::string_view namespace_name, std::string_view name) const {
  auto it = claim_users_.find(StorageObjects::ClaimKey(namespace_name, name));
  return it != claim_users_.end() && it->second > 0;
}

uint32_t* NodeTable::HeadFor(const BoundPod& pod) {
  if (pod.row != kNoRow) return &pod_head_[pod.row];
  return &waiting_.try_emplace(pod.node_name, UINT32_MAX).first->second;
}

void NodeTable::Link(uint32_t slot, uint32_t* head) {
  pods_[slot].prev = UINT32_MAX;
  pods_[slot].next = *head;
  if (*head != UINT32_MAX) pods_[*head].prev = slot;
  *head = slot;
}

void NodeTable::Unlink(uint32_t slot, uint32_t* head) {
  BoundPod& pod = pods_[slot];
  if (pod.prev != UINT32_MAX) {
    pods_[pod.prev].next = pod.next;
  } else {
    *head = pod.next;
  }
  if (pod.next != UINT32_MAX) pods_[pod.next].prev = pod.prev;
  pod.prev = pod.next = UINT32_MAX;
}

namespace {

// `total` plus or minus `amount`, wrapping as kube-scheduler's int64 sums
// do (NodeInfo.Requested): defined for any input, and unbinding subtracts
// exactly what binding added.
void Wrap(int64_t& total, int sign, int64_t amount) {
  uint64_t a = static_cast<uint64_t>(amount);
  total = static_cast<int64_t>(sign > 0 ? static_cast<uint64_t>(total) + a : static_cast<uint64_t>(total) - a);
}

}  // namespace

void NodeTable::Apply(uint32_t slot, RowId row, int sign) {
  const BoundPod& pod = pods_[slot];
  for (const auto& [index, amount] : pod.requests) {
    ResourceColumn& column = resources_[index];
    Wrap(column.requested[row], sign, amount);
    column.requested_milli[row] = column.cpu ? column.requested[row] : k8s::SaturatedMilli(column.requested[row]);
  }
  Wrap(nonzero_cpu_[row], sign, pod.nonzero_cpu);
  Wrap(nonzero_memory_[row], sign, pod.nonzero_memory);
  nonzero_memory_milli_[row] = k8s::SaturatedMilli(nonzero_memory_[row]);
  pod_count_[row] += static_cast<uint32_t>(sign);
  for (const k8s::Volume& v : pod.volumes) {
    if (v.kind == k8s::Volume::Kind::kOther) continue;
    std::string key = StorageObjects::ClaimKey(pod.namespace_name, v.claim);
    if ((claim_users_[key] += sign) == 0) claim_users_.erase(key);
  }
  ApplyTopology(pod, row, sign);
}

namespace {

std::string LabelKey(std::string_view key, std::string_view value) {
  std::string out(key);
  out += '\0';
  out += value;
  return out;
}

}  // namespace

void NodeTable::IndexLabels(uint32_t slot) {
  BoundPod& pod = pods_[slot];
  pod.label_at.clear();
  for (const auto& [key, value] : pod.labels) {
    std::vector<uint32_t>& list = pods_by_label_[LabelKey(key, value)];
    pod.label_at.push_back(static_cast<uint32_t>(list.size()));
    list.push_back(slot);
  }
}

const std::vector<uint32_t>* NodeTable::SlotsWithLabel(std::string_view key, std::string_view value) const {
  auto it = pods_by_label_.find(LabelKey(key, value));
  return it == pods_by_label_.end() ? nullptr : &it->second;
}

// Each of the pod's entries is replaced by the list's last one (whose
// position is then updated), so an unbind costs its labels, not the pods
// that share them.
void NodeTable::UnindexLabels(uint32_t slot) {
  BoundPod& pod = pods_[slot];
  for (size_t i = 0; i < pod.labels.size(); ++i) {
    auto it = pods_by_label_.find(LabelKey(pod.labels[i].first, pod.labels[i].second));
    std::vector<uint32_t>& list = it->second;
    uint32_t at = pod.label_at[i], end = static_cast<uint32_t>(list.size() - 1), last = list[end];
    list[at] = last;
    BoundPod& moved = pods_[last];  // its entry that was at the end (a label twice is two entries)
    for (size_t j = 0; j < moved.labels.size(); ++j) {
      if (moved.label_at[j] == end && moved.labels[j] == pod.labels[i]) {
        moved.label_at[j] = at;
        break;
      }
    }
    list.pop_back();
    if (list.empty()) pods_by_label_.erase(it);
  }
  pod.label_at.clear();
}

BindResult NodeTable::BindPod(const k8s::Pod& pod) {
  if (pod.node_name.empty()) return BindResult::kNotBound;
  if (pod.phase == k8s::PodPhase::kSucceeded || pod.phase == k8s::PodPhase::kFailed) return BindResult::kFinished;
  std::string key = pod.namespace_name + "/" + pod.name;
  if (pod_index_.contains(key)) return BindResult::kDuplicate;

  uint32_t slot;
  if (!free_pod_slots_.empty()) {
    slot = free_pod_slots_.back();
    free_pod_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(pods_.size());
    pods_.emplace_back();
  }
  BoundPod& bound = pods_[slot];
  bound = BoundPod{};
  bound.key = key;
  bound.node_name = pool_.Intern(pod.node_name);
  for (const auto& [name, quantity] : k8s::PodRequests(pod)) {
    bound.requests.emplace_back(ResourceIndex(name), k8s::SchedulerUnits(name, quantity));
  }
  k8s::NonZeroRequests nonzero = k8s::PodNonZeroRequests(pod);
  bound.nonzero_cpu = nonzero.milli_cpu;
  bound.nonzero_memory = nonzero.memory;
  bound.namespace_name = pod.namespace_name;
  bound.labels = pod.labels;
  for (const k8s::Container& c : pod.containers) {
    bound.host_ports.insert(bound.host_ports.end(), c.host_ports.begin(), c.host_ports.end());
  }
  for (const k8s::Volume& v : pod.volumes) {
    if (v.kind != k8s::Volume::Kind::kOther || !v.disks.empty()) bound.volumes.push_back(v);
  }
  InternTermGroups(pod, bound);
  pod_index_.emplace(std::move(key), slot);
  IndexLabels(slot);

  bound.row = RowOfName(bound.node_name);
  Link(slot, HeadFor(bound));
  if (bound.row == kNoRow) return BindResult::kWaitingForNode;
  TouchRow(bound.row);
  Apply(slot, bound.row, +1);
  ++bound_pods_;
  return BindResult::kBound;
}

bool NodeTable::UnbindPod(std::string_view namespace_name, std::string_view name) {
  std::string key = std::string(namespace_name) + "/" + std::string(name);
  auto it = pod_index_.find(key);
  if (it == pod_index_.end()) return false;
  uint32_t slot = it->second;
  pod_index_.erase(it);
  BoundPod& pod = pods_[slot];
  uint32_t* head = HeadFor(pod);
  if (pod.aside) {  // off its row's list and counted nowhere already
    --aside_pods_;
  } else if (pod.row != kNoRow) {
    Unlink(slot, head);
    TouchRow(pod.row);
    Apply(slot, pod.row, -1);
    --bound_pods_;
  } else {
    Unlink(slot, head);
    if (*head == UINT32_MAX) waiting_.erase(pod.node_name);
  }
  UnindexLabels(slot);
  pod = BoundPod{};
  free_pod_slots_.push_back(slot);
  return true;
}

std::vector<NodeTable::PodOnRow> NodeTable::PodsBoundTo(RowId row) const {
  std::vector<PodOnRow> out;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    out.push_back({pods_[slot].key, pods_[slot].requests});
  }
  return out;
}

bool NodeTable::SetPodAside(std::string_view key) {
  auto it = pod_index_.find(std::string(key));
  if (it == pod_index_.end()) return false;
  uint32_t slot = it->second;
  BoundPod& pod = pods_[slot];
  if (pod.aside || pod.row == kNoRow) return false;
  Unlink(slot, &pod_head_[pod.row]);
  TouchRow(pod.row);
  Apply(slot, pod.row, -1);
  --bound_pods_;
  ++aside_pods_;
  pod.aside = true;
  return true;
}

bool NodeTable::PutPodBack(std::string_view key) {
  auto it = pod_index_.find(std::string(key));
  if (it == pod_index_.end()) return false;
  uint32_t slot = it->second;
  BoundPod& pod = pods_[slot];
  if (!pod.aside) return false;
  pod.aside = false;
  Link(slot, &pod_head_[pod.row]);
  TouchRow(pod.row);
  Apply(slot, pod.row, +1);
  ++bound_pods_;
  --aside_pods_;
  return true;
}

}  // namespace policy::rt
