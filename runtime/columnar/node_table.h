#pragma once
/// NodeTable: the cluster's nodes as columns (struct of arrays).
///
/// One row per node, in the order nodes were added. Per label key a column
/// of domain ids (0 = the node has no such label; ids are dense per key, so
/// every label column is also a topology-domain column) with the value
/// string and its integer reading (for Gt/Lt) kept once per domain. Per
/// resource an int64 column of allocatable and one of requested (milli-cpu,
/// units otherwise: kube-scheduler's units). Taints are interned into a
/// dictionary; each row has a bitset over it and an interned taint list that
/// keeps the node's own order. Bound pods add to `requested` and are
/// remembered so they can be unbound.
///
/// Updates (add/update/remove node, bind/unbind pod) cost O(columns) or
/// O(pods on the node), never O(nodes), except when a column or taint word
/// is first added or removed rows are compacted (both amortised).
///
/// INVARIANT: every per-row vector has RowCount() elements.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/objects.h"
#include "k8s/selectors.h"
#include "runtime/columnar/device_columns.h"
#include "runtime/columnar/storage_objects.h"
#include "runtime/columnar/string_pool.h"

namespace policy::k8s {
class ArchiveWriter;
class ArchiveReader;
}  // namespace policy::k8s

namespace policy::rt {

using RowId = uint32_t;
inline constexpr RowId kNoRow = UINT32_MAX;

/// A label key's column.
struct LabelColumn {
  uint32_t key = 0;                    ///< pool id of the key
  std::vector<uint32_t> domain;        ///< per row: 0 absent, else domain id
  std::vector<uint32_t> value;         ///< per domain: pool id of the value (index 0 unused)
  std::vector<int64_t> int_value;      ///< per domain: the value as an integer, when is_int
  std::vector<uint8_t> is_int;         ///< per domain: strconv.ParseInt(value, 10, 64) succeeded
  std::vector<int64_t> quantity_milli; ///< per domain: the value as a quantity in milli-units, when is_quantity
  std::vector<uint8_t> is_quantity;    ///< per domain: resource.ParseQuantity(value) succeeded
  std::vector<uint32_t> live_nodes;    ///< per domain: live nodes with this value
  std::unordered_map<uint32_t, uint32_t> domain_of;  ///< value pool id -> domain id

  uint32_t DomainCount() const { return static_cast<uint32_t>(value.size() - 1); }
};

/// A resource's columns, in kube-scheduler units (milli-cpu for `cpu`).
struct ResourceColumn {
  uint32_t name = 0;
  bool cpu = false;
  std::vector<int64_t> allocatable;  ///< kube-scheduler units (milli-cpu, else units)
  std::vector<int64_t> requested;
  /// The same as the policy language's quantities (milli-units, saturated;
  /// cpu's are the units), what compiled kernels read without converting.
  std::vector<int64_t> allocatable_milli;
  std::vector<int64_t> requested_milli;
};

struct TaintEntry {
  uint32_t key = 0;
  uint32_t value = 0;
  k8s::TaintEffect effect = k8s::TaintEffect::kNoSchedule;
};

/// Which bound pods a count is over: clauses that must all match, each a
/// label selector with the namespaces it applies to (already resolved: the
/// term's namespaces, namespaceSelector and default namespace).
struct PodSelector {
  struct Clause {
    std::optional<k8s::LabelSelector> labels;  ///< absent: matches nothing
    bool all_namespaces = false;
    std::vector<std::string> namespaces;       ///< sorted, unique
  };
  std::vector<Clause> clauses;
  /// Pods being deleted (metadata.deletionTimestamp) are not counted:
  /// PodTopologySpread's countPodsMatchSelector skips them.
  bool skip_terminating = false;

