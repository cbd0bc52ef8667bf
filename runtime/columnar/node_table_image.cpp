// NodeTable: the image the snapshot cache keeps (node_table.h, docs/cache.md).
//
// Layout, in order (varints and length-prefixed byte arrays, object_archive.h):
//   the string pool (every string, in id order);
//   taints (key, value, effect) and taint lists;
//   rows: live, name, unschedulable and taint-list columns as arrays, then
//     each row's images;
//   label columns: key, then the per-domain arrays and the per-row domain
//     ids as arrays;
//   resource columns: name, cpu flag, allocatable arrays;
//   namespaces, selector owners, storage objects (as the archive writes them);
//   term groups (kind, weight, term, owner namespace);
//   bound pods: their string pool, the records (BoundPod, fixed-size) and
//     each row's first, the label, request and term-group arenas as arrays,
//     then the host ports and volumes of the few pods with any.
// Everything derived — indexes by name, value, key and pod label, requested
// and non-zero sums, pod counts, claim users, term-group counts, taint bitsets,
// live nodes per domain — is rebuilt from those as the table's own updates
// build it, so an image cannot hold an index that disagrees with its data.
// Pod sets and per-domain sums are not kept: they are counted at their
// first use, as in any table.

#include <algorithm>
#include <cstring>

#include "k8s/object_archive.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

uint64_t NextDictionaryVersion();  // node_table.cpp

