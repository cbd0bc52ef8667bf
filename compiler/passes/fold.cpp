// Constant folding.
//
// Algorithm: one walk in id order (operands first). A node whose operands
// are constants is evaluated with the language's semantics (saturating
// arithmetic, division by zero is 0, `none` compares unequal to values and
// false in orderings) and replaced by a constant. Short-circuit forms fold
// with one constant operand: `false and x` is false, `true and x` is x, an
// `if` on a constant picks its branch, `c ?? x` with a non-none constant c is
// c. A `let` whose value is a constant is replaced by it at its uses.
// Arithmetic identities (x + 0, x * 1, x / 1) forward x. Membership in and indexing of literal lists with constant operands
// fold. Loops and reads of slots and of the pod or node are left alone.

#include <charconv>
#include <limits>

#include "compiler/ir/scalar.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewriter.h"

namespace policy::passes {
namespace {

using namespace ir;


bool IsConst(const Node& n) {
  return std::holds_alternative<NoneConst>(n) || std::holds_alternative<BoolConst>(n) ||
         std::holds_alternative<IntConst>(n) || std::holds_alternative<StringConst>(n);
}

class FoldPass final : public Pass {
 public:
  std::string_view Name() const override { return "fold"; }

  bool Run(Program& program) override {
    changed_ = false;
    std::vector<size_t> owner = Owners(program);
    std::vector<NodeId> renamed(program.nodes.size(), UINT32_MAX);
    // The value of a `let` read by `local` (in the output program), if known.
    auto let_value = [&](NodeId old, NodeId local_out, const Program& out) -> std::optional<NodeId> {
      const auto* local = std::get_if<Local>(&out.nodes[local_out]);
      if (local == nullptr || owner[old] == SIZE_MAX) return std::nullopt;
      const Slot& slot = program.functions[owner[old]].slots[local->slot];
      if (slot.kind != Slot::Kind::kLet || !slot.value || *slot.value >= old || renamed[*slot.value] == UINT32_MAX) {
        return std::nullopt;
      }
      return renamed[*slot.value];
    };
    program = Rebuild(program, [&](NodeId old, Node node, Program& out) {
      // `x == none` where x is a chain of ifs whose branches are none or
      // cannot be none (an unrolled `first`, maybe through its let): the same
      // chain of ifs over booleans, which later folds and compiles.
      if (auto* c = std::get_if<Compare>(&node);
          c && (c->op == CompareOp::kEq || c->op == CompareOp::kNe) && std::holds_alternative<NoneConst>(out.nodes[c->rhs])) {
        NodeId x = c->lhs;
        if (std::optional<NodeId> v = let_value(old, x, out); v && std::holds_alternative<Select>(out.nodes[*v])) x = *v;
        lang::TypeRef boolean = program.types[old];
        if (std::optional<NodeId> test = NoneTest(x, out, boolean, program.spans[old])) {
          changed_ = true;
          NodeId id = c->op == CompareOp::kEq ? *test : out.Add(Not{*test}, boolean, program.spans[old], out.reads_node[*test] != 0);
          renamed[old] = id;
          return id;
        }
      }
      std::optional<Folded> folded = Fold(node, out, program.types[old]);
      // A `let` whose value folded to a constant is that constant.
      if (const auto* local = std::get_if<Local>(&node); !folded && local && owner[old] != SIZE_MAX) {
        const Slot& slot = program.functions[owner[old]].slots[local->slot];
        if (slot.kind == Slot::Kind::kLet && slot.value && *slot.value < old && renamed[*slot.value] != UINT32_MAX &&
            IsConst(out.nodes[renamed[*slot.value]]) && out.types[renamed[*slot.value]] == program.types[old]) {
          folded = Forward(renamed[*slot.value]);
        }
      }
      NodeId id;
      if (!folded) {
        id = out.Add(std::move(node), program.types[old], program.spans[old], program.reads_node[old] != 0);
      } else {
        changed_ = true;
        if (const auto* existing = std::get_if<Existing>(&*folded)) id = existing->id;
        else id = out.Add(std::get<Node>(std::move(*folded)), program.types[old], program.spans[old], false);
      }
      renamed[old] = id;
      return id;
    });
    return changed_;
  }

 private:
  /// A node that stands for the folded one already exists.
  struct Existing {
    NodeId id;
  };
  using Folded = std::variant<Node, Existing>;
  static Folded Forward(NodeId id) { return Existing{id}; }

