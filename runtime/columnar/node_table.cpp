#include "runtime/columnar/node_table.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>

#include "k8s/quantity.h"
#include "runtime/columnar/device_table.h"
#include "support/decimal.h"

namespace policy::rt {
namespace {

template <typename T>
void Append(std::vector<T>& v, T value) {
  v.push_back(value);
}

}  // namespace

// Dictionary versions are unique in the process, not per table: a program
// bound to one table's dictionaries (or specialized against them, and kept
// by the engine for other pods) is never taken for another table's.
uint64_t NextDictionaryVersion() {
  static std::atomic<uint64_t> last{0};
  return ++last;
}

NodeTable::NodeTable() : dictionary_version_(NextDictionaryVersion()) { taint_lists_.emplace_back(); }

std::string NodeTable::TaintKey(const TaintEntry& t) {
  std::string out(12, '\0');
  uint32_t ids[3] = {t.key, t.value, static_cast<uint32_t>(t.effect)};
  std::memcpy(out.data(), ids, sizeof ids);
  return out;
}

std::optional<RowId> NodeTable::FindNode(std::string_view name) const {
  std::optional<uint32_t> id = pool_.Lookup(name);
  if (!id) return std::nullopt;
  RowId row = RowOfName(*id);
  if (row == kNoRow) return std::nullopt;
  return row;
}

const LabelColumn* NodeTable::Label(std::string_view key) const {
  std::optional<uint32_t> id = pool_.Lookup(key);
  if (!id) return nullptr;
  auto it = label_index_.find(*id);
  return it == label_index_.end() ? nullptr : &labels_[it->second];
}

const ResourceColumn* NodeTable::Resource(std::string_view name) const {
  std::optional<uint32_t> id = pool_.Lookup(name);
  if (!id) return nullptr;
  auto it = resource_index_.find(*id);
  return it == resource_index_.end() ? nullptr : &resources_[it->second];
}

LabelColumn& NodeTable::LabelFor(uint32_t key) {
  auto [it, added] = label_index_.emplace(key, static_cast<uint32_t>(labels_.size()));
  if (added) {
    LabelColumn column;
    column.key = key;
    column.domain.assign(RowCount(), 0);
    column.value.push_back(0);
    column.int_value.push_back(0);
    column.is_int.push_back(0);
    column.quantity_milli.push_back(0);
    column.is_quantity.push_back(0);
    column.live_nodes.push_back(0);
    labels_.push_back(std::move(column));
    dictionary_version_ = NextDictionaryVersion();
  }
  return labels_[it->second];
}

uint32_t NodeTable::DomainFor(LabelColumn& column, uint32_t value) {
  auto [it, added] = column.domain_of.emplace(value, static_cast<uint32_t>(column.value.size()));
  if (added) {
    std::optional<int64_t> as_int = ParseDecimalInt(pool_.Get(value));
    column.value.push_back(value);
    column.int_value.push_back(as_int.value_or(0));
    column.is_int.push_back(as_int.has_value());
    std::optional<k8s::Quantity> as_quantity = k8s::Quantity::Parse(pool_.Get(value));
    column.quantity_milli.push_back(as_quantity ? as_quantity->MilliValue() : 0);
    column.is_quantity.push_back(as_quantity.has_value());
    column.live_nodes.push_back(0);
    dictionary_version_ = NextDictionaryVersion();
  }
  return it->second;
}

uint32_t NodeTable::ResourceIndex(std::string_view name) {
  uint32_t id = pool_.Intern(name);
  auto [it, added] = resource_index_.emplace(id, static_cast<uint32_t>(resources_.size()));
  if (added) {
    ResourceColumn column;
    column.name = id;
    column.cpu = name == "cpu";
    column.allocatable.assign(RowCount(), 0);
    column.requested.assign(RowCount(), 0);
    column.allocatable_milli.assign(RowCount(), 0);
    column.requested_milli.assign(RowCount(), 0);
    resources_.push_back(std::move(column));
    dictionary_version_ = NextDictionaryVersion();  // bound programs read a resource no node had as 0
  }
  return it->second;
}

void NodeTable::GrowTaintWords(size_t words) {
  std::vector<uint64_t> bits(RowCount() * words, 0);
  for (size_t row = 0; row < RowCount(); ++row) {
    std::copy_n(taint_bits_.begin() + static_cast<long>(row * taint_words_), taint_words_,
                bits.begin() + static_cast<long>(row * words));
  }
  taint_bits_ = std::move(bits);
  taint_words_ = words;
}

uint32_t NodeTable::TaintListFor(const std::vector<k8s::Taint>& taints) {
  if (taints.empty()) return 0;
  std::vector<uint32_t> ids;
  for (const k8s::Taint& t : taints) {
    TaintEntry entry{pool_.Intern(t.key), pool_.Intern(t.value), t.effect};
    auto [it, added] = taint_ids_.emplace(TaintKey(entry),
                                          static_cast<uint32_t>(taints_.size()));
    if (added) {
      taints_.push_back(entry);
      dictionary_version_ = NextDictionaryVersion();
      // Double the words when the dictionary outgrows them (amortised O(1)).
      if (taints_.size() > taint_words_ * 64) GrowTaintWords(taint_words_ * 2);
    }
    ids.push_back(it->second);
  }
  std::string packed(ids.size() * 4, '\0');
  std::memcpy(packed.data(), ids.data(), packed.size());
  auto [it, added] = taint_list_ids_.emplace(std::move(packed), static_cast<uint32_t>(taint_lists_.size()));
  if (added) taint_lists_.push_back(std::move(ids));
  return it->second;
}

void NodeTable::WriteNodeData(RowId row, const k8s::Node& node) {
  ++topology_epoch_;  // labels change: per-domain counts rebuild
  for (const auto& [key, value] : node.labels) {
    LabelColumn& column = LabelFor(pool_.Intern(key));
    uint32_t domain = DomainFor(column, pool_.Intern(value));
    column.domain[row] = domain;
    ++column.live_nodes[domain];
  }
  for (const auto& [name, quantity] : node.allocatable) {
    uint32_t index = ResourceIndex(name);
    ResourceColumn& column = resources_[index];
    column.allocatable[row] = k8s::SchedulerUnits(name, quantity);
    column.allocatable_milli[row] = k8s::SchedulerUnitsToMilli(name, column.allocatable[row]);
  }
  unschedulable_[row] = node.unschedulable;
  facts_[row] = NodeFacts(node);
  for (const auto& [names, bytes] : node.images) {
    for (const std::string& name : names) {
      uint32_t id = pool_.Intern(name);
      images_[row].emplace_back(id, bytes);
      ++image_nodes_[id];
    }
  }
  uint32_t list = TaintListFor(node.taints);
  taint_list_[row] = list;
  uint64_t* bits = taint_bits_.data() + row * taint_words_;
  std::fill_n(bits, taint_words_, 0);
  for (uint32_t id : taint_lists_[list]) bits[id / 64] |= uint64_t{1} << (id % 64);
}

void NodeTable::ClearNodeData(RowId row) {
  ++topology_epoch_;
  for (LabelColumn& column : labels_) {
    uint32_t& domain = column.domain[row];
    if (domain != 0) --column.live_nodes[domain];
    domain = 0;
  }
  for (ResourceColumn& column : resources_) column.allocatable[row] = column.allocatable_milli[row] = 0;
  unschedulable_[row] = 0;
  facts_[row] = 0;
  for (const auto& [id, bytes] : images_[row]) --image_nodes_[id];
  images_[row].clear();
  taint_list_[row] = 0;
  std::fill_n(taint_bits_.begin() + static_cast<long>(row * taint_words_), taint_words_, 0);
}

std::optional<RowId> NodeTable::AddNode(const k8s::Node& node) {
  uint32_t name = pool_.Intern(node.name);
  if (RowOfName(name) != kNoRow) return std::nullopt;
  TouchAll();
  RowId row = static_cast<RowId>(RowCount());
  Append<uint8_t>(live_, 1);
  Append(name_, name);
  Append<uint8_t>(unschedulable_, 0);
  Append<uint64_t>(facts_, 0);
  Append<uint32_t>(pod_count_, 0);
  Append<int64_t>(nonzero_cpu_, 0);
  Append<int64_t>(nonzero_memory_, 0);
  Append<int64_t>(nonzero_memory_milli_, 0);
  Append<int64_t>(zeros_, 0);
  Append<uint32_t>(taint_list_, 0);
  images_.emplace_back();
  Append(pod_head_, UINT32_MAX);
  taint_bits_.resize(taint_bits_.size() + taint_words_, 0);
  for (LabelColumn& column : labels_) column.domain.push_back(0);
  for (ResourceColumn& column : resources_) {
    column.allocatable.push_back(0);
    column.requested.push_back(0);
    column.allocatable_milli.push_back(0);
    column.requested_milli.push_back(0);
  }
  if (row_of_name_.size() <= name) row_of_name_.resize(std::max<size_t>(name + 1, row_of_name_.size() * 2), kNoRow);
  row_of_name_[name] = row;
  ++live_count_;
  live_rows_.push_back(row);  // rows only grow at the end: still in order
  WriteNodeData(row, node);
  // Pods that named this node before it arrived now count on it.
  auto waiting = waiting_.find(name);
  if (waiting != waiting_.end()) {
    uint32_t slot = waiting->second;
    waiting_.erase(waiting);
    while (slot != UINT32_MAX) {
      uint32_t next = pods_[slot].next;
      pods_[slot].prev = pods_[slot].next = UINT32_MAX;
      pods_[slot].row = row;
      Link(slot, &pod_head_[row]);
      Apply(slot, row, +1);
      ++bound_pods_;
      slot = next;
    }
  }
  return row;
}

namespace {

// 64-bit FNV-1a, fed piece by piece (no string is built).
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ULL;
  Fnv& Add(std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return *this;
  }
  Fnv& Add(char c) {
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return *this;
  }
  Fnv& Add(uint64_t v) {
    for (int i = 0; i < 8; ++i) Add(static_cast<char>(v >> (8 * i)));
    return *this;
  }
};

}  // namespace