  /// Whether a pod of `namespace_name` whose labels `find` reads (as
  /// k8s::MatchesWith's) is selected.
  template <class Find>
  bool MatchesWith(std::string_view namespace_name, Find&& find) const {
    for (const Clause& c : clauses) {
      bool in_namespace = c.all_namespaces || std::binary_search(c.namespaces.begin(), c.namespaces.end(), namespace_name);
      if (!in_namespace || !c.labels || !k8s::MatchesWith(*c.labels, find)) return false;
    }
    return true;
  }
  bool Matches(std::string_view namespace_name, const k8s::StringMap& labels) const;
  /// Equal for selectors that select the same pods by the same clauses.
  std::string Key() const;
};

/// A count per topology domain, read per row: the rows' domain ids of one
/// label column and the counts by domain. Valid until the table changes.
struct DomainView {
  const uint32_t* domain = nullptr;  ///< per row; null: no node has the label
  const int64_t* counts = nullptr;   ///< per domain id
  uint32_t size = 0;                 ///< domain ids below this have a count
  int64_t At(uint32_t row) const {
    if (domain == nullptr) return 0;
    uint32_t d = domain[row];
    return d != 0 && d < size ? counts[d] : 0;
  }
};

/// How a bound pod's pod-affinity term acts on the pods placed after it.
enum class TermKind : uint8_t { kRequiredAffinity, kRequiredAntiAffinity, kPreferredAffinity, kPreferredAntiAffinity };

/// Identical pod-affinity terms of bound pods (same kind, weight, term and
/// owner namespace), counted per row.
struct TermGroup {
  TermKind kind = TermKind::kRequiredAffinity;
  int32_t weight = 0;
  k8s::PodAffinityTerm term;
  std::string owner_namespace;  ///< the namespace the term defaults to
  std::vector<int32_t> per_row;  ///< bound pods carrying the term, by row (may be shorter than RowCount())
};

enum class BindResult : uint8_t {
  kBound,           ///< counted on its node
  kWaitingForNode,  ///< its node is not (yet) in the table; counted once it is added
  kFinished,        ///< phase Succeeded or Failed: kube-scheduler does not count it
  kNotBound,        ///< no spec.nodeName
  kDuplicate,       ///< a pod with this namespace/name is already bound
};

class DeviceTable;

class NodeTable {
 public:
  NodeTable();

  // --- updates ---------------------------------------------------------
  /// Appends a node; nullopt when a node of that name exists.
  std::optional<RowId> AddNode(const k8s::Node& node);
  /// Replaces a node's labels, taints, allocatable and flags, keeping its row
  /// and bound pods; false when there is no such node.
  bool UpdateNode(const k8s::Node& node);
  /// Removes a node; its pods wait for a node of the same name.
  bool RemoveNode(std::string_view name);
  BindResult BindPod(const k8s::Pod& pod);
  /// Unbinds `namespace/name`; false when no such pod was bound or waiting.
  bool UnbindPod(std::string_view namespace_name, std::string_view name);

  // --- shape -----------------------------------------------------------
  /// Rows, including removed ones not yet compacted (see Live()).
  size_t RowCount() const { return live_.size(); }
  size_t NodeCount() const { return live_count_; }
  std::optional<RowId> FindNode(std::string_view name) const;
  std::string_view NodeName(RowId row) const { return pool_.Get(name_[row]); }

  // --- columns ---------------------------------------------------------
  std::span<const uint8_t> Live() const { return live_; }
  /// The live rows, in order (what a scheduling pass starts from).
  std::span<const RowId> LiveRows() const { return live_rows_; }
  std::span<const uint8_t> Unschedulable() const { return unschedulable_; }
  /// A hash of what a node object gives the table (labels, taints,
  /// allocatable, unschedulable, images), equal for objects it would hold
  /// alike whatever their order; NodeFactsOf: that of the object `row` was
  /// last written from. A host sent node objects compares the two.
  static uint64_t NodeFacts(const k8s::Node& node);
  uint64_t NodeFactsOf(RowId row) const { return facts_[row]; }
  std::span<const uint32_t> PodCount() const { return pod_count_; }
  /// Requested cpu/memory with kube-scheduler's non-zero defaults (scoring).
  std::span<const int64_t> NonZeroMilliCpu() const { return nonzero_cpu_; }
  std::span<const int64_t> NonZeroMemory() const { return nonzero_memory_; }
  std::span<const int64_t> NonZeroMemoryMilli() const { return nonzero_memory_milli_; }
  /// Zeros, one more than there are rows: what compiled kernels read for a
  /// label or resource no node has (as an int64, uint32 or byte column, or
  /// a label's per-domain values, where domain 0 is all there is).
  std::span<const int64_t> ZeroColumn() const { return zeros_; }
  const LabelColumn* Label(std::string_view key) const;
  /// Row `row`'s value of label `key`; nullopt when the node has no such
  /// label. The one label lookup every C++ predicate on a row uses
  /// (k8s::TermMatches' `label`).
  std::optional<std::string_view> LabelValue(std::string_view key, RowId row) const {
    const LabelColumn* column = Label(key);
    if (column == nullptr || column->domain[row] == 0) return std::nullopt;
    return pool().Get(column->value[column->domain[row]]);
  }
  const std::vector<LabelColumn>& Labels() const { return labels_; }
  const ResourceColumn* Resource(std::string_view name) const;
  const std::vector<ResourceColumn>& Resources() const { return resources_; }

