// Sema over policy members: weights, lets, defs, filters, scores, `when`,
// and unused-name lint. Expressions are in check_expr.cpp, calls in
// check_calls.cpp.

#include "compiler/sema/check.h"

#include <fmt/format.h>

#include "compiler/sema/checker.h"
#include "support/suggest.h"

namespace policy::sema {

using namespace syntax;

std::optional<CheckedModule> Check(const Module& module, TypeTable& types, const Schema& schema,
                                   DiagnosticSink& diags) {
  return Checker(module, types, schema, diags).Run();
}

Checker::Checker(const Module& module, TypeTable& types, const Schema& schema, DiagnosticSink& diags)
    : module_(module), types_(types), schema_(schema), diags_(diags) {
  size_t n = module.exprs.size();
  out_.module = &module;
  out_.type.assign(n, types.Error());
  out_.name.assign(n, {});
  out_.field.assign(n, nullptr);
  out_.builtin.assign(n, nullptr);
  out_.def.assign(n, -1);
  out_.reads_node.assign(n, 0);
}

std::optional<CheckedModule> Checker::Run() {
  size_t errors = diags_.ErrorCount();
  for (size_t i = 0; i < module_.policies.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (module_.policies[j].name == module_.policies[i].name) {
        Diagnostic& d = diags_.Error(DiagCode::kDuplicateName, module_.policies[i].name_span,
                                     fmt::format("a second policy named `{}`", module_.policies[i].name));
        d.secondary.push_back({module_.policies[j].name_span, "the first"});
      }
    }
    Policy(i);
  }
  if (diags_.ErrorCount() != errors) return std::nullopt;
  return std::move(out_);
}

void Checker::Policy(size_t index) {
  const PolicyDecl& decl = module_.policies[index];
  CheckedPolicy policy;
  policy.decl = index;
  scope_.clear();
  defs_.clear();
  inlined_ = 0;
  inlined_said_ = false;
  scope_.push_back({"pod", {NameTarget::Kind::kPod, 0}, schema_.PodType(), false, decl.name_span});
  scope_.push_back({"node", {NameTarget::Kind::kNode, 0}, schema_.NodeType(), true, decl.name_span});
  bool has_weight = false;
  for (size_t i = 0; i < decl.members.size(); ++i) {
    if (const auto* w = std::get_if<WeightDecl>(&decl.members[i])) {
      if (has_weight) {
        diags_.Error(DiagCode::kBadMember, w->span, fmt::format("policy `{}` gives its weight twice", decl.name));
      } else if (w->weight < 1) {
        diags_.Error(DiagCode::kBadMember, w->span, fmt::format("a weight must be at least 1, found {}", w->weight))
            .help = "weights multiply a policy's normalized score (0..100) in the sum that ranks nodes";
      }
      has_weight = true;
      policy.weight = w->weight;
      continue;
    }
    Member(policy, i, decl.members[i]);
  }
  for (const Binding& b : scope_) {
    if (b.warn_unused && !b.used) {
      diags_.Warning(DiagCode::kUnusedLet, b.span, fmt::format("`{}` is never used", b.name), "defined here");
    }
  }
  for (const DefInfo& d : defs_) {
    if (!d.used) diags_.Warning(DiagCode::kUnusedLet, d.decl->span, fmt::format("`{}` is never used", d.name));
  }
  out_.policies.push_back(std::move(policy));
}

bool Checker::Declare(const std::string& name, Span span) {
  for (const Binding& b : scope_) {
    if (b.name != name) continue;
    Diagnostic& d = diags_.Error(DiagCode::kDuplicateName, span, fmt::format("`{}` is already defined", name));
    if (b.target.kind == NameTarget::Kind::kPod || b.target.kind == NameTarget::Kind::kNode) {
      d.message = fmt::format("`{}` names the {} itself and cannot be redefined", name, name);
    } else {
      d.secondary.push_back({b.span, "defined here first"});
    }
    return false;
  }
  for (const DefInfo& def : defs_) {
    if (def.name == name) {
      diags_.Error(DiagCode::kDuplicateName, span, fmt::format("`{}` is already defined", name))
          .secondary.push_back({def.decl->span, "defined here first"});
      return false;
    }
  }
  return true;
}