uint64_t NodeTable::NodeFacts(const k8s::Node& node) {
  // Each line of the unordered parts hashed alone and the hashes sorted,
  // so that order does not matter, then folded into one FNV-1a with the
  // ordered parts (a check for change, not against an adversary).
  Fnv all;
  std::vector<uint64_t> lines;
  lines.reserve(node.labels.size());
  auto fold = [&] {
    std::sort(lines.begin(), lines.end());
    for (uint64_t line : lines) all.Add(line);
    all.Add('\f');
    lines.clear();
  };
  for (const auto& [key, value] : node.labels) lines.push_back(Fnv().Add(key).Add('=').Add(value).h);
  fold();
  for (const auto& [name, quantity] : node.allocatable) {
    lines.push_back(Fnv().Add(name).Add('=').Add(static_cast<uint64_t>(k8s::SchedulerUnits(name, quantity))).h);
  }
  fold();
  for (const k8s::Taint& t : node.taints) {
    all.Add(t.key).Add('=').Add(t.value).Add(':').Add(static_cast<uint64_t>(t.effect)).Add('\n');
  }
  all.Add(node.unschedulable ? "unschedulable\f" : "\f");
  for (const auto& [names, bytes] : node.images) {
    for (const std::string& name : names) lines.push_back(Fnv().Add(name).Add(' ').Add(static_cast<uint64_t>(bytes)).h);
  }
  fold();
  return all.h == 0 ? 1 : all.h;  // 0 is a row without a node
}

