// Partial evaluation against one pod.
//
// Algorithm: each function is cloned from its roots with an environment that
// maps loop variables to IR nodes. Inside one scheduling cycle the pod is a
// constant, so:
//   * reads of the pod's scalar fields, of its labels and nodeSelector by a
//     constant key, and of its requests become constants; its string lists
//     (a requirement's values) become list literals;
//   * loops over the pod's collections (tolerations, nodeSelector, requests,
//     affinity terms and their requirements and values) are unrolled into
//     and/or/add/select chains, the loop variable replaced per element by a
//     constant or by an index into the pod's list;
//   * `filter for` over a pod collection becomes one filter per element;
//   * def arguments are inlined (they are pure), and `let`s that became
//     constants are replaced by their value.
// What is left reads only the node; `fold` then collapses the constants.
//
// Unrolling is bounded: a loop is unrolled only while the nodes emitted so
// far plus its elements times its body's size stay within a budget
// proportional to the program (kBudgetPerNode per input node, at least
// kMinBudget); past it the loop is kept and evaluated per node. A pod's
// content can then never make this pass's time or memory more than linear
// (a triple loop over 200 tolerations once took 14 GB).

#include <algorithm>
#include <map>
#include <set>

#include "compiler/passes/pass.h"
#include "compiler/lang/builtins.h"
#include "compiler/binding/pod_view.h"
#include "compiler/passes/rewriter.h"

namespace policy::passes {
namespace {

using binding::PodRecord;
using binding::PodRef;
using binding::PodView;
using binding::ResourceAmounts;

using namespace ir;
using lang::FieldId;

class Specializer {
 public:
  Specializer(const Program& in, const k8s::Pod& pod, lang::TypeTable& types, binding::ResourceReads* reads)
      : in_(in), pod_(pod, reads), types_(types), budget_(std::max(kMinBudget, kBudgetPerNode * in.nodes.size())) {}

  Program Run() {
    out_.source = in_.source;
    for (const ir::Function& f : in_.functions) out_.functions.push_back(SpecializeFunction(f));
    return std::move(out_);
  }

 private:
  using Env = std::map<SlotId, NodeId>;

  ir::Function SpecializeFunction(const ir::Function& f) {
    fn_ = &f;
    memo_.clear();
    ir::Function out = f;
    let_values_.assign(f.slots.size(), std::nullopt);
    for (SlotId s = 0; s < f.slots.size(); ++s) {
      if (f.slots[s].kind != Slot::Kind::kLet) continue;
      NodeId v = Clone(*f.slots[s].value, {});
      out.slots[s].value = v;
      let_values_[s] = v;
    }
    if (f.when) out.when = Clone(*f.when, {});
    out.prefilters.clear();
    for (const Filter& p : f.prefilters) out.prefilters.push_back(CloneFilter(p, {}));
    out.filters.clear();
    for (const Filter& x : f.filters) {
      if (!x.each_collection) {
        out.filters.push_back(CloneFilter(x, {}));
        continue;
      }
      NodeId collection = Clone(*x.each_collection, {});
      std::optional<std::vector<std::pair<NodeId, std::optional<NodeId>>>> elements =
          Elements(collection, *x.each_first, x.each_second);
      if (!elements) {
        Filter y = CloneFilter(x, {});
        y.each_collection = collection;
        out.filters.push_back(std::move(y));
        continue;
      }
      for (const auto& [first, second] : *elements) {  // one filter per element
        Env env = {{*x.each_first, first}};
        if (x.each_second && second) env[*x.each_second] = *second;
        Filter y = CloneFilter(x, env);
        y.each_collection.reset();
        y.each_first.reset();
        y.each_second.reset();
        out.filters.push_back(std::move(y));
      }
    }
    for (Score& s : out.scores) s.value = Clone(s.value, {});
    // Argument slots are inlined: nothing reads them any more.
    for (Slot& slot : out.slots) {
      if (slot.kind == Slot::Kind::kArgument) slot.value.reset(), slot.kind = Slot::Kind::kLoop;
    }
    return out;
  }

