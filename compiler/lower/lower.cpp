#include "compiler/lower/lower.h"

#include <map>

#include "k8s/quantity.h"

namespace policy::lower {
namespace {

using namespace syntax;
using lang::TypeKind;
using lang::TypeRef;

class Lowerer {
 public:
  Lowerer(const sema::CheckedModule& checked, lang::TypeTable& types, const ParamValues* params)
      : checked_(checked), module_(*checked.module), types_(types), params_values_(params) {}

  ir::Program Run() {
    program_.source = module_.source;
    for (const sema::CheckedPolicy& policy : checked_.policies) Function(policy);
    return std::move(program_);
  }

 private:
  ir::NodeId Add(ir::Node node, TypeRef type, ExprId from) {
    return program_.Add(std::move(node), type, module_.exprs.SpanOf(from), checked_.reads_node[from] != 0);
  }

  TypeRef TypeOf(ExprId id) const { return checked_.type[id]; }

  // An int (or int?) where a quantity (or quantity?) is wanted gets converted.
  ir::NodeId Convert(ir::NodeId value, TypeRef to) {
    TypeRef from = program_.types[value];
    if (lang::Unwrapped(from)->kind == TypeKind::kInt && lang::Unwrapped(to)->kind == TypeKind::kQuantity) {
      TypeRef type = from->kind == TypeKind::kOptional ? types_.Optional(types_.Quantity()) : types_.Quantity();
      return program_.Add(ir::IntToQuantity{value}, type, program_.spans[value], program_.reads_node[value] != 0);
    }
    return value;
  }

  ir::SlotId NewSlot(std::string name, std::optional<ir::NodeId> value, TypeRef type,
                     ir::Slot::Kind kind = ir::Slot::Kind::kLet) {
    function_->slots.push_back({std::move(name), value, type, value ? kind : ir::Slot::Kind::kLoop});
    return static_cast<ir::SlotId>(function_->slots.size() - 1);
  }

  ir::Message MessageOf(const std::optional<syntax::Template>& t) {
    ir::Message m;
    if (!t) return m;
    for (const syntax::Template::Part& part : t->parts) {
      if (part.expr) {
        m.parts.push_back({{}, Expr(*part.expr)});
      } else {
        m.parts.push_back({part.text, std::nullopt});
      }
    }
    return m;
  }

  void Function(const sema::CheckedPolicy& policy) {
    const PolicyDecl& decl = module_.policies[policy.decl];
    ir::Function function;
    function.name = decl.name;
    function.doc = decl.doc;
    function.weight = policy.weight;
    program_.functions.push_back(std::move(function));
    function_ = &program_.functions.back();
    let_slots_.clear();
    defs_.clear();
    size_t score_index = 0;
    for (size_t i = 0; i < decl.members.size(); ++i) {
      const syntax::Member& member = decl.members[i];
      if (const auto* param = std::get_if<ParamDecl>(&member)) {
        TypeRef type = ParamType(policy, i);
        ir::NodeId value = Param(decl.name, *param, type);
        let_slots_[i] = NewSlot(param->name, value, type);
      } else if (const auto* let = std::get_if<LetDecl>(&member)) {
        ir::NodeId value = Expr(let->value);
        let_slots_[i] = NewSlot(let->name, value, TypeOf(let->value));
      } else if (const auto* def = std::get_if<DefDecl>(&member)) {
        defs_[i] = def;
      } else if (const auto* filter = std::get_if<FilterDecl>(&member)) {
        ir::Filter f;
        f.span = filter->span;
        if (filter->each) {
          f.each_collection = Expr(*filter->each_collection);
          BindLoop(*filter->each_collection, *filter->each, *f.each_collection, &f.each_first, &f.each_second);
        }
        f.condition = Expr(filter->condition);
        f.reason = MessageOf(filter->reason);
        f.detail = MessageOf(filter->detail);
        f.unresolvable = filter->unresolvable;
        f.aborts = filter->aborts;
        function_ = &program_.functions.back();
        function_->filters.push_back(std::move(f));
      } else if (const auto* prefilter = std::get_if<PrefilterDecl>(&member)) {
        ir::Filter f;
        f.span = prefilter->span;
        f.condition = Expr(prefilter->condition);
        f.reason = MessageOf(prefilter->reason);
        f.detail = MessageOf(prefilter->detail);
        f.unresolvable = prefilter->unresolvable;
        function_->prefilters.push_back(std::move(f));
      } else if (const auto* score = std::get_if<ScoreDecl>(&member)) {
        ir::NodeId value = Expr(score->value);
        function_ = &program_.functions.back();
        function_->scores.push_back({value, policy.normalize[score_index++], score->span});
      }
    }
    if (policy.when) program_.functions.back().when = Expr(*policy.when);
  }