  // --- taints ----------------------------------------------------------
  const std::vector<TaintEntry>& TaintDictionary() const { return taints_; }
  /// 64-bit words per row in the taint bitsets.
  size_t TaintWords() const { return taint_words_; }
  /// The taint bitset of `row`: bit i set = the node has taint i.
  std::span<const uint64_t> TaintBits(RowId row) const {
    return {taint_bits_.data() + row * taint_words_, taint_words_};
  }
  /// The node's taints in its own order (ids into TaintDictionary()).
  const std::vector<uint32_t>& Taints(RowId row) const { return taint_lists_[taint_list_[row]]; }

  /// Changes whenever a label key, a label value or a taint is first seen:
  /// programs bound to the dictionaries (ir::Program::table_version) stay
  /// valid while it does not. Ids, once given, never change.
  uint64_t DictionaryVersion() const { return dictionary_version_; }

  // --- changes ---------------------------------------------------------
  /// Moves on every update of the table (what incremental decisions key on).
  uint64_t ChangeEpoch() const { return epoch_; }
  /// Moves on every update not confined to rows' own data (a node added,
  /// removed or changed): rows keep their ids and names while it stays.
  uint64_t WholeEpoch() const { return whole_epoch_; }
  /// Appends to `rows` the rows whose own data updates since `epoch` changed
  /// (a pod bound to or unbound from them); false when an update since then
  /// reached further (a node added, removed or changed, a namespace, a
  /// selector owner or a storage object): then anything may differ. The
  /// topology index's counts change with binds too; those are cluster-wide
  /// values, which incremental decisions compare themselves.
  bool RowsChangedSince(uint64_t epoch, std::vector<RowId>& rows) const;

  // --- topology index (node_table_topology.cpp) ------------------------
  // Pods bound to the table, grouped so that inter-pod constraints cost O(1)
  // per node: a set of pods a selector selects, or the bound pods carrying
  // one affinity term, is counted per row (kept up to date on every bind and
  // unbind: O(1) per set and group the pod is in), and per topology domain
  // on demand (built in O(rows) after a node's labels change, then kept up
  // to date too).