bool NodeTable::UpdateNode(const k8s::Node& node) {
  std::optional<RowId> row = FindNode(node.name);
  if (!row) return false;
  TouchAll();  // its labels may move it between topology domains
  ClearNodeData(*row);
  WriteNodeData(*row, node);
  return true;
}

bool NodeTable::RemoveNode(std::string_view name) {
  std::optional<RowId> found = FindNode(name);
  if (!found) return false;
  TouchAll();
  RowId row = *found;
  // Its pods go back to waiting for a node of this name.
  uint32_t slot = pod_head_[row];
  while (slot != UINT32_MAX) {
    uint32_t next = pods_[slot].next;
    Apply(slot, row, -1);
    --bound_pods_;
    pods_[slot].row = kNoRow;
    pods_[slot].prev = pods_[slot].next = UINT32_MAX;
    Link(slot, HeadFor(pods_[slot]));
    slot = next;
  }
  pod_head_[row] = UINT32_MAX;
  ClearNodeData(row);
  row_of_name_[name_[row]] = kNoRow;
  live_[row] = 0;
  --live_count_;
  live_rows_.erase(std::lower_bound(live_rows_.begin(), live_rows_.end(), row));
  if (RowCount() > 1024 && RowCount() - live_count_ > live_count_) Compact();
  return true;
}

