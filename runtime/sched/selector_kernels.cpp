#include "runtime/sched/selector_kernels.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

#include "compiler/cel/compile.h"
#include "compiler/cel/eval.h"
#include "compiler/codegen/jit.h"
#include "compiler/lang/schema.h"
#include "compiler/lang/types.h"
#include "compiler/lower/cel_selector.h"
#include "compiler/passes/pass.h"
#include "runtime/columnar/node_table.h"
#include "runtime/dra/selector_evaluator.h"
#include "runtime/sched/kernel_columns.h"
#include "runtime/sched/table_dictionary.h"

namespace policy::rt {
namespace {

// One Jit may serve several deciders (and threads).
std::mutex jit_mutex;

std::string Decimal(int64_t v) { return std::to_string(v); }

// What compiling keeps of one set of devices: them as a NodeTable.
struct DeviceRows final : DeciderMemo {
  lang::TypeTable types;
  lang::Schema schema{types};
  NodeTable table;  // one row per device, in device order
  std::set<std::string, std::less<>> inexact;  // capacities some device has beyond milli-units
};

// The devices as a table, one row each in device order.
std::unique_ptr<DeviceRows> BuildTable(const std::vector<DeviceRef>& devices_) {
  auto compiled_ = std::make_unique<DeviceRows>();
  using lower::AttributeColumn;
  // A device's row is written into one reused node; the column keys of
  // each attribute and capacity name are made once.
  std::map<std::pair<AttributeColumn, std::string_view>, std::string, std::less<>> attribute_keys;
  auto key = [&](AttributeColumn column, std::string_view name) -> const std::string& {
    auto it = attribute_keys.find(std::pair{column, name});
    if (it == attribute_keys.end()) {
      it = attribute_keys.emplace(std::pair{column, name}, lower::DeviceAttributeKey(column, std::string(name))).first;
    }
    return it->second;
  };
  std::map<std::string_view, std::string, std::less<>> capacity_keys;
  k8s::Node row;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const k8s::Device& d = *devices_[i].device;
    row.name = Decimal(static_cast<int64_t>(i));
    row.labels.clear();
    row.allocatable.clear();
    row.labels.emplace_back(std::string(lower::kDeviceDriverKey), std::string(devices_[i].driver));
    for (const auto& [name, a] : d.attributes) {
      switch (a.kind) {
        case k8s::DeviceAttribute::Kind::kString:
          row.labels.emplace_back(key(AttributeColumn::kString, name), a.text);
          break;
        case k8s::DeviceAttribute::Kind::kInt:
          row.labels.emplace_back(key(AttributeColumn::kInt, name), Decimal(a.int_value));
          break;
        case k8s::DeviceAttribute::Kind::kBool:
          row.labels.emplace_back(key(AttributeColumn::kBool, name), a.bool_value ? "true" : "false");
          break;
        case k8s::DeviceAttribute::Kind::kVersion:
          row.labels.emplace_back(key(AttributeColumn::kVersion, name), a.text);
          if (!cel::ParseSemver(a.text)) row.labels.emplace_back(key(AttributeColumn::kBadVersion, name), "1");
          break;
      }
    }
    for (const auto& [name, q] : d.capacity) {
      row.allocatable.emplace_back(name, q);
      auto capacity = capacity_keys.find(std::string_view(name));
      if (capacity == capacity_keys.end()) capacity = capacity_keys.emplace(name, lower::DeviceCapacityKey(name)).first;
      row.labels.emplace_back(capacity->second, "1");
      k8s::Quantity::Nanos milli = q.nanos() / 1000000;
      if (q.nanos() % 1000000 != 0 || milli > INT64_MAX || milli < -INT64_MAX) compiled_->inexact.insert(name);
    }
    compiled_->table.AddNode(row);
  }
  return compiled_;
}

}  // namespace