namespace {

template <class T>
void PutArray(k8s::ArchiveWriter& out, const std::vector<T>& v) {
  static_assert(std::has_unique_object_representations_v<T>, "arrays of plain data without padding only");
  out.Str(std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

// An array of exactly `size` elements (any size when `size` is SIZE_MAX).
template <class T>
bool GetArray(k8s::ArchiveReader& in, std::vector<T>& v, size_t size = SIZE_MAX) {
  std::string_view bytes = in.View();
  if (!in.Ok() || bytes.size() % sizeof(T) != 0) return false;
  if (size != SIZE_MAX && bytes.size() / sizeof(T) != size) return false;
  v.resize(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
  return true;
}

// A count of things each at least a byte long: more than the bytes left is damage.
bool GetCount(k8s::ArchiveReader& in, uint64_t& n) {
  n = in.U64();
  return in.Ok() && n <= in.Remaining();
}

template <class T>
void PutObjects(k8s::ArchiveWriter& out, const std::unordered_map<std::string, T>& map) {
  out.U64(map.size());
  for (const auto& [key, object] : map) out.Put(object);
}

template <class T, class KeyOf>
bool GetObjects(k8s::ArchiveReader& in, std::unordered_map<std::string, T>& map, KeyOf key_of) {
  uint64_t n;
  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    T object;
    if (!in.Get(object)) return false;
    std::string key = key_of(object);
    if (!map.try_emplace(std::move(key), std::move(object)).second) return false;
  }
  return true;
}

}  // namespace

bool NodeTable::WriteImage(k8s::ArchiveWriter& out) const {
  if (aside_pods_ != 0 || WaitingPodCount() != 0) return false;
  out.U64(pool_.size() - 1);
  for (uint32_t id = 1; id < pool_.size(); ++id) out.Str(pool_.Get(id));

  out.U64(taints_.size());
  for (const TaintEntry& t : taints_) {
    out.U64(t.key);
    out.U64(t.value);
    out.U64(static_cast<uint64_t>(t.effect));
  }
  out.U64(taint_lists_.size());
  for (const std::vector<uint32_t>& list : taint_lists_) PutArray(out, list);

  out.U64(RowCount());
  PutArray(out, live_);
  PutArray(out, name_);
  PutArray(out, unschedulable_);
  PutArray(out, facts_);
  PutArray(out, taint_list_);
  for (const auto& images : images_) {
    out.U64(images.size());
    for (const auto& [id, bytes] : images) {
      out.U64(id);
      out.I64(bytes);
    }
  }

  out.U64(labels_.size());
  for (const LabelColumn& c : labels_) {
    out.U64(c.key);
    PutArray(out, c.value);
    PutArray(out, c.int_value);
    PutArray(out, c.is_int);
    PutArray(out, c.quantity_milli);
    PutArray(out, c.is_quantity);
    PutArray(out, c.domain);
  }
  out.U64(resources_.size());
  for (const ResourceColumn& c : resources_) {
    out.U64(c.name);
    out.U64(c.cpu);
    PutArray(out, c.allocatable);
    PutArray(out, c.allocatable_milli);
  }

  out.U64(namespaces_.size());
  for (const auto& [name, labels] : namespaces_) out.Put(k8s::Namespace{name, labels});
  out.U64(owners_.size());
  for (const k8s::SelectorOwner& o : owners_) out.Put(o);
  PutObjects(out, storage_.claims);
  PutObjects(out, storage_.volumes);
  PutObjects(out, storage_.classes);
  PutObjects(out, storage_.csi_nodes);
  PutObjects(out, storage_.priority_classes);
  PutObjects(out, storage_.budgets);
  PutObjects(out, storage_.device_classes);
  PutObjects(out, storage_.resource_slices);
  PutObjects(out, storage_.resource_claims);
  PutObjects(out, storage_.claim_templates);

  out.U64(term_groups_.size());
  for (const TermGroup& g : term_groups_) {
    out.U64(static_cast<uint64_t>(g.kind));
    out.I64(g.weight);
    out.Put(g.term);
    out.Str(g.owner_namespace);
  }

  out.U64(pod_strings_.size() - 1);
  for (uint32_t id = 1; id < pod_strings_.size(); ++id) out.Str(pod_strings_.Get(id));
  // The arenas as the pods use them, slot by slot, without what unbinds
  // left: each pod's ranges start where the previous pod's end.
  std::vector<BoundPod> pods = pods_;
  std::vector<PodLabel> labels;
  std::vector<uint32_t> groups;
  labels.reserve(pod_labels_.size());
  groups.reserve(pod_groups_.size());
  size_t requests = 0;
  for (BoundPod& pod : pods) {
    if (pod.key == 0) continue;
    uint32_t first = static_cast<uint32_t>(labels.size());
    labels.insert(labels.end(), pod_labels_.begin() + pod.labels, pod_labels_.begin() + pod.labels + pod.label_count);
    pod.labels = first;
    first = static_cast<uint32_t>(groups.size());
    groups.insert(groups.end(), pod_groups_.begin() + pod.groups, pod_groups_.begin() + pod.groups + pod.group_count);
    pod.groups = first;
    pod.requests = static_cast<uint32_t>(requests);
    requests += pod.request_count;
  }
  PutArray(out, pods);
  PutArray(out, pod_head_);
  PutArray(out, labels);
  out.U64(requests);
  for (const BoundPod& pod : pods_) {
    if (pod.key == 0) continue;
    for (const auto& [index, amount] : RequestsOf(pod)) {
      out.U64(index);
      out.I64(amount);
    }
  }
  PutArray(out, groups);
  out.U64(pod_extras_.size() - free_extras_.size());
  for (uint32_t slot = 0; slot < pods_.size(); ++slot) {
    const PodExtra* extra = pods_[slot].key != 0 ? ExtraOf(pods_[slot]) : nullptr;
    if (extra == nullptr) continue;
    out.U64(slot);
    out.U64(extra->host_ports.size());
    for (const k8s::HostPort& p : extra->host_ports) out.Put(p);
    out.U64(extra->volumes.size());
    for (const k8s::Volume& v : extra->volumes) out.Put(v);
  }
  return true;
}

std::unique_ptr<NodeTable> NodeTable::ReadImage(k8s::ArchiveReader& in) {
  auto table = std::make_unique<NodeTable>();
  if (!table->ReadImageInto(in)) return nullptr;
  return table;
}

// Each part is read and checked, then what is derived from it rebuilt
// through the table's own bookkeeping; false at the first damage.
bool NodeTable::ReadImageInto(k8s::ArchiveReader& in) {
  uint64_t n;
  if (!GetCount(in, n)) return false;
  pool_.Reserve(n);
  for (uint64_t id = 1; id <= n; ++id) {
    std::string_view s = in.View();
    if (!in.Ok() || pool_.Intern(s) != id) return false;  // a string twice is damage
  }
  auto valid_id = [&](uint64_t id) { return id < pool_.size(); };

  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    TaintEntry e{static_cast<uint32_t>(in.U64()), static_cast<uint32_t>(in.U64()), k8s::TaintEffect::kNoSchedule};
    uint64_t effect = in.U64();
    if (!in.Ok() || !valid_id(e.key) || !valid_id(e.value) || effect > 2) return false;
    e.effect = static_cast<k8s::TaintEffect>(effect);
    if (!taint_ids_.emplace(TaintKey(e), static_cast<uint32_t>(taints_.size())).second) {
      return false;
    }
    taints_.push_back(e);
    if (taints_.size() > taint_words_ * 64) taint_words_ *= 2;
  }
  if (!GetCount(in, n) || n == 0) return false;
  taint_lists_.clear();
  for (uint64_t i = 0; i < n; ++i) {
    std::vector<uint32_t> list;
    if (!GetArray(in, list) || (i == 0) != list.empty()) return false;  // list 0, and only it, is no taints
    for (uint32_t id : list) {
      if (id >= taints_.size()) return false;
    }
    std::string packed(list.size() * 4, '\0');
    if (!list.empty()) std::memcpy(packed.data(), list.data(), packed.size());
    if (i > 0 && !taint_list_ids_.emplace(std::move(packed), static_cast<uint32_t>(i)).second) return false;
    taint_lists_.push_back(std::move(list));
  }

  uint64_t rows;
  if (!GetCount(in, rows)) return false;
  if (!GetArray(in, live_, rows) || !GetArray(in, name_, rows) || !GetArray(in, unschedulable_, rows) ||
      !GetArray(in, facts_, rows) || !GetArray(in, taint_list_, rows)) {
    return false;
  }
  images_.resize(rows);
  for (RowId row = 0; row < rows; ++row) {
    if (live_[row] > 1 || unschedulable_[row] > 1 || !valid_id(name_[row]) || taint_list_[row] >= taint_lists_.size()) {
      return false;
    }
    if (!GetCount(in, n)) return false;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t id = in.U64();
      int64_t bytes = in.I64();
      if (!in.Ok() || !valid_id(id)) return false;
      images_[row].emplace_back(static_cast<uint32_t>(id), bytes);
      if (live_[row]) ++image_nodes_[static_cast<uint32_t>(id)];
    }
  }
  pod_count_.assign(rows, 0);
  nonzero_cpu_.assign(rows, 0);
  nonzero_memory_.assign(rows, 0);
  nonzero_memory_milli_.assign(rows, 0);
  zeros_.assign(rows + 1, 0);
  pod_head_.assign(rows, UINT32_MAX);
  taint_bits_.assign(rows * taint_words_, 0);
  for (RowId row = 0; row < rows; ++row) {
    for (uint32_t id : taint_lists_[taint_list_[row]]) taint_bits_[row * taint_words_ + id / 64] |= uint64_t{1} << (id % 64);
    if (!live_[row]) continue;
    uint32_t name = name_[row];  // the index grown as AddNode grows it
    if (row_of_name_.size() <= name) row_of_name_.resize(std::max<size_t>(name + 1, row_of_name_.size() * 2), kNoRow);
    if (row_of_name_[name] != kNoRow) return false;  // two live rows of one name
    row_of_name_[name_[row]] = row;
    live_rows_.push_back(row);
    ++live_count_;
  }

  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    LabelColumn c;
    uint64_t key = in.U64();
    if (!in.Ok() || !valid_id(key) || !label_index_.emplace(static_cast<uint32_t>(key), static_cast<uint32_t>(labels_.size())).second) {
      return false;
    }
    c.key = static_cast<uint32_t>(key);
    if (!GetArray(in, c.value) || c.value.empty() || c.value[0] != 0) return false;
    size_t domains = c.value.size();
    if (!GetArray(in, c.int_value, domains) || !GetArray(in, c.is_int, domains) || !GetArray(in, c.quantity_milli, domains) ||
        !GetArray(in, c.is_quantity, domains) || !GetArray(in, c.domain, rows)) {
      return false;
    }
    for (uint32_t d = 1; d < domains; ++d) {
      if (!valid_id(c.value[d]) || !c.domain_of.emplace(c.value[d], d).second) return false;
    }
    c.live_nodes.assign(domains, 0);
    for (RowId row = 0; row < rows; ++row) {
      if (c.domain[row] >= domains) return false;
      if (live_[row] && c.domain[row] != 0) ++c.live_nodes[c.domain[row]];
    }
    labels_.push_back(std::move(c));
  }
  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    ResourceColumn c;
    uint64_t name = in.U64(), cpu = in.U64();
    if (!in.Ok() || !valid_id(name) || cpu > 1 ||
        !resource_index_.emplace(static_cast<uint32_t>(name), static_cast<uint32_t>(resources_.size())).second) {
      return false;
    }
    c.name = static_cast<uint32_t>(name);
    c.cpu = cpu == 1;
    if (!GetArray(in, c.allocatable, rows) || !GetArray(in, c.allocatable_milli, rows)) return false;
    c.requested.assign(rows, 0);
    c.requested_milli.assign(rows, 0);
    resources_.push_back(std::move(c));
  }

  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    k8s::Namespace ns;
    if (!in.Get(ns) || !namespaces_.try_emplace(ns.name, std::move(ns.labels)).second) return false;
  }
  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    k8s::SelectorOwner owner;
    if (!in.Get(owner)) return false;
    owners_.push_back(std::move(owner));
  }
  if (!GetObjects(in, storage_.claims, [](const auto& c) { return StorageObjects::ClaimKey(c.namespace_name, c.name); }) ||
      !GetObjects(in, storage_.volumes, [](const auto& v) { return v.name; }) ||
      !GetObjects(in, storage_.classes, [](const auto& c) { return c.name; }) ||
      !GetObjects(in, storage_.csi_nodes, [](const auto& c) { return c.name; }) ||
      !GetObjects(in, storage_.priority_classes, [](const auto& c) { return c.name; }) ||
      !GetObjects(in, storage_.budgets, [](const auto& b) { return StorageObjects::ClaimKey(b.namespace_name, b.name); }) ||
      !GetObjects(in, storage_.device_classes, [](const auto& c) { return c.name; }) ||
      !GetObjects(in, storage_.resource_slices, [](const auto& s) { return s.name; }) ||
      !GetObjects(in, storage_.resource_claims, [](const auto& c) { return StorageObjects::ClaimKey(c.namespace_name, c.name); }) ||
      !GetObjects(in, storage_.claim_templates, [](const auto& t) { return StorageObjects::ClaimKey(t.namespace_name, t.name); })) {
    return false;
  }
  ++storage_.slices_version;

  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    TermGroup g;
    uint64_t kind = in.U64();
    g.weight = static_cast<int32_t>(in.I64());
    if (!in.Ok() || kind > static_cast<uint64_t>(TermKind::kPreferredAntiAffinity) || !in.Get(g.term)) return false;
    g.kind = static_cast<TermKind>(kind);
    g.owner_namespace = in.Str();
    if (!in.Ok() || !term_group_ids_.emplace(TermGroupKey(g.kind, g.weight, g.term, g.owner_namespace), i).second) return false;
    term_groups_.push_back(std::move(g));
    term_group_domains_.emplace_back();
  }

  // Versions start past the ones a fresh table has: nothing was bound to it before.
  epoch_ = whole_epoch_ = topology_epoch_ = term_groups_version_ = 1;
  dictionary_version_ = NextDictionaryVersion();
  return ReadPodsInto(in) && in.Ok();
}