  /// The id of the set of bound pods `selector` selects. The first call for
  /// a selector counts every bound pod; later binds keep it current. At
  /// most kMaxPodSets are kept: past it, a bind or unbind drops those
  /// asked for least recently (a selector asked again is counted again), so
  /// the memory and the work of a bind stay bounded however many pod
  /// shapes come by. An id is valid until the table next changes or is
  /// trimmed.
  uint32_t PodSet(const PodSelector& selector) const;
  static constexpr size_t kMaxPodSets = 1024;
  /// And their bytes (selectors and per-row counts): a selector may name a
  /// label value of megabytes.
  static constexpr size_t kMaxPodSetBytes = size_t{64} << 20;
  /// Whether the sets kept are past either bound (TrimPodSets' work).
  bool PodSetsOverBudget() const { return pod_set_ids_.size() > kMaxPodSets || pod_set_bytes_ > kMaxPodSetBytes; }
  /// A writer's (no reader holds a set id): past kMaxPodSets, drops the
  /// pod sets asked for least recently. Binds and unbinds trim; a host
  /// whose readers ask for many selectors between writes (serve's calls
  /// for pods of new shapes on a quiet cluster) trims between reads.
  void TrimPodSets();
  /// Pod sets kept now, and counted in all (the guard tests' work counts).
  size_t PodSetsKept() const { return pod_set_ids_.size(); }
  size_t PodSetsCounted() const { return pod_sets_counted_; }
  /// Pods of `set` on `row`.
  int64_t PodsOnRow(uint32_t set, RowId row) const;
  /// Pods of a set on every row, read with no lock: valid until the table
  /// changes (loops read this, not PodsOnRow).
  struct RowCounts {
    const int32_t* data = nullptr;
    size_t size = 0;
    int64_t At(RowId row) const { return row < size ? data[row] : 0; }
  };
  RowCounts PodSetRows(uint32_t set) const;
  /// Pods of `set` on the rows that share `row`'s value of label `key`; 0
  /// when `row` lacks the label.
  int64_t PodsInDomain(uint32_t set, std::string_view key, RowId row) const;
  /// PodsInDomain for every row at once (one lookup, then O(1) per row).
  DomainView PodSetDomains(uint32_t set, std::string_view key) const;
  /// TermGroupInDomain for every row at once.
  DomainView TermGroupDomains(uint32_t g) const;
  /// Pods of `set` on rows that have label `key`.
  int64_t PodsWithKey(uint32_t set, std::string_view key) const;
  /// Every group of identical affinity terms of bound pods.
  const std::vector<TermGroup>& TermGroups() const { return term_groups_; }
  /// Moves whenever pod set `set`'s counts change (a pod it selects binds
  /// or goes), so a reader can tell its counts are as it last saw them.
  uint64_t PodSetVersion(uint32_t set) const;
  /// Moves whenever some node's labels may have changed (a node written,
  /// added or removed): what is worked out from the label columns alone
  /// (which nodes have a key, the keys there are) holds while it stays.
  uint64_t TopologyEpoch() const { return topology_epoch_; }
  /// Moves whenever a term group is added or its counts change.
  uint64_t TermGroupsVersion() const { return term_groups_version_; }
  /// Pods carrying group `g`'s term on the rows that share `row`'s value of
  /// the term's topology key; 0 when `row` lacks it.
  int64_t TermGroupInDomain(uint32_t g, RowId row) const;

