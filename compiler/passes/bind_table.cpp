// Partial evaluation against the node table's dictionaries (after
// `specialize`, so the pod's values are constants already).
//
// Algorithm: one walk in id order. A test of one node label against
// constants becomes a LabelIn over the label column's dictionary ids:
//   node.labels[K] == "v" / != "v"      -> the id of v (or no id: never equal)
//   node.labels[K] in ["a", "b"]        -> the ids of a and b
//   K in node.labels, node.labels.has(K) -> every id but 0 (0 = no label)
//   node.labels[K].int() > 5 (<, >=, <=) -> the ids whose value is such an integer
// A loop over the node's taints whose body reads only the taint and
// constants (TaintToleration after specialization: the pod's tolerations
// unrolled) has its body decided once per taint of the dictionary; the loop
// becomes a TaintScan over the taints for which it holds. Finally a test
// `first ... == none` on such a scan, through its `let`, becomes the bitmask
// test `all taints are outside the set`. A label key no node has reads none,
// a resource no node has reads 0 (fold carries the constants on).
//
// The program is then valid for this table only while its dictionaries keep
// their version (Program::table_version); the kernel cache keys on it.

#include <algorithm>

#include "compiler/passes/node_dictionary.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewriter.h"
#include "support/decimal.h"

namespace policy::passes {
namespace {

using namespace ir;
using lang::FieldId;

class BindTablePass final : public Pass {
 public:
  BindTablePass(const NodeDictionary& table, lang::TypeTable& types) : table_(table), types_(types) {}

  std::string_view Name() const override { return "bind-table"; }

  bool Run(Program& program) override {
    changed_ = false;
    program = Rebuild(program, [&](NodeId old, Node node, Program& out) {
      std::optional<Bound> bound = Bind(node, out);
      if (!bound) return out.Add(std::move(node), program.types[old], program.spans[old], program.reads_node[old] != 0);
      changed_ = true;
      Span span = program.spans[old];
      if (std::optional<Node> constant = Constant(bound->node)) {  // decided for every node
        if (bound->negate) constant = BoolConst{!std::get<BoolConst>(*constant).value};
        return out.Add(std::move(*constant), program.types[old], span, false);
      }
      NodeId id = out.Add(std::move(bound->node), bound->negate ? types_.Bool() : program.types[old], span, true);
      return bound->negate ? out.Add(Not{id}, types_.Bool(), span, true) : id;
    });
    RewriteFirstIsNone(program);
    program.table_version = table_.Version();
    return changed_;
  }

 private:
  // --- labels ------------------------------------------------------------

  // K when `id` reads node.labels[K] with a constant K.
  static std::optional<std::string> LabelRead(NodeId id, const Program& out) {
    const auto* index = std::get_if<Index>(&out.nodes[id]);
    if (index == nullptr || !IsNodeLabels(index->object, out)) return std::nullopt;
    const auto* key = std::get_if<StringConst>(&out.nodes[index->key]);
    return key ? std::optional<std::string>(key->value) : std::nullopt;
  }

  static bool IsNodeLabels(NodeId id, const Program& out) {
    const auto* load = std::get_if<LoadField>(&out.nodes[id]);
    return load != nullptr && load->field == FieldId::kNodeLabels && std::holds_alternative<NodeRoot>(out.nodes[load->object]);
  }

  static std::optional<std::vector<std::string>> StringList(NodeId id, const Program& out) {
    const auto* list = std::get_if<MakeList>(&out.nodes[id]);
    if (list == nullptr) return std::nullopt;
    std::vector<std::string> values;
    for (NodeId e : list->elements) {
      const auto* s = std::get_if<StringConst>(&out.nodes[e]);
      if (s == nullptr) return std::nullopt;
      values.push_back(s->value);
    }
    return values;
  }

  LabelIn Domains(const std::string& key, const std::vector<std::string>& values) {
    LabelIn in{key, {}};
    for (const std::string& v : values) {
      if (std::optional<uint32_t> d = table_.LabelDomain(key, v)) in.domains.push_back(*d);
    }
    std::sort(in.domains.begin(), in.domains.end());
    in.domains.erase(std::unique(in.domains.begin(), in.domains.end()), in.domains.end());
    return in;
  }

