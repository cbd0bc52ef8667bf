// NodeTable: binding and unbinding pods.
//
// Each bound pod remembers what it added to its node, so unbinding subtracts
// exactly that. A pod is a fixed-size record; its strings live in
// pod_strings_ and its labels, requests and term groups in arenas (see
// node_table.h), rebuilt when unbinds have left more garbage than data. Pods of a node hang off the row in a doubly linked list (for
// O(1) unbind and O(pods on node) removal); pods that name a node the table
// does not have wait in a list per node name until it is added.

#include "runtime/columnar/node_table.h"

#include <algorithm>

#include "k8s/pod_resources.h"
#include "k8s/quantity.h"

namespace policy::rt {

std::vector<const k8s::HostPort*> NodeTable::UsedPorts(RowId row) const {
  std::vector<const k8s::HostPort*> ports;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    if (const PodExtra* extra = ExtraOf(pods_[slot])) {
      for (const k8s::HostPort& p : extra->host_ports) ports.push_back(&p);
    }
  }
  return ports;
}

std::vector<std::pair<const std::string*, bool>> NodeTable::Disks(RowId row) const {
  std::vector<std::pair<const std::string*, bool>> disks;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    const PodExtra* extra = ExtraOf(pods_[slot]);
    if (extra == nullptr) continue;
    for (const k8s::Volume& v : extra->volumes) {
      for (const std::string& id : v.disks) disks.emplace_back(&id, v.read_only);
    }
  }
  return disks;
}

std::vector<std::pair<std::string, std::string>> NodeTable::AttachedVolumes(RowId row) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    const BoundPod& pod = pods_[slot];
    const PodExtra* extra = ExtraOf(pod);
    if (extra == nullptr) continue;
    for (const k8s::Volume& v : extra->volumes) {
      if (v.kind == k8s::Volume::Kind::kOther) continue;
      // A claim the snapshot lacks is not counted for a pod already placed.
      const k8s::PersistentVolumeClaim* claim = storage_.Claim(PodNamespace(pod), v.claim);
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
  for (const auto& [index, amount] : RequestsOf(pod)) {
    ResourceColumn& column = resources_[index];
    Wrap(column.requested[row], sign, amount);
    column.requested_milli[row] = column.cpu ? column.requested[row] : k8s::SaturatedMilli(column.requested[row]);
  }
  Wrap(nonzero_cpu_[row], sign, pod.nonzero_cpu);
  Wrap(nonzero_memory_[row], sign, pod.nonzero_memory);
  nonzero_memory_milli_[row] = k8s::SaturatedMilli(nonzero_memory_[row]);
  pod_count_[row] += static_cast<uint32_t>(sign);
  if (const PodExtra* extra = ExtraOf(pod)) {
    for (const k8s::Volume& v : extra->volumes) {
      if (v.kind == k8s::Volume::Kind::kOther) continue;
      std::string key = StorageObjects::ClaimKey(PodNamespace(pod), v.claim);
      if ((claim_users_[key] += sign) == 0) claim_users_.erase(key);
    }
  }
  ApplyTopology(pod, row, sign);
}

namespace {

std::string LabelPair(std::string_view key, std::string_view value) {
  std::string out(key);
  out += '\0';
  out += value;
  return out;
}

}  // namespace

uint32_t NodeTable::InternPodString(std::string_view text) { return pod_strings_.Intern(text); }

std::optional<uint32_t> NodeTable::SlotOf(std::string_view key) const {
  std::optional<uint32_t> id = pod_strings_.Lookup(key);
  if (!id || *id >= slot_of_key_.size() || slot_of_key_[*id] == UINT32_MAX) return std::nullopt;
  return slot_of_key_[*id];
}

