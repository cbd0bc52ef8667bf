#pragma once
/// Incremental decisions: the next pod of a template decided from what the
/// previous decision kept, not from every node again. Exact for every
/// plugin, custom policies included: a row is evaluated again when
/// something it reads may have changed, which is
///   * its own data: the rows binds and unbinds touched since
///     (NodeTable::RowsChangedSince);
///   * a cluster-wide value a plugin reads there (podsInDomain, spreadSkew,
///     ... every builtin marked kCluster): each such call's value on every
///     row is computed again (O(1) a row over the topology index) and
///     compared with the last one; where it differs, the row is evaluated
///     again for that plugin (a pod joining a zone moves that zone's rows).
/// Anything else (a node added, removed or relabelled, a namespace, a
/// storage object, another dictionary version, a plugin that now applies
/// or not) makes a full decision. So does a cluster call whose value
/// cannot be compared per row (its arguments read the node or a loop
/// variable): that plugin alone is evaluated on every row each time.
/// Scores are normalized over the feasible rows every time, from the kept
/// raw values, exactly as Decider does.

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/sched/decide.h"
#include "runtime/sched/explain.h"

namespace policy::rt {

/// How incremental decisions went, summed over a run.
struct IncrementalStats {
  size_t full = 0;         ///< decisions that evaluated every plugin on every row
  size_t incremental = 0;  ///< decisions updated from the previous one
  /// Rows evaluated again, summed over plugins, by incremental decisions.
  size_t rows_evaluated = 0;
  /// Plugins evaluated on every row within incremental decisions (a cluster
  /// value not comparable per row).
  size_t plugins_on_every_row = 0;
  /// Why decisions were full, with how many.
  std::map<std::string, size_t> full_because;
};

/// One template's kept decision. Use one per template (pods whose plugins,
/// specialized to them, are the same); `plugins` must be the same programs
/// from call to call, or the next decision is full.
class IncrementalDecider {
 public:
  IncrementalDecider();
  ~IncrementalDecider();
  IncrementalDecider(IncrementalDecider&&) noexcept;
  IncrementalDecider& operator=(IncrementalDecider&&) noexcept;

  /// What Decider::Decide returns for the same arguments (plugin_scores
  /// and verify_kernels are not supported: ask Decider), valid until the
  /// next call. `stats` (may be null) counts how it was made.
  const Decision& Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                         const DecideOptions& options, IncrementalStats* stats);
  /// Forgets what was kept: the next decision is full (`why` says why in
  /// IncrementalStats::full_because; empty: as for a first pod).
  void Reset(std::string why = {});
  /// Bytes kept between decisions.
  size_t KeptBytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string dropped_because_;
  Decision d_;
};

/// One template's kept explanation: the words for every node, brought up
/// to date like IncrementalDecider's decision (a row is explained again
/// where a bind touched it, or where a cluster-wide value its filters or
/// their messages read moved). For a pod that fits somewhere the feasible
/// rows carry no scores and no row is selected: read those from the
/// decision (they move with every bind; the words do not).
class IncrementalExplainer {
 public:
  IncrementalExplainer();
  ~IncrementalExplainer();
  IncrementalExplainer(IncrementalExplainer&&) noexcept;
  IncrementalExplainer& operator=(IncrementalExplainer&&) noexcept;

  /// What Explain(plugins, pod, table, decision, table.LiveRows()) returns
  /// (for a pod that fits somewhere: less the scores and the selection);
  /// the same object as the last call's when nothing it says has changed.
  /// `decision` is over every live row.
  /// `details` false: reasons only (rt::Explain); the words kept are of
  /// one kind, so asking for the other starts again.
  std::shared_ptr<const Placement> Explain(const std::vector<Plugin>& plugins, const k8s::Pod& pod,
                                           const NodeTable& table, const Decision& decision, bool details);
  void Reset();
  /// Bytes the kept explanation holds (the words of every row, the values
  /// of the call sites watched): O(rows), kept current, O(plugins) to ask.
  size_t KeptBytes() const;
  /// Rows explained (again) since it was made: the work the guard tests count.
  size_t ExplainedRows() const { return explained_rows_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  size_t explained_rows_ = 0;
};

}  // namespace policy::rt