  LabelIn Present(const std::string& key) {
    LabelIn in{key, {}};
    table_.ForEachLabelValue(key, [&](uint32_t d, std::string_view) { in.domains.push_back(d); });
    return in;
  }

  /// A bound node, or its negation (`!=`).
  struct Bound {
    Node node;
    bool negate = false;
  };

  // The bound form of `node`, or nullopt.
  std::optional<Bound> Bind(const Node& node, const Program& out) {
    if (const auto* c = std::get_if<Compare>(&node)) return BindCompare(*c, out);
    if (const auto* m = std::get_if<Member>(&node)) {
      if (std::optional<std::string> key = LabelRead(m->element, out)) {
        std::optional<std::vector<std::string>> values = StringList(m->collection, out);
        if (values) return Bound{Domains(*key, *values)};
      }
      const auto* key = std::get_if<StringConst>(&out.nodes[m->element]);
      if (key != nullptr && IsNodeLabels(m->collection, out)) return Bound{Present(key->value)};
      return std::nullopt;
    }
    if (const auto* call = std::get_if<CallBuiltin>(&node); call && call->builtin == lang::BuiltinId::kHas) {
      const auto* key = std::get_if<StringConst>(&out.nodes[call->args[1]]);
      if (key != nullptr && IsNodeLabels(call->args[0], out)) return Bound{Present(key->value)};
      return std::nullopt;
    }
    if (const auto* loop = std::get_if<Loop>(&node)) {
      std::optional<TaintScan> scan = BindTaintLoop(*loop, out);
      if (scan) return Bound{std::move(*scan)};
    }
    if (const auto* index = std::get_if<Index>(&node)) return BindAbsent(*index, out);
    return std::nullopt;
  }

  // node.labels[K] for a key no node has: none; node.allocatable[R] or
  // node.requested[R] for a resource no node has: 0. (scoringRequested
  // always has cpu and memory: kube's non-zero defaults.)
  std::optional<Bound> BindAbsent(const Index& index, const Program& out) {
    const auto* key = std::get_if<StringConst>(&out.nodes[index.key]);
    const auto* load = std::get_if<LoadField>(&out.nodes[index.object]);
    if (key == nullptr || load == nullptr || !std::holds_alternative<NodeRoot>(out.nodes[load->object])) return std::nullopt;
    switch (load->field) {
      case FieldId::kNodeLabels:
        if (!table_.HasLabelKey(key->value)) return Bound{NoneConst{}};
        break;
      case FieldId::kNodeScoringRequested:
        if (key->value == "cpu" || key->value == "memory") break;
        [[fallthrough]];
      case FieldId::kNodeAllocatable:
      case FieldId::kNodeRequested:
        if (!table_.HasResource(key->value)) return Bound{IntConst{0}};
        break;
      default: break;
    }
    return std::nullopt;
  }

  // The constant a bound node is on every node of this table, if it is one.
  std::optional<Node> Constant(const Node& node) const {
    if (std::holds_alternative<NoneConst>(node) || std::holds_alternative<IntConst>(node)) return node;
    if (const auto* in = std::get_if<LabelIn>(&node); in && in->domains.empty()) return BoolConst{false};
    const auto* scan = std::get_if<TaintScan>(&node);
    if (scan == nullptr) return std::nullopt;
    bool none = scan->taints.empty(), every = scan->taints.size() == table_.TaintCount();
    switch (scan->kind) {
      case LoopKind::kAny: if (none) return BoolConst{false}; break;
      case LoopKind::kAll: if (every) return BoolConst{true}; break;
      case LoopKind::kCount: if (none) return IntConst{0}; break;
      case LoopKind::kFirst: if (none) return NoneConst{}; break;
      default: break;
    }
    return std::nullopt;
  }

