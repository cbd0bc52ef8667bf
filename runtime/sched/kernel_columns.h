#pragma once
/// The PolicyColumns (compiler/codegen/kernel_abi.h) a compiled function's
/// kernels read, filled from a NodeTable: its label and resource slots
/// resolved to the table's columns, the pod's parameters, and for kernels
/// that loop over `node.devices` the device table's columns (held here).
/// Valid while the table is unchanged.

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/compiled_function.h"
#include "runtime/columnar/device_table.h"
#include "runtime/columnar/node_table.h"
#include "runtime/interp/interpreter.h"

namespace policy::rt {

class KernelColumns {
 public:
  /// `interp` (on the kernels' program, for the pod) computes the cluster
  /// slots' values per row for function `f`; null when there are none.
  /// `given`: values already computed for some of those calls, by row.
  /// Which kernels will run: the cluster calls only the others read are
  /// not computed (their slots read zeros).
  enum class Kernels : uint8_t { kAll, kFilters, kScores };
  KernelColumns(const codegen::CompiledFunction& kernels, const NodeTable& table, Interpreter* interp = nullptr,
                size_t f = 0, std::span<const std::pair<ir::NodeId, const int64_t*>> given = {},
                Kernels which = Kernels::kAll);
  const PolicyColumns* get() const { return &columns_; }

 private:
  std::vector<const uint32_t*> labels_;
  std::vector<const int64_t*> label_ints_;
  std::vector<const uint8_t*> label_is_int_;
  std::vector<const int64_t*> label_quantities_;
  std::vector<const uint8_t*> label_is_quantity_;
  std::vector<std::vector<int64_t>> cluster_values_;
  std::vector<const int64_t*> cluster_;
  std::vector<const int64_t*> resources_;
  std::vector<int64_t> params_;
  std::shared_ptr<const DeviceTable> devices_;
  std::shared_ptr<const DeviceTable::RowDevices> by_row_;
  std::shared_ptr<const std::vector<uint8_t>> in_use_;
  std::vector<std::shared_ptr<const std::vector<int64_t>>> capacities_;
  std::vector<std::shared_ptr<const SelectorVerdicts>> selectors_;
  std::vector<const int64_t*> capacity_columns_;
  std::vector<const int8_t*> selector_columns_;
  PolicyColumns columns_{};
};

}  // namespace policy::rt
