#include "runtime/sched/kernel_columns.h"

#include <algorithm>

#include "runtime/dra/selector_evaluator.h"

namespace policy::rt {

KernelColumns::KernelColumns(const codegen::CompiledFunction& kernels, const NodeTable& table, Interpreter* interp,
                             size_t f, std::span<const std::pair<ir::NodeId, const int64_t*>> given, Kernels which) {
  cluster_values_.reserve(kernels.cluster.size());  // their data stays where cluster_ points
  for (size_t slot = 0; slot < kernels.cluster.size(); ++slot) {
    ir::NodeId call = kernels.cluster[slot];
    const std::vector<uint8_t>& read = which == Kernels::kFilters ? kernels.cluster_in_filters : kernels.cluster_in_scores;
    if (which != Kernels::kAll && slot < read.size() && read[slot] == 0) {
      cluster_.push_back(table.ZeroColumn().data());  // no kernel that runs reads it
      continue;
    }
    auto known = std::find_if(given.begin(), given.end(), [&](const auto& g) { return g.first == call; });
    if (known != given.end()) {
      cluster_.push_back(known->second);
      continue;
    }
    cluster_values_.emplace_back(table.RowCount(), 0);
    if (interp != nullptr) interp->ClusterValues(f, call, cluster_values_.back().data());
    cluster_.push_back(cluster_values_.back().data());
  }
  // No column is null: a label or resource no node has reads the table's zeros.
  const int64_t* zeros = table.ZeroColumn().data();
  for (const std::string& key : kernels.labels) {
    const LabelColumn* column = table.Label(key);
    labels_.push_back(column != nullptr ? column->domain.data() : reinterpret_cast<const uint32_t*>(zeros));
    label_ints_.push_back(column != nullptr ? column->int_value.data() : zeros);
    label_is_int_.push_back(column != nullptr ? column->is_int.data() : reinterpret_cast<const uint8_t*>(zeros));
    label_quantities_.push_back(column != nullptr ? column->quantity_milli.data() : zeros);
    label_is_quantity_.push_back(column != nullptr ? column->is_quantity.data() : reinterpret_cast<const uint8_t*>(zeros));
  }
  for (const codegen::ResourceSlot& slot : kernels.resources) {
    const int64_t* data = zeros;
    if (slot.kind == codegen::ResourceSlot::Kind::kScoringRequested && slot.name == "cpu") {
      data = table.NonZeroMilliCpu().data();
    } else if (slot.kind == codegen::ResourceSlot::Kind::kScoringRequested && slot.name == "memory") {
      data = table.NonZeroMemoryMilli().data();
    } else if (const ResourceColumn* column = table.Resource(slot.name)) {
      data = slot.kind == codegen::ResourceSlot::Kind::kAllocatable ? column->allocatable_milli.data()
                                                                    : column->requested_milli.data();
    }
    resources_.push_back(data);
  }
  columns_.labels = labels_.data();
  columns_.resources = resources_.data();
  columns_.taint_bits = table.RowCount() > 0 ? table.TaintBits(0).data() : nullptr;
  columns_.taint_words = table.TaintWords();
  columns_.unschedulable = table.Unschedulable().data();
  columns_.pod_count = table.PodCount().data();
  columns_.label_ints = label_ints_.data();
  columns_.label_is_int = label_is_int_.data();
  columns_.label_quantities = label_quantities_.data();
  columns_.label_is_quantity = label_is_quantity_.data();
  columns_.cluster = cluster_.data();
  params_ = kernels.params;
  columns_.params = params_.data();
  if (kernels.devices) {  // node.devices: the device table's columns, kept alive here
    devices_ = table.Devices();
    by_row_ = devices_->ByRow();
    in_use_ = devices_->InUse();
    for (const std::string& name : kernels.device_capacities) {
      capacities_.push_back(devices_->Capacity(name));
      capacity_columns_.push_back(capacities_.back()->data());
    }
    for (const std::string& text : kernels.device_selectors) {
      selectors_.push_back(devices_->Selector(text, dra::Evaluator()));
      const std::vector<int8_t>& match = selectors_.back()->match;
      selector_columns_.push_back(match.empty() ? reinterpret_cast<const int8_t*>(zeros) : match.data());
    }
    columns_.device_begin = by_row_->begin.data();
    columns_.device_ids = by_row_->ids.data();
    columns_.device_allocated = in_use_->data();
    columns_.device_capacity = capacity_columns_.data();
    columns_.device_selector = selector_columns_.data();
  }
}

}  // namespace policy::rt