  std::optional<Bound> BindCompare(const Compare& c, const Program& out) {
    NodeId label = c.lhs, other = c.rhs;
    CompareOp op = c.op;
    if (!LabelRead(label, out) && !IntOfLabel(label, out)) {
      std::swap(label, other);
      op = Mirror(op);
    }
    if (op == CompareOp::kEq || op == CompareOp::kNe) {
      std::optional<std::string> key = LabelRead(label, out);
      if (!key) return std::nullopt;
      LabelIn in{*key, {}};
      if (const auto* s = std::get_if<StringConst>(&out.nodes[other])) {
        in = Domains(*key, {s->value});
      } else if (std::holds_alternative<NoneConst>(out.nodes[other])) {
        in.domains = {0};
      } else {
        return std::nullopt;
      }
      return Bound{std::move(in), op == CompareOp::kNe};
    }
    // node.labels[K].int() <op> constant: the values that are such integers.
    std::optional<std::string> key = IntOfLabel(label, out);
    std::optional<int64_t> bound = IntValue(other, out);
    if (!key || !bound) return std::nullopt;
    LabelIn in{*key, {}};
    table_.ForEachLabelValue(*key, [&](uint32_t d, std::string_view value) {
      std::optional<int64_t> v = ParseDecimalInt(value);
      if (v && Holds(op, *v, *bound)) in.domains.push_back(d);
    });
    return Bound{std::move(in)};
  }

  // An integer constant: a literal, or a constant string's .int() (`fold` runs later).
  static std::optional<int64_t> IntValue(NodeId id, const Program& out) {
    if (const auto* i = std::get_if<IntConst>(&out.nodes[id])) return i->value;
    const auto* call = std::get_if<CallBuiltin>(&out.nodes[id]);
    if (call == nullptr || call->builtin != lang::BuiltinId::kToInt) return std::nullopt;
    const auto* s = std::get_if<StringConst>(&out.nodes[call->args[0]]);
    return s ? ParseDecimalInt(s->value) : std::nullopt;
  }

  // K when `id` is node.labels[K].int().
  static std::optional<std::string> IntOfLabel(NodeId id, const Program& out) {
    const auto* call = std::get_if<CallBuiltin>(&out.nodes[id]);
    if (call == nullptr || call->builtin != lang::BuiltinId::kToInt) return std::nullopt;
    return LabelRead(call->args[0], out);
  }

  static bool Holds(CompareOp op, int64_t a, int64_t b) {
    switch (op) {
      case CompareOp::kLt: return a < b;
      case CompareOp::kLe: return a <= b;
      case CompareOp::kGt: return a > b;
      case CompareOp::kGe: return a >= b;
      default: return false;
    }
  }

  // --- taints ------------------------------------------------------------

  // A constant the taint predicate evaluates to: none, a bool or a string.
  struct Const {
    enum class Kind : uint8_t { kNone, kBool, kString } kind = Kind::kNone;
    bool b = false;
    std::string_view s;
    bool operator==(const Const& o) const {
      return kind == o.kind && (kind != Kind::kBool || b == o.b) && (kind != Kind::kString || s == o.s);
    }
  };

  std::optional<TaintScan> BindTaintLoop(const Loop& loop, const Program& out) {
    const auto* load = std::get_if<LoadField>(&out.nodes[loop.collection]);
    if (load == nullptr || load->field != FieldId::kNodeTaints || !std::holds_alternative<NodeRoot>(out.nodes[load->object])) {
      return std::nullopt;
    }
    if (loop.kind == LoopKind::kSum) return std::nullopt;
    TaintScan scan{loop.kind, {}};
    for (uint32_t id = 0; id < table_.TaintCount(); ++id) {
      NodeDictionary::Taint taint = table_.TaintAt(id);
      bool holds = true;
      if (loop.body) {
        std::optional<Const> v = Eval(*loop.body, loop.first, taint, out);
        if (!v || v->kind != Const::Kind::kBool) return std::nullopt;  // reads more than the taint
        holds = v->b;
      }
      if (holds) scan.taints.push_back(id);
    }
    return scan;
  }

