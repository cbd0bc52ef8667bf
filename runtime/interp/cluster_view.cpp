// ClusterView: InterPodAffinity's and PodTopologySpread's cluster-wide counts
// for one pod, as kube-scheduler 1.31 computes them (interpodaffinity/ and
// podtopologyspread/ filtering.go and scoring.go), over the table's index.

#include "runtime/interp/cluster_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "k8s/node_match.h"
#include "k8s/selectors.h"
#include "support/suggest.h"
#include "runtime/interp/work_counters.h"

namespace policy::rt {
namespace {

constexpr std::string_view kHostname = "kubernetes.io/hostname";


// The pod's nodeSelector and required node affinity (nodeaffinity.RequiredNodeAffinity).
bool MatchesNodeAffinity(const k8s::Pod& pod, const NodeTable& table, RowId row) {
  for (const auto& [key, value] : pod.node_selector) {
    std::optional<std::string_view> have = table.LabelValue(key, row);
    if (!have || *have != value) return false;
  }
  const auto& affinity = pod.affinity.node_affinity;
  if (!affinity || !affinity->required) return true;
  auto label = [&](std::string_view key) { return table.LabelValue(key, row); };
  return std::any_of(affinity->required->begin(), affinity->required->end(),
                     [&](const k8s::NodeSelectorTerm& term) { return k8s::TermMatches(term, label, table.NodeName(row)); });
}

// No NoSchedule or NoExecute taint of the node goes untolerated.
bool ToleratesTaints(const k8s::Pod& pod, const NodeTable& table, RowId row) {
  for (uint32_t id : table.Taints(row)) {
    const TaintEntry& taint = table.TaintDictionary()[id];
    if (k8s::Repels(pod.tolerations, table.pool().Get(taint.key), table.pool().Get(taint.value), taint.effect)) return false;
  }
  return true;
}

// The selector with `key In/NotIn [the pod's value]` added for each key the pod has.
std::optional<k8s::LabelSelector> MergeKeys(std::optional<k8s::LabelSelector> selector, const k8s::StringMap& labels,
                                            const std::vector<std::string>& match, const std::vector<std::string>& mismatch) {
  if (!selector) return selector;
  for (const std::string& key : match) {
    if (const std::string* v = k8s::Find(labels, key)) selector->match_expressions.push_back({key, k8s::SelectorOp::kIn, {*v}, {}});
  }
  for (const std::string& key : mismatch) {
    if (const std::string* v = k8s::Find(labels, key)) selector->match_expressions.push_back({key, k8s::SelectorOp::kNotIn, {*v}, {}});
  }
  return selector;
}

}  // namespace

ClusterView::ClusterView(const k8s::Pod& pod, const NodeTable& table) : pod_(pod), table_(table) {}

// --- InterPodAffinity ----------------------------------------------------

// The incoming pod's term as kube-scheduler's PreFilter sees it: matchLabelKeys
// merged, namespaceSelector resolved against the snapshot's namespaces and
// merged into the namespaces, the pod's namespace when neither is given.
PodSelector::Clause ClusterView::Resolve(const k8s::PodAffinityTerm& term) const {
  PodSelector::Clause clause;
  clause.labels = MergeKeys(term.label_selector, pod_.labels, term.match_label_keys, term.mismatch_label_keys);
  std::set<std::string> namespaces(term.namespaces.begin(), term.namespaces.end());
  if (term.namespace_selector) {
    const k8s::LabelSelector& ns = *term.namespace_selector;
    if (ns.match_labels.empty() && ns.match_expressions.empty()) {
      clause.all_namespaces = true;  // an empty selector: every namespace
    } else {
      for (const auto& [name, labels] : table_.Namespaces()) {
        if (k8s::Matches(ns, labels)) namespaces.insert(name);
      }
    }
  } else if (namespaces.empty()) {
    namespaces.insert(pod_.namespace_name);
  }
  clause.namespaces.assign(namespaces.begin(), namespaces.end());
  return clause;
}

uint32_t ClusterView::SetFor(const std::vector<const k8s::PodAffinityTerm*>& terms) {
  auto it = sets_.find(terms);
  if (it != sets_.end()) return it->second;
  PodSelector selector;
  for (const k8s::PodAffinityTerm* t : terms) selector.clauses.push_back(Resolve(*t));
  return sets_[terms] = table_.PodSet(selector);
}

DomainView ClusterView::Domains(const std::vector<const k8s::PodAffinityTerm*>& terms, std::string_view key) {
  if (!has_last_ || terms != last_terms_ || key != last_key_) {
    last_view_ = table_.PodSetDomains(SetFor(terms), key);
    last_terms_ = terms;
    last_key_ = std::string(key);
    has_last_ = true;
  }
  return last_view_;
}

int64_t ClusterView::PodsInDomain(const std::vector<const k8s::PodAffinityTerm*>& terms, std::string_view key, RowId row) {
  return Domains(terms, key).At(row);
}

int64_t ClusterView::PodsWithKey(const std::vector<const k8s::PodAffinityTerm*>& terms, std::string_view key) {
  return table_.PodsWithKey(SetFor(terms), key);
}

bool ClusterView::PodMatches(const std::vector<const k8s::PodAffinityTerm*>& terms) {
  for (const k8s::PodAffinityTerm* t : terms) {
    PodSelector::Clause clause = Resolve(*t);
    bool in_namespace = clause.all_namespaces ||
                        std::binary_search(clause.namespaces.begin(), clause.namespaces.end(), pod_.namespace_name);
    if (!in_namespace || !k8s::Matches(clause.labels, pod_.labels)) return false;
  }
  return true;
}

// A bound pod's term against the incoming pod (AffinityTerm.Matches): its
// namespaces (the owner's when none and no namespaceSelector) or its
// namespaceSelector over the pod's namespace's labels, and its selector.
bool ClusterView::TermMatchesPod(const TermGroup& group) const {
  const k8s::PodAffinityTerm& t = group.term;
  bool in_namespace = false;
  if (t.namespaces.empty() && !t.namespace_selector) {
    in_namespace = group.owner_namespace == pod_.namespace_name;
  } else {
    in_namespace = std::find(t.namespaces.begin(), t.namespaces.end(), pod_.namespace_name) != t.namespaces.end() ||
                   (t.namespace_selector && k8s::Matches(*t.namespace_selector, table_.NamespaceLabels(pod_.namespace_name)));
  }
  return in_namespace && k8s::Matches(t.label_selector, pod_.labels);
}

const std::vector<uint32_t>& ClusterView::MatchingGroups() {
  if (!matching_groups_) {
    matching_groups_.emplace();
    const std::vector<TermGroup>& groups = table_.TermGroups();
    for (uint32_t g = 0; g < groups.size(); ++g) {
      if (TermMatchesPod(groups[g])) matching_groups_->push_back(g);
    }
  }
  return *matching_groups_;
}

int64_t ClusterView::ExistingAntiAffinity(RowId row) {
  if (!anti_views_) {
    anti_views_.emplace();
    for (uint32_t g : MatchingGroups()) {
      if (table_.TermGroups()[g].kind == TermKind::kRequiredAntiAffinity) anti_views_->push_back(table_.TermGroupDomains(g));
    }
  }
  int64_t n = 0;
  for (const DomainView& v : *anti_views_) n += v.At(row);
  return n;
}

int64_t ClusterView::ExistingAffinityWeight(int64_t hard_weight, bool preferred, RowId row) {
  if (!weight_views_ || weight_views_hard_ != hard_weight || weight_views_preferred_ != preferred) {
    weight_views_.emplace();
    weight_views_hard_ = hard_weight;
    weight_views_preferred_ = preferred;
    for (uint32_t g : MatchingGroups()) {
      const TermGroup& group = table_.TermGroups()[g];
      int64_t weight = 0;
      switch (group.kind) {
        case TermKind::kRequiredAffinity: weight = hard_weight; break;
        case TermKind::kPreferredAffinity: weight = preferred ? group.weight : 0; break;
        case TermKind::kPreferredAntiAffinity: weight = preferred ? -group.weight : 0; break;
        case TermKind::kRequiredAntiAffinity: break;
      }
      if (weight != 0) weight_views_->emplace_back(weight, table_.TermGroupDomains(g));
    }
  }
  int64_t score = 0;
  for (const auto& [weight, view] : *weight_views_) score += weight * view.At(row);
  return score;
}

void ClusterView::ExistingAntiAffinityColumn(int64_t* out, size_t rows) {
  std::fill(out, out + rows, 0);
  if (rows == 0) return;
  ExistingAntiAffinity(0);  // the views
  for (const DomainView& v : *anti_views_) {
    for (RowId row = 0; row < rows; ++row) out[row] += v.At(row);
  }
}

void ClusterView::ExistingAffinityWeightColumn(int64_t hard_weight, bool preferred, int64_t* out, size_t rows) {
  std::fill(out, out + rows, 0);
  if (rows == 0) return;
  ExistingAffinityWeight(hard_weight, preferred, 0);  // the views
  for (const auto& [weight, view] : *weight_views_) {
    for (RowId row = 0; row < rows; ++row) out[row] += weight * view.At(row);
  }
}

// --- PodTopologySpread ---------------------------------------------------

uint32_t ClusterView::SpreadSet(const k8s::TopologySpreadConstraint& c) {
  auto it = spread_sets_.find(&c);
  if (it != spread_sets_.end()) return it->second;
  PodSelector selector;
  PodSelector::Clause clause;
  clause.labels = MergeKeys(c.label_selector, pod_.labels, c.match_label_keys, {});
  // countPodsMatchSelector counts nothing for an empty selector (`{}`, and
  // no matchLabelKeys merged into it): labels.Everything() is Empty(). The
  // pod's own match (selfMatchNum) still uses the selector, which it
  // matches.
  if (clause.labels && clause.labels->match_labels.empty() && clause.labels->match_expressions.empty()) {
    clause.labels.reset();
  }
  clause.namespaces = {pod_.namespace_name};  // countPodsMatchSelector: the pod's namespace only
  selector.skip_terminating = true;           // ... and not pods being deleted
  selector.clauses.push_back(std::move(clause));
  return spread_sets_[&c] = table_.PodSet(selector);
}

// matchNodeInclusionPolicies.
bool ClusterView::Included(const k8s::TopologySpreadConstraint& c, RowId row) {
  if (affinity_ok_.empty()) {
    affinity_ok_.assign(table_.RowCount(), -1);
    taints_ok_.assign(table_.RowCount(), -1);
  }
  if (c.node_affinity_policy == k8s::InclusionPolicy::kHonor) {
    if (affinity_ok_[row] < 0) affinity_ok_[row] = MatchesNodeAffinity(pod_, table_, row);
    if (!affinity_ok_[row]) return false;
  }
  if (c.node_taints_policy == k8s::InclusionPolicy::kHonor) {
    if (taints_ok_[row] < 0) taints_ok_[row] = ToleratesTaints(pod_, table_, row);
    if (!taints_ok_[row]) return false;
  }
  return true;
}

// Whether `row` has the topology key of every DoNotSchedule (`hard`) or
// ScheduleAnyway constraint of the pod.
bool ClusterView::HasKeys(RowId row, bool hard) {
  std::optional<std::vector<const LabelColumn*>>& columns = hard ? hard_columns_ : soft_columns_;
  if (!columns) {
    columns.emplace();
    for (const k8s::TopologySpreadConstraint& c : pod_.topology_spread) {
      if ((c.when_unsatisfiable == k8s::WhenUnsatisfiable::kDoNotSchedule) == hard) {
        columns->push_back(table_.Label(c.topology_key));
      }
    }
  }
  for (const LabelColumn* column : *columns) {
    if (column == nullptr || column->domain[row] == 0) return false;
  }
  return true;
}

const ClusterView::SpreadDomains& ClusterView::Filtering(const k8s::TopologySpreadConstraint& c) {
  if (&c == last_spread_) return *last_filtering_;
  auto it = filtering_.find(&c);
  if (it != filtering_.end()) {
    last_spread_ = &c;
    last_filtering_ = &it->second;
    return it->second;
  }
  SpreadDomains& d = filtering_[&c];
  last_spread_ = &c;
  last_filtering_ = &d;
  d.self = k8s::Matches(MergeKeys(c.label_selector, pod_.labels, c.match_label_keys, {}), pod_.labels);
  const LabelColumn* column = table_.Label(c.topology_key);
  uint32_t set = SpreadSet(c);
  if (column != nullptr) {
    d.domain = column->domain.data();
    d.by_domain.assign(column->DomainCount() + 1, 0);
    d.present.assign(column->DomainCount() + 1, 0);
    NodeTable::RowCounts counts = table_.PodSetRows(set);
    for (RowId row = 0; row < table_.RowCount(); ++row) {
      if (!table_.Live()[row] || !HasKeys(row, true) || !Included(c, row)) continue;
      uint32_t domain = column->domain[row];
      d.present[domain] = 1;
      d.by_domain[domain] += counts.At(row);
    }
  }
  int64_t domains = 0;
  d.min = std::numeric_limits<int32_t>::max();  // no eligible domain: nothing to be skewed against
  for (size_t k = 1; k < d.present.size(); ++k) {
    if (!d.present[k]) continue;
    ++domains;
    d.min = std::min(d.min, d.by_domain[k]);
  }
  if (domains < c.min_domains.value_or(1)) d.min = 0;
  return d;
}

int64_t ClusterView::SpreadCount(const k8s::TopologySpreadConstraint& c, RowId row) {
  return Filtering(c).view().At(row);
}

int64_t ClusterView::SpreadMin(const k8s::TopologySpreadConstraint& c) { return Filtering(c).min; }

int64_t ClusterView::SpreadSkew(const k8s::TopologySpreadConstraint& c, RowId row) {
  const SpreadDomains& d = Filtering(c);
  return d.view().At(row) + (d.self ? 1 : 0) - d.min;
}

// Score: the pods of a domain are counted on every node that has all the
// ScheduleAnyway keys (when the pod has constraints of its own) and passes
// `c`'s inclusion policies.
const ClusterView::SpreadDomains& ClusterView::Scoring(const k8s::TopologySpreadConstraint& c) {
  auto it = scoring_.find(&c);
  if (it != scoring_.end()) return it->second;
  SpreadDomains& d = scoring_[&c];
  const LabelColumn* column = table_.Label(c.topology_key);
  if (column == nullptr) return d;
  d.domain = column->domain.data();
  bool require_all = !pod_.spread_system_defaulted;
  uint32_t set = SpreadSet(c);
  d.by_domain.assign(column->DomainCount() + 1, 0);
  NodeTable::RowCounts counts = table_.PodSetRows(set);
  for (RowId row = 0; row < table_.RowCount(); ++row) {
    if (!table_.Live()[row] || (require_all && !HasKeys(row, false)) || !Included(c, row)) continue;
    d.by_domain[column->domain[row]] += counts.At(row);
  }
  return d;
}

int64_t ClusterView::SpreadScoreCount(const k8s::TopologySpreadConstraint& c, RowId row) {
  if (c.topology_key == kHostname) return table_.PodsOnRow(SpreadSet(c), row);
  return Scoring(c).view().At(row);
}

void ClusterView::SpreadCountColumn(const k8s::TopologySpreadConstraint& c, int64_t* out, size_t rows) {
  DomainView view = Filtering(c).view();
  for (RowId row = 0; row < rows; ++row) out[row] = view.At(row);
}

void ClusterView::SpreadSkewColumn(const k8s::TopologySpreadConstraint& c, int64_t* out, size_t rows) {
  const SpreadDomains& d = Filtering(c);
  DomainView view = d.view();
  int64_t add = (d.self ? 1 : 0) - d.min;
  for (RowId row = 0; row < rows; ++row) out[row] = view.At(row) + add;
}

void ClusterView::SpreadScoreCountColumn(const k8s::TopologySpreadConstraint& c, int64_t* out, size_t rows) {
  if (c.topology_key == kHostname) {
    NodeTable::RowCounts counts = table_.PodSetRows(SpreadSet(c));
    for (RowId row = 0; row < rows; ++row) out[row] = counts.At(row);
    return;
  }
  DomainView view = Scoring(c).view();
  for (RowId row = 0; row < rows; ++row) out[row] = view.At(row);
}

int64_t ClusterView::SpreadWeight(const k8s::TopologySpreadConstraint& c) {
  auto cached = spread_weights_.find(&c);
  if (cached != spread_weights_.end()) return cached->second;
  bool require_all = !pod_.spread_system_defaulted;
  // Distinct domains by their dictionary ids (0: without the key, the ""
  // domain), the key's column looked up once.
  const LabelColumn* column = table_.Label(c.topology_key);
  std::vector<uint8_t> seen(column != nullptr ? column->value.size() : 1, 0);
  int64_t scored = 0, distinct = 0;
  for (RowId row : feasible_) {
    if (require_all && !HasKeys(row, false)) continue;  // ignored nodes
    ++scored;
    uint32_t domain = column != nullptr ? column->domain[row] : 0;
    distinct += seen[domain] == 0 ? 1 : 0;
    seen[domain] = 1;
  }
  int64_t size = c.topology_key == kHostname ? scored : distinct;
  int64_t weight = std::llround(std::log(static_cast<double>(size + 2)) * 1e9);
  spread_weights_.emplace(&c, weight);
  return weight;
}

}  // namespace policy::rt

namespace policy::rt {

WorkCounters& Work() {
  static WorkCounters counters;
  return counters;
}

int64_t ClusterView::NodesWithLabel(std::string_view key) {
  auto it = nodes_with_label_.find(key);
  if (it != nodes_with_label_.end()) return it->second;
  const LabelColumn* column = table_.Label(key);
  int64_t nodes = 0;
  for (size_t d = 1; column != nullptr && d < column->live_nodes.size(); ++d) nodes += column->live_nodes[d];
  nodes_with_label_.emplace(std::string(key), nodes);
  return nodes;
}

std::string_view ClusterView::ClosestLabelKey(std::string_view key) {
  auto it = closest_label_key_.find(key);
  if (it != closest_label_key_.end()) return it->second;
  Work().label_key_searches.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::string_view> keys;
  keys.reserve(table_.Labels().size());
  for (const LabelColumn& column : table_.Labels()) keys.push_back(table_.pool().Get(column.key));
  return closest_label_key_.emplace(std::string(key), std::string(Closest(key, keys))).first->second;
}

}  // namespace policy::rt
