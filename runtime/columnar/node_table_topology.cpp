// NodeTable: the topology index (pod sets and affinity-term groups, counted
// per row and per topology domain).
//
// Per-row counts are exact at all times: Apply() (bind, unbind, a node
// arriving or leaving under bound pods) adds or subtracts the pod from every
// registered set it matches and every term group it carries. Per-domain sums
// are derived from them on demand and cached per label key; a change of any
// node's labels (topology_epoch_) makes the caches rebuild in O(rows) at
// their next use, and Apply() keeps valid ones current in O(1).

#include <algorithm>

#include <fmt/format.h>

#include "k8s/selectors.h"
#include "support/json_writer.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

bool PodSelector::Matches(std::string_view namespace_name, const k8s::StringMap& labels) const {
  return MatchesWith(namespace_name, [&](std::string_view key) -> std::optional<std::string_view> {
    const std::string* have = k8s::Find(labels, key);
    if (have == nullptr) return std::nullopt;
    return *have;
  });
}

std::string PodSelector::Key() const {
  std::string key;
  for (const Clause& c : clauses) {
    std::vector<std::string> quoted;
    for (const std::string& n : c.namespaces) quoted.push_back(JsonQuote(n));
    key += fmt::format("{} in {};", k8s::CanonicalText(c.labels), c.all_namespaces ? "*" : fmt::format("[{}]", fmt::join(quoted, ",")));
  }
  if (skip_terminating) key += "!terminating";
  return key;
}

namespace {

void Grow(std::vector<int32_t>& per_row, size_t rows) {
  if (per_row.size() < rows) per_row.resize(rows, 0);
}

int32_t At(const std::vector<int32_t>& per_row, RowId row) { return row < per_row.size() ? per_row[row] : 0; }

}  // namespace

std::string NodeTable::TermGroupKey(TermKind kind, int32_t weight, const k8s::PodAffinityTerm& t, std::string_view owner) {
  std::vector<std::string> namespaces;
  for (const std::string& n : t.namespaces) namespaces.push_back(JsonQuote(n));
  std::sort(namespaces.begin(), namespaces.end());
  return fmt::format("{}|{}|{}|{}|[{}]|{}|{}", static_cast<int>(kind), weight, JsonQuote(t.topology_key),
                     k8s::CanonicalText(t.label_selector), fmt::join(namespaces, ","),
                     t.namespace_selector ? k8s::CanonicalText(t.namespace_selector) : "-", JsonQuote(owner));
}

void NodeTable::InternTermGroups(const k8s::Pod& pod, BoundPod& bound) {
  auto add = [&](TermKind kind, int32_t weight, const k8s::PodAffinityTerm& term) {
    auto [it, added] = term_group_ids_.emplace(TermGroupKey(kind, weight, term, pod.namespace_name),
                                               static_cast<uint32_t>(term_groups_.size()));
    if (added) {
      term_groups_.push_back(TermGroup{kind, weight, term, pod.namespace_name, {}});
      ++term_groups_version_;
      term_group_domains_.emplace_back();
    }
    pod_groups_.push_back(it->second);
  };
  bound.groups = static_cast<uint32_t>(pod_groups_.size());
  if (const auto& a = pod.affinity.pod_affinity) {
    for (const k8s::PodAffinityTerm& t : a->required) add(TermKind::kRequiredAffinity, 0, t);
    for (const k8s::WeightedPodAffinityTerm& w : a->preferred) add(TermKind::kPreferredAffinity, w.weight, w.term);
  }
  if (const auto& a = pod.affinity.pod_anti_affinity) {
    for (const k8s::PodAffinityTerm& t : a->required) add(TermKind::kRequiredAntiAffinity, 0, t);
    for (const k8s::WeightedPodAffinityTerm& w : a->preferred) add(TermKind::kPreferredAntiAffinity, w.weight, w.term);
  }
  bound.group_count = static_cast<uint32_t>(pod_groups_.size() - bound.groups);
}