  Filter CloneFilter(const Filter& x, const Env& env) {
    Filter y = x;
    if (y.each_collection) y.each_collection = Clone(*x.each_collection, env);
    y.condition = Clone(x.condition, env);
    for (Message* m : {&y.reason, &y.detail}) {
      for (Message::Part& p : m->parts) {
        if (p.value) p.value = Clone(*p.value, env);
      }
    }
    return y;
  }

  NodeId Emit(Node node, lang::TypeRef type, Span span, bool reads_node) {
    return out_.Add(std::move(node), type, span, reads_node);
  }

  bool Reads(const Node& node) {
    if (std::holds_alternative<NodeRoot>(node)) return true;
    if (const auto* call = std::get_if<CallBuiltin>(&node);
        call && lang::Builtins()[static_cast<size_t>(call->builtin)].reads == lang::BuiltinReads::kCluster) {
      return true;
    }
    bool reads = false;
    ForEachOperand(node, [&](NodeId id) { reads |= out_.reads_node[id] != 0; });
    return reads;
  }

  NodeId Clone(NodeId old, const Env& env) {
    bool memoizable = env.empty() || !DependsOn(old, env);
    if (memoizable) {
      if (auto it = memo_.find(old); it != memo_.end()) return it->second;
    }
    NodeId id = CloneFresh(old, env);
    if (memoizable) memo_[old] = id;
    return id;
  }

  // Whether node `old` reads any loop variable bound in `env`.
  bool DependsOn(NodeId old, const Env& env) {
    const std::set<SlotId>& deps = Deps(old);
    for (const auto& [slot, node] : env) {
      if (deps.contains(slot)) return true;
    }
    return false;
  }

  const std::set<SlotId>& Deps(NodeId old) {
    if (auto it = deps_.find(old); it != deps_.end()) return it->second;
    std::set<SlotId> deps;
    const Node& n = in_.nodes[old];
    if (const auto* local = std::get_if<Local>(&n)) {
      const Slot& slot = fn_->slots[local->slot];
      if (slot.kind == Slot::Kind::kLoop) deps.insert(local->slot);
      if (slot.kind == Slot::Kind::kArgument) deps = Deps(*slot.value);
    } else {
      ForEachOperand(n, [&](NodeId operand) {
        const std::set<SlotId>& d = Deps(operand);
        deps.insert(d.begin(), d.end());
      });
      if (const auto* loop = std::get_if<Loop>(&n)) {
        deps.erase(loop->first);
        if (loop->second) deps.erase(*loop->second);
      }
    }
    return deps_[old] = std::move(deps);
  }

  NodeId CloneFresh(NodeId old, const Env& env) {
    const Node& n = in_.nodes[old];
    lang::TypeRef type = in_.types[old];
    Span span = in_.spans[old];
    if (const auto* local = std::get_if<Local>(&n)) {
      if (auto it = env.find(local->slot); it != env.end()) return it->second;
      const Slot& slot = fn_->slots[local->slot];
      if (slot.kind == Slot::Kind::kArgument) return Clone(*slot.value, env);
      if (slot.kind == Slot::Kind::kLet && let_values_[local->slot] && IsConstant(*let_values_[local->slot])) {
        return *let_values_[local->slot];
      }
      return Emit(*local, type, span, in_.reads_node[old] != 0);
    }
    if (const auto* loop = std::get_if<Loop>(&n)) return CloneLoop(old, *loop, env);
    Node copy = MapOperands(n, [&](NodeId operand) { return Clone(operand, env); });
    bool reads = Reads(copy);
    NodeId id = Emit(copy, type, span, reads);
    if (reads) return id;
    std::optional<PodRef> value = Eval(id);
    if (!value) return id;
    switch (value->kind) {
      case PodRef::Kind::kNone: return Emit(NoneConst{}, type, span, false);
      case PodRef::Kind::kBool: return Emit(BoolConst{value->i != 0}, type, span, false);
      case PodRef::Kind::kInt: return Emit(IntConst{value->i}, type, span, false);
      case PodRef::Kind::kString: return Emit(StringConst{value->s}, type, span, false);
      case PodRef::Kind::kStringList: {  // a requirement's values: a literal the later passes can see into
        std::vector<NodeId> elements;
        for (const std::string& s : *static_cast<const std::vector<std::string>*>(value->ptr)) {
          elements.push_back(Emit(StringConst{s}, types_.String(), span, false));
        }
        return Emit(MakeList{std::move(elements), false}, type, span, false);
      }
      default: return id;  // records and other collections stay paths into the pod
    }
  }

