#pragma once
/// What one pod's placement reads of the whole cluster: the counts behind
/// InterPodAffinity and PodTopologySpread (the builtins marked kCluster in
/// stdlib/builtins.def), over the NodeTable's topology index.
///
/// Made once per pod and placement cycle; what it derives from the pod (its
/// terms resolved to pod sets, the bound pods' terms that match it, the
/// spread constraints' eligible domains) is computed at first use and kept,
/// so each node costs O(1) lookups.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"
#include "runtime/dra/allocator.h"

namespace policy::rt {

class ClusterView {
 public:
  ClusterView(const k8s::Pod& pod, const NodeTable& table);

  // --- InterPodAffinity ------------------------------------------------
  /// Bound pods that match every term of `terms` (the pod's own terms: its
  /// selector with matchLabelKeys merged, its namespaces) on the nodes that
  /// share `row`'s value of `key`; 0 when `row` lacks `key`.
  int64_t PodsInDomain(const std::vector<const k8s::PodAffinityTerm*>& terms, std::string_view key, RowId row);
  /// The same over every node that has `key`.
  int64_t PodsWithKey(const std::vector<const k8s::PodAffinityTerm*>& terms, std::string_view key);
  /// PodsInDomain for every row at once.
  DomainView Domains(const std::vector<const k8s::PodAffinityTerm*>& terms, std::string_view key);
  /// Whether the pod matches every term of `terms` itself.
  bool PodMatches(const std::vector<const k8s::PodAffinityTerm*>& terms);
  /// Bound pods' required anti-affinity terms that match the pod, counted
  /// once per pod carrying one, on nodes sharing `row`'s value of the term's
  /// topology key.
  int64_t ExistingAntiAffinity(RowId row);
  /// The score bound pods' terms give `row` for this pod: `hard_weight` per
  /// required affinity term, the weight of each preferred affinity term,
  /// minus the weight of each preferred anti-affinity term, of bound pods on
  /// nodes sharing `row`'s value of the term's topology key.
  /// `preferred` false leaves bound pods' preferred terms out
  /// (ignorePreferredTermsOfExistingPods).
  int64_t ExistingAffinityWeight(int64_t hard_weight, bool preferred, RowId row);
  /// ExistingAntiAffinity and ExistingAffinityWeight for rows [0, rows) at
  /// once, into out.
  void ExistingAntiAffinityColumn(int64_t* out, size_t rows);
  void ExistingAffinityWeightColumn(int64_t hard_weight, bool preferred, int64_t* out, size_t rows);

  // --- PodTopologySpread -----------------------------------------------
  /// Pods in the pod's namespace matching constraint `c` on the eligible
  /// nodes (kube-scheduler's PreFilter: nodes with every DoNotSchedule
  /// constraint's key that pass `c`'s inclusion policies) in `row`'s domain.
  int64_t SpreadCount(const k8s::TopologySpreadConstraint& c, RowId row);
  /// The global minimum for `c`: the fewest matching pods of any eligible
  /// domain (0 when there are fewer domains than minDomains).
  int64_t SpreadMin(const k8s::TopologySpreadConstraint& c);
  /// SpreadCount + (1 if the pod matches its own selector) - SpreadMin.
  int64_t SpreadSkew(const k8s::TopologySpreadConstraint& c, RowId row);
  /// SpreadCount, SpreadSkew and SpreadScoreCount for rows [0, rows) at
  /// once, into out (the constraint's domains looked up once).
  void SpreadCountColumn(const k8s::TopologySpreadConstraint& c, int64_t* out, size_t rows);
  void SpreadSkewColumn(const k8s::TopologySpreadConstraint& c, int64_t* out, size_t rows);
  void SpreadScoreCountColumn(const k8s::TopologySpreadConstraint& c, int64_t* out, size_t rows);

  // --- DynamicResources ------------------------------------------------
  /// The pod's claims and the structured allocator over the table's DRA
  /// objects, made at first use.
  dra::Allocator& Claims() {
    if (!claims_) claims_ = std::make_unique<dra::Allocator>(pod_, table_);
    return *claims_;
  }