  std::optional<Folded> Fold(const Node& node, const Program& out, lang::TypeRef type) {
    auto at = [&](NodeId id) -> const Node& { return out.nodes[id]; };
    auto as_bool = [&](NodeId id) -> std::optional<bool> {
      if (const auto* b = std::get_if<BoolConst>(&at(id))) return b->value;
      return std::nullopt;
    };
    auto as_int = [&](NodeId id) -> std::optional<int64_t> {
      if (const auto* i = std::get_if<IntConst>(&at(id))) return i->value;
      return std::nullopt;
    };
    if (const auto* n = std::get_if<Not>(&node)) {
      if (auto b = as_bool(n->operand)) return BoolConst{!*b};
    } else if (const auto* n = std::get_if<Negate>(&node)) {
      if (auto i = as_int(n->operand)) return IntConst{scalar::Negate(*i)};
    } else if (const auto* n = std::get_if<Arith>(&node)) {
      auto a = as_int(n->lhs), b = as_int(n->rhs);
      if (a && b) return IntConst{scalar::Arith(n->op, *a, *b)};
      // Identities: x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1, where x has the result's type.
      auto same = [&](NodeId id) { return out.types[id] == type; };
      if (n->op == ArithOp::kAdd && a == 0 && same(n->rhs)) return Forward(n->rhs);
      if ((n->op == ArithOp::kAdd || n->op == ArithOp::kSub) && b == 0 && same(n->lhs)) return Forward(n->lhs);
      if (n->op == ArithOp::kMul && a == 1 && same(n->rhs) && out.types[n->lhs]->kind == lang::TypeKind::kInt) {
        return Forward(n->rhs);
      }
      if ((n->op == ArithOp::kMul || n->op == ArithOp::kDiv) && b == 1 && same(n->lhs) &&
          out.types[n->rhs]->kind == lang::TypeKind::kInt) {
        return Forward(n->lhs);
      }
    } else if (const auto* n = std::get_if<Compare>(&node)) {
      const Node& a = at(n->lhs);
      const Node& b = at(n->rhs);
      if (IsConst(a) && IsConst(b)) return BoolConst{CompareConsts(n->op, a, b)};
    } else if (const auto* n = std::get_if<And>(&node)) {
      auto a = as_bool(n->lhs), b = as_bool(n->rhs);
      if ((a && !*a) || (b && !*b)) return BoolConst{false};
      if (a && *a) return Forward(n->rhs);
      if (b && *b) return Forward(n->lhs);
    } else if (const auto* n = std::get_if<Or>(&node)) {
      auto a = as_bool(n->lhs), b = as_bool(n->rhs);
      if ((a && *a) || (b && *b)) return BoolConst{true};
      if (a && !*a) return Forward(n->rhs);
      if (b && !*b) return Forward(n->lhs);
    } else if (const auto* n = std::get_if<Select>(&node)) {
      if (auto c = as_bool(n->condition)) return Forward(*c ? n->then_value : n->else_value);
      auto t = as_bool(n->then_value), e = as_bool(n->else_value);
      if (t && e && *t && !*e) return Forward(n->condition);  // if c then true else false
      if (t && e && !*t && *e) return Not{n->condition};
      if (t && e && *t == *e) return BoolConst{*t};
    } else if (const auto* n = std::get_if<Coalesce>(&node)) {
      if (std::holds_alternative<NoneConst>(at(n->value))) return Forward(n->fallback);
      // A constant of T? that is not none: the same constant, of the `??`'s own T.
      if (IsConst(at(n->value))) return out.types[n->value] == type ? Forward(n->value) : Folded{Node(at(n->value))};
    } else if (const auto* n = std::get_if<Member>(&node)) {  // constant element of a literal list or set
      const auto* list = std::get_if<MakeList>(&at(n->collection));
      if (list == nullptr || !IsConst(at(n->element))) return std::nullopt;
      if (std::holds_alternative<NoneConst>(at(n->element))) return BoolConst{false};
      bool found = false;
      for (NodeId e : list->elements) {
        if (!IsConst(at(e))) return std::nullopt;
        found |= CompareConsts(CompareOp::kEq, at(n->element), at(e));
      }
      return BoolConst{found};
    } else if (const auto* n = std::get_if<Index>(&node)) {  // a literal list at a constant position
      const auto* list = std::get_if<MakeList>(&at(n->object));
      auto i = as_int(n->key);
      if (list == nullptr || list->is_set || !i) return std::nullopt;
      if (*i < 0 || static_cast<size_t>(*i) >= list->elements.size()) return NoneConst{};
      return Forward(list->elements[static_cast<size_t>(*i)]);
    } else if (const auto* n = std::get_if<IntToQuantity>(&node)) {
      if (std::holds_alternative<NoneConst>(at(n->operand))) return NoneConst{};
      if (auto i = as_int(n->operand)) return IntConst{scalar::IntToQuantity(*i)};
    } else if (const auto* n = std::get_if<CallBuiltin>(&node)) {
      return FoldCall(*n, out);
    }
    return std::nullopt;
  }