// The bound pods: records checked one by one, each row's list walked once;
// then counted on their rows and indexed as a bind counts and indexes them.
bool NodeTable::ReadPodsInto(k8s::ArchiveReader& in) {
  uint64_t n;
  if (!GetCount(in, n)) return false;
  pod_strings_.Reserve(n);
  for (uint64_t id = 1; id <= n; ++id) {
    std::string_view s = in.View();
    if (!in.Ok() || pod_strings_.Intern(s) != id) return false;
  }
  std::vector<PodLabel> labels;
  std::vector<std::pair<uint32_t, int64_t>> requests;
  std::vector<uint32_t> groups;
  if (!GetArray(in, pods_) || !GetArray(in, pod_head_, RowCount()) || !GetArray(in, labels) || !GetCount(in, n)) return false;
  requests.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t index = in.U64();
    int64_t amount = in.I64();
    if (!in.Ok() || index >= resources_.size()) return false;
    requests.emplace_back(static_cast<uint32_t>(index), amount);
  }
  if (!GetArray(in, groups)) return false;

  // Each pod's ranges start where the previous pod's end (as WriteImage
  // lays them out): no two pods share an entry, and the arrays are used as read.
  slot_of_key_.assign(pod_strings_.size(), UINT32_MAX);
  size_t used = 0;
  uint64_t next_label = 0, next_request = 0, next_group = 0;
  for (uint32_t slot = 0; slot < pods_.size(); ++slot) {
    BoundPod& pod = pods_[slot];
    if (pod.key == 0) {
      pod = BoundPod{};
      free_pod_slots_.push_back(slot);
      continue;
    }
    ++used;
    if (pod.key >= pod_strings_.size() || pod.ns >= pod_strings_.size() || pod.uid >= pod_strings_.size() ||
        pod.start_time >= pod_strings_.size() ||
        (pod.priority_class != UINT32_MAX && pod.priority_class >= pod_strings_.size()) || slot_of_key_[pod.key] != UINT32_MAX ||
        !PodKey(pod).starts_with(std::string(PodNamespace(pod)) + "/") || pod.row >= RowCount() || !live_[pod.row] ||
        name_[pod.row] != pod.node_name || pod.aside != 0 || pod.terminating > 1 || pod.unused != 0 || pod.labels != next_label || pod.requests != next_request ||
        pod.groups != next_group) {
      return false;
    }
    next_label += pod.label_count;
    next_request += pod.request_count;
    next_group += pod.group_count;
    if (next_label > labels.size() || next_request > requests.size() || next_group > groups.size()) return false;
    slot_of_key_[pod.key] = slot;
    pod.extra = UINT32_MAX;
    for (uint32_t i = pod.labels; i < pod.labels + pod.label_count; ++i) {
      const PodLabel& l = labels[i];
      if (l.key >= pod_strings_.size() || l.value >= pod_strings_.size() || l.pair >= pod_strings_.size()) return false;
      std::string_view key = pod_strings_.Get(l.key), value = pod_strings_.Get(l.value), pair = pod_strings_.Get(l.pair);
      if (pair.size() != key.size() + 1 + value.size() || !pair.starts_with(key) || pair[key.size()] != '\0' ||
          !pair.ends_with(value)) {
        return false;
      }
    }
    for (uint32_t i = pod.groups; i < pod.groups + pod.group_count; ++i) {
      if (groups[i] >= term_groups_.size()) return false;
    }
  }
  if (next_label != labels.size() || next_request != requests.size() || next_group != groups.size()) return false;
  pod_labels_ = std::move(labels);
  pod_requests_ = std::move(requests);
  pod_groups_ = std::move(groups);
  if (!GetCount(in, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t slot = in.U64();
    if (!in.Ok() || slot >= pods_.size() || pods_[slot].key == 0 || pods_[slot].extra != UINT32_MAX) return false;
    PodExtra extra;
    uint64_t count;
    if (!GetCount(in, count)) return false;
    extra.host_ports.resize(count);
    for (k8s::HostPort& p : extra.host_ports) {
      if (!in.Get(p)) return false;
    }
    if (!GetCount(in, count)) return false;
    extra.volumes.resize(count);
    for (k8s::Volume& v : extra.volumes) {
      if (!in.Get(v)) return false;
    }
    pods_[slot].extra = static_cast<uint32_t>(pod_extras_.size());
    pod_extras_.push_back(std::move(extra));
  }

  // Every pod on its row's list once, the lists linked both ways.
  std::vector<uint8_t> seen(pods_.size(), 0);
  size_t listed = 0;
  for (RowId row = 0; row < RowCount(); ++row) {
    uint32_t prev = UINT32_MAX;
    for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
      if (slot >= pods_.size() || seen[slot] || pods_[slot].key == 0 || pods_[slot].row != row || pods_[slot].prev != prev) {
        return false;
      }
      seen[slot] = 1;
      ++listed;
      prev = slot;
    }
  }
  if (listed != used) return false;
  for (RowId row = 0; row < RowCount(); ++row) {
    for (uint32_t slot = pod_head_[row]; slot != UINT32_MAX; slot = pods_[slot].next) {
      Apply(slot, row, +1);
      ++bound_pods_;
    }
  }
  for (uint32_t slot = 0; slot < pods_.size(); ++slot) {
    if (pods_[slot].key != 0) IndexLabels(slot);
  }
  pod_strings_kept_ = pod_strings_.size();
  return true;
}


}  // namespace policy::rt
