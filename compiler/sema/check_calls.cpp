// Sema over calls: builtin functions and methods (stdlib/builtins.def) and
// the policy's own `def`s.

#include <fmt/format.h>

#include "compiler/cel/compile.h"
#include "compiler/sema/checker.h"
#include "support/suggest.h"

namespace policy::sema {

using namespace syntax;

TypeRef Checker::Visit(ExprId id, const Call& e) {
  for (DefInfo& def : defs_) {
    if (def.name == e.callee) return DefCall(id, def, e.args);
  }
  const Builtin* builtin = FindBuiltin(e.callee, BuiltinKind::kFunction);
  if (builtin == nullptr) {
    std::vector<std::string_view> names;
    for (const DefInfo& d : defs_) names.push_back(d.name);
    return UnknownCall(id, BuiltinKind::kFunction, e.callee, std::move(names), e.args);
  }
  return BuiltinCall(id, *builtin, nullptr, e.args);
}

TypeRef Checker::Visit(ExprId id, const MethodCall& e) {
  TypeRef receiver = Expr(e.object);
  MarkNode(id, e.object);
  const Builtin* builtin = FindBuiltin(e.method, BuiltinKind::kMethod);
  if (builtin == nullptr) return UnknownCall(id, BuiltinKind::kMethod, e.method, {}, e.args);
  return BuiltinCall(id, *builtin, receiver, e.args);
}

// Reports a call of a function or method that does not exist, suggesting the
// closest of `names` (the policy's defs) and the builtins of that kind.
TypeRef Checker::UnknownCall(ExprId id, BuiltinKind kind, std::string_view name, std::vector<std::string_view> names,
                             const std::vector<ExprId>& args) {
  for (const Builtin& b : Builtins()) {
    if (b.kind == kind) names.push_back(b.name);
  }
  bool function = kind == BuiltinKind::kFunction;
  Diagnostic& d = diags_.Error(DiagCode::kUnknownFunction, SpanOf(id),
                               fmt::format("unknown {} `{}`", function ? "function" : "method", name));
  std::string_view close = Closest(name, names);
  d.help = close.empty() ? fmt::format("{}: {}", function ? "functions here" : "methods", fmt::join(names, ", "))
                         : fmt::format("did you mean `{}`?", close);
  for (ExprId a : args) Expr(a);
  return types_.Error();
}

TypeRef Checker::BuiltinCall(ExprId id, const Builtin& builtin, TypeRef receiver, const std::vector<ExprId>& args) {
  std::vector<TypeRef> types;
  for (ExprId a : args) {
    types.push_back(Expr(a));
    MarkNode(id, a);
  }
  out_.builtin[id] = &builtin;
  if (builtin.reads == BuiltinReads::kCluster) out_.reads_node[id] = 1;  // known only at run time
  if (static_cast<int>(args.size()) != builtin.arity) {
    diags_.Error(DiagCode::kWrongArity, SpanOf(id),
                 fmt::format("`{}` takes {} argument{}, found {}", builtin.name, builtin.arity,
                             builtin.arity == 1 ? "" : "s", args.size()))
        .help = std::string(builtin.doc);
    return types_.Error();
  }
  for (TypeRef t : types) {
    if (t->kind == TypeKind::kError) return t;
  }
  if (receiver != nullptr && receiver->kind == TypeKind::kError) return receiver;
  auto bad_receiver = [&]() {
    return Mismatch(id, fmt::format("`.{}()` does not apply to a `{}`", builtin.name, ToString(receiver)),
                    std::string(builtin.doc));
  };
  switch (builtin.id) {
    case BuiltinId::kMax:
    case BuiltinId::kMin: {
      TypeRef common = Unify(types[0], types[1]);
      if (common == nullptr || !IsNumeric(common)) {
        return Mismatch(id, fmt::format("`{}` compares two numbers, found `{}` and `{}`", builtin.name,
                                        ToString(types[0]), ToString(types[1])));
      }
      return common;
    }
    case BuiltinId::kMulDiv: {
      bool same = (types[0]->kind == TypeKind::kQuantity) == (types[2]->kind == TypeKind::kQuantity);
      if (!IsNumeric(types[0]) || !IsNumeric(types[2]) || types[1]->kind != TypeKind::kInt || !same) {
        return Mismatch(id, fmt::format("`muldiv` takes (number, int, number of the same kind), found `{}`, `{}`, `{}`",
                                        ToString(types[0]), ToString(types[1]), ToString(types[2])),
                        std::string(builtin.doc));
      }
      return types_.Int();
    }
    case BuiltinId::kInterpolate: {
      TypeRef list_of_int = types_.List(types_.Int());
      if (types[0] != list_of_int || types[1] != list_of_int || types[2]->kind != TypeKind::kInt) {
        return Mismatch(id, fmt::format("`interpolate` takes (list<int>, list<int>, int), found `{}`, `{}`, `{}`",
                                        ToString(types[0]), ToString(types[1]), ToString(types[2])),
                        std::string(builtin.doc));
      }
      return types_.Int();
    }
    case BuiltinId::kLen: {
      TypeKind k = types[0]->kind;
      if (k != TypeKind::kList && k != TypeKind::kSet && k != TypeKind::kMap && k != TypeKind::kResources) {
        return Mismatch(args[0], fmt::format("`len` counts a list, set or map, found `{}`", ToString(types[0])));
      }
      return types_.Int();
    }
    case BuiltinId::kToInt:
    case BuiltinId::kToQuantity: {
      if (Unwrapped(receiver)->kind != TypeKind::kString) return bad_receiver();
      return types_.Optional(builtin.id == BuiltinId::kToInt ? types_.Int() : types_.Quantity());
    }
    case BuiltinId::kUnits:
    case BuiltinId::kMillis:
      if (receiver->kind != TypeKind::kQuantity && receiver->kind != TypeKind::kInt) return bad_receiver();
      return types_.Int();
    case BuiltinId::kStartsWith:
    case BuiltinId::kContains:
      if (Unwrapped(receiver)->kind != TypeKind::kString) return bad_receiver();
      if (!Assignable(types[0], types_.String())) {
        return Mismatch(args[0], fmt::format("`{}` takes a `string`, found `{}`", builtin.name, ToString(types[0])));
      }
      return types_.Bool();
    case BuiltinId::kPodsInDomain:
    case BuiltinId::kPodsWithKey:
    case BuiltinId::kPodMatches: {
      TypeRef t = types[0];
      bool terms = t->kind == TypeKind::kList && Unwrapped(t->element)->kind == TypeKind::kRecord &&
                   Unwrapped(t->element)->record->name == "PodAffinityTerm";  // absent terms are skipped
      if (!terms) {
        return Mismatch(args[0], fmt::format("`{}` takes a `list<PodAffinityTerm>`, found `{}`", builtin.name, ToString(t)),
                        std::string(builtin.doc));
      }
      if (builtin.id == BuiltinId::kPodMatches) return types_.Bool();
      if (!Assignable(types[1], types_.String())) {
        return Mismatch(args[1], fmt::format("a topology key is a `string`, found `{}`", ToString(types[1])));
      }
      return types_.Int();
    }
    case BuiltinId::kExistingAntiAffinity: return types_.Int();
    case BuiltinId::kClaimsFit: return types_.Int();
    case BuiltinId::kCel: return CelCall(id, args[0]);
    case BuiltinId::kClaimsError:
    case BuiltinId::kClaimsDetail: return types_.String();
    case BuiltinId::kExistingAffinityWeight:
      if (types[0]->kind != TypeKind::kInt) {
        return Mismatch(args[0], fmt::format("a weight is an `int`, found `{}`", ToString(types[0])));
      }
      if (types[1]->kind != TypeKind::kBool) {
        return Mismatch(args[1], fmt::format("`preferred` is a `bool`, found `{}`", ToString(types[1])));
      }
      return types_.Int();
    case BuiltinId::kSpreadCount:
    case BuiltinId::kSpreadMin:
    case BuiltinId::kSpreadSkew:
    case BuiltinId::kSpreadScoreCount:
    case BuiltinId::kSpreadWeight: {
      TypeRef t = Unwrapped(types[0]);
      if (t->kind != TypeKind::kRecord || t->record->name != "SpreadConstraint") {
        return Mismatch(args[0], fmt::format("`{}` takes a `SpreadConstraint`, found `{}`", builtin.name, ToString(types[0])),
                        std::string(builtin.doc));
      }
      return types_.Int();
    }
    case BuiltinId::kImageScore:
      if (!Assignable(types[0], types_.String())) {
        return Mismatch(args[0], fmt::format("an image is a `string`, found `{}`", ToString(types[0])),
                        std::string(builtin.doc));
      }
      return types_.Int();
    case BuiltinId::kNodesWithLabel:
    case BuiltinId::kClosestLabelKey:
      if (!Assignable(types[0], types_.String())) {
        return Mismatch(args[0], fmt::format("a label key is a `string`, found `{}`", ToString(types[0])),
                        std::string(builtin.doc));
      }
      return builtin.id == BuiltinId::kNodesWithLabel ? types_.Int() : types_.String();
    case BuiltinId::kHas:
      if (receiver->kind != TypeKind::kMap && receiver->kind != TypeKind::kResources) return bad_receiver();
      if (!Assignable(types[0], types_.String())) {
        return Mismatch(args[0], fmt::format("a key is a `string`, found `{}`", ToString(types[0])));
      }
      return types_.Bool();
  }
  return types_.Error();
}

TypeRef Checker::DefCall(ExprId id, DefInfo& def, const std::vector<ExprId>& args) {
  def.used = true;
  // Lowering copies the body here: what it makes counts at every call.
  inlined_ = std::min(inlined_ + def.inlined, kMaxInlined * 1000);
  if (inlined_ > kMaxInlined && !inlined_said_) {
    inlined_said_ = true;
    diags_.Error(DiagCode::kInlinedTooLarge, SpanOf(id),
                 fmt::format("with this call of `{}` inlined, the policy makes over {} expression nodes", def.name,
                             kMaxInlined),
                 "inlined here")
        .help = "a def is inlined at every call: a def that calls another twice doubles the size per level; "
                "compute the value once in a `let` and use it";
  }
  out_.def[id] = static_cast<int32_t>(def.member);
  out_.reads_node[id] = def.reads_node;
  if (args.size() != def.params.size()) {
    for (ExprId a : args) Expr(a);
    diags_.Error(DiagCode::kWrongArity, SpanOf(id),
                 fmt::format("`{}` takes {} argument{}, found {}", def.name, def.params.size(),
                             def.params.size() == 1 ? "" : "s", args.size()))
        .secondary.push_back({def.decl->span, "defined here"});
    return types_.Error();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    TypeRef t = Expr(args[i]);
    MarkNode(id, args[i]);
    if (!Assignable(t, def.params[i])) {
      Mismatch(args[i], fmt::format("`{}` takes a `{}` for `{}`, found `{}`", def.name, ToString(def.params[i]),
                                    def.decl->params[i].name, ToString(t)));
    }
  }
  return def.result;
}

}  // namespace policy::sema