bool NodeTable::PodMatches(const PodSelector& selector, const BoundPod& pod) const {
  if (selector.skip_terminating && pod.terminating) return false;
  const PodLabel* labels = pod_labels_.data() + pod.labels;
  return selector.MatchesWith(PodNamespace(pod), [&](std::string_view key) -> std::optional<std::string_view> {
    for (uint32_t i = 0; i < pod.label_count; ++i) {
      if (pod_strings_.Get(labels[i].key) == key) return pod_strings_.Get(labels[i].value);
    }
    return std::nullopt;
  });
}

void NodeTable::IndexLabels(uint32_t slot) {
  const BoundPod& pod = pods_[slot];
  for (uint32_t i = pod.labels; i < pod.labels + pod.label_count; ++i) {
    PodLabel& label = pod_labels_[i];
    if (pods_by_label_.size() <= label.pair) pods_by_label_.resize(std::max<size_t>(label.pair + 1, pod_strings_.size()));
    std::vector<uint32_t>& list = pods_by_label_[label.pair];
    label.at = static_cast<uint32_t>(list.size());
    list.push_back(slot);
  }
}

const std::vector<uint32_t>* NodeTable::SlotsWithLabel(std::string_view key, std::string_view value) const {
  std::optional<uint32_t> pair = pod_strings_.Lookup(LabelPair(key, value));
  if (!pair || *pair >= pods_by_label_.size() || pods_by_label_[*pair].empty()) return nullptr;
  return &pods_by_label_[*pair];
}

// Each of the pod's entries is replaced by the list's last one (whose
// position is then updated), so an unbind costs its labels, not the pods
// that share them.
void NodeTable::UnindexLabels(uint32_t slot) {
  const BoundPod& pod = pods_[slot];
  for (uint32_t i = pod.labels; i < pod.labels + pod.label_count; ++i) {
    const PodLabel& label = pod_labels_[i];
    std::vector<uint32_t>& list = pods_by_label_[label.pair];
    uint32_t at = label.at, end = static_cast<uint32_t>(list.size() - 1), last = list[end];
    list[at] = last;
    const BoundPod& moved = pods_[last];  // its entry that was at the end (a label twice is two entries)
    for (uint32_t j = moved.labels; j < moved.labels + moved.label_count; ++j) {
      if (pod_labels_[j].at == end && pod_labels_[j].pair == label.pair) {
        pod_labels_[j].at = at;
        break;
      }
    }
    list.pop_back();
    if (list.empty()) std::vector<uint32_t>().swap(list);  // its memory back
  }
}

// Rebuilds the pod strings and arenas from the pods in the table, when the
// garbage unbinds left outgrows what is live: O(pods' labels), after at
// least as many entries or strings were let go.
void NodeTable::ReclaimPodStorage() {
  size_t entries = pod_labels_.size() + pod_requests_.size() + pod_groups_.size();
  bool arenas = arena_garbage_ > entries - arena_garbage_ + 4096;
  bool strings = pod_strings_.size() > 2 * pod_strings_kept_ + 4096;
  if (!arenas && !strings) return;
  StringPool kept;
  std::vector<PodLabel> labels;
  std::vector<std::pair<uint32_t, int64_t>> requests;
  std::vector<uint32_t> groups;
  for (BoundPod& pod : pods_) {
    if (pod.key == 0) continue;
    pod.key = kept.Intern(pod_strings_.Get(pod.key));
    pod.ns = kept.Intern(pod_strings_.Get(pod.ns));
    if (pod.uid != 0) pod.uid = kept.Intern(pod_strings_.Get(pod.uid));
    if (pod.start_time != 0) pod.start_time = kept.Intern(pod_strings_.Get(pod.start_time));
    if (pod.priority_class != 0 && pod.priority_class != UINT32_MAX) {
      pod.priority_class = kept.Intern(pod_strings_.Get(pod.priority_class));
    }
    uint32_t first = static_cast<uint32_t>(labels.size());
    for (uint32_t i = pod.labels; i < pod.labels + pod.label_count; ++i) {
      const PodLabel& l = pod_labels_[i];
      labels.push_back({kept.Intern(pod_strings_.Get(l.key)), kept.Intern(pod_strings_.Get(l.value)),
                        kept.Intern(pod_strings_.Get(l.pair)), 0});
    }
    pod.labels = first;
    first = static_cast<uint32_t>(requests.size());
    requests.insert(requests.end(), pod_requests_.begin() + pod.requests, pod_requests_.begin() + pod.requests + pod.request_count);
    pod.requests = first;
    first = static_cast<uint32_t>(groups.size());
    groups.insert(groups.end(), pod_groups_.begin() + pod.groups, pod_groups_.begin() + pod.groups + pod.group_count);
    pod.groups = first;
  }
  pod_strings_ = std::move(kept);
  pod_strings_kept_ = pod_strings_.size();
  pod_labels_ = std::move(labels);
  pod_requests_ = std::move(requests);
  pod_groups_ = std::move(groups);
  arena_garbage_ = 0;
  slot_of_key_.assign(pod_strings_.size(), UINT32_MAX);
  pods_by_label_.clear();
  for (uint32_t slot = 0; slot < pods_.size(); ++slot) {
    if (pods_[slot].key == 0) continue;
    slot_of_key_[pods_[slot].key] = slot;
    IndexLabels(slot);
  }
}