  /// A scalar constant, or a list literal of them (a `param`'s value).
  bool IsConstant(NodeId id) const {
    const Node& n = out_.nodes[id];
    if (const auto* list = std::get_if<MakeList>(&n)) {
      for (NodeId e : list->elements) {
        if (!IsConstant(e)) return false;
      }
      return true;
    }
    return std::holds_alternative<NoneConst>(n) || std::holds_alternative<BoolConst>(n) ||
           std::holds_alternative<IntConst>(n) || std::holds_alternative<StringConst>(n);
  }

  NodeId CloneLoop(NodeId old, const Loop& loop, const Env& env) {
    lang::TypeRef type = in_.types[old];
    Span span = in_.spans[old];
    NodeId collection = Clone(loop.collection, env);
    std::optional<size_t> count = ElementCount(collection);
    size_t body = loop.body ? SubtreeSize(*loop.body) : 1;
    bool affordable = count && out_.nodes.size() + (*count + 1) * (body + 2) <= budget_;
    auto elements = affordable ? Elements(collection, loop.first, loop.second) : std::nullopt;
    if (!elements) {
      Loop copy = loop;
      copy.collection = collection;
      if (loop.body) copy.body = Clone(*loop.body, env);
      return Emit(copy, type, span, in_.reads_node[old] != 0);
    }
    std::vector<NodeId> bodies;
    for (const auto& [first, second] : *elements) {
      Env inner = env;
      inner[loop.first] = first;
      if (loop.second && second) inner[*loop.second] = *second;
      bodies.push_back(loop.body ? Clone(*loop.body, inner) : Emit(BoolConst{true}, types_.Bool(), span, false));
    }
    auto reads = [&](NodeId a, NodeId b) { return out_.reads_node[a] || out_.reads_node[b]; };
    switch (loop.kind) {
      case LoopKind::kAny: {
        NodeId acc = Emit(BoolConst{false}, types_.Bool(), span, false);
        for (NodeId b : bodies) acc = Emit(Or{acc, b}, types_.Bool(), span, reads(acc, b));
        return acc;
      }
      case LoopKind::kAll: {
        NodeId acc = Emit(BoolConst{true}, types_.Bool(), span, false);
        for (NodeId b : bodies) acc = Emit(And{acc, b}, types_.Bool(), span, reads(acc, b));
        return acc;
      }
      case LoopKind::kSum: {
        NodeId acc = Emit(IntConst{0}, type, span, false);
        for (NodeId b : bodies) acc = Emit(Arith{ArithOp::kAdd, acc, b}, type, span, reads(acc, b));
        return acc;
      }
      case LoopKind::kCount: {
        NodeId one = Emit(IntConst{1}, types_.Int(), span, false);
        NodeId zero = Emit(IntConst{0}, types_.Int(), span, false);
        NodeId acc = zero;
        for (NodeId b : bodies) {
          NodeId step = Emit(ir::Select{b, one, zero}, types_.Int(), span, out_.reads_node[b] != 0);
          acc = Emit(Arith{ArithOp::kAdd, acc, step}, types_.Int(), span, reads(acc, step));
        }
        return acc;
      }
      case LoopKind::kFirst: {
        NodeId acc = Emit(NoneConst{}, type, span, false);
        for (size_t i = bodies.size(); i-- > 0;) {
          NodeId element = (*elements)[i].first;
          acc = Emit(ir::Select{bodies[i], element, acc}, type, span,
                     out_.reads_node[bodies[i]] || out_.reads_node[element] || out_.reads_node[acc]);
        }
        return acc;
      }
    }
    return collection;
  }