  static TypeRef ParamType(const sema::CheckedPolicy& policy, size_t member) {
    for (const auto& [index, type] : policy.params) {
      if (index == member) return type;
    }
    return nullptr;
  }

  // A param's value: the profile's, when it sets one, else the default.
  ir::NodeId Param(const std::string& policy, const ParamDecl& param, TypeRef type) {
    const ParamValue* value = nullptr;
    for (const std::string& scope : {policy, std::string(kEveryPolicy)}) {
      if (params_values_ == nullptr || value != nullptr) break;
      if (auto p = params_values_->find(scope); p != params_values_->end()) {
        if (auto v = p->second.find(param.name); v != p->second.end()) value = &v->second;
      }
    }
    if (value == nullptr) return Convert(Expr(param.default_value), type);
    Span span = param.span;
    if (const auto* i = std::get_if<int64_t>(value)) {
      int64_t v = type->kind == TypeKind::kQuantity ? *i * 1000 : *i;
      return program_.Add(ir::IntConst{v}, type, span, false);
    }
    if (const auto* b = std::get_if<bool>(value)) return program_.Add(ir::BoolConst{*b}, type, span, false);
    if (const auto* s = std::get_if<std::string>(value)) return program_.Add(ir::StringConst{*s}, type, span, false);
    std::vector<ir::NodeId> elements;
    if (const auto* ints = std::get_if<std::vector<int64_t>>(value)) {
      for (int64_t x : *ints) elements.push_back(program_.Add(ir::IntConst{x}, types_.Int(), span, false));
    } else {
      for (const std::string& x : std::get<std::vector<std::string>>(*value)) {
        elements.push_back(program_.Add(ir::StringConst{x}, types_.String(), span, false));
      }
    }
    return program_.Add(ir::MakeList{std::move(elements), false}, type, span, false);
  }

  // Slots for a loop's names; recorded under the loop's owner expression.
  void BindLoop(ExprId owner, const Binder& binder, ir::NodeId collection, std::optional<ir::SlotId>* first,
                std::optional<ir::SlotId>* second) {
    TypeRef c = program_.types[collection];
    bool two = !binder.second.empty();
    TypeRef first_type = c->kind == TypeKind::kList && two ? types_.Int()  // `(i, x) in list`
                         : c->kind == TypeKind::kList || c->kind == TypeKind::kSet ? c->element
                                                                                   : types_.String();
    TypeRef second_type = c->kind == TypeKind::kMap || c->kind == TypeKind::kList ? c->element : types_.Quantity();
    *first = NewSlot(binder.first, std::nullopt, first_type);
    binder_first_[owner] = **first;
    if (!binder.second.empty()) {
      *second = NewSlot(binder.second, std::nullopt, second_type);
      binder_second_[owner] = **second;
    }
  }

  ir::NodeId Expr(ExprId id) {
    return std::visit([&](const auto& e) { return Visit(id, e); }, module_.exprs[id]);
  }

  ir::NodeId Visit(ExprId id, const IntLit& e) { return Add(ir::IntConst{e.value}, types_.Int(), id); }
  ir::NodeId Visit(ExprId id, const QuantityLit& e) {
    return Add(ir::IntConst{k8s::Quantity::Parse(e.text)->MilliValue()}, types_.Quantity(), id);
  }
  ir::NodeId Visit(ExprId id, const StringLit& e) { return Add(ir::StringConst{e.value}, types_.String(), id); }
  ir::NodeId Visit(ExprId id, const BoolLit& e) { return Add(ir::BoolConst{e.value}, types_.Bool(), id); }
  ir::NodeId Visit(ExprId id, const NoneLit&) { return Add(ir::NoneConst{}, types_.None(), id); }

  ir::NodeId Visit(ExprId id, const NameRef&) {
    const sema::NameTarget& target = checked_.name[id];
    if (target.kind == sema::NameTarget::Kind::kPod) return Add(ir::PodRoot{}, TypeOf(id), id);
    if (target.kind == sema::NameTarget::Kind::kNode) return Add(ir::NodeRoot{}, TypeOf(id), id);
    if (std::optional<ir::SlotId> slot = SlotOf(target)) return Add(ir::Local{*slot}, TypeOf(id), id);
    return Add(ir::NoneConst{}, types_.None(), id);
  }

