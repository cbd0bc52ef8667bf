#pragma once
/// The scheduling decision alone, the hot path a scheduler runs per pod:
/// which nodes are feasible, their weighted scores, the selected node. No
/// words (Place() gives them, for the nodes a person asks about), no per-node
/// objects: columns in, columns out. Plugins with kernels run natively over
/// all rows at once; the others in the interpreter.

#include <optional>
#include <vector>

#include "runtime/sched/placement.h"

namespace policy::rt {

struct Decision {
  std::vector<RowId> rows;        ///< live rows, in table order
  std::vector<uint8_t> feasible;  ///< by index into rows
  std::vector<int64_t> score;     ///< by index into rows: the weighted sum (feasible rows)
  size_t feasible_count = 0;
  std::optional<size_t> selected;  ///< index into rows: the highest score, the first on ties
};

struct DecideOptions {
  /// Kernels run over chunks of the rows on this many threads (the
  /// interpreter on one); the decision does not depend on it.
  int threads = 1;
  /// The filters of plugins `fused_plugins` (indices into the plugins, in
  /// order) fused into one kernel (codegen::Jit::CompileFilters): one pass
  /// over the rows instead of one per plugin. Used when all of them apply
  /// to the pod and none has prefilters that read the node.
  const codegen::FusedFilters* fused = nullptr;
  std::vector<size_t> fused_plugins;
};

/// The same feasibility, scores and selection as Place().
Decision Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const DecideOptions& options = {});

}  // namespace policy::rt