  // How many elements Elements() would give for `collection`, emitting
  // nothing; nullopt when it is not the pod's.
  std::optional<size_t> ElementCount(NodeId collection) {
    if (out_.reads_node[collection]) return std::nullopt;
    const Node* literal = &out_.nodes[collection];
    if (const auto* local = std::get_if<Local>(literal); local && let_values_[local->slot]) {
      literal = &out_.nodes[*let_values_[local->slot]];
    }
    if (const auto* list = std::get_if<MakeList>(literal)) return list->elements.size();
    std::optional<PodRef> value = Eval(collection);
    std::optional<int64_t> size = value ? pod_.Size(*value) : std::nullopt;
    if (!size) return std::nullopt;
    return static_cast<size_t>(*size);
  }

  // The input nodes reachable from `root` (a loop body's size).
  size_t SubtreeSize(NodeId root) {
    if (auto it = sizes_.find(root); it != sizes_.end()) return it->second;
    std::set<NodeId> seen;
    std::vector<NodeId> stack = {root};
    while (!stack.empty()) {
      NodeId id = stack.back();
      stack.pop_back();
      if (!seen.insert(id).second) continue;
      ForEachOperand(in_.nodes[id], [&](NodeId operand) { stack.push_back(operand); });
      if (const auto* local = std::get_if<Local>(&in_.nodes[id]); local && fn_->slots[local->slot].value) {
        stack.push_back(*fn_->slots[local->slot].value);  // an argument is cloned where it is used
      }
    }
    return sizes_[root] = seen.size();
  }

  // The elements of a pod-side collection as IR nodes (first, second), or
  // nullopt when the collection is not the pod's.
  std::optional<std::vector<std::pair<NodeId, std::optional<NodeId>>>> Elements(NodeId collection, SlotId first,
                                                                                 std::optional<SlotId> second) {
    if (out_.reads_node[collection]) return std::nullopt;
    Span span = out_.spans[collection];
    lang::TypeRef first_type = fn_->slots[first].type;
    std::vector<std::pair<NodeId, std::optional<NodeId>>> out;
    // A list bound as `(i, x)`: the position, then the element.
    auto add = [&](size_t i, NodeId element) {
      if (second) out.emplace_back(Emit(IntConst{static_cast<int64_t>(i)}, types_.Int(), span, false), element);
      else out.emplace_back(element, std::nullopt);
    };
    const Node* literal = &out_.nodes[collection];
    if (const auto* local = std::get_if<Local>(literal); local && let_values_[local->slot]) {
      literal = &out_.nodes[*let_values_[local->slot]];  // a `param` or `let` holding a list literal
    }
    if (const auto* list = std::get_if<MakeList>(literal)) {
      // A copy: add() emits nodes, which may move out_.nodes (and *list).
      std::vector<NodeId> elements = list->elements;
      for (size_t i = 0; i < elements.size(); ++i) add(i, elements[i]);
      return out;
    }
    std::optional<PodRef> value = Eval(collection);
    if (!value) return std::nullopt;
    lang::TypeRef element_type = second ? fn_->slots[*second].type : first_type;
    switch (value->kind) {
      case PodRef::Kind::kRecordList:
        for (size_t i = 0; i < value->records.size(); ++i) {
          NodeId index = Emit(IntConst{static_cast<int64_t>(i)}, types_.Int(), span, false);
          add(i, Emit(Index{collection, index}, element_type, span, false));
        }
        return out;
      case PodRef::Kind::kStringList: {
        const auto& strings = *static_cast<const std::vector<std::string>*>(value->ptr);
        for (size_t i = 0; i < strings.size(); ++i) add(i, Emit(StringConst{strings[i]}, element_type, span, false));
        return out;
      }
      case PodRef::Kind::kStringMap:
        for (const auto& [k, v] : *static_cast<const k8s::StringMap*>(value->ptr)) {
          NodeId key = Emit(StringConst{k}, first_type, span, false);
          std::optional<NodeId> val;
          if (second) val = Emit(StringConst{v}, fn_->slots[*second].type, span, false);
          out.emplace_back(key, val);
        }
        return out;
      case PodRef::Kind::kResources:
        pod_.ReadWhole(*value);
        for (const auto& [name, amount] : *static_cast<const ResourceAmounts*>(value->ptr)) {
          NodeId key = Emit(StringConst{name}, first_type, span, false);
          std::optional<NodeId> val;
          if (second) val = Emit(IntConst{amount}, fn_->slots[*second].type, span, false);
          out.emplace_back(key, val);
        }
        return out;
      default: return std::nullopt;
    }
  }