BindResult NodeTable::BindPod(const k8s::Pod& pod) {
  if (pod.node_name.empty()) return BindResult::kNotBound;
  if (pod.phase == k8s::PodPhase::kSucceeded || pod.phase == k8s::PodPhase::kFailed) return BindResult::kFinished;
  std::string key = pod.namespace_name + "/" + pod.name;
  if (SlotOf(key)) return BindResult::kDuplicate;

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
  bound.key = InternPodString(key);
  bound.ns = InternPodString(pod.namespace_name);
  bound.node_name = pool_.Intern(pod.node_name);
  if (!pod.uid.empty()) bound.uid = InternPodString(pod.uid);
  bound.terminating = pod.terminating;
  if (!pod.start_time.empty()) bound.start_time = InternPodString(pod.start_time);
  if (pod.priority) {
    bound.priority_class = UINT32_MAX;
    bound.priority = *pod.priority;
  } else if (!pod.priority_class_name.empty()) {
    bound.priority_class = InternPodString(pod.priority_class_name);
  }
  bound.requests = static_cast<uint32_t>(pod_requests_.size());
  for (const auto& [name, quantity] : k8s::PodRequests(pod)) {
    pod_requests_.emplace_back(ResourceIndex(name), k8s::SchedulerUnits(name, quantity));
  }
  bound.request_count = static_cast<uint32_t>(pod_requests_.size() - bound.requests);
  k8s::NonZeroRequests nonzero = k8s::PodNonZeroRequests(pod);
  bound.nonzero_cpu = nonzero.milli_cpu;
  bound.nonzero_memory = nonzero.memory;
  bound.labels = static_cast<uint32_t>(pod_labels_.size());
  for (const auto& [key, value] : pod.labels) {
    pod_labels_.push_back({InternPodString(key), InternPodString(value), InternPodString(LabelPair(key, value)), 0});
  }
  bound.label_count = static_cast<uint32_t>(pod_labels_.size() - bound.labels);
  PodExtra extra;
  for (const k8s::Container& c : pod.containers) {
    extra.host_ports.insert(extra.host_ports.end(), c.host_ports.begin(), c.host_ports.end());
  }
  for (const k8s::Volume& v : pod.volumes) {
    if (v.kind != k8s::Volume::Kind::kOther || !v.disks.empty()) extra.volumes.push_back(v);
  }
  if (!extra.host_ports.empty() || !extra.volumes.empty()) {
    if (free_extras_.empty()) {
      bound.extra = static_cast<uint32_t>(pod_extras_.size());
      pod_extras_.push_back(std::move(extra));
    } else {
      bound.extra = free_extras_.back();
      free_extras_.pop_back();
      pod_extras_[bound.extra] = std::move(extra);
    }
  }
  InternTermGroups(pod, bound);
  if (slot_of_key_.size() <= bound.key) slot_of_key_.resize(std::max<size_t>(bound.key + 1, pod_strings_.size()), UINT32_MAX);
  slot_of_key_[bound.key] = slot;
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
  std::optional<uint32_t> found = SlotOf(key);
  if (!found) return false;
  uint32_t slot = *found;
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
  slot_of_key_[pod.key] = UINT32_MAX;
  arena_garbage_ += pod.label_count + pod.request_count + pod.group_count;
  if (pod.extra != UINT32_MAX) {
    pod_extras_[pod.extra] = PodExtra{};
    free_extras_.push_back(pod.extra);
  }
  pod = BoundPod{};
  free_pod_slots_.push_back(slot);
  ReclaimPodStorage();
  return true;
}