  // `id` evaluated for one taint bound to `slot`; nullopt when it reads anything else.
  std::optional<Const> Eval(NodeId id, SlotId slot, const NodeDictionary::Taint& taint, const Program& out) {
    const Node& n = out.nodes[id];
    auto boolean = [](bool b) { return Const{Const::Kind::kBool, b, {}}; };
    if (std::holds_alternative<NoneConst>(n)) return Const{};
    if (const auto* b = std::get_if<BoolConst>(&n)) return boolean(b->value);
    if (const auto* s = std::get_if<StringConst>(&n)) return Const{Const::Kind::kString, false, s->value};
    if (const auto* load = std::get_if<LoadField>(&n)) {
      const auto* local = std::get_if<Local>(&out.nodes[load->object]);
      if (local == nullptr || local->slot != slot) return std::nullopt;
      switch (load->field) {
        case FieldId::kTaintKey: return Const{Const::Kind::kString, false, taint.key};
        case FieldId::kTaintValue: return Const{Const::Kind::kString, false, taint.value};
        case FieldId::kTaintEffect: return Const{Const::Kind::kString, false, taint.effect};
        default: return std::nullopt;
      }
    }
    if (const auto* c = std::get_if<Compare>(&n); c && (c->op == CompareOp::kEq || c->op == CompareOp::kNe)) {
      std::optional<Const> a = Eval(c->lhs, slot, taint, out), b = Eval(c->rhs, slot, taint, out);
      if (!a || !b) return std::nullopt;
      return boolean((*a == *b) == (c->op == CompareOp::kEq));
    }
    if (const auto* m = std::get_if<Member>(&n)) {
      const auto* list = std::get_if<MakeList>(&out.nodes[m->collection]);
      std::optional<Const> e = Eval(m->element, slot, taint, out);
      if (list == nullptr || !e) return std::nullopt;
      bool found = false;
      for (NodeId x : list->elements) {
        std::optional<Const> v = Eval(x, slot, taint, out);
        if (!v) return std::nullopt;
        found |= e->kind != Const::Kind::kNone && *v == *e;
      }
      return boolean(found);
    }
    if (const auto* x = std::get_if<Not>(&n)) {
      std::optional<Const> v = Eval(x->operand, slot, taint, out);
      if (!v || v->kind != Const::Kind::kBool) return std::nullopt;
      return boolean(!v->b);
    }
    if (std::holds_alternative<And>(n) || std::holds_alternative<Or>(n)) {
      bool is_and = std::holds_alternative<And>(n);
      NodeId l = is_and ? std::get<And>(n).lhs : std::get<Or>(n).lhs;
      NodeId r = is_and ? std::get<And>(n).rhs : std::get<Or>(n).rhs;
      std::optional<Const> a = Eval(l, slot, taint, out), b = Eval(r, slot, taint, out);
      if (!a || !b || a->kind != Const::Kind::kBool || b->kind != Const::Kind::kBool) return std::nullopt;
      return boolean(is_and ? a->b && b->b : a->b || b->b);
    }
    return std::nullopt;
  }

  // `x == none` / `x != none` where x is a `let` holding a `first` scan:
  // in place, `all taints outside the set` / `any taint in it`.
  void RewriteFirstIsNone(Program& program) {
    std::vector<size_t> owner = Owners(program);
    for (NodeId id = 0; id < program.nodes.size(); ++id) {
      const auto* c = std::get_if<Compare>(&program.nodes[id]);
      if (c == nullptr || (c->op != CompareOp::kEq && c->op != CompareOp::kNe) || owner[id] == SIZE_MAX) continue;
      NodeId a = c->lhs, b = c->rhs;
      if (std::holds_alternative<NoneConst>(program.nodes[a])) std::swap(a, b);
      const auto* local = std::get_if<Local>(&program.nodes[a]);
      if (local == nullptr || !std::holds_alternative<NoneConst>(program.nodes[b])) continue;
      const Slot& slot = program.functions[owner[id]].slots[local->slot];
      if (slot.kind != Slot::Kind::kLet || !slot.value) continue;
      const auto* scan = std::get_if<TaintScan>(&program.nodes[*slot.value]);
      if (scan == nullptr || scan->kind != LoopKind::kFirst) continue;
      TaintScan test{LoopKind::kAny, scan->taints};
      if (c->op == CompareOp::kEq) {  // none of the set: every taint in the complement
        test.kind = LoopKind::kAll;
        std::vector<uint32_t> others;
        for (uint32_t t = 0, i = 0; t < table_.TaintCount(); ++t) {
          if (i < scan->taints.size() && scan->taints[i] == t) ++i;
          else others.push_back(t);
        }
        test.taints = std::move(others);
      }
      program.nodes[id] = std::move(test);
      changed_ = true;
    }
  }

  const NodeDictionary& table_;
  lang::TypeTable& types_;
  bool changed_ = false;
};

}  // namespace

std::unique_ptr<Pass> CreateBindTablePass(const PassOptions& o) {
  return o.table != nullptr && o.types != nullptr ? std::make_unique<BindTablePass>(*o.table, *o.types) : nullptr;
}

}  // namespace policy::passes
