#include "runtime/interp/interpreter.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "compiler/ir/scalar.h"
#include "compiler/binding/pod_values.h"
#include "k8s/quantity.h"
#include "runtime/interp/work_counters.h"

namespace policy::rt {
namespace {

using lang::FieldId;

// A scalar value as the IR's comparison rules read it (compiler/ir/scalar.h).
ir::scalar::Scalar AsScalar(const Value& v) {
  if (v.IsNone()) return {};
  if (v.kind == Value::Kind::kString) return {ir::scalar::Scalar::Kind::kString, 0, v.s};
  return {ir::scalar::Scalar::Kind::kNumber, v.i, {}};
}

}  // namespace

std::string FormatQuantity(int64_t milli) {
  if (milli % 1000 != 0) return fmt::format("{}m", milli);
  int64_t units = milli / 1000;
  // Byte-like amounts (multiples of 1Ki) of a mebibyte or more read best as
  // Mi/Gi/Ti with one decimal when not whole: 26.6Gi, not 27860128Ki.
  constexpr int64_t kMi = 1024 * 1024;
  if (units >= kMi && units % 1024 == 0) {
    static constexpr std::pair<int64_t, const char*> kUnits[] = {
        {kMi * 1024 * 1024, "Ti"}, {kMi * 1024, "Gi"}, {kMi, "Mi"}};
    for (auto [size, suffix] : kUnits) {
      if (units < size) continue;
      if (units % size == 0) return fmt::format("{}{}", units / size, suffix);
      return fmt::format("{:.1f}{}", static_cast<double>(units) / static_cast<double>(size), suffix);
    }
  }
  if (units != 0 && units % 1024 == 0) {
    static constexpr const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int i = 0;
    while (i < 6 && units % 1024 == 0) units /= 1024, ++i;
    return fmt::format("{}{}", units, kBinary[i]);
  }
  return fmt::format("{}", units);
}

Interpreter::Interpreter(const ir::Program& program, const k8s::Pod& pod, const NodeTable& table, ClusterView* cluster,
                         const binding::PodView* pod_view)
    : program_(program), table_(table), pod_view_(pod_view), pod_(pod), cluster_(cluster) {
  if (pod_view_ == nullptr) {
    own_pod_view_ = std::make_unique<binding::PodView>(pod);
    pod_view_ = own_pod_view_.get();
  }
  // INVARIANT: a program bound to a table's dictionaries runs only on that table, unchanged.
  if (program.table_version && *program.table_version != table.DictionaryVersion()) {
    std::fprintf(stderr, "policyc: a program bound to node table dictionaries version %llu runs on version %llu\n",
                 static_cast<unsigned long long>(*program.table_version),
                 static_cast<unsigned long long>(table.DictionaryVersion()));
    std::abort();
  }
}

void Interpreter::Begin(size_t f, RowId row) {
  function_ = &program_.functions[f];
  row_ = row;
  slots_.assign(function_->slots.size(), std::nullopt);
}

bool Interpreter::Applies(size_t f) {
  Begin(f, 0);
  if (!function_->when) return true;
  return Eval(*function_->when).Truthy();
}

std::vector<FilterFailure> Interpreter::Filter(size_t f, RowId row) {
  Begin(f, row);
  std::vector<FilterFailure> failures;
  for (size_t i = 0; i < function_->filters.size(); ++i) {
    const ir::Filter& filter = function_->filters[i];
    auto check = [&]() {
      if (Eval(filter.condition).Truthy()) return;
      std::string reason = filter.reason.parts.empty() ? function_->name : Render(filter.reason);
      failures.push_back({i, std::move(reason), details_ ? RenderDetail(filter.detail) : std::string(), filter.unresolvable});
    };
    if (!filter.each_collection) {
      check();
      continue;
    }
    for (auto& [first, second] : Elements(Eval(*filter.each_collection), filter.each_second.has_value())) {
      slots_[*filter.each_first] = first;
      if (filter.each_second) slots_[*filter.each_second] = second;
      check();
    }
  }
  return failures;
}

uint64_t Interpreter::FailingFilters(size_t f, RowId row) {
  Begin(f, row);
  uint64_t mask = 0;
  for (size_t i = 0; i < function_->filters.size(); ++i) {
    const ir::Filter& filter = function_->filters[i];
    uint64_t bit = uint64_t{1} << std::min<size_t>(i, 63);
    if (!filter.each_collection) {
      if (!Eval(filter.condition).Truthy()) mask |= bit;
      continue;
    }
    for (auto& [first, second] : Elements(Eval(*filter.each_collection), filter.each_second.has_value())) {
      slots_[*filter.each_first] = first;
      if (filter.each_second) slots_[*filter.each_second] = second;
      if (!Eval(filter.condition).Truthy()) mask |= bit;
    }
  }
  return mask;
}

std::optional<FilterFailure> Interpreter::Prefilter(size_t f, RowId row, bool node_level) {
  Begin(f, row);
  for (size_t i = 0; i < function_->prefilters.size(); ++i) {
    const ir::Filter& prefilter = function_->prefilters[i];
    if ((program_.reads_node[prefilter.condition] != 0) != node_level) continue;
    if (Eval(prefilter.condition).Truthy()) continue;
    std::string reason = prefilter.reason.parts.empty() ? function_->name : Render(prefilter.reason);
    return FilterFailure{i, std::move(reason), details_ ? RenderDetail(prefilter.detail) : std::string(),
                         prefilter.unresolvable};
  }
  return std::nullopt;
}

int64_t Interpreter::Score(size_t f, size_t s, RowId row) {
  Begin(f, row);
  return Eval(function_->scores[s].value).i;
}

std::string Interpreter::Text(const Value& v, lang::TypeRef type) {
  switch (v.kind) {
    case Value::Kind::kNone: return "none";
    case Value::Kind::kBool: return v.i ? "true" : "false";
    case Value::Kind::kString: return v.s;
    case Value::Kind::kInt:
      return lang::Unwrapped(type)->kind == lang::TypeKind::kQuantity ? FormatQuantity(v.i) : fmt::format("{}", v.i);
    default: return "?";
  }
}

std::string Interpreter::RenderDetail(const ir::Message& message) {
  if (message.parts.empty()) return {};
  Work().details_rendered.fetch_add(1, std::memory_order_relaxed);
  return Render(message);
}

std::string Interpreter::Render(const ir::Message& message) {
  std::string out;
  for (const ir::Message::Part& part : message.parts) {
    out += part.value ? Text(Eval(*part.value), program_.types[*part.value]) : part.text;
  }
  return out;
}

Value Interpreter::Eval(ir::NodeId id) {
  return std::visit(
      [&](const auto& n) -> Value {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ir::NoneConst>) return Value::None();
        if constexpr (std::is_same_v<T, ir::BoolConst>) return Value::Bool(n.value);
        if constexpr (std::is_same_v<T, ir::IntConst>) return Value::Int(n.value);
        if constexpr (std::is_same_v<T, ir::StringConst>) return Value::String(n.value);
        if constexpr (std::is_same_v<T, ir::PodRoot>) return Value::PodSide(binding::PodRecord::kPod, pod_view_->Root().ptr);
        if constexpr (std::is_same_v<T, ir::NodeRoot>) return Value::Record(RecordKind::kNode, nullptr, row_);
        if constexpr (std::is_same_v<T, ir::LoadField>) return Load(n.field, Eval(n.object));
        if constexpr (std::is_same_v<T, ir::Index>) return IndexOf(Eval(n.object), Eval(n.key));
        if constexpr (std::is_same_v<T, ir::Local>) {
          const ir::Slot& info = function_->slots[n.slot];
          if (info.kind == ir::Slot::Kind::kArgument) return Eval(*info.value);
          std::optional<Value>& slot = slots_[n.slot];
          if (!slot) slot = Eval(*info.value);  // INVARIANT: loop slots are set by their loop
          return *slot;
        }
        if constexpr (std::is_same_v<T, ir::Not>) return Value::Bool(!Eval(n.operand).Truthy());
        if constexpr (std::is_same_v<T, ir::Negate>) return Value::Int(ir::scalar::Negate(Eval(n.operand).i));
        if constexpr (std::is_same_v<T, ir::Arith>) {
          int64_t a = Eval(n.lhs).i;
          return Value::Int(ir::scalar::Arith(n.op, a, Eval(n.rhs).i));
        }
        if constexpr (std::is_same_v<T, ir::Compare>) {
          Value a = Eval(n.lhs), b = Eval(n.rhs);
          return Value::Bool(ir::scalar::Compare(n.op, AsScalar(a), AsScalar(b)));
        }
        if constexpr (std::is_same_v<T, ir::Member>) return Value::Bool(Contains(Eval(n.collection), Eval(n.element)));
        if constexpr (std::is_same_v<T, ir::And>) return Value::Bool(Eval(n.lhs).Truthy() && Eval(n.rhs).Truthy());
        if constexpr (std::is_same_v<T, ir::Or>) return Value::Bool(Eval(n.lhs).Truthy() || Eval(n.rhs).Truthy());
        if constexpr (std::is_same_v<T, ir::Coalesce>) {
          Value v = Eval(n.value);
          return v.IsNone() ? Eval(n.fallback) : v;
        }
        if constexpr (std::is_same_v<T, ir::Select>) {
          return Eval(n.condition).Truthy() ? Eval(n.then_value) : Eval(n.else_value);
        }
        if constexpr (std::is_same_v<T, ir::IntToQuantity>) {
          Value v = Eval(n.operand);
          return v.IsNone() ? v : Value::Int(ir::scalar::IntToQuantity(v.i));
        }
        if constexpr (std::is_same_v<T, ir::Loop>) return EvalLoop(n);
        if constexpr (std::is_same_v<T, ir::MakeList>) {
          std::vector<Value> elements;
          for (ir::NodeId e : n.elements) elements.push_back(Eval(e));
          return Value::List(std::move(elements));
        }
        if constexpr (std::is_same_v<T, ir::CallBuiltin>) return Builtin(n);
        if constexpr (std::is_same_v<T, ir::LabelIn>) {
          const LabelColumn* column = table_.Label(n.key);
          uint32_t domain = column != nullptr ? column->domain[row_] : 0;
          return Value::Bool(std::binary_search(n.domains.begin(), n.domains.end(), domain));
        }
        if constexpr (std::is_same_v<T, ir::TaintScan>) return EvalTaintScan(n);
        return Value::None();
      },
      program_.nodes[id]);
}