  // The pod-side value node `id` (of the output program) stands for, if any.
  std::optional<PodRef> Eval(NodeId id) {
    const Node& n = out_.nodes[id];
    if (std::holds_alternative<NoneConst>(n)) return PodRef{};
    if (const auto* b = std::get_if<BoolConst>(&n)) return PodRef{PodRef::Kind::kBool, b->value};
    if (const auto* i = std::get_if<IntConst>(&n)) return PodRef::Int(i->value);
    if (const auto* s = std::get_if<StringConst>(&n)) return PodRef::Str(s->value);
    if (std::holds_alternative<PodRoot>(n)) return pod_.Root();
    if (const auto* local = std::get_if<Local>(&n)) {
      // A `let` of the pod's (a list, say) is seen through to its value.
      const Slot& slot = fn_->slots[local->slot];
      if (slot.kind != Slot::Kind::kLet || !let_values_[local->slot]) return std::nullopt;
      return Eval(*let_values_[local->slot]);
    }
    if (const auto* load = std::get_if<LoadField>(&n)) {
      std::optional<PodRef> object = Eval(load->object);
      return object ? pod_.Load(load->field, *object) : std::nullopt;
    }
    if (const auto* index = std::get_if<Index>(&n)) {
      std::optional<PodRef> object = Eval(index->object);
      std::optional<PodRef> key = Eval(index->key);
      return object && key ? pod_.Index(*object, *key) : std::nullopt;
    }
    if (const auto* call = std::get_if<CallBuiltin>(&n); call && call->builtin == lang::BuiltinId::kLen) {
      std::optional<PodRef> c = Eval(call->args[0]);
      std::optional<int64_t> size = c ? pod_.Size(*c) : std::nullopt;
      return size ? std::optional<PodRef>(PodRef::Int(*size)) : std::nullopt;
    }
    return std::nullopt;
  }

  const Program& in_;
  PodView pod_;
  lang::TypeTable& types_;
  Program out_;
  const ir::Function* fn_ = nullptr;
  std::map<NodeId, NodeId> memo_;
  std::map<NodeId, std::set<SlotId>> deps_;
  std::vector<std::optional<NodeId>> let_values_;
  std::map<NodeId, size_t> sizes_;  // SubtreeSize by input node
  static constexpr size_t kMinBudget = 200000;
  static constexpr size_t kBudgetPerNode = 64;
  size_t budget_;  // output nodes beyond which loops are kept
};

class SpecializePass final : public Pass {
 public:
  SpecializePass(const k8s::Pod& pod, lang::TypeTable& types, binding::ResourceReads* reads)
      : pod_(pod), types_(types), reads_(reads) {}
  std::string_view Name() const override { return "specialize"; }
  bool Run(Program& program) override {
    program = Specializer(program, pod_, types_, reads_).Run();
    return true;
  }

 private:
  const k8s::Pod& pod_;
  lang::TypeTable& types_;
  binding::ResourceReads* reads_;
};

}  // namespace

std::unique_ptr<Pass> CreateSpecializePass(const PassOptions& o) {
  return o.pod != nullptr && o.types != nullptr ? std::make_unique<SpecializePass>(*o.pod, *o.types, o.resource_reads)
                                               : nullptr;
}

}  // namespace policy::passes