void NodeTable::ApplyTopology(const BoundPod& pod, RowId row, int sign) {
  auto bump = [&](DomainCounts& counts, uint32_t key) {
    if (counts.epoch != topology_epoch_) return;  // rebuilt at its next use
    const LabelColumn* column = nullptr;
    if (auto it = label_index_.find(key); it != label_index_.end()) column = &labels_[it->second];
    uint32_t domain = column != nullptr ? column->domain[row] : 0;
    if (domain == 0) return;
    if (counts.by_domain.size() <= domain) counts.by_domain.resize(domain + 1, 0);
    counts.by_domain[domain] += sign;
  };
  TrimPodSets();
  for (PodSetEntry& set : pod_sets_) {
    if (set.key.empty() || !PodMatches(set.selector, pod)) continue;
    set.version = ++pod_set_versions_;
    Grow(set.per_row, RowCount());
    set.per_row[row] += sign;
    for (auto& [key, counts] : set.domains) bump(counts, key);
  }
  if (pod.group_count != 0) ++term_groups_version_;
  for (uint32_t g : GroupsOf(pod)) {
    TermGroup& group = term_groups_[g];
    Grow(group.per_row, RowCount());
    group.per_row[row] += sign;
    bump(term_group_domains_[g], pool_.Intern(group.term.topology_key));
  }
}

const NodeTable::DomainCounts& NodeTable::Domains(const std::vector<int32_t>& per_row, uint32_t key,
                                                  DomainCounts& cache) const {
  if (cache.epoch == topology_epoch_) return cache;
  cache.epoch = topology_epoch_;
  cache.by_domain.clear();
  auto it = label_index_.find(key);
  if (it == label_index_.end()) return cache;
  const LabelColumn& column = labels_[it->second];
  cache.by_domain.assign(column.DomainCount() + 1, 0);
  for (RowId row = 0; row < per_row.size() && row < RowCount(); ++row) {
    if (live_[row] && per_row[row] != 0) cache.by_domain[column.domain[row]] += per_row[row];
  }
  cache.by_domain[0] = 0;  // rows without the label are in no domain
  return cache;
}

uint32_t NodeTable::PodSet(const PodSelector& selector) const {
  std::lock_guard lock(lazy_.m);
  std::string key = selector.Key();
  uint32_t slot = free_pod_sets_.empty() ? static_cast<uint32_t>(pod_sets_.size()) : free_pod_sets_.back();
  auto [it, added] = pod_set_ids_.emplace(key, slot);
  if (!added) {
    pod_sets_[it->second].used = ++pod_set_clock_;
    return it->second;
  }
  ++pod_sets_counted_;
  PodSetEntry set;
  set.selector = selector;
  set.key = std::move(key);
  set.used = ++pod_set_clock_;
  set.version = ++pod_set_versions_;
  set.per_row.assign(RowCount(), 0);
  // A clause with matchLabels: only the pods with its first label can
  // match (a new selector of a Deployment's own is counted over its pods,
  // not over every bound pod). Those on a row's list count, as below.
  const std::vector<uint32_t>* some = nullptr;
  bool indexed = false;
  for (const PodSelector::Clause& c : selector.clauses) {
    if (!c.labels || c.labels->match_labels.empty()) continue;
    const auto& [key, value] = c.labels->match_labels.front();
    some = SlotsWithLabel(key, value);
    indexed = true;
    break;
  }
  if (indexed) {
    for (uint32_t slot = 0; some != nullptr && slot < some->size(); ++slot) {
      const BoundPod& pod = pods_[(*some)[slot]];
      if (pod.aside || pod.row == kNoRow) continue;
      set.per_row[pod.row] += PodMatches(selector, pod);
    }
  } else {
    for (RowId row = 0; row < RowCount(); ++row) {
      for (uint32_t pod = pod_head_[row]; pod != UINT32_MAX; pod = pods_[pod].next) {
        set.per_row[row] += PodMatches(selector, pods_[pod]);
      }
    }
  }
  pod_set_bytes_ += 2 * set.key.size() + set.per_row.size() * sizeof(int32_t);
  if (slot == pod_sets_.size()) {
    pod_sets_.push_back(std::move(set));
  } else {
    free_pod_sets_.pop_back();
    pod_sets_[slot] = std::move(set);
  }
  return slot;
}