Value Interpreter::EvalLoop(const ir::Loop& loop) {
  int64_t sum = 0, count = 0;
  for (auto& [first, second] : Elements(Eval(loop.collection), loop.second.has_value())) {
    slots_[loop.first] = first;
    if (loop.second) slots_[*loop.second] = second;
    Value body = loop.body ? Eval(*loop.body) : Value::Bool(true);
    switch (loop.kind) {
      case ir::LoopKind::kAny:
        if (body.Truthy()) return Value::Bool(true);
        break;
      case ir::LoopKind::kAll:
        if (!body.Truthy()) return Value::Bool(false);
        break;
      case ir::LoopKind::kSum: sum = ir::scalar::Arith(ir::ArithOp::kAdd, sum, body.i); break;
      case ir::LoopKind::kCount: count += body.Truthy(); break;
      case ir::LoopKind::kFirst:
        if (body.Truthy()) return first;
        break;
    }
  }
  switch (loop.kind) {
    case ir::LoopKind::kAny: return Value::Bool(false);
    case ir::LoopKind::kAll: return Value::Bool(true);
    case ir::LoopKind::kSum: return Value::Int(sum);
    case ir::LoopKind::kCount: return Value::Int(count);
    case ir::LoopKind::kFirst: return Value::None();
  }
  return Value::None();
}

Value Interpreter::EvalTaintScan(const ir::TaintScan& scan) {
  int64_t count = 0;
  for (uint32_t id : table_.Taints(row_)) {
    bool in = std::binary_search(scan.taints.begin(), scan.taints.end(), id);
    if (in && scan.kind == ir::LoopKind::kFirst) return Value::Record(RecordKind::kTaint, nullptr, id);
    if (in && scan.kind == ir::LoopKind::kAny) return Value::Bool(true);
    if (!in && scan.kind == ir::LoopKind::kAll) return Value::Bool(false);
    count += in;
  }
  switch (scan.kind) {
    case ir::LoopKind::kAny: return Value::Bool(false);
    case ir::LoopKind::kAll: return Value::Bool(true);
    case ir::LoopKind::kCount: return Value::Int(count);
    default: return Value::None();
  }
}

ClusterView& Interpreter::Cluster() {
  if (cluster_ == nullptr) {
    own_cluster_ = std::make_unique<ClusterView>(pod_, table_);
    cluster_ = own_cluster_.get();
  }
  return *cluster_;
}

}  // namespace policy::rt
