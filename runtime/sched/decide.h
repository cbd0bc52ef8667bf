#pragma once
/// The scheduling decision alone, the hot path a scheduler runs per pod:
/// which nodes are feasible, their weighted scores, the selected node. No
/// words (Place() gives them, for the nodes a person asks about), no per-node
/// objects: columns in, columns out. Plugins with kernels run natively over
/// all rows at once; the others in the interpreter.

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/sched/placement.h"

namespace policy::rt {

struct Decision {
  std::vector<RowId> feasible;     ///< the rows every filter passes, in table order
  std::vector<int64_t> score;      ///< by index into feasible: the weighted sum of the plugins' scores
  std::optional<size_t> selected;  ///< index into feasible: the highest score, the first on ties
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

/// Decides pod after pod, keeping its buffers between calls (a scheduler
/// holds one per thread): no allocation per pod once they have grown. It
/// also learns, pod after pod, which filters reject most for least time and
/// runs those first (the decision never depends on the order).
class Decider {
 public:
  /// The same feasibility, scores and selection as Place(); valid until the
  /// next call.
  const Decision& Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                         const DecideOptions& options = {});

 private:
  Decision d_;
  std::vector<RowId> a_, b_;  // rows still feasible, filter after filter (one is read, the other written)
  std::vector<uint64_t> failed_;
  std::vector<int64_t> raw_, total_;
  struct FilterStats {
    double pass = 1;        ///< fraction of the rows it kept
    double ns_per_row = 0;  ///< time per row it read
    size_t pods = 0;
  };
  std::unordered_map<std::string, FilterStats> filter_stats_;  ///< by plugin name
};

/// One decision (a Decider used once).
Decision Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const DecideOptions& options = {});

}  // namespace policy::rt