  // A bool node that is true exactly when `x` is none, for x none, never
  // none (not an optional type), or an if over such; nullopt otherwise.
  std::optional<NodeId> NoneTest(NodeId x, Program& out, lang::TypeRef boolean, Span span) {
    if (std::holds_alternative<NoneConst>(out.nodes[x])) return out.Add(BoolConst{true}, boolean, span, false);
    if (out.types[x]->kind != lang::TypeKind::kOptional && out.types[x]->kind != lang::TypeKind::kNone) {
      return out.Add(BoolConst{false}, boolean, span, false);
    }
    const auto* sel = std::get_if<Select>(&out.nodes[x]);
    if (sel == nullptr) return std::nullopt;
    Select copy = *sel;  // out.nodes may grow below
    std::optional<NodeId> a = NoneTest(copy.then_value, out, boolean, span);
    std::optional<NodeId> b = a ? NoneTest(copy.else_value, out, boolean, span) : std::nullopt;
    if (!a || !b) return std::nullopt;
    bool reads = out.reads_node[copy.condition] || out.reads_node[*a] || out.reads_node[*b];
    return out.Add(Select{copy.condition, *a, *b}, boolean, span, reads);
  }

  static bool CompareConsts(CompareOp op, const Node& a, const Node& b) {
    return scalar::Compare(op, AsScalar(a), AsScalar(b));
  }

  static scalar::Scalar AsScalar(const Node& n) {
    if (std::holds_alternative<NoneConst>(n)) return {};
    if (const auto* s = std::get_if<StringConst>(&n)) return {scalar::Scalar::Kind::kString, 0, s->value};
    return {scalar::Scalar::Kind::kNumber, Int(n), {}};
  }

  static int64_t Int(const Node& n) {
    if (const auto* i = std::get_if<IntConst>(&n)) return i->value;
    if (const auto* b = std::get_if<BoolConst>(&n)) return b->value;
    return 0;
  }

  std::optional<Folded> FoldCall(const CallBuiltin& call, const Program& out) {
    if (call.builtin == lang::BuiltinId::kLen) {  // of a list literal
      const auto* list = std::get_if<MakeList>(&out.nodes[call.args[0]]);
      if (list == nullptr || list->is_set) return std::nullopt;
      return IntConst{static_cast<int64_t>(list->elements.size())};
    }
    for (NodeId a : call.args) {
      if (!IsConst(out.nodes[a])) return std::nullopt;
    }
    auto arg = [&](size_t i) -> const Node& { return out.nodes[call.args[i]]; };
    auto text = [&](size_t i) -> std::optional<std::string_view> {
      const auto* s = std::get_if<StringConst>(&arg(i));
      if (s == nullptr) return std::nullopt;
      return std::string_view(s->value);
    };
    switch (call.builtin) {
      case lang::BuiltinId::kMax: return IntConst{std::max(Int(arg(0)), Int(arg(1)))};
      case lang::BuiltinId::kMin: return IntConst{std::min(Int(arg(0)), Int(arg(1)))};
      case lang::BuiltinId::kMulDiv: return IntConst{scalar::MulDiv(Int(arg(0)), Int(arg(1)), Int(arg(2)))};
      case lang::BuiltinId::kUnits: return IntConst{scalar::Units(Int(arg(0)))};
      case lang::BuiltinId::kMillis: return IntConst{Int(arg(0))};
      case lang::BuiltinId::kToInt:
      case lang::BuiltinId::kToQuantity: {
        std::optional<std::string_view> s = text(0);
        std::optional<int64_t> v;
        if (s) v = call.builtin == lang::BuiltinId::kToInt ? scalar::ToInt(*s) : scalar::ToQuantity(*s);
        if (!v) return NoneConst{};
        return IntConst{*v};
      }
      case lang::BuiltinId::kStartsWith: return BoolConst{scalar::StartsWith(text(0), text(1))};
      case lang::BuiltinId::kContains: return BoolConst{scalar::Contains(text(0), text(1))};
      default: return std::nullopt;  // `has` reads a map
    }
  }

  bool changed_ = false;
};

}  // namespace

std::unique_ptr<Pass> CreateFoldPass(const PassOptions&) { return std::make_unique<FoldPass>(); }

}  // namespace policy::passes
