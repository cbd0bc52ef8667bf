#pragma once
/// Explaining a decision: words for the rows a person asks about (DESIGN.md
/// idea 5). The decision (decide.h) says which nodes are feasible, their
/// scores and the selection; explaining adds, per infeasible node, every
/// failing plugin's reasons and details, rendered by re-evaluating its
/// filters in the interpreter, and kube-scheduler's FitError summary. It
/// never decides again: a node's feasibility and score come from the
/// decision.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"
#include "runtime/sched/decide.h"
#include "runtime/sched/plugin.h"

namespace policy::rt {

struct NodeReason {
  std::string plugin;
  std::string reason;
  std::string detail;
  /// UnschedulableAndUnresolvable: the failing filter is marked
  /// `unresolvable` in its policy (no eviction makes room; preemption skips
  /// the node, the extender lists it in FailedAndUnresolvableNodes).
  bool unresolvable = false;
};

struct NodeResult {
  RowId row = 0;
  std::string name;
  bool feasible = false;
  std::vector<NodeReason> reasons;   ///< every failing plugin's reasons, in plugin order
  size_t first_failing_reasons = 0;  ///< how many leading reasons come from the first failing plugin
  int64_t score = 0;                 ///< weighted sum (feasible nodes)
  std::vector<std::pair<std::string, int64_t>> scores;  ///< normalized, per applied score plugin
};

struct Placement {
  std::vector<NodeResult> nodes;  ///< the explained rows, in the order asked
  size_t feasible = 0;            ///< feasible nodes of the whole table
  std::optional<size_t> selected;  ///< index into nodes, when the selected node was asked about
  /// kube-scheduler's FitError first sentence (`0/N nodes are available:
  /// ...`, counting the first failing plugin's reasons of every node
  /// explained), `K/N nodes are available.`, or, for a cluster without
  /// nodes, `no nodes available to schedule pods`; after an error, its message.
  std::string summary;
  /// Decision::error: the attempt ended with kube-scheduler's Error status
  /// (no node is feasible; a node may have passed every filter, and then
  /// has no reasons).
  std::optional<std::string> error;
};

/// Nodes that fail for one reason of one plugin, as a person reads a
/// Pending pod's answer (check's text, schedule's records,
/// ../shared/spec/policyc-schedule.md): how many nodes, the first few by
/// name, and one example's detail. Sized by the distinct reasons, not by
/// the nodes.
struct ReasonGroup {
  std::string plugin;
  std::string reason;
  size_t nodes = 0;                   ///< nodes with this reason (each counted once)
  std::vector<std::string> examples;  ///< the first nodes, in the placement's order
  RowId example_row = 0;              ///< the first example's row
  std::string detail;                 ///< the first example's detail, when explained with details
};

/// `placement`'s reasons grouped by (plugin, reason), most nodes first (ties
/// in first-seen order), each with at most `examples` node names and the
/// first one's detail as `placement` has it.
std::vector<ReasonGroup> GroupReasons(const Placement& placement, size_t examples);

/// Fills each group's detail from `detailed`, an explanation with details
/// of (at least) the groups' example rows.
void DetailGroups(std::vector<ReasonGroup>& groups, const Placement& detailed);

/// The distinct example rows of `groups`, sorted (what DetailGroups needs
/// explained).
std::vector<RowId> ExampleRows(const std::vector<ReasonGroup>& groups);

/// Whether two results for a node say the same: the same reasons, the same
/// first failing plugin's share of them.
bool SameWords(const NodeResult& a, const NodeResult& b);

/// Words for `rows` (live rows of `table`) of `decision`, which `plugins`
/// made for `pod` on `table` with DecideOptions::plugin_scores. The summary
/// counts the rows explained: explain every live row for kube-scheduler's.
/// A row the decision rejected that no filter rejects in the interpreter is
/// a compiler bug: it aborts. `details` false leaves every NodeReason's
/// detail empty and renders none (the summary and a scheduler's failed
/// nodes need the reasons alone).
Placement Explain(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                  const Decision& decision, std::span<const RowId> rows, bool details = true);

}  // namespace policy::rt