std::shared_ptr<SelectorVerdicts> KernelSelectorDecider::Decide(const std::string& expression,
                                                                 const std::vector<DeviceRef>& devices,
                                                                 std::unique_ptr<DeciderMemo>& memo) const {
  std::shared_ptr<SelectorVerdicts> v;
  if (verify_ || devices.size() >= compile_from_) v = Compile(expression, devices, memo);
  if (!v) return dra::EvaluateSelector(expression, devices);
  if (verify_) {
    std::shared_ptr<SelectorVerdicts> reference = dra::EvaluateSelector(expression, devices);
    for (size_t i = 0; i < devices.size(); ++i) {
      if (v->match[i] == reference->match[i]) continue;
      std::fprintf(stderr, "policyc: the JIT and the evaluator disagree on the selector %s for device %s/%s: %d, not %d\n",
                   expression.c_str(), std::string(devices[i].driver).c_str(), devices[i].device->name.c_str(),
                   v->match[i], reference->match[i]);
      std::abort();
    }
  }
  return v;
}

std::shared_ptr<SelectorVerdicts> KernelSelectorDecider::Compile(const std::string& expression,
                                                                 const std::vector<DeviceRef>& devices_,
                                                                 std::unique_ptr<DeciderMemo>& memo) const {
  std::shared_ptr<const cel::Program> program = cel::Compile(expression);
  if (!program->expr) return nullptr;  // the evaluator says why, for every device
  if (!memo) memo = BuildTable(devices_);
  DeviceRows& c = static_cast<DeviceRows&>(*memo);
  Expected<lower::LoweredSelector> lowered = lower::LowerSelector(*program->expr, c.types, c.schema);
  if (!lowered) return nullptr;
  for (const std::string& name : lowered->capacities) {
    if (c.inexact.contains(name)) return nullptr;
  }
  TableDictionary dictionary(c.table);
  passes::PassOptions options;
  options.types = &c.types;
  options.table = &dictionary;
  passes::Optimize(lowered->program, options, nullptr);

  std::shared_ptr<const codegen::CompiledFunction> kernels;
  {
    std::lock_guard<std::mutex> lock(jit_mutex);
    Expected<std::shared_ptr<const codegen::CompiledFunction>> k = jit_->Compile(lowered->program, 0);
    if (!k) return nullptr;
    kernels = std::move(*k);
  }
  // No filter kernel: both conditions are true on every device (the
  // selector is a constant true), and every device matches.
  if (kernels->filter != nullptr && kernels->filters != 2) return nullptr;

  // The columns the kernel reads: labels and allocatable resources only.
  for (const codegen::ResourceSlot& slot : kernels->resources) {
    if (slot.kind != codegen::ResourceSlot::Kind::kAllocatable) return nullptr;  // not what a selector lowers to
  }
  if (!kernels->cluster.empty() || kernels->devices) return nullptr;
  KernelColumns columns(*kernels, c.table);

  std::vector<RowId> rows(devices_.size());
  std::iota(rows.begin(), rows.end(), RowId{0});
  std::vector<uint64_t> failed(devices_.size(), 0);
  if (!rows.empty() && kernels->filter != nullptr) kernels->filter(columns.get(), rows.data(), rows.size(), failed.data());

  auto v = std::make_shared<SelectorVerdicts>();
  v->compiled = true;
  v->match.resize(devices_.size());
  for (uint32_t i = 0; i < devices_.size(); ++i) {
    if (failed[i] & 1) {
      v->match[i] = -1;
      // The words come from the evaluator, for the devices that fail only.
      cel::Outcome o = cel::Evaluate(*program->expr, cel::DeviceInput{devices_[i].driver, devices_[i].device});
      v->errors.emplace(i, o.error.empty() ? std::string("the selector failed") : std::move(o.error));
    } else {
      v->match[i] = (failed[i] & 2) ? 0 : 1;
    }
  }
  return v;
}

}  // namespace policy::rt