  // --- pods and namespaces ---------------------------------------------
  size_t BoundPodCount() const { return bound_pods_; }
  /// The host ports the pods bound to `row` use (NodeInfo.UsedPorts, one
  /// entry per pod and port); valid until the table changes.
  std::vector<const k8s::HostPort*> UsedPorts(RowId row) const;
  /// The inline disks the pods bound to `row` mount (VolumeRestrictions):
  /// (identity, read-only), one entry per pod and disk; valid until the table changes.
  std::vector<std::pair<const std::string*, bool>> Disks(RowId row) const;
  /// The CSI volumes the pods bound to `row` attach, each once, as
  /// (driver, handle) resolved through Storage() now.
  std::vector<std::pair<std::string, std::string>> AttachedVolumes(RowId row) const;
  /// Per CSI driver, the most volumes `row` may attach: allocatable
  /// `attachable-volumes-csi-DRIVER`, overridden by the node's CSINode counts.
  std::vector<std::pair<std::string, int64_t>> VolumeLimits(RowId row) const;
  /// Whether a pod bound to a node uses claim `namespace/name` (IsPVCUsedByPods).
  bool ClaimInUse(std::string_view namespace_name, std::string_view name) const;
  /// The snapshot's storage objects and PriorityClasses. Changing them
  /// moves StorageVersion, not ChangeEpoch: what a pod's volumes resolve to
  /// is read when its plan is made (rt::ResolveVolumes) and is part of its
  /// template (engine::TemplateOf), so no kept decision or explanation
  /// depends on them — a claim assumed bound for one StatefulSet pod
  /// leaves every template's next decision incremental.
  const StorageObjects& Storage() const { return storage_; }
  StorageObjects& MutableStorage() {
    ++storage_version_;
    ++other_storage_version_;
    claim_device_changes_.clear();
    return storage_;
  }
  /// Sets or removes a ResourceClaim, as MutableStorage() would; the device
  /// table (Devices()) is then brought up to date from the devices its
  /// allocation took or gave back, not built again: what a bind that
  /// allocates a pod's claim costs is the claim's devices, not the cluster's.
  void SetResourceClaim(k8s::ResourceClaim claim);
  bool RemoveResourceClaim(std::string_view namespace_name, std::string_view name);
  uint64_t StorageVersion() const { return storage_version_; }
  /// The devices SetResourceClaim and RemoveResourceClaim took or gave back
  /// since the last other storage change (DeviceTable::Position counts in it).
  std::span<const ClaimDeviceChange> ClaimDeviceChanges() const { return claim_device_changes_; }
  /// The DRA devices as a table (device_table.h), built at the first ask
  /// after the storage objects or the nodes changed; shared, so a reader
  /// keeps its table while a writer changes this one.
  std::shared_ptr<const DeviceTable> Devices() const;
  /// How the device tables built from now on decide CEL selectors (the
  /// evaluator by default; native kernels for the JIT engines). A cache
  /// policy, not the table's data: callable on a const table.
  void SetDeviceSelectors(DeviceSelectors how) const;
  /// The id of image name `name` for ImageSize, or nullopt when no node has it.
  std::optional<uint32_t> ImageId(std::string_view name) const { return pool_.Lookup(name); }
  /// The size in bytes of image `image` (an ImageId) on `row`, 0 when it
  /// lacks it (status.images, every name of an image).
  int64_t ImageSize(RowId row, uint32_t image) const;
  /// How many live nodes have image `name` (ImageStateSummary.NumNodes).
  int64_t NodesWithImage(std::string_view name) const;
  size_t WaitingPodCount() const { return pods_.size() - free_pod_slots_.size() - bound_pods_ - aside_pods_; }
  /// A pod bound to a row, as the table counts it: `namespace/name`, what
  /// it requests (resource column index, amount), and what preemption
  /// reads of it (metadata.uid, priority, status.startTime; empty strings
  /// where the pod had none).
  struct PodOnRow {
    std::string_view key;
    std::span<const std::pair<uint32_t, int64_t>> requests;
    std::string_view uid;
    int32_t priority = 0;
    std::string_view start_time;
  };
  /// The pods bound to `row`; valid until the table changes.
  std::vector<PodOnRow> PodsBoundTo(RowId row) const;
  /// Trying a cluster without some pods (what would free a node): a pod
  /// bound to a row stops counting anywhere until PutPodBack, keeping
  /// everything it added; false when `key` (namespace/name) is not bound to
  /// a live row or is set aside already. Change nothing else in between.
  bool SetPodAside(std::string_view key);
  bool PutPodBack(std::string_view key);
  /// The labels of bound pod `key` (namespace/name); empty when there is none.
  k8s::StringMap PodLabels(std::string_view key) const;
  void SetNamespaceLabels(std::string_view name, k8s::StringMap labels);
  /// Labels of a namespace; empty for a namespace the snapshot has no object for.
  const k8s::StringMap& NamespaceLabels(std::string_view name) const;
  size_t NamespaceCount() const { return namespaces_.size(); }
  /// Services, ReplicationControllers, ReplicaSets and StatefulSets of the
  /// snapshot (their selectors; kube-scheduler's default spread).
  void AddSelectorOwner(k8s::SelectorOwner owner) {
    TouchAll();
    owners_.push_back(std::move(owner));
  }
  /// Removes the selector owner of that kind, namespace and name; false
  /// when there is none.
  bool RemoveSelectorOwner(std::string_view kind, std::string_view namespace_name, std::string_view name);
  /// Removes a namespace; false when there is none of that name.
  bool RemoveNamespace(std::string_view name) {
    TouchAll();
    return namespaces_.erase(std::string(name)) > 0;
  }
  const std::vector<k8s::SelectorOwner>& SelectorOwners() const { return owners_; }
  /// Every namespace the snapshot has an object for, with its labels.
  const std::unordered_map<std::string, k8s::StringMap>& Namespaces() const { return namespaces_; }

  // --- image (node_table_image.cpp) --------------------------------------
  /// Writes the table as the snapshot cache keeps it (docs/cache.md): the
  /// dictionaries and node columns as arrays, each bound pod as the table
  /// holds it (resolved requests, term groups, its place on its row's
  /// list). False, with nothing to use written, when the table holds what
  /// an image does not: pods waiting for a node or set aside.
  bool WriteImage(k8s::ArchiveWriter& out) const;
  /// The table WriteImage wrote, answering every query as the table did;
  /// null when the bytes are damaged (every id, index and count is checked:
  /// damage past the cache's checksum is refused, never read past).
  static std::unique_ptr<NodeTable> ReadImage(k8s::ArchiveReader& in);

