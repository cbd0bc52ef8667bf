#pragma once
/// One plugin evaluated over rows: the core both decisions are built on
/// (Decider, decide.h: every row, the feasible ones narrowing plugin after
/// plugin; IncrementalDecider, incremental.h: the rows that may have
/// changed). Its node prefilters and filters, and its raw scores, in its
/// native kernels when it has them (checked against the interpreter on
/// request) or in the interpreter.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "compiler/ir/ir.h"
#include "runtime/columnar/node_table.h"
#include "runtime/sched/plugin.h"

namespace policy::rt {

class PluginContext;

struct RowsOptions {
  /// Kernels run over chunks of the rows on this many threads.
  int threads = 1;
  /// Every row a kernel decides is evaluated in the interpreter too; a
  /// difference aborts (DecideOptions::verify_kernels).
  bool verify_kernels = false;
  /// Values of cluster calls already computed, by row (the incremental
  /// decider's), for the kernels to read rather than compute again.
  std::span<const std::pair<ir::NodeId, const int64_t*>> given = {};
};

/// What PluginRows writes into as it goes: a decider keeps one from pod to
/// pod, so that no pod allocates once they have grown.
struct RowBuffers {
  std::vector<RowId> kept;      // rows the node prefilters keep
  std::vector<uint64_t> failed;  // by row: failing filters, a bit each
  std::vector<int64_t> raw;     // by row: one rule's raw scores
};

/// Evaluates a pod's plugins (those of `context`) on rows of `table`.
class PluginRows {
 public:
  PluginRows(const std::vector<Plugin>& plugins, PluginContext& context, const NodeTable& table, RowBuffers& buffers)
      : plugins_(plugins), context_(context), table_(table), kept_(buffers.kept), failed_(buffers.failed),
        raw_(buffers.raw) {}

  /// The rows of `rows` (in table order) where plugin `i`'s node
  /// prefilters and filters all pass, written to `out` in order (it has
  /// room for rows.size()); returns how many. `scratch`: where the node
  /// prefilters' survivors go, room for rows.size() — rows' own buffer
  /// when the caller is done with them (fewer buffers in the cache, as
  /// Decider's two) — or null for a buffer of its own.
  size_t Passing(size_t i, std::span<const RowId> rows, RowId* out, const RowsOptions& options,
                 RowId* scratch = nullptr);
  /// Plugin `i`'s raw scores on `rows`, rule after rule:
  /// `rule(s, values)` with values[k] the raw score of rule s on rows[k].
  void Scores(size_t i, std::span<const RowId> rows, const RowsOptions& options,
              const std::function<void(size_t, std::span<int64_t>)>& rule);

 private:
  const std::vector<Plugin>& plugins_;
  PluginContext& context_;
  const NodeTable& table_;
  std::vector<RowId>& kept_;
  std::vector<uint64_t>& failed_;
  std::vector<int64_t>& raw_;
};

}  // namespace policy::rt
