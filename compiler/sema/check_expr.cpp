// Sema over expressions: one Visit per AST node kind, and the type rules.
//
// Numbers: `int` promotes to `quantity` (n means n units). Optionals: field
// lookups that can be absent (`node.labels[k]`, `s.int()`) are `T?`; they
// compare (== != < ...) as false against anything when absent, `?? d`
// supplies a default, and arithmetic on them is an error.

#include <fmt/format.h>

#include "k8s/quantity.h"
#include "compiler/sema/checker.h"
#include "support/suggest.h"

namespace policy::sema {

using namespace syntax;

TypeRef Checker::Expr(ExprId id) {
  ++inlined_;
  TypeRef type = std::visit([&](const auto& e) { return Visit(id, e); }, module_.exprs[id]);
  out_.type[id] = type;
  return type;
}

TypeRef Checker::Mismatch(ExprId at, std::string message, std::string help) {
  Diagnostic& d = diags_.Error(DiagCode::kTypeMismatch, SpanOf(at), std::move(message));
  d.help = std::move(help);
  return types_.Error();
}

bool Checker::Assignable(TypeRef from, TypeRef to) const {
  if (from == to || from->kind == TypeKind::kError || to->kind == TypeKind::kError) return true;
  if (from->kind == TypeKind::kInt && to->kind == TypeKind::kQuantity) return true;
  if (to->kind == TypeKind::kOptional) {
    return from->kind == TypeKind::kNone || Assignable(Unwrapped(from), to->element);
  }
  return false;
}

TypeRef Checker::Unify(TypeRef a, TypeRef b) {
  if (a == b) return a;
  if (a->kind == TypeKind::kError) return b;
  if (b->kind == TypeKind::kError) return a;
  if (a->kind == TypeKind::kNone) return types_.Optional(b);
  if (b->kind == TypeKind::kNone) return types_.Optional(a);
  bool optional = a->kind == TypeKind::kOptional || b->kind == TypeKind::kOptional;
  TypeRef x = Unwrapped(a), y = Unwrapped(b);
  TypeRef base = nullptr;
  if (x == y) base = x;
  if (IsNumeric(x) && IsNumeric(y)) base = types_.Quantity();
  if (base == nullptr) return nullptr;
  return optional ? types_.Optional(base) : base;
}

TypeRef Checker::Expect(ExprId id, TypeRef want, std::string_view what) {
  TypeRef got = Expr(id);
  if (!Assignable(got, want)) {
    return Mismatch(id, fmt::format("{} must be `{}`, found `{}`", what, ToString(want), ToString(got)));
  }
  return got;
}

bool Checker::NeedBool(ExprId id, std::string_view what) {
  TypeRef got = Expr(id);
  if (got->kind == TypeKind::kBool || got->kind == TypeKind::kError) return true;
  std::string help;
  if (got->kind == TypeKind::kOptional) help = "compare it (`== \"...\"`) or give a default with `??`";
  Mismatch(id, fmt::format("{} needs a `bool`, found `{}`", what, ToString(got)), help);
  return false;
}

std::vector<std::string_view> Checker::VisibleNames() const {
  std::vector<std::string_view> names;
  for (const Binding& b : scope_) names.push_back(b.name);
  for (const DefInfo& d : defs_) names.push_back(d.name);
  return names;
}

const Checker::Binding* Checker::Lookup(std::string_view name) {
  for (size_t i = scope_.size(); i-- > 0;) {
    if (scope_[i].name == name) {
      scope_[i].used = true;
      return &scope_[i];
    }
  }
  return nullptr;
}

TypeRef Checker::Visit(ExprId, const IntLit&) { return types_.Int(); }

TypeRef Checker::Visit(ExprId id, const QuantityLit& e) {
  std::string why;
  if (!k8s::Quantity::Parse(e.text, &why)) {
    Diagnostic& d = diags_.Error(DiagCode::kBadQuantityLiteral, SpanOf(id), fmt::format("invalid quantity `{}`: {}", e.text, why));
    size_t digits = e.text.find_first_not_of("0123456789.");
    std::string_view suffix = std::string_view(e.text).substr(digits);
    std::string_view close = Closest(suffix, {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"});
    d.help = close.empty() ? "suffixes are m, k, M, G, T, P, E (powers of 1000) and Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024)"
                           : fmt::format("did you mean `{}{}`?", e.text.substr(0, digits), close);
    return types_.Error();
  }
  return types_.Quantity();
}

TypeRef Checker::Visit(ExprId, const StringLit&) { return types_.String(); }
TypeRef Checker::Visit(ExprId, const BoolLit&) { return types_.Bool(); }
TypeRef Checker::Visit(ExprId, const NoneLit&) { return types_.None(); }

TypeRef Checker::Visit(ExprId id, const NameRef& e) {
  const Binding* b = Lookup(e.name);
  if (b == nullptr) {
    for (const DefInfo& d : defs_) {
      if (d.name == e.name) return Mismatch(id, fmt::format("`{}` is a def: call it, `{}(...)`", e.name, e.name));
    }
    Diagnostic& d = diags_.Error(DiagCode::kUnknownName, SpanOf(id), fmt::format("unknown name `{}`", e.name));
    std::string_view close = Closest(e.name, VisibleNames());
    d.help = close.empty() ? "names are `pod`, `node`, earlier `let`s, `def` parameters and loop variables"
                           : fmt::format("did you mean `{}`?", close);
    return types_.Error();
  }
  out_.name[id] = b->target;
  out_.reads_node[id] = b->reads_node;
  return b->type;
}

TypeRef Checker::Visit(ExprId id, const FieldRef& e) {
  TypeRef object = Expr(e.object);
  MarkNode(id, e.object);
  if (object->kind == TypeKind::kError) return object;
  // A field of an optional record is optional: none when the record is.
  bool optional = object->kind == TypeKind::kOptional;
  object = Unwrapped(object);
  if (object->kind != TypeKind::kRecord) {
    return Mismatch(id, fmt::format("a `{}` has no field `{}`", ToString(object), e.field));
  }
  const FieldSchema* field = object->record->Find(e.field);
  if (field == nullptr) {
    Diagnostic& d = diags_.Error(DiagCode::kUnknownField, SpanOf(id),
                                 fmt::format("`{}` has no field `{}`", object->record->name, e.field));
    std::vector<std::string_view> names;
    for (const FieldSchema& f : object->record->fields) names.push_back(f.name);
    std::string_view close = Closest(e.field, names);
    d.help = close.empty() ? fmt::format("its fields: {}", fmt::join(names, ", ")) : fmt::format("did you mean `{}`?", close);
    return types_.Error();
  }
  out_.field[id] = field;
  out_.reads_node[id] |= field->side == Side::kNode;
  return optional ? types_.Optional(field->type) : field->type;
}

TypeRef Checker::Visit(ExprId id, const IndexRef& e) {
  TypeRef object = Expr(e.object);
  TypeRef index = Expr(e.index);
  MarkNode(id, e.object);
  MarkNode(id, e.index);
  switch (object->kind) {
    case TypeKind::kError: return object;
    case TypeKind::kMap:
      if (!Assignable(index, types_.String())) return Mismatch(e.index, fmt::format("a map key must be a `string`, found `{}`", ToString(index)));
      return types_.Optional(object->element);
    case TypeKind::kResources:
      if (!Assignable(index, types_.String())) return Mismatch(e.index, fmt::format("a resource name must be a `string`, found `{}`", ToString(index)));
      return types_.Quantity();
    case TypeKind::kList:
      if (!Assignable(index, types_.Int())) return Mismatch(e.index, fmt::format("a list index must be an `int`, found `{}`", ToString(index)));
      return types_.Optional(object->element);
    default:
      return Mismatch(id, fmt::format("cannot index a `{}`", ToString(object)));
  }
}

TypeRef Checker::Visit(ExprId id, const Unary& e) {
  TypeRef operand = Expr(e.operand);
  MarkNode(id, e.operand);
  if (e.op == UnaryOp::kNot) {
    if (operand->kind != TypeKind::kBool && operand->kind != TypeKind::kError) {
      return Mismatch(e.operand, fmt::format("`not` needs a `bool`, found `{}`", ToString(operand)));
    }
    return types_.Bool();
  }
  if (!IsNumeric(operand) && operand->kind != TypeKind::kError) {
    return Mismatch(e.operand, fmt::format("`-` needs a number, found `{}`", ToString(operand)));
  }
  return operand;
}

TypeRef Checker::Arithmetic(ExprId id, const Binary& e, TypeRef lhs, TypeRef rhs) {
  for (auto [side, type] : {std::pair{e.lhs, lhs}, std::pair{e.rhs, rhs}}) {
    if (type->kind == TypeKind::kError) return type;
    if (type->kind == TypeKind::kOptional && IsNumeric(type->element)) {
      return Mismatch(side, fmt::format("this `{}` may be none", ToString(type)),
                      "give a default first, e.g. `(x ?? 0)`");
    }
    if (!IsNumeric(type)) {
      return Mismatch(side, fmt::format("`{}` needs numbers, found `{}`", ToString(e.op), ToString(type)));
    }
  }
  bool lq = lhs->kind == TypeKind::kQuantity, rq = rhs->kind == TypeKind::kQuantity;
  switch (e.op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSub: return lq || rq ? types_.Quantity() : types_.Int();
    case BinaryOp::kMul:
      if (lq && rq) return Mismatch(id, "cannot multiply two quantities", "multiply a quantity by an `int`");
      return lq || rq ? types_.Quantity() : types_.Int();
    case BinaryOp::kDiv:
      if (lq && rq) return types_.Int();  // a ratio
      if (!lq && rq) return Mismatch(id, "cannot divide an `int` by a quantity");
      return lq ? types_.Quantity() : types_.Int();
    default:  // kMod
      if (lq || rq) return Mismatch(id, "`%` works on `int`s only");
      return types_.Int();
  }
}

TypeRef Checker::Comparison(ExprId id, const Binary& e, TypeRef lhs, TypeRef rhs) {
  if (lhs->kind == TypeKind::kError || rhs->kind == TypeKind::kError) return types_.Bool();
  if (e.op == BinaryOp::kIn || e.op == BinaryOp::kNotIn) {
    switch (rhs->kind) {
      case TypeKind::kList:
      case TypeKind::kSet:
        if (!Assignable(Unwrapped(lhs), rhs->element) && lhs->kind != TypeKind::kNone) {
          return Mismatch(e.lhs, fmt::format("a `{}` is never in a `{}`", ToString(lhs), ToString(rhs)));
        }
        return types_.Bool();
      case TypeKind::kMap:
      case TypeKind::kResources:
        if (!Assignable(Unwrapped(lhs), types_.String())) {
          return Mismatch(e.lhs, fmt::format("map keys are strings, found `{}`", ToString(lhs)));
        }
        return types_.Bool();
      default:
        return Mismatch(e.rhs, fmt::format("`in` needs a list, set or map on its right, found `{}`", ToString(rhs)));
    }
  }
  TypeRef common = Unify(lhs, rhs);
  TypeRef base = common ? Unwrapped(common) : nullptr;
  if (e.op == BinaryOp::kEq || e.op == BinaryOp::kNe) {
    // Anything that may be none compares with `none`.
    if ((lhs->kind == TypeKind::kNone && rhs->kind == TypeKind::kOptional) ||
        (rhs->kind == TypeKind::kNone && lhs->kind == TypeKind::kOptional)) {
      return types_.Bool();
    }
    bool scalar = base && (base->kind == TypeKind::kBool || IsNumeric(base) || base->kind == TypeKind::kString ||
                           base->kind == TypeKind::kNone);
    if (!scalar) {
      return Mismatch(id, fmt::format("cannot compare `{}` with `{}`", ToString(lhs), ToString(rhs)));
    }
    return types_.Bool();
  }
  if (!base || !IsNumeric(base)) {
    return Mismatch(id, fmt::format("`{}` compares numbers, found `{}` and `{}`", ToString(e.op), ToString(lhs), ToString(rhs)));
  }
  return types_.Bool();
}

TypeRef Checker::Visit(ExprId id, const Binary& e) {
  TypeRef lhs = Expr(e.lhs);
  TypeRef rhs = Expr(e.rhs);
  MarkNode(id, e.lhs);
  MarkNode(id, e.rhs);
  switch (e.op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod: return Arithmetic(id, e, lhs, rhs);
    case BinaryOp::kAnd:
    case BinaryOp::kOr:
      for (auto [side, type] : {std::pair{e.lhs, lhs}, std::pair{e.rhs, rhs}}) {
        if (type->kind != TypeKind::kBool && type->kind != TypeKind::kError) {
          Mismatch(side, fmt::format("`{}` needs `bool`s, found `{}`", ToString(e.op), ToString(type)));
        }
      }
      return types_.Bool();
    case BinaryOp::kCoalesce: {
      if (lhs->kind == TypeKind::kError || rhs->kind == TypeKind::kError) return types_.Error();
      if (lhs->kind != TypeKind::kOptional && lhs->kind != TypeKind::kNone) {
        return Mismatch(e.lhs, fmt::format("`??` needs something that may be none on its left; this is a `{}`", ToString(lhs)));
      }
      TypeRef common = Unify(Unwrapped(lhs), rhs);
      if (common == nullptr) {
        return Mismatch(e.rhs, fmt::format("the default must be a `{}`, found `{}`", ToString(Unwrapped(lhs)), ToString(rhs)));
      }
      return common;
    }
    default: return Comparison(id, e, lhs, rhs);
  }
}

TypeRef Checker::Visit(ExprId id, const IfElse& e) {
  NeedBool(e.condition, "`if`");
  TypeRef then_type = Expr(e.then_value);
  TypeRef else_type = Expr(e.else_value);
  MarkNode(id, e.condition);
  MarkNode(id, e.then_value);
  MarkNode(id, e.else_value);
  TypeRef common = Unify(then_type, else_type);
  if (common == nullptr) {
    return Mismatch(e.else_value, fmt::format("`then` gives a `{}` but `else` gives a `{}`", ToString(then_type), ToString(else_type)));
  }
  return common;
}

bool Checker::Bind(ExprId owner, const Binder& binder, TypeRef collection, Span collection_span) {
  TypeRef first = nullptr, second = nullptr;
  switch (collection->kind) {
    case TypeKind::kError: first = second = collection; break;
    case TypeKind::kList:  // `(i, x) in list` binds the position and the element
      if (binder.second.empty()) first = collection->element;
      else first = types_.Int(), second = collection->element;
      break;
    case TypeKind::kSet: first = collection->element; break;
    case TypeKind::kMap: first = types_.String(), second = collection->element; break;
    case TypeKind::kResources: first = types_.String(), second = types_.Quantity(); break;
    default:
      diags_.Error(DiagCode::kTypeMismatch, collection_span,
                   fmt::format("cannot loop over a `{}`", ToString(collection)))
          .help = "loops run over lists, sets, maps and resources";
      return false;
  }
  if (!binder.second.empty() && second == nullptr) {
    diags_.Error(DiagCode::kTypeMismatch, binder.span,
                 fmt::format("a `{}` has single elements: bind one name, not two", ToString(collection)));
    return false;
  }
  bool reads_node = out_.reads_node[owner] != 0;
  scope_.push_back({binder.first, {NameTarget::Kind::kBinder, owner}, first, reads_node, binder.span});
  if (!binder.second.empty()) {
    scope_.push_back({binder.second, {NameTarget::Kind::kBinderValue, owner}, second, reads_node, binder.span});
  }
  return true;
}

void Checker::Unbind(const Binder& binder) { scope_.resize(scope_.size() - (binder.second.empty() ? 1 : 2)); }

TypeRef Checker::Visit(ExprId id, const Fold& e) {
  TypeRef collection = Expr(e.collection);
  MarkNode(id, e.collection);
  if (!Bind(id, e.binder, collection, SpanOf(e.collection))) return types_.Error();
  TypeRef body = Expr(e.body);
  MarkNode(id, e.body);
  Unbind(e.binder);
  if (e.kind == FoldKind::kSum) {
    if (!IsNumeric(body) && body->kind != TypeKind::kError) {
      return Mismatch(e.body, fmt::format("`sum` adds numbers, found `{}`", ToString(body)));
    }
    return body;
  }
  if (body->kind != TypeKind::kBool && body->kind != TypeKind::kError) {
    Mismatch(e.body, fmt::format("`{}` needs a `bool` condition, found `{}`", e.kind == FoldKind::kAny ? "any" : "all",
                                 ToString(body)));
  }
  return types_.Bool();
}

TypeRef Checker::Visit(ExprId id, const Select& e) {
  TypeRef collection = Expr(e.collection);
  MarkNode(id, e.collection);
  if (e.kind == SelectKind::kFirst && !e.binder.second.empty()) {
    diags_.Error(DiagCode::kTypeMismatch, e.binder.span, "`first` binds one name");
    return types_.Error();
  }
  if (!Bind(id, e.binder, collection, SpanOf(e.collection))) return types_.Error();
  TypeRef element = scope_.back().type;
  if (e.where) {
    NeedBool(*e.where, "`where`");
    MarkNode(id, *e.where);
  }
  Unbind(e.binder);
  if (e.kind == SelectKind::kCount) return types_.Int();
  return types_.Optional(element);
}

TypeRef Checker::Elements(ExprId id, const std::vector<ExprId>& elements) {
  TypeRef common = nullptr;
  for (ExprId x : elements) {
    TypeRef t = Expr(x);
    MarkNode(id, x);
    TypeRef next = common == nullptr ? t : Unify(common, t);
    if (next == nullptr) {
      Mismatch(x, fmt::format("elements must share a type: `{}` among `{}`", ToString(t), ToString(common)));
      return types_.Error();
    }
    common = next;
  }
  return common == nullptr ? types_.String() : common;  // an empty literal is a collection of strings
}

TypeRef Checker::Visit(ExprId id, const SetLit& e) { return types_.Set(Elements(id, e.elements)); }
TypeRef Checker::Visit(ExprId id, const ListLit& e) { return types_.List(Elements(id, e.elements)); }

}  // namespace policy::sema