  const StringPool& pool() const { return pool_; }
  /// Bytes of per-row data (columns, bitsets, indexes), without interned
  /// strings and per-domain dictionaries.
  size_t RowMemoryBytes() const;
  /// Bytes of interned strings and dictionaries.
  size_t DictionaryMemoryBytes() const;
  /// Bytes of the pods' records, strings and lists (what unbinds give back:
  /// bounded by the pods bound, not by the pods ever bound).
  size_t PodMemoryBytes() const;

 private:
  // A bound pod, fixed-size and plain (an image holds the array as it is):
  // its strings are ids in pod_strings_, its lists ranges of the pod
  // arenas, so binding one allocates nothing of its own and a table of
  // 100,000 pods is a few arrays.
  struct BoundPod {
    uint32_t key = 0;        // pod_strings_: namespace/name; 0: a free slot
    uint32_t ns = 0;         // pod_strings_: its namespace
    uint32_t node_name = 0;  // pool_
    RowId row = kNoRow;
    uint32_t prev = UINT32_MAX, next = UINT32_MAX;  // siblings on the row (or waiting list)
    int64_t nonzero_cpu = 0, nonzero_memory = 0;
    uint32_t labels = 0, label_count = 0;      // pod_labels_
    uint32_t requests = 0, request_count = 0;  // pod_requests_: (resource column index, amount)
    uint32_t groups = 0, group_count = 0;      // pod_groups_: term_groups_ of its affinity terms
    uint32_t extra = UINT32_MAX;               // pod_extras_, for the few pods with host ports or volumes
    uint32_t aside = 0;                        // SetPodAside: counted nowhere, off the row's list
    uint32_t terminating = 0;                  // 1: metadata.deletionTimestamp set
    uint32_t unused = 0;                       // keeps the struct padding-free (an image copies its bytes)
    uint32_t uid = 0, start_time = 0;          // pod_strings_: metadata.uid, status.startTime (0: none)
    // spec.priority when set (priority_class UINT32_MAX), else looked up
    // when asked by priorityClassName (pod_strings_; 0: none), as the
    // classes are then (a dump lists them after the pods).
    uint32_t priority_class = 0;
    int32_t priority = 0;
  };
  static_assert(sizeof(BoundPod) == 96, "BoundPod is padding-free: an image copies its bytes");
  struct PodLabel {
    uint32_t key = 0, value = 0;  // pod_strings_
    uint32_t pair = 0;            // pod_strings_ id of "key\0value": its pods_by_label_ list
    uint32_t at = 0;              // its place in that list
  };
  // What few pods have: their containers' host ports (NodeInfo.UsedPorts),
  // their claims and inline disks.
  struct PodExtra {
    std::vector<k8s::HostPort> host_ports;
    std::vector<k8s::Volume> volumes;
  };
  /// Per-domain sums of a per-row count for one label key, valid while
  /// `epoch` is the table's topology epoch (node labels unchanged).
  struct DomainCounts {
    uint64_t epoch = UINT64_MAX;
    std::vector<int64_t> by_domain;
  };
  struct PodSetEntry {
    PodSelector selector;
    std::string key;    ///< selector.Key(); empty: a dropped set's slot
    uint64_t used = 0;  ///< pod_set_clock_ when last asked for
    uint64_t version = 0;
    std::vector<int32_t> per_row;
    std::unordered_map<uint32_t, DomainCounts> domains;  // label key pool id ->
  };

