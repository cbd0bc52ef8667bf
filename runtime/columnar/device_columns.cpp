#include "runtime/columnar/device_columns.h"

#include <cstdio>
#include <cstdlib>
#include <map>
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
#include "runtime/columnar/table_dictionary.h"

namespace policy::rt {
namespace {

// Selectors kept; past this many the answers are dropped (computed again if
// asked).
constexpr size_t kMaxSelectors = 1024;

// One Jit may serve the columns of several tables (and threads).
std::mutex jit_mutex;

std::string Decimal(int64_t v) { return std::to_string(v); }

}  // namespace

struct DeviceColumns::Compiled {
  lang::TypeTable types;
  lang::Schema schema{types};
  NodeTable table;  // one row per device, in device order
  std::set<std::string, std::less<>> inexact;  // capacities some device has beyond milli-units
};

DeviceColumns::DeviceColumns(std::vector<Ref> devices, uint64_t slices_version, DeviceSelectors how)
    : devices_(std::move(devices)), slices_version_(slices_version), how_(std::move(how)) {}

DeviceColumns::~DeviceColumns() = default;

DeviceColumns::Counts DeviceColumns::Decided() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

std::shared_ptr<const SelectorVerdicts> DeviceColumns::Selector(const std::string& expression) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = selectors_.find(expression);
  if (it != selectors_.end()) return it->second;
  if (selectors_.size() >= kMaxSelectors) selectors_.clear();
  std::shared_ptr<SelectorVerdicts> v;
  bool compile = how_.jit != nullptr && (how_.mode == DeviceSelectors::Mode::kVerify ||
                                         (how_.mode == DeviceSelectors::Mode::kCompile && devices_.size() >= how_.compile_from));
  if (compile) v = Compile(expression);
  if (v && how_.mode == DeviceSelectors::Mode::kVerify) {
    std::shared_ptr<SelectorVerdicts> reference = Evaluate(expression);
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (v->match[i] == reference->match[i]) continue;
      std::fprintf(stderr, "policyc: the JIT and the evaluator disagree on the selector %s for device %s/%s: %d, not %d\n",
                   expression.c_str(), std::string(devices_[i].driver).c_str(), devices_[i].device->name.c_str(),
                   v->match[i], reference->match[i]);
      std::abort();
    }
  }
  if (v) {
    ++counts_.compiled;
  } else {
    v = Evaluate(expression);
    ++counts_.evaluated;
  }
  return selectors_.emplace(expression, std::move(v)).first->second;
}

std::shared_ptr<SelectorVerdicts> DeviceColumns::Evaluate(const std::string& expression) const {
  auto v = std::make_shared<SelectorVerdicts>();
  std::shared_ptr<const cel::Program> program = cel::Compile(expression);
  if (!program->expr) {
    v->compile_error = program->KubeError();
    v->match.assign(devices_.size(), -1);
    return v;
  }
  v->match.resize(devices_.size());
  for (uint32_t i = 0; i < devices_.size(); ++i) {
    cel::Outcome o = cel::Evaluate(*program->expr, cel::DeviceInput{devices_[i].driver, devices_[i].device});
    if (!o.error.empty()) {
      v->match[i] = -1;
      v->errors.emplace(i, std::move(o.error));
    } else {
      v->match[i] = o.matches ? 1 : 0;
    }
  }
  return v;
}

void DeviceColumns::BuildTable() const {
  compiled_ = std::make_unique<Compiled>();
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
}

std::shared_ptr<SelectorVerdicts> DeviceColumns::Compile(const std::string& expression) const {
  std::shared_ptr<const cel::Program> program = cel::Compile(expression);
  if (!program->expr) return nullptr;  // the evaluator says why, for every device
  if (!compiled_) BuildTable();
  Compiled& c = *compiled_;
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
    Expected<std::shared_ptr<const codegen::CompiledFunction>> k = how_.jit->Compile(lowered->program, 0);
    if (!k) return nullptr;
    kernels = std::move(*k);
  }
  // No filter kernel: both conditions are true on every device (the
  // selector is a constant true), and every device matches.
  if (kernels->filter != nullptr && kernels->filters != 2) return nullptr;

  // The columns the kernel reads: labels and allocatable resources only.
  const NodeTable& t = c.table;
  const int64_t* zeros = t.ZeroColumn().data();
  std::vector<const uint32_t*> labels;
  std::vector<const int64_t*> ints, quantities, resources;
  std::vector<const uint8_t*> is_int, is_quantity;
  for (const std::string& key : kernels->labels) {
    const LabelColumn* column = t.Label(key);
    labels.push_back(column ? column->domain.data() : reinterpret_cast<const uint32_t*>(zeros));
    ints.push_back(column ? column->int_value.data() : zeros);
    is_int.push_back(column ? column->is_int.data() : reinterpret_cast<const uint8_t*>(zeros));
    quantities.push_back(column ? column->quantity_milli.data() : zeros);
    is_quantity.push_back(column ? column->is_quantity.data() : reinterpret_cast<const uint8_t*>(zeros));
  }
  for (const codegen::ResourceSlot& slot : kernels->resources) {
    const ResourceColumn* column = t.Resource(slot.name);
    if (slot.kind != codegen::ResourceSlot::Kind::kAllocatable) return nullptr;  // not what a selector lowers to
    resources.push_back(column ? column->allocatable_milli.data() : zeros);
  }
  if (!kernels->cluster.empty()) return nullptr;
  PolicyColumns columns{};
  columns.labels = labels.data();
  columns.resources = resources.data();
  columns.taint_bits = zeros == nullptr ? nullptr : reinterpret_cast<const uint64_t*>(zeros);
  columns.taint_words = 0;
  columns.unschedulable = t.Unschedulable().data();
  columns.pod_count = t.PodCount().data();
  columns.label_ints = ints.data();
  columns.label_is_int = is_int.data();
  columns.label_quantities = quantities.data();
  columns.label_is_quantity = is_quantity.data();
  columns.params = kernels->params.data();

  std::vector<RowId> rows(devices_.size());
  std::iota(rows.begin(), rows.end(), RowId{0});
  std::vector<uint64_t> failed(devices_.size(), 0);
  if (!rows.empty() && kernels->filter != nullptr) kernels->filter(&columns, rows.data(), rows.size(), failed.data());

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