namespace policy::sema {

// `cel "..."`: a CEL device selector, checked against kube's DRA environment
// as the allocator compiles one (compiler/cel), reading the innermost
// `Device` in scope (a loop variable or a `def` parameter).
TypeRef Checker::CelCall(ExprId id, ExprId text_id) {
  const auto* text = std::get_if<StringLit>(&module_.exprs[text_id]);
  if (text == nullptr) return Mismatch(text_id, "`cel` takes the selector as a string literal: `cel \"device.driver == 'x'\"`");
  out_.reads_node[id] = 1;  // the device is the node's
  Binding* device = nullptr;
  for (auto it = scope_.rbegin(); it != scope_.rend() && device == nullptr; ++it) {
    if (it->type->kind == TypeKind::kRecord && it->type->record->name == "Device") device = &*it;
  }
  bool ok = true;
  if (device == nullptr) {
    diags_.Error(DiagCode::kCelNoDevice, SpanOf(id), "`cel` reads a device, and no `Device` is in scope", "no device here")
        .help = "write it where a device is named: `any device in node.devices: cel \"device.driver == 'gpu.nvidia.com'\"`, "
                "or in a `def` with a `Device` parameter";
    ok = false;
  } else {
    out_.name[id] = device->target;
    device->used = true;
  }
  // Where the selector's bytes are in the file: exactly when the literal
  // holds them as written (no escapes); else the literal as a whole.
  Span literal = SpanOf(text_id);
  std::optional<uint32_t> base;
  if (literal.Valid() && literal.end >= literal.begin + 2) {
    std::string_view raw = literal.source->Text().substr(literal.begin + 1, literal.end - literal.begin - 2);
    if (raw == text->value) base = literal.begin + 1;
  }
  std::shared_ptr<const cel::Program> program = cel::Compile(text->value);
  for (const cel::Problem& p : program->problems) {
    Span at = literal;
    if (base) at = Span{literal.source, *base + p.begin, std::max(*base + p.end, *base + p.begin + 1)};
    if (base && at.end > literal.end - 1) at.end = std::max(at.begin, literal.end - 1);
    diags_.Error(p.syntax ? DiagCode::kCelSyntax : DiagCode::kCelType, at, p.message, p.syntax ? "not CEL" : "here")
        .help = "the selector is checked as kube checks a DeviceClass's or a claim's (the DRA CEL environment)";
    ok = false;
  }
  if (program->TooComplex()) {
    diags_.Error(DiagCode::kCelTooComplex, literal, cel::TooComplexMessage(program->cost), "this selector")
        .help = "kube refuses such a selector in a DeviceClass or a claim (`Forbidden: too complex, exceeds cost limit`); "
                "loop over fewer items, or test a shorter string";
    ok = false;
  }
  return ok ? types_.Bool() : types_.Error();
}

}  // namespace policy::sema