TypeRef Checker::ResolveType(const TypeExpr& t) {
  TypeRef base = nullptr;
  if (t.name == "int") base = types_.Int();
  if (t.name == "bool") base = types_.Bool();
  if (t.name == "string") base = types_.String();
  if (t.name == "quantity") base = types_.Quantity();
  if (t.name == "resources") base = types_.Resources();
  if (t.name == "list" || t.name == "set" || t.name == "map") {
    if (t.args.size() != 1) {
      diags_.Error(DiagCode::kUnknownType, t.span, fmt::format("`{}` needs an element type, as in `{}<string>`", t.name, t.name));
      return types_.Error();
    }
    TypeRef element = ResolveType(t.args[0]);
    base = t.name == "list" ? types_.List(element) : t.name == "set" ? types_.Set(element) : types_.Map(element);
  }
  std::vector<std::string_view> names = {"int", "bool", "string", "quantity", "resources", "list", "set", "map"};
  for (const RecordSchema* r : schema_.Records()) {
    names.push_back(r->name);
    if (t.name == r->name) base = types_.Record(r);
  }
  if (base == nullptr) {
    Diagnostic& d = diags_.Error(DiagCode::kUnknownType, t.span, fmt::format("unknown type `{}`", t.name));
    std::string_view close = Closest(t.name, names);
    if (!close.empty()) d.help = fmt::format("did you mean `{}`?", close);
    return types_.Error();
  }
  return t.optional ? types_.Optional(base) : base;
}

void Checker::Template(const syntax::Template& t) {
  for (const syntax::Template::Part& part : t.parts) {
    if (!part.expr) continue;
    TypeRef type = Unwrapped(Expr(*part.expr));
    bool printable = type->kind == TypeKind::kBool || type->kind == TypeKind::kInt ||
                     type->kind == TypeKind::kQuantity || type->kind == TypeKind::kString ||
                     type->kind == TypeKind::kNone || type->kind == TypeKind::kError;
    if (!printable) {
      Mismatch(*part.expr, fmt::format("cannot print a `{}` in a message", ToString(type)),
               "interpolate a field of it instead, e.g. `{taint.key}`");
    }
  }
}

// Literals, and lists, sets and operators over them: what a param may default to.
bool Checker::IsConstant(ExprId id) const {
  const syntax::Expr& e = module_.exprs[id];
  if (std::holds_alternative<IntLit>(e) || std::holds_alternative<QuantityLit>(e) || std::holds_alternative<StringLit>(e) ||
      std::holds_alternative<BoolLit>(e) || std::holds_alternative<NoneLit>(e)) {
    return true;
  }
  if (const auto* u = std::get_if<Unary>(&e)) return IsConstant(u->operand);
  if (const auto* b = std::get_if<Binary>(&e)) return IsConstant(b->lhs) && IsConstant(b->rhs);
  const std::vector<ExprId>* elements = nullptr;
  if (const auto* l = std::get_if<ListLit>(&e)) elements = &l->elements;
  if (const auto* s = std::get_if<SetLit>(&e)) elements = &s->elements;
  if (elements == nullptr) return false;
  for (ExprId x : *elements) {
    if (!IsConstant(x)) return false;
  }
  return true;
}

