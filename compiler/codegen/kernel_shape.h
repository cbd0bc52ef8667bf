#pragma once
/// A function's kernel shape: what its kernels compute apart from the pod's
/// values. The pod's numbers, the label values its node-affinity terms
/// accept and the taints it tolerates are kernel parameters (read from
/// PolicyColumns::params), so templates that differ only in those values
/// share one compiled kernel; the kernel cache is keyed by the shape.
///
/// The key is a 128-bit hash of the reachable IR in a canonical order
/// (post-order from the filters and scores), without node ids, spans,
/// messages, names, the parameters' values or the arguments of cluster
/// builtin calls (the runtime computes those calls' values; the kernel reads
/// a column). Constants whose value the code generator builds on stay in the
/// key: multipliers, divisors and `interpolate`'s points.
///
/// The names of the node resources the kernels read (`node.allocatable[N]`,
/// `requested`, `scoringRequested` by a constant name used for nothing
/// else) are not in the key either: the kernels read those columns by slot,
/// and a slot's name is bound with the parameters. Pods asking for extended
/// resources of their own (`example.com/gpu-7`, one per node) share a
/// kernel as pods asking for other amounts do.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/compiled_function.h"
#include "compiler/ir/ir.h"

namespace policy::codegen {

struct KernelShape {
  std::string key;  ///< 16 bytes
  /// The kernels' parameters, in the canonical order: integer constants,
  /// then per `label_in` its value ids, per `taints_*` scan its mask words.
  std::vector<int64_t> params;
  std::vector<int32_t> first_param;   ///< by NodeId: the node's first parameter; -1: none
  std::vector<ir::NodeId> cluster;    ///< cluster builtin calls, by the kernels' cluster slot
  std::vector<int32_t> cluster_slot;  ///< by NodeId: the call's cluster slot; -1: none
  /// Whether a reachable node divides by a value that is not a constant
  /// (the kernels then get a fast pass and an exact one).
  bool divides = false;
  /// The node resources the kernels read, in the canonical order of their
  /// first read (CompiledFunction::resource_names).
  std::vector<std::string> resource_names;
};

/// The shape of function `f` of `program`.
KernelShape ShapeOf(const ir::Program& program, size_t f);

/// `kernels` (compiled for a function of `shape`'s key) with `shape`'s own
/// parameters, cluster calls and resource names; the result holds `kernels`
/// alive.
std::shared_ptr<const CompiledFunction> BindShape(std::shared_ptr<const CompiledFunction> kernels, KernelShape shape);

/// The words of a `taints_*` scan's mask: one bit per tolerated taint id.
std::vector<uint64_t> TaintMask(const ir::TaintScan& scan);

}  // namespace policy::codegen
