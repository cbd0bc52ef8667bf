#pragma once
/// The scheduling decision for one pod, the one path every answer takes:
/// which nodes are feasible, their weighted scores, the selected node.
/// Columns in, columns out; no words (explain.h adds them for the rows a
/// person asks about). Plugins with kernels run natively over all rows at
/// once; the others in the interpreter.

#include <optional>
#include <string>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"
#include "runtime/sched/plugin.h"
#include "runtime/sched/plugin_rows.h"

namespace policy::rt {

struct Decision {
  std::vector<RowId> feasible;     ///< the rows every filter passes, in table order
  std::vector<int64_t> score;      ///< by index into feasible: the weighted sum of the plugins' scores
  std::optional<size_t> selected;  ///< index into feasible: the highest score, the first on ties
  /// The plugin whose PreFilter rejected the pod (then no node is feasible).
  std::optional<size_t> rejected_by;
  /// With DecideOptions::plugin_scores: per plugin, by index into feasible,
  /// its normalized score before the weight (empty for a plugin that does
  /// not score this pod).
  std::vector<std::vector<int64_t>> plugin_scores;
  /// kube-scheduler's Error status: a filter marked `aborts` rejected a
  /// node that every plugin before it passed (an allocator error of
  /// DynamicResources). The attempt ends: no node is feasible, none is
  /// selected, and this is its message (`running "PLUGIN" filter plugin:
  /// REASON`), what kube-scheduler's FailedScheduling event says.
  std::optional<std::string> error;
};

struct DecideOptions {
  /// Kernels run over chunks of the rows on this many threads (the
  /// interpreter on one); the decision does not depend on it.
  int threads = 1;
  /// Keep each plugin's normalized scores (Decision::plugin_scores).
  bool plugin_scores = false;
  /// Only which rows are feasible: no scores, no selection (what would
  /// make a pod fit asks only that).
  bool filters_only = false;
  /// Differential testing: for every plugin with kernels, also evaluate its
  /// filters and raw scores in the interpreter on the same rows and abort on
  /// any difference.
  bool verify_kernels = false;
  /// The rows to decide among, in table order (kube-scheduler's sampled
  /// nodes); every live row when empty. Scores normalize over these alone.
  std::span<const RowId> rows = {};
};

/// Decides pod after pod, keeping its buffers between calls (a scheduler
/// holds one per thread): no allocation per pod once they have grown. It
/// also learns, pod after pod, which filters reject most for least time and
/// runs those first (the decision never depends on the order).
class Decider {
 public:
  /// The decision for `pod` with `plugins` (filters in kube-scheduler's
  /// order); valid until the next call.
  const Decision& Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                         const DecideOptions& options = {});

 private:
  Decision d_;
  std::vector<RowId> a_, b_;  // rows still feasible, filter after filter (one is read, the other written)
  std::vector<int64_t> total_;
  RowBuffers buffers_;
  struct FilterStats {
    double pass = 1;        ///< fraction of the rows it kept
    double ns_per_row = 0;  ///< time per row it read
    size_t pods = 0;
  };
  std::unordered_map<std::string, FilterStats> filter_stats_;  ///< by plugin name
};

/// `d` cleared for a new decision (its buffers kept); plugin_scores sized
/// for `plugins` plugins when kept. Both deciders start so.
void ClearDecision(Decision& d, size_t plugins, bool plugin_scores);
/// The index of the highest of `scores`, the first on ties (kube's
/// selection without its random tie-break); nullopt when empty.
std::optional<size_t> Best(std::span<const int64_t> scores);

/// One decision (a Decider used once).
Decision Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const DecideOptions& options = {});

}  // namespace policy::rt