void Checker::Member(CheckedPolicy& policy, size_t index, const syntax::Member& member) {
  if (const auto* let = std::get_if<LetDecl>(&member)) {
    TypeRef type = Expr(let->value);
    if (Declare(let->name, let->span)) {
      Binding b{let->name, {NameTarget::Kind::kLet, static_cast<uint32_t>(index)}, type,
                out_.reads_node[let->value] != 0, let->span};
      b.warn_unused = true;
      scope_.push_back(std::move(b));
    }
  } else if (const auto* param = std::get_if<ParamDecl>(&member)) {
    TypeRef declared = ResolveType(param->type);
    TypeRef type = Expr(param->default_value);
    if (!Assignable(type, declared)) {
      Mismatch(param->default_value, fmt::format("the default of `{}` must be a `{}`, found `{}`", param->name,
                                                 ToString(declared), ToString(type)));
    }
    if (!IsConstant(param->default_value)) {
      diags_.Error(DiagCode::kBadMember, SpanOf(param->default_value),
                   fmt::format("the default of `{}` must be a constant", param->name))
          .help = "a param is set by a scheduler profile; use a `let` for values computed from the pod or node";
    }
    policy.params.push_back({index, declared});
    if (Declare(param->name, param->span)) {
      Binding b{param->name, {NameTarget::Kind::kLet, static_cast<uint32_t>(index)}, declared, false, param->span};
      scope_.push_back(std::move(b));
    }
  } else if (const auto* def = std::get_if<DefDecl>(&member)) {
    bool declared = Declare(def->name, def->span);
    DefInfo info{def->name, index, def, {}, types_.Error(), false};
    size_t mark = scope_.size();
    for (size_t p = 0; p < def->params.size(); ++p) {
      TypeRef type = ResolveType(def->params[p].type);
      info.params.push_back(type);
      scope_.push_back({def->params[p].name, {NameTarget::Kind::kParam, static_cast<uint32_t>(p)}, type,
                        false, def->params[p].type.span});
    }
    out_.def_params[def] = info.params;
    uint64_t before = inlined_;
    info.result = Expr(def->body);
    info.inlined = inlined_ - before;  // its body, with the bodies of the defs it calls
    info.reads_node = out_.reads_node[def->body] != 0;
    scope_.resize(mark);
    if (declared) defs_.push_back(std::move(info));
  } else if (const auto* filter = std::get_if<FilterDecl>(&member)) {
    if (filter->each) {
      TypeRef collection = Expr(*filter->each_collection);
      // The binder's owner is the collection expression (there is no fold node).
      bool bound = Bind(*filter->each_collection, *filter->each, collection, SpanOf(*filter->each_collection));
      NeedBool(filter->condition, "a filter");
      if (filter->reason) Template(*filter->reason);
      if (filter->detail) Template(*filter->detail);
      if (bound) Unbind(*filter->each);
    } else {
      NeedBool(filter->condition, "a filter");
      if (filter->reason) Template(*filter->reason);
      if (filter->detail) Template(*filter->detail);
    }
    policy.filters.push_back(index);
  } else if (const auto* prefilter = std::get_if<PrefilterDecl>(&member)) {
    NeedBool(prefilter->condition, "a prefilter");
    if (prefilter->reason) Template(*prefilter->reason);
    if (prefilter->detail) Template(*prefilter->detail);
    policy.prefilters.push_back(index);
  } else if (const auto* score = std::get_if<ScoreDecl>(&member)) {
    TypeRef type = Expr(score->value);
    if (type->kind != TypeKind::kInt && type->kind != TypeKind::kError) {
      Mismatch(score->value, fmt::format("a score must be an `int`, found `{}`", ToString(type)),
               type->kind == TypeKind::kQuantity ? "divide by another quantity to get a ratio, e.g. `free * 100 / total`"
                                                 : "");
    }
    Normalize normalize = Normalize::kNone;
    if (!score->normalize.empty()) {
      static const std::vector<std::pair<std::string_view, Normalize>> kNames = {
          {"none", Normalize::kNone}, {"max", Normalize::kMax}, {"reverse", Normalize::kReverse}, {"minmax", Normalize::kMinMax}, {"spread", Normalize::kSpread}};
      bool found = false;
      for (auto [name, value] : kNames) {
        if (score->normalize == name) normalize = value, found = true;
      }
      if (!found) {
        Diagnostic& d = diags_.Error(DiagCode::kBadNormalize, score->normalize_span,
                                     fmt::format("unknown normalization `{}`", score->normalize));
        std::string_view close = Closest(score->normalize, {"none", "max", "reverse", "minmax", "spread"});
        d.help = close.empty() ? "use `none`, `max`, `reverse`, `minmax` or `spread`"
                               : fmt::format("did you mean `{}`? (one of `none`, `max`, `reverse`, `minmax`, `spread`)", close);
      }
    }
    policy.scores.push_back(index);
    policy.normalize.push_back(normalize);
  } else if (const auto* when = std::get_if<WhenDecl>(&member)) {
    NeedBool(when->condition, "`when`");
    if (out_.reads_node[when->condition]) {
      diags_.Error(DiagCode::kBadMember, SpanOf(when->condition), "`when` decides per pod, so it cannot read the node")
          .help = "move node conditions into a `filter`";
    }
    if (policy.when) {
      diags_.Error(DiagCode::kBadMember, when->span, "a policy has at most one `when`");
    }
    policy.when = when->condition;
  }
}

}  // namespace policy::sema