// A writer (the table is its alone): past kMaxPodSets, the sets asked for
// least recently go, down to three quarters of it.
void NodeTable::TrimPodSets() {
  if (!PodSetsOverBudget()) return;
  std::vector<std::pair<uint64_t, uint32_t>> by_use;
  for (uint32_t s = 0; s < pod_sets_.size(); ++s) {
    if (!pod_sets_[s].key.empty()) by_use.emplace_back(pod_sets_[s].used, s);
  }
  std::sort(by_use.begin(), by_use.end());
  // Down to three quarters of both bounds, the least recently asked first.
  for (size_t k = 0; k < by_use.size() && (pod_set_ids_.size() > kMaxPodSets * 3 / 4 ||
                                           pod_set_bytes_ > kMaxPodSetBytes * 3 / 4); ++k) {
    PodSetEntry& set = pod_sets_[by_use[k].second];
    pod_set_bytes_ -= std::min(pod_set_bytes_, 2 * set.key.size() + set.per_row.size() * sizeof(int32_t));
    pod_set_ids_.erase(set.key);
    set = PodSetEntry();  // its memory back
    free_pod_sets_.push_back(by_use[k].second);
  }
}

int64_t NodeTable::PodsOnRow(uint32_t set, RowId row) const {
  std::lock_guard lock(lazy_.m);  // another reader may be registering a set
  return At(pod_sets_[set].per_row, row);
}

NodeTable::RowCounts NodeTable::PodSetRows(uint32_t set) const {
  std::lock_guard lock(lazy_.m);
  const std::vector<int32_t>& per_row = pod_sets_[set].per_row;  // its buffer stays when the entry moves
  return {per_row.data(), per_row.size()};
}

uint64_t NodeTable::PodSetVersion(uint32_t set) const {
  std::lock_guard lock(lazy_.m);
  return pod_sets_[set].version;
}

DomainView NodeTable::PodSetDomains(uint32_t set, std::string_view key) const {
  const LabelColumn* column = Label(key);
  if (column == nullptr) return {};
  std::lock_guard lock(lazy_.m);
  PodSetEntry& entry = pod_sets_[set];
  uint32_t key_id = *pool_.Lookup(key);
  const DomainCounts& counts = Domains(entry.per_row, key_id, entry.domains[key_id]);
  return {column->domain.data(), counts.by_domain.data(), static_cast<uint32_t>(counts.by_domain.size())};
}

int64_t NodeTable::PodsInDomain(uint32_t set, std::string_view key, RowId row) const {
  return PodSetDomains(set, key).At(row);
}

int64_t NodeTable::PodsWithKey(uint32_t set, std::string_view key) const {
  std::optional<uint32_t> key_id = pool_.Lookup(key);
  if (!key_id || Label(key) == nullptr) return 0;
  std::lock_guard lock(lazy_.m);
  PodSetEntry& entry = pod_sets_[set];
  const DomainCounts& counts = Domains(entry.per_row, *key_id, entry.domains[*key_id]);
  int64_t total = 0;
  for (int64_t c : counts.by_domain) total += c;
  return total;
}

DomainView NodeTable::TermGroupDomains(uint32_t g) const {
  const TermGroup& group = term_groups_[g];
  const LabelColumn* column = Label(group.term.topology_key);
  if (column == nullptr) return {};
  std::lock_guard lock(lazy_.m);
  const DomainCounts& counts = Domains(group.per_row, *pool_.Lookup(group.term.topology_key), term_group_domains_[g]);
  return {column->domain.data(), counts.by_domain.data(), static_cast<uint32_t>(counts.by_domain.size())};
}

int64_t NodeTable::TermGroupInDomain(uint32_t g, RowId row) const { return TermGroupDomains(g).At(row); }

void NodeTable::CompactTopology(const std::vector<RowId>& new_row) {
  auto keep = [&](std::vector<int32_t>& per_row) {
    std::vector<int32_t> out(live_count_, 0);
    for (RowId row = 0; row < per_row.size() && row < new_row.size(); ++row) {
      if (new_row[row] != kNoRow) out[new_row[row]] = per_row[row];
    }
    per_row = std::move(out);
  };
  for (PodSetEntry& set : pod_sets_) {
    if (!set.key.empty()) keep(set.per_row);
  }
  for (TermGroup& group : term_groups_) keep(group.per_row);
  ++topology_epoch_;
}

}  // namespace policy::rt