  LabelColumn& LabelFor(uint32_t key);
  uint32_t ResourceIndex(std::string_view name);
  uint32_t DomainFor(LabelColumn& column, uint32_t value);
  uint32_t TaintListFor(const std::vector<k8s::Taint>& taints);
  void TouchRow(RowId row) {
    if (row_changes_.size() >= (size_t{1} << 20)) return TouchAll();  // a bound on the log
    row_changes_.push_back({++epoch_, row});
  }
  void TouchAll() {
    whole_epoch_ = ++epoch_;
    row_changes_.clear();
  }
  void WriteNodeData(RowId row, const k8s::Node& node);
  void ClearNodeData(RowId row);
  void GrowTaintWords(size_t words);
  void Apply(uint32_t slot, RowId row, int sign);
  void Link(uint32_t slot, uint32_t* head);
  void Unlink(uint32_t slot, uint32_t* head);
  uint32_t* HeadFor(const BoundPod& pod);
  void Compact();
  void InternTermGroups(const k8s::Pod& pod, BoundPod& bound);  // appends to pod_groups_
  /// Equal for terms a group holds together (term_group_ids_'s key).
  bool ReadImageInto(k8s::ArchiveReader& in);
  bool ReadPodsInto(k8s::ArchiveReader& in);
  static std::string TaintKey(const TaintEntry& t);  // taint_ids_'s key
  static std::string TermGroupKey(TermKind kind, int32_t weight, const k8s::PodAffinityTerm& term, std::string_view owner);
  void ApplyTopology(const BoundPod& pod, RowId row, int sign);
  const DomainCounts& Domains(const std::vector<int32_t>& per_row, uint32_t key, DomainCounts& cache) const;
  void CompactTopology(const std::vector<RowId>& new_row);

  StringPool pool_;
  size_t live_count_ = 0;
  std::vector<uint8_t> live_;
  std::vector<RowId> live_rows_;
  std::vector<uint32_t> name_;
  std::vector<uint8_t> unschedulable_;
  std::vector<uint64_t> facts_;  // NodeFacts of the object each row was written from; 0: none
  std::vector<uint32_t> pod_count_;
  std::vector<int64_t> nonzero_cpu_;
  std::vector<int64_t> nonzero_memory_;
  std::vector<int64_t> nonzero_memory_milli_;
  std::vector<int64_t> zeros_ = std::vector<int64_t>(1, 0);
  std::vector<uint32_t> taint_list_;
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> images_;  // per row: (image name, bytes)
  std::unordered_map<uint32_t, int64_t> image_nodes_;              // image name -> nodes with it
  std::vector<uint64_t> taint_bits_;
  std::vector<uint32_t> pod_head_;
  size_t taint_words_ = 1;
  uint64_t dictionary_version_ = 0;
  uint64_t epoch_ = 0;        // ChangeEpoch()
  uint64_t whole_epoch_ = 0;  // the last update not confined to rows
  uint64_t storage_version_ = 0;
  struct DeviceCache {
    std::mutex mu;
    std::shared_ptr<const DeviceTable> table;
    DeviceSelectors how;
    uint64_t storage = UINT64_MAX, other_storage = UINT64_MAX, epoch = UINT64_MAX;
    size_t rows = 0;
    size_t claim_changes = 0;  // how many of claim_device_changes_ the table has
  };
  // Moves with every storage change but SetResourceClaim's and
  // RemoveResourceClaim's, which log the devices they took (+1) or gave
  // back (-1) instead, until the next such change.
  uint64_t other_storage_version_ = 0;
  std::vector<ClaimDeviceChange> claim_device_changes_;
  void LogClaimDevices(const k8s::ResourceClaim& claim, int delta);
  std::unique_ptr<DeviceCache> device_cache_ = std::make_unique<DeviceCache>();
  std::vector<std::pair<uint64_t, RowId>> row_changes_;  // since whole_epoch_, by epoch
  std::vector<RowId> row_of_name_;  // by the name's pool id; kNoRow: no such node (a flat array: one miss per lookup)
  RowId RowOfName(uint32_t name) const { return name < row_of_name_.size() ? row_of_name_[name] : kNoRow; }

  std::vector<LabelColumn> labels_;
  std::unordered_map<uint32_t, uint32_t> label_index_;  // key pool id -> labels_ index
  std::vector<ResourceColumn> resources_;
  std::unordered_map<uint32_t, uint32_t> resource_index_;

  std::vector<TaintEntry> taints_;
  std::unordered_map<std::string, uint32_t> taint_ids_;  // packed (key, value, effect) -> id
  std::vector<std::vector<uint32_t>> taint_lists_;    // list id -> taint ids; 0 = none
  std::unordered_map<std::string, uint32_t> taint_list_ids_;

