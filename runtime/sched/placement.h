#pragma once
/// The scheduling core for one pod: filter every node with every plugin,
/// score the feasible ones, normalize and weight the scores, select, and
/// summarize failures the way kube-scheduler's FitError does.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/codegen/jit.h"
#include "compiler/ir/ir.h"
#include "compiler/k8s/objects.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

/// One plugin: a function of a compiled program.
struct Plugin {
  std::string name;
  const ir::Program* program = nullptr;
  size_t function = 0;
  int64_t weight = 1;
  bool filter = true;  ///< run its filters
  bool score = true;   ///< run its scores
  /// Native kernels of the function (the JIT's), or null: the interpreter
  /// evaluates it. Messages always come from the interpreter.
  const codegen::CompiledFunction* kernels = nullptr;
};

struct NodeReason {
  std::string plugin;
  std::string reason;
  std::string detail;
};

struct NodeResult {
  RowId row = 0;
  std::string name;
  bool feasible = false;
  std::vector<NodeReason> reasons;   ///< every failing plugin's reasons, in plugin order
  size_t first_failing_reasons = 0;  ///< how many leading reasons come from the first failing plugin
  int64_t score = 0;                 ///< weighted sum (feasible nodes)
  std::vector<std::pair<std::string, int64_t>> scores;  ///< normalized, per applied score plugin
  uint64_t failed_plugins = 0;       ///< without explanations: bit i set when plugin i rejects the node
};

struct Placement {
  std::vector<NodeResult> nodes;  ///< live nodes in table order
  size_t feasible = 0;
  std::optional<size_t> selected;  ///< index into nodes
  std::string summary;             ///< kube-scheduler's FitError first sentence, or `K/N nodes are available.`
};

struct PlaceOptions {
  /// Words for every failing node: reasons, details, names and the summary.
  /// Without (a scheduler's hot path), nodes carry only feasibility, which
  /// plugins failed, and scores; a person's question is answered by placing
  /// again with them.
  bool explain = true;
  /// With kernels: also evaluate every node in the interpreter and abort on
  /// any difference in failing filters or raw scores (differential testing).
  bool verify_kernels = false;
};

/// kube-scheduler's NormalizeScore variants, in place over the feasible
/// nodes' raw scores of one score rule.
void Normalize(sema::Normalize kind, std::span<int64_t> scores);

/// Places `pod` on `table` with `plugins` (filters in the given order).
Placement Place(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const PlaceOptions& options = {});

}  // namespace policy::rt
