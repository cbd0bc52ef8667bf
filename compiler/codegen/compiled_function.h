#pragma once
/// What the scheduling core sees of a compiled policy function: its kernels
/// as C function pointers (kernel_abi.h) and the node columns they read, by
/// slot. No LLVM here; the back end (jit.h) fills these in.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/kernel_abi.h"
#include "compiler/ir/ir.h"

namespace policy::codegen {

/// A column a kernel reads: a resource of the node table.
struct ResourceSlot {
  enum class Kind : uint8_t { kAllocatable, kRequested, kScoringRequested };
  std::string name;
  Kind kind = Kind::kAllocatable;
  bool operator==(const ResourceSlot&) const = default;
};

/// The kernels of one function. Column slots are in the order the kernels
/// index PolicyColumns::labels and ::resources.
struct CompiledFunction {
  PolicyFilterKernel filter = nullptr;   ///< all of the function's filters; null when it has none
  PolicyPassKernel pass = nullptr;       ///< the same filters, answering only which rows pass every one (not at O0)
  size_t filters = 0;
  std::vector<PolicyScoreKernel> scores;  ///< one per score rule
  std::vector<std::string> labels;        ///< label keys, by slot
  std::vector<ResourceSlot> resources;    ///< by slot
  /// `node.devices`: whether the kernels read it, the device capacities
  /// (qualified names) and `cel` selectors (their text) they read, by slot.
  bool devices = false;
  std::vector<std::string> device_capacities, device_selectors;
  /// Calls of cluster builtins (podsInDomain, spreadSkew, ...) with pod-side
  /// arguments, by slot: the runtime computes their value per row for the
  /// pod (the topology index makes that O(1) a row) and the kernel reads it.
  std::vector<ir::NodeId> cluster;
  /// By cluster slot: whether the filter and pass kernels read it, and
  /// whether some score kernel does (a caller may leave the others unset).
  std::vector<uint8_t> cluster_in_filters, cluster_in_scores;
  /// The values of the kernels' parameters for this function's pod
  /// (PolicyColumns::params): kernels are shared by every function of one
  /// shape (kernel_shape.h); `params` and `cluster` are this one's.
  std::vector<int64_t> params;
  /// The node resources of `resources`' slots by their canonical order
  /// (KernelShape::resource_names): binding the kernels to a function of the
  /// same shape renames each slot to that function's resource of the same
  /// order.
  std::vector<std::string> resource_names;
};

}  // namespace policy::codegen