  // The slot of a `let`, a `def` parameter or a loop variable.
  std::optional<ir::SlotId> SlotOf(const sema::NameTarget& target) const {
    switch (target.kind) {
      case sema::NameTarget::Kind::kLet: return let_slots_.at(target.index);
      case sema::NameTarget::Kind::kParam: return params_.back().at(target.index);
      case sema::NameTarget::Kind::kBinder: return binder_first_.at(target.index);
      case sema::NameTarget::Kind::kBinderValue: return binder_second_.at(target.index);
      default: return std::nullopt;
    }
  }


  ir::NodeId Visit(ExprId id, const FieldRef& e) {
    ir::NodeId object = Expr(e.object);
    return Add(ir::LoadField{checked_.field[id]->id, object}, TypeOf(id), id);
  }
  ir::NodeId Visit(ExprId id, const IndexRef& e) {
    ir::NodeId object = Expr(e.object);
    return Add(ir::Index{object, Expr(e.index)}, TypeOf(id), id);
  }

  ir::NodeId Visit(ExprId id, const Call& e) {
    if (checked_.def[id] >= 0) {
      const DefDecl& def = *defs_.at(static_cast<size_t>(checked_.def[id]));
      std::vector<ir::SlotId> slots;
      for (size_t i = 0; i < e.args.size(); ++i) {
        // A quantity parameter takes a converted int.
        TypeRef param_type = checked_.def_params.at(&def)[i];
        ir::NodeId arg = Convert(Expr(e.args[i]), param_type);
        slots.push_back(NewSlot(def.params[i].name, arg, param_type, ir::Slot::Kind::kArgument));
      }
      params_.push_back(slots);
      ir::NodeId body = Expr(def.body);
      params_.pop_back();
      return body;
    }
    return Builtin(id, nullptr, e.args);
  }

  ir::NodeId Visit(ExprId id, const MethodCall& e) { return Builtin(id, &e.object, e.args); }

  ir::NodeId Builtin(ExprId id, const ExprId* receiver, const std::vector<ExprId>& args) {
    std::vector<ir::NodeId> operands;
    if (receiver != nullptr) operands.push_back(Expr(*receiver));
    lang::BuiltinId builtin = checked_.builtin[id]->id;
    if (builtin == lang::BuiltinId::kCel) {  // `cel "..."` reads the Device sema found in scope: its first operand
      ir::SlotId device = SlotOf(checked_.name[id]).value();
      operands.push_back(Add(ir::Local{device}, function_->slots[device].type, id));
    }
    for (ExprId a : args) operands.push_back(Expr(a));
    if (builtin == lang::BuiltinId::kMax || builtin == lang::BuiltinId::kMin) {
      for (ir::NodeId& op : operands) op = Convert(op, TypeOf(id));
    }
    return Add(ir::CallBuiltin{builtin, std::move(operands)}, TypeOf(id), id);
  }

  ir::NodeId Visit(ExprId id, const Unary& e) {
    ir::NodeId operand = Expr(e.operand);
    if (e.op == UnaryOp::kNot) return Add(ir::Not{operand}, TypeOf(id), id);
    return Add(ir::Negate{operand}, TypeOf(id), id);
  }

