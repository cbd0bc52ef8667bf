#pragma once
/// What evaluating a pod's plugins shares, for deciding and for explaining
/// alike: the pod's fields (PodView), its cluster-wide counts (ClusterView),
/// one interpreter per program (made on first use), whether each plugin
/// applies to the pod, and which plugins have prefilters that read the node.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "runtime/columnar/node_table.h"
#include "runtime/interp/interpreter.h"
#include "runtime/sched/plugin.h"

namespace policy::rt {

class PluginContext {
 public:
  /// `plugins`, `pod` and `table` must outlive the context.
  /// `details` false: failures carry reasons only (Interpreter::SetDetails).
  PluginContext(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table, bool details = true);

  /// The interpreter of plugin `i`'s program, for this pod.
  Interpreter& Interp(size_t i);
  /// Whether plugin `i` applies to the pod (its `when`).
  bool Applies(size_t i);
  /// Whether plugin `i` filters this pod: it applies and its filters are on.
  bool Filters(size_t i) { return plugins_[i].filter && Applies(i); }
  /// Whether some prefilter of plugin `i` reads the node (PreFilter that
  /// narrows nodes rather than rejecting the pod).
  bool NodePrefilters(size_t i) const { return node_prefilters_[i]; }
  /// kube-scheduler's PreFilter of the pod: the first filtering plugin whose
  /// pod-level prefilter rejects the pod, with its failure; that rejects
  /// every node.
  std::optional<std::pair<size_t, FilterFailure>> PodRejection();
  /// kube-scheduler's Error status from a Filter: the first of `rows` (in
  /// table order; not in `feasible`, also in table order) where a filter marked `aborts` of a plugin fails
  /// while every filtering plugin before it passes, as kube would have run
  /// that filter there. The attempt's message, `running "PLUGIN" filter
  /// plugin: REASON`; nullopt when none.
  std::optional<std::string> FilterError(std::span<const RowId> rows, std::span<const RowId> feasible);
  /// Plugin i's `aborts` filters, as bits of FailingFilters' mask (0: none).
  uint64_t AbortingFilters(size_t i) const { return aborting_[i]; }
  ClusterView& Cluster() { return cluster_; }

 private:
  // Whether every filtering plugin before `i` passes on `row`.
  bool PassesBefore(size_t i, RowId row);

  const std::vector<Plugin>& plugins_;
  const k8s::Pod& pod_;
  const NodeTable& table_;
  ClusterView cluster_;
  binding::PodView pod_view_;
  std::map<const ir::Program*, std::unique_ptr<Interpreter>> interpreters_;
  std::vector<int8_t> applies_;  // -1: not asked yet
  std::vector<bool> node_prefilters_;
  std::vector<uint64_t> aborting_;  // per plugin: its `aborts` filters' bits in FailingFilters' mask
  bool details_ = true;
};

}  // namespace policy::rt