// Drops removed rows, keeping the order of the others. O(rows), and only
// after as many removals as live rows: amortised O(1) per removal.
void NodeTable::Compact() {
  std::vector<RowId> new_row(RowCount(), kNoRow);
  RowId next = 0;
  for (RowId row = 0; row < RowCount(); ++row) {
    if (live_[row]) new_row[row] = next++;
  }
  auto keep = [&](auto& column, size_t stride) {
    size_t out = 0;
    for (RowId row = 0; row < new_row.size(); ++row) {
      if (new_row[row] == kNoRow) continue;
      for (size_t k = 0; k < stride; ++k) column[out * stride + k] = column[row * stride + k];
      ++out;
    }
    column.resize(out * stride);
  };
  keep(live_, 1);
  keep(name_, 1);
  keep(unschedulable_, 1);
  keep(facts_, 1);
  keep(pod_count_, 1);
  keep(nonzero_cpu_, 1);
  keep(nonzero_memory_, 1);
  keep(nonzero_memory_milli_, 1);
  zeros_.assign(live_.size() + 1, 0);
  keep(taint_list_, 1);
  keep(images_, 1);
  keep(pod_head_, 1);
  keep(taint_bits_, taint_words_);
  for (LabelColumn& column : labels_) keep(column.domain, 1);
  for (ResourceColumn& column : resources_) {
    keep(column.allocatable, 1);
    keep(column.requested, 1);
    keep(column.allocatable_milli, 1);
    keep(column.requested_milli, 1);
  }
  for (RowId& row : row_of_name_) {
    if (row != kNoRow) row = new_row[row];
  }
  for (RowId& row : live_rows_) row = new_row[row];
  CompactTopology(new_row);
  for (BoundPod& pod : pods_) {
    if (pod.row != kNoRow) pod.row = new_row[pod.row];
  }
}

void NodeTable::SetNamespaceLabels(std::string_view name, k8s::StringMap labels) {
  TouchAll();
  namespaces_[std::string(name)] = std::move(labels);
}

bool NodeTable::RemoveSelectorOwner(std::string_view kind, std::string_view namespace_name, std::string_view name) {
  auto it = std::find_if(owners_.begin(), owners_.end(), [&](const k8s::SelectorOwner& o) {
    return o.kind == kind && o.namespace_name == namespace_name && o.name == name;
  });
  if (it == owners_.end()) return false;
  TouchAll();
  owners_.erase(it);
  return true;
}

bool NodeTable::RowsChangedSince(uint64_t epoch, std::vector<RowId>& rows) const {
  if (epoch < whole_epoch_) return false;
  auto first = std::upper_bound(row_changes_.begin(), row_changes_.end(), epoch,
                                [](uint64_t e, const std::pair<uint64_t, RowId>& change) { return e < change.first; });
  for (auto it = first; it != row_changes_.end(); ++it) rows.push_back(it->second);
  return true;
}

const k8s::StringMap& NodeTable::NamespaceLabels(std::string_view name) const {
  static const k8s::StringMap kNone;
  auto it = namespaces_.find(std::string(name));
  return it == namespaces_.end() ? kNone : it->second;
}

int64_t NodeTable::ImageSize(RowId row, uint32_t image) const {
  for (const auto& [id, bytes] : images_[row]) {
    if (id == image) return bytes;
  }
  return 0;
}

int64_t NodeTable::NodesWithImage(std::string_view name) const {
  std::optional<uint32_t> id = pool_.Lookup(name);
  if (!id) return 0;
  auto it = image_nodes_.find(*id);
  return it == image_nodes_.end() ? 0 : it->second;
}