  ir::NodeId Visit(ExprId id, const Binary& e) {
    ir::NodeId lhs = Expr(e.lhs);
    ir::NodeId rhs = Expr(e.rhs);
    TypeRef lt = program_.types[lhs], rt = program_.types[rhs];
    auto numeric_common = [&]() {
      if (lang::Unwrapped(lt)->kind == TypeKind::kQuantity || lang::Unwrapped(rt)->kind == TypeKind::kQuantity) {
        lhs = Convert(lhs, types_.Quantity());
        rhs = Convert(rhs, types_.Quantity());
      }
    };
    switch (e.op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
        numeric_common();
        return Add(ir::Arith{e.op == BinaryOp::kAdd ? ir::ArithOp::kAdd : ir::ArithOp::kSub, lhs, rhs}, TypeOf(id), id);
      case BinaryOp::kMul: return Add(ir::Arith{ir::ArithOp::kMul, lhs, rhs}, TypeOf(id), id);
      case BinaryOp::kDiv: return Add(ir::Arith{ir::ArithOp::kDiv, lhs, rhs}, TypeOf(id), id);
      case BinaryOp::kMod: return Add(ir::Arith{ir::ArithOp::kMod, lhs, rhs}, TypeOf(id), id);
      case BinaryOp::kAnd: return Add(ir::And{lhs, rhs}, TypeOf(id), id);
      case BinaryOp::kOr: return Add(ir::Or{lhs, rhs}, TypeOf(id), id);
      case BinaryOp::kCoalesce:
        lhs = Convert(lhs, TypeOf(id));
        rhs = Convert(rhs, TypeOf(id));
        return Add(ir::Coalesce{lhs, rhs}, TypeOf(id), id);
      case BinaryOp::kIn:
      case BinaryOp::kNotIn: {
        TypeRef c = rt;
        if ((c->kind == TypeKind::kList || c->kind == TypeKind::kSet) && c->element->kind == TypeKind::kQuantity) {
          lhs = Convert(lhs, types_.Quantity());
        }
        ir::NodeId member = Add(ir::Member{lhs, rhs}, types_.Bool(), id);
        return e.op == BinaryOp::kIn ? member : Add(ir::Not{member}, types_.Bool(), id);
      }
      default: {
        numeric_common();
        static constexpr std::pair<BinaryOp, ir::CompareOp> kOps[] = {
            {BinaryOp::kEq, ir::CompareOp::kEq}, {BinaryOp::kNe, ir::CompareOp::kNe}, {BinaryOp::kLt, ir::CompareOp::kLt},
            {BinaryOp::kLe, ir::CompareOp::kLe}, {BinaryOp::kGt, ir::CompareOp::kGt}, {BinaryOp::kGe, ir::CompareOp::kGe}};
        ir::CompareOp op = ir::CompareOp::kEq;
        for (auto [from, to] : kOps) {
          if (from == e.op) op = to;
        }
        return Add(ir::Compare{op, lhs, rhs}, TypeOf(id), id);
      }
    }
  }

  ir::NodeId Visit(ExprId id, const IfElse& e) {
    ir::NodeId c = Expr(e.condition);
    ir::NodeId t = Convert(Expr(e.then_value), TypeOf(id));
    ir::NodeId f = Convert(Expr(e.else_value), TypeOf(id));
    return Add(ir::Select{c, t, f}, TypeOf(id), id);
  }

  ir::NodeId Visit(ExprId id, const Fold& e) {
    ir::NodeId collection = Expr(e.collection);
    std::optional<ir::SlotId> first, second;
    BindLoop(id, e.binder, collection, &first, &second);
    ir::NodeId body = Expr(e.body);
    if (e.kind == FoldKind::kSum) body = Convert(body, TypeOf(id));
    ir::LoopKind kind = e.kind == FoldKind::kAny ? ir::LoopKind::kAny
                        : e.kind == FoldKind::kAll ? ir::LoopKind::kAll
                                                   : ir::LoopKind::kSum;
    return Add(ir::Loop{kind, collection, *first, second, body}, TypeOf(id), id);
  }

  ir::NodeId Visit(ExprId id, const syntax::Select& e) {
    ir::NodeId collection = Expr(e.collection);
    std::optional<ir::SlotId> first, second;
    BindLoop(id, e.binder, collection, &first, &second);
    std::optional<ir::NodeId> where;
    if (e.where) where = Expr(*e.where);
    ir::LoopKind kind = e.kind == SelectKind::kCount ? ir::LoopKind::kCount : ir::LoopKind::kFirst;
    return Add(ir::Loop{kind, collection, *first, second, where}, TypeOf(id), id);
  }

  ir::NodeId Elements(ExprId id, const std::vector<ExprId>& elements, bool is_set) {
    std::vector<ir::NodeId> nodes;
    for (ExprId x : elements) nodes.push_back(Convert(Expr(x), TypeOf(id)->element));
    return Add(ir::MakeList{std::move(nodes), is_set}, TypeOf(id), id);
  }
  ir::NodeId Visit(ExprId id, const SetLit& e) { return Elements(id, e.elements, true); }
  ir::NodeId Visit(ExprId id, const ListLit& e) { return Elements(id, e.elements, false); }

  const sema::CheckedModule& checked_;
  const Module& module_;
  lang::TypeTable& types_;
  const ParamValues* params_values_;
  ir::Program program_;
  ir::Function* function_ = nullptr;
  std::map<size_t, ir::SlotId> let_slots_;      // member index -> slot
  std::map<size_t, const DefDecl*> defs_;       // member index -> def
  std::vector<std::vector<ir::SlotId>> params_;  // inlined calls, innermost last
  std::map<ExprId, ir::SlotId> binder_first_, binder_second_;
};

}  // namespace

ir::Program Lower(const sema::CheckedModule& checked, lang::TypeTable& types, const ParamValues* params) {
  return Lowerer(checked, types, params).Run();
}

}  // namespace policy::lower