  std::vector<BoundPod> pods_;
  std::vector<uint32_t> free_pod_slots_;
  // Bound pods' strings and lists. Unbinding leaves garbage behind;
  // ReclaimPodStorage rebuilds them from the pods bound once the garbage
  // outgrows what is live (amortised O(1) a bind), so a table under
  // endless churn holds what its pods need, not what they ever needed.
  StringPool pod_strings_;
  size_t pod_strings_kept_ = 0;  // pod_strings_.size() after the last rebuild
  std::vector<PodLabel> pod_labels_;
  std::vector<std::pair<uint32_t, int64_t>> pod_requests_;
  std::vector<uint32_t> pod_groups_;
  size_t arena_garbage_ = 0;  // entries of the three arenas no bound pod uses
  std::vector<PodExtra> pod_extras_;
  std::vector<uint32_t> free_extras_;
  std::vector<uint32_t> slot_of_key_;  // by a key's pod_strings_ id; UINT32_MAX: none
  // By a label pair's pod_strings_ id, the slots of the pods with that
  // label (bound, waiting or aside): a new pod set counts the pods of one
  // of its labels, not all.
  std::vector<std::vector<uint32_t>> pods_by_label_;
  std::optional<uint32_t> SlotOf(std::string_view key) const;
  uint32_t InternPodString(std::string_view text);
  std::string_view PodKey(const BoundPod& pod) const { return pod_strings_.Get(pod.key); }
  std::string_view PodNamespace(const BoundPod& pod) const { return pod_strings_.Get(pod.ns); }
  std::span<const std::pair<uint32_t, int64_t>> RequestsOf(const BoundPod& pod) const {
    return {pod_requests_.data() + pod.requests, pod.request_count};
  }
  std::span<const uint32_t> GroupsOf(const BoundPod& pod) const { return {pod_groups_.data() + pod.groups, pod.group_count}; }
  const PodExtra* ExtraOf(const BoundPod& pod) const { return pod.extra == UINT32_MAX ? nullptr : &pod_extras_[pod.extra]; }
  bool PodMatches(const PodSelector& selector, const BoundPod& pod) const;
  void IndexLabels(uint32_t slot);
  void UnindexLabels(uint32_t slot);
  void ReclaimPodStorage();
  const std::vector<uint32_t>* SlotsWithLabel(std::string_view key, std::string_view value) const;  // null: none
  std::unordered_map<uint32_t, uint32_t> waiting_;             // node name id -> first slot
  size_t bound_pods_ = 0;
  size_t aside_pods_ = 0;  // bound, but set aside (SetPodAside)

  std::unordered_map<std::string, k8s::StringMap> namespaces_;
  std::vector<k8s::SelectorOwner> owners_;
  StorageObjects storage_;
  std::unordered_map<std::string, int32_t> claim_users_;  // namespace/claim -> pods bound to a node using it

  // Topology index. Sets are registered by queries (hence mutable); the
  // epoch changes whenever a node's labels may have changed. Readers run at
  // once on many threads (a host's decisions): what they register or count
  // lazily is done under `lazy_`; what they then read of it does not change
  // until a writer, who has the table alone, changes the table.
  struct LazyMutex {  // a table copied gets a mutex of its own
    LazyMutex() = default;
    LazyMutex(const LazyMutex&) {}
    LazyMutex& operator=(const LazyMutex&) { return *this; }
    std::mutex m;
  };
  mutable LazyMutex lazy_;
  mutable std::vector<PodSetEntry> pod_sets_;
  mutable std::unordered_map<std::string, uint32_t> pod_set_ids_;
  mutable size_t pod_set_bytes_ = 0;  // the kept sets' keys (twice: the selector too) and per-row counts
  mutable std::vector<uint32_t> free_pod_sets_;  // dropped sets' slots
  mutable uint64_t pod_set_clock_ = 0;
  mutable uint64_t pod_set_versions_ = 0;  // versions are never reused, across dropped sets too
  mutable size_t pod_sets_counted_ = 0;
  std::vector<TermGroup> term_groups_;
  uint64_t term_groups_version_ = 0;
  mutable std::vector<DomainCounts> term_group_domains_;
  std::unordered_map<std::string, uint32_t> term_group_ids_;
  uint64_t topology_epoch_ = 0;
};

}  // namespace policy::rt