// What the data takes, by element counts: a table read from an image holds
// the same bytes as the one that wrote it, whatever spare room either grew.
size_t NodeTable::RowMemoryBytes() const {
  size_t bytes = live_.size() + name_.size() * 4 + unschedulable_.size() + facts_.size() * 8 + pod_count_.size() * 4 +
                 nonzero_cpu_.size() * 8 + nonzero_memory_.size() * 8 + nonzero_memory_milli_.size() * 8 +
                 taint_list_.size() * 4 + taint_bits_.size() * 8 + pod_head_.size() * 4 + zeros_.size() * 8;
  // The name index is per row too.
  bytes += row_of_name_.size() * sizeof(RowId);
  for (const LabelColumn& column : labels_) bytes += column.domain.size() * 4;
  for (const ResourceColumn& column : resources_) {
    bytes += (column.allocatable.size() + column.requested.size() + column.allocatable_milli.size() +
              column.requested_milli.size()) * 8;
  }
  return bytes;
}

size_t NodeTable::DictionaryMemoryBytes() const {
  size_t bytes = pool_.MemoryBytes();
  for (const LabelColumn& column : labels_) {
    bytes += column.value.size() * 4 + column.int_value.size() * 8 + column.is_int.size() +
             column.quantity_milli.size() * 8 + column.is_quantity.size() + column.live_nodes.size() * 4 +
             column.domain_of.size() * (8 + 2 * sizeof(void*));
  }
  return bytes;
}

std::shared_ptr<const DeviceTable> NodeTable::Devices() const {
  std::lock_guard<std::mutex> lock(device_cache_->mu);
  DeviceCache& c = *device_cache_;
  bool same_layout = c.table && c.other_storage == other_storage_version_ && c.epoch == topology_epoch_ &&
                     c.rows == RowCount() && c.claim_changes <= claim_device_changes_.size();
  if (same_layout && c.storage != storage_version_) {  // only claims changed: their devices
    std::span<const ClaimDeviceChange> since(claim_device_changes_);
    auto derived = std::make_shared<DeviceTable>(*c.table, since.subspan(c.claim_changes));
    derived->position_ = claim_device_changes_.size();
    c.table = std::move(derived);
  } else if (!same_layout) {
    std::shared_ptr<const DeviceColumns> reuse = c.table ? c.table->Columns() : nullptr;
    auto built = std::make_shared<DeviceTable>(storage_, *this, std::move(reuse), c.how);
    built->position_ = claim_device_changes_.size();
    c.table = std::move(built);
  }
  c.storage = storage_version_;
  c.other_storage = other_storage_version_;
  c.epoch = topology_epoch_;
  c.rows = RowCount();
  c.claim_changes = claim_device_changes_.size();
  return c.table;
}

// Past this many devices logged, a claim change builds the next device table
// from scratch (about 100 bytes an entry: the log stays under 7 MB).
constexpr size_t kMaxClaimDeviceChanges = size_t{1} << 16;

void NodeTable::LogClaimDevices(const k8s::ResourceClaim& claim, int delta) {
  if (!claim.allocation) return;
  for (const k8s::DeviceResult& d : claim.allocation->devices) {
    if (!d.admin_access) claim_device_changes_.push_back({d.driver, d.pool, d.device, delta});
  }
}

void NodeTable::SetResourceClaim(k8s::ResourceClaim claim) {
  std::string key = StorageObjects::ClaimKey(claim.namespace_name, claim.name);
  if (claim_device_changes_.size() >= kMaxClaimDeviceChanges) MutableStorage();  // a bound on the log
  ++storage_version_;
  auto it = storage_.resource_claims.find(key);
  if (it != storage_.resource_claims.end()) LogClaimDevices(it->second, -1);
  LogClaimDevices(claim, +1);
  storage_.resource_claims.insert_or_assign(std::move(key), std::move(claim));
}

bool NodeTable::RemoveResourceClaim(std::string_view namespace_name, std::string_view name) {
  auto it = storage_.resource_claims.find(StorageObjects::ClaimKey(namespace_name, name));
  if (it == storage_.resource_claims.end()) return false;
  if (claim_device_changes_.size() >= kMaxClaimDeviceChanges) MutableStorage();
  ++storage_version_;
  LogClaimDevices(it->second, -1);
  storage_.resource_claims.erase(it);
  return true;
}

void NodeTable::SetDeviceSelectors(DeviceSelectors how) const {
  std::lock_guard<std::mutex> lock(device_cache_->mu);
  DeviceCache& c = *device_cache_;
  if (c.how == how) return;
  c.how = std::move(how);
  c.table.reset();  // built again, with columns that decide as asked
}

}  // namespace policy::rt