  /// The nodes that passed every filter; scoring builtins need them.
  void SetFeasible(std::vector<RowId> rows) {
    feasible_ = std::move(rows);
    spread_weights_.clear();
  }
  /// PodTopologySpread's score count for a ScheduleAnyway constraint:
  /// matching pods on this node for kubernetes.io/hostname, else on the
  /// score-eligible nodes of `row`'s domain.
  int64_t SpreadScoreCount(const k8s::TopologySpreadConstraint& c, RowId row);
  /// ln(domains + 2) in billionths, the domains of `c` among the feasible
  /// nodes that are not ignored (kube-scheduler's topologyNormalizingWeight).
  int64_t SpreadWeight(const k8s::TopologySpreadConstraint& c);

  // --- Explanations (row-invariant: answered once a view) ---------------
  /// The live nodes that have label `key`.
  int64_t NodesWithLabel(std::string_view key);
  /// The table's label key nearest `key` by edit distance (a near miss), or
  /// empty; a detail asks it on every rejected row, so it is kept per key.
  std::string_view ClosestLabelKey(std::string_view key);

  /// The pod set a constraint counts (the pod's namespace, its selector
  /// with matchLabelKeys merged).
  uint32_t SpreadSet(const k8s::TopologySpreadConstraint& c);
  /// The pod set that matches every term of `terms` (PodsInDomain's).
  uint32_t TermsSet(const std::vector<const k8s::PodAffinityTerm*>& terms) { return SetFor(terms); }

 private:
  struct SpreadDomains {
    std::vector<int64_t> by_domain;  ///< matching pods per domain of the key (eligible nodes only)
    std::vector<uint8_t> present;    ///< per domain: some eligible node has it
    int64_t min = 0;
    bool self = false;               ///< the pod matches the constraint's selector
    DomainView view() const {
      return {domain, by_domain.data(), static_cast<uint32_t>(by_domain.size())};
    }
    const uint32_t* domain = nullptr;  ///< the key's column: per row
  };
  PodSelector::Clause Resolve(const k8s::PodAffinityTerm& term) const;
  uint32_t SetFor(const std::vector<const k8s::PodAffinityTerm*>& terms);
  bool TermMatchesPod(const TermGroup& group) const;
  const std::vector<uint32_t>& MatchingGroups();
  bool Included(const k8s::TopologySpreadConstraint& c, RowId row);
  bool HasKeys(RowId row, bool hard);
  const SpreadDomains& Filtering(const k8s::TopologySpreadConstraint& c);
  const SpreadDomains& Scoring(const k8s::TopologySpreadConstraint& c);

  const k8s::Pod& pod_;
  const NodeTable& table_;
  std::unique_ptr<dra::Allocator> claims_;
  std::map<std::vector<const k8s::PodAffinityTerm*>, uint32_t> sets_;
  // The last PodsInDomain question (the interpreter asks it once per node).
  std::vector<const k8s::PodAffinityTerm*> last_terms_;
  std::string last_key_;
  DomainView last_view_;
  bool has_last_ = false;
  std::optional<std::vector<uint32_t>> matching_groups_;
  std::optional<std::vector<DomainView>> anti_views_;
  std::optional<std::vector<std::pair<int64_t, DomainView>>> weight_views_;
  int64_t weight_views_hard_ = 0;
  bool weight_views_preferred_ = true;
  const k8s::TopologySpreadConstraint* last_spread_ = nullptr;
  const SpreadDomains* last_filtering_ = nullptr;
  std::map<const k8s::TopologySpreadConstraint*, uint32_t> spread_sets_;
  std::map<const k8s::TopologySpreadConstraint*, SpreadDomains> filtering_, scoring_;
  // SpreadWeight per constraint: the same on every row (the interpreter asks per row).
  std::map<const k8s::TopologySpreadConstraint*, int64_t> spread_weights_;
  std::vector<int8_t> affinity_ok_, taints_ok_;  ///< per row: -1 not yet known
  std::optional<std::vector<const LabelColumn*>> hard_columns_, soft_columns_;  ///< the constraints' key columns
  std::vector<RowId> feasible_;
  std::map<std::string, int64_t, std::less<>> nodes_with_label_;
  std::map<std::string, std::string, std::less<>> closest_label_key_;
};

}  // namespace policy::rt