size_t NodeTable::PodMemoryBytes() const {
  size_t bytes = pods_.capacity() * sizeof(BoundPod) + pod_strings_.MemoryBytes() + pod_labels_.capacity() * sizeof(PodLabel) +
                 pod_requests_.capacity() * sizeof(pod_requests_[0]) + pod_groups_.capacity() * 4 +
                 pod_extras_.capacity() * sizeof(PodExtra) + slot_of_key_.capacity() * 4 +
                 pods_by_label_.capacity() * sizeof(pods_by_label_[0]);
  for (const std::vector<uint32_t>& list : pods_by_label_) bytes += list.capacity() * 4;
  return bytes;
}

std::vector<NodeTable::PodOnRow> NodeTable::PodsBoundTo(RowId row) const {
  std::vector<PodOnRow> out;
  for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
    const BoundPod& pod = pods_[slot];
    int32_t priority = pod.priority;
    if (pod.priority_class != UINT32_MAX) {
      std::string_view name = pod.priority_class != 0 ? pod_strings_.Get(pod.priority_class) : std::string_view();
      priority = storage_.PriorityOf(std::nullopt, name).value_or(0);
    }
    out.push_back({PodKey(pod), RequestsOf(pod), pod.uid != 0 ? pod_strings_.Get(pod.uid) : std::string_view(),
                   priority, pod.start_time != 0 ? pod_strings_.Get(pod.start_time) : std::string_view()});
  }
  return out;
}

k8s::StringMap NodeTable::PodLabels(std::string_view key) const {
  k8s::StringMap labels;
  std::optional<uint32_t> slot = SlotOf(key);
  if (!slot) return labels;
  const BoundPod& pod = pods_[*slot];
  for (uint32_t i = pod.labels; i < pod.labels + pod.label_count; ++i) {
    labels.emplace_back(pod_strings_.Get(pod_labels_[i].key), pod_strings_.Get(pod_labels_[i].value));
  }
  return labels;
}

bool NodeTable::SetPodAside(std::string_view key) {
  std::optional<uint32_t> found = SlotOf(key);
  if (!found) return false;
  uint32_t slot = *found;
  BoundPod& pod = pods_[slot];
  if (pod.aside || pod.row == kNoRow) return false;
  Unlink(slot, &pod_head_[pod.row]);
  TouchRow(pod.row);
  Apply(slot, pod.row, -1);
  --bound_pods_;
  ++aside_pods_;
  pod.aside = 1;
  return true;
}

bool NodeTable::PutPodBack(std::string_view key) {
  std::optional<uint32_t> found = SlotOf(key);
  if (!found) return false;
  uint32_t slot = *found;
  BoundPod& pod = pods_[slot];
  if (!pod.aside) return false;
  pod.aside = 0;
  Link(slot, &pod_head_[pod.row]);
  TouchRow(pod.row);
  Apply(slot, pod.row, +1);
  ++bound_pods_;
  --aside_pods_;
  return true;
}

}  // namespace policy::rt
