// ExplainFalse (explain.h): follows the false branch of `&&` down to the
// comparison or call that decided it.

#include "compiler/cel/explain.h"

#include <fmt/format.h>

#include "compiler/cel/eval.h"

namespace policy::cel {
namespace {

// A short name for what an operand reads: the last field or key of a path
// into `device` (`memory` for device.capacity["d"].memory), else its kind.
std::string NameOf(const Expr& e) {
  if (e.kind == ExprKind::kSelect) return e.text;
  if (e.kind == ExprKind::kIndex && e.args[1]->kind == ExprKind::kString) return e.args[1]->text;
  if (e.kind == ExprKind::kCall && e.has_target) return NameOf(*e.args[0]);
  if (e.kind == ExprKind::kIdent) return e.text;
  return "the value";
}

std::string OperatorText(std::string_view f) {
  if (f == "@in") return "in";
  if (f.size() > 2 && f.front() == '_' && f.back() == '_') return std::string(f.substr(1, f.size() - 2));
  return std::string(f);
}

bool IsComparison(std::string_view f) {
  return f == "_<_" || f == "_<=_" || f == "_>_" || f == "_>=_" || f == "_==_" || f == "_!=_" || f == "@in";
}

}  // namespace

FalseBecause ExplainFalse(const Expr& expr, const DeviceInput& device) {
  const Expr* e = &expr;
  // Down `&&` to the false conjunct; through cel.bind's body.
  while (true) {
    if (e->kind == ExprKind::kCall && e->text == "_&&_") {
      Value left = EvaluateValue(*e->args[0], device);
      e = (left.kind == Value::Kind::kBool && !left.b) ? e->args[0].get() : e->args[1].get();
      continue;
    }
    break;
  }
  if (e->kind == ExprKind::kCall && !e->has_target && IsComparison(e->text) && e->args.size() == 2) {
    const Expr& left = *e->args[0];
    const Expr& right = *e->args[1];
    std::string op = OperatorText(e->text);
    // `x.compareTo(y) OP 0`: x against y.
    if (left.kind == ExprKind::kCall && left.has_target && left.text == "compareTo" && left.args.size() == 2 &&
        right.kind == ExprKind::kInt && right.int_value == 0) {
      Value have = EvaluateValue(*left.args[0], device);
      Value want = EvaluateValue(*left.args[1], device);
      return {fmt::format("{} {}", NameOf(*left.args[0]), Show(have)), fmt::format("{} {}", op, Show(want)), e->begin};
    }
    Value have = EvaluateValue(left, device);
    Value want = EvaluateValue(right, device);
    return {fmt::format("{} is {}", NameOf(left), Show(have)), fmt::format("{} {}", op, Show(want)), e->begin};
  }
  if (e->kind == ExprKind::kCall && e->has_target && e->args.size() == 2) {
    Value have = EvaluateValue(*e->args[0], device);
    Value want = EvaluateValue(*e->args[1], device);
    if (e->text == "isGreaterThan" || e->text == "isLessThan") {
      return {fmt::format("{} {}", NameOf(*e->args[0]), Show(have)),
              fmt::format("{} {}", e->text == "isGreaterThan" ? ">" : "<", Show(want)), e->begin};
    }
    return {fmt::format("{} is {}", NameOf(*e->args[0]), Show(have)), fmt::format("it to {} {}", e->text, Show(want)),
            e->begin};
  }
  return {"it does not match", "", e->begin};
}

}  // namespace policy::cel
