#include "compiler/lower/cel_selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "k8s/quantity.h"

namespace policy::lower {

std::string DeviceAttributeKey(AttributeColumn type, std::string_view qualified_name) {
  static constexpr std::string_view kPrefix[] = {"s:", "i:", "b:", "v:", "v!:"};
  return std::string(kPrefix[static_cast<int>(type)]) + std::string(qualified_name);
}

std::string DeviceCapacityKey(std::string_view qualified_name) { return "c:" + std::string(qualified_name); }

namespace {

using cel::Expr;
using cel::ExprKind;
using ir::CompareOp;
using ir::Mirror;
using ir::NodeId;

// A constant operand: a string, an int, a bool, a quantity (milli-units)
// or a list of them.
struct Constant {
  enum class Kind : uint8_t { kString, kInt, kBool, kQuantity, kList };
  Kind kind = Kind::kString;
  std::string text;
  int64_t number = 0;  // int, bool (0/1), quantity in milli-units
  std::vector<Constant> list;
};

std::optional<CompareOp> OperatorOf(std::string_view f) {
  if (f == "_==_") return CompareOp::kEq;
  if (f == "_!=_") return CompareOp::kNe;
  if (f == "_<_") return CompareOp::kLt;
  if (f == "_<=_") return CompareOp::kLe;
  if (f == "_>_") return CompareOp::kGt;
  if (f == "_>=_") return CompareOp::kGe;
  return std::nullopt;
}

class SelectorLowerer {
 public:
  SelectorLowerer(lang::TypeTable& types, const lang::Schema& schema) : types_(types), schema_(schema) {}

  Expected<LoweredSelector> Run(const Expr& expr) {
    Expected<Lowered> b = Bool(expr);
    if (!b) return b.error();
    ir::Function f;
    f.name = "selector";
    ir::Filter error;
    error.condition = Not(b->err);
    error.reason.parts.push_back({"the selector failed", std::nullopt});
    ir::Filter match;
    match.condition = Or(b->value, b->err);
    match.reason.parts.push_back({"the selector is false", std::nullopt});
    f.filters = {std::move(error), std::move(match)};
    program_.functions.push_back(std::move(f));
    std::sort(capacities_.begin(), capacities_.end());
    capacities_.erase(std::unique(capacities_.begin(), capacities_.end()), capacities_.end());
    return LoweredSelector{std::move(program_), std::move(capacities_)};
  }

 private:
  // A bool's value and whether evaluating it failed (then `value` is moot).
  struct Lowered {
    NodeId value;
    NodeId err;
  };
  // What an operand of a comparison is.
  struct Operand {
    enum class Kind : uint8_t { kConstant, kDriver, kAttribute, kCapacity, kCapacityCompare };
    Kind kind = Kind::kConstant;
    Constant constant;
    std::string name;       // qualified attribute or capacity name
    int64_t against = 0;    // kCapacityCompare: the quantity compared with, milli-units
  };

  static Error Unsupported(const Expr& e, std::string_view what) {
    return Error{fmt::format("{} (at offset {}) is not compiled", what, e.at)};
  }

  // --- IR building -------------------------------------------------------

  NodeId Add(ir::Node node, lang::TypeRef type, bool reads) { return program_.Add(std::move(node), type, Span{}, reads); }
  bool Reads(NodeId id) const { return program_.reads_node[id] != 0; }
  std::optional<bool> ConstantBool(NodeId id) const {
    const auto* b = std::get_if<ir::BoolConst>(&program_.nodes[id]);
    return b ? std::optional<bool>(b->value) : std::nullopt;
  }

  NodeId BoolConst(bool v) { return Add(ir::BoolConst{v}, types_.Bool(), false); }
  NodeId String(std::string v) { return Add(ir::StringConst{std::move(v)}, types_.String(), false); }
  NodeId Int(int64_t v, bool quantity = false) {
    return Add(ir::IntConst{v}, quantity ? types_.Quantity() : types_.Int(), false);
  }
  NodeId Not(NodeId x) {
    if (std::optional<bool> c = ConstantBool(x)) return BoolConst(!*c);
    return Add(ir::Not{x}, types_.Bool(), Reads(x));
  }
  NodeId And(NodeId a, NodeId b) {
    if (std::optional<bool> c = ConstantBool(a)) return *c ? b : a;
    if (std::optional<bool> c = ConstantBool(b)) return *c ? a : b;
    return Add(ir::And{a, b}, types_.Bool(), true);
  }
  NodeId Or(NodeId a, NodeId b) {
    if (std::optional<bool> c = ConstantBool(a)) return *c ? a : b;
    if (std::optional<bool> c = ConstantBool(b)) return *c ? b : a;
    return Add(ir::Or{a, b}, types_.Bool(), true);
  }
  NodeId Select(NodeId c, NodeId a, NodeId b) {
    return Add(ir::Select{c, a, b}, program_.types[a], Reads(c) || Reads(a) || Reads(b));
  }

  NodeId Node() {
    if (!node_) node_ = Add(ir::NodeRoot{}, schema_.NodeType(), true);
    return *node_;
  }
  NodeId Labels() {
    if (!labels_) labels_ = Add(ir::LoadField{lang::FieldId::kNodeLabels, Node()}, types_.Map(types_.String()), true);
    return *labels_;
  }
  NodeId Label(std::string key) { return Add(ir::Index{Labels(), String(std::move(key))}, types_.Optional(types_.String()), true); }
  NodeId HasLabel(std::string key) { return Add(ir::Member{String(std::move(key)), Labels()}, types_.Bool(), true); }
  NodeId LabelIs(std::string key, std::string value) {
    return Add(ir::Compare{CompareOp::kEq, Label(std::move(key)), String(std::move(value))}, types_.Bool(), true);
  }
  NodeId LabelIn(std::string key, const std::vector<std::string>& values) {
    if (values.empty()) return BoolConst(false);
    std::vector<NodeId> elements;
    for (const std::string& v : values) elements.push_back(String(v));
    NodeId list = Add(ir::MakeList{std::move(elements), false}, types_.List(types_.String()), false);
    return Add(ir::Member{Label(std::move(key)), list}, types_.Bool(), true);
  }
  NodeId Capacity(const std::string& name) {
    capacities_.push_back(name);
    NodeId map = Add(ir::LoadField{lang::FieldId::kNodeAllocatable, Node()}, types_.Resources(), true);
    return Add(ir::Index{map, String(name)}, types_.Quantity(), true);
  }

  // Whether the device has the attribute, of any type (a version that
  // does not parse is in both version columns).
  NodeId AttributePresent(const std::string& name) {
    NodeId present = BoolConst(false);
    for (AttributeColumn t : {AttributeColumn::kString, AttributeColumn::kInt, AttributeColumn::kBool, AttributeColumn::kVersion}) {
      present = Or(present, HasLabel(DeviceAttributeKey(t, name)));
    }
    return present;
  }
  // Reading the attribute fails: it is absent, or a version that does not
  // parse (CEL reads that as an error; has() is still true).
  NodeId AttributeMissing(const std::string& name) {
    return Or(Not(AttributePresent(name)), HasLabel(DeviceAttributeKey(AttributeColumn::kBadVersion, name)));
  }

  // --- operands ----------------------------------------------------------

  static bool IsDevice(const Expr& e) { return e.kind == ExprKind::kIdent && e.text == "device"; }

  // device.attributes / device.capacity
  static std::optional<std::string> DeviceMap(const Expr& e) {
    if (e.kind == ExprKind::kSelect && IsDevice(*e.args[0]) && (e.text == "attributes" || e.text == "capacity")) return e.text;
    return std::nullopt;
  }

  // A constant key: `"x"` in an index, or the field's name.
  static std::optional<std::string> Key(const Expr& e, bool index) {
    if (!index) return e.text;
    if (e.args[1]->kind == ExprKind::kString) return e.args[1]->text;
    return std::nullopt;
  }

  // device.<map>[D].N (or .D, or [N]; or inside has()): the map and the
  // qualified name.
  static std::optional<std::pair<std::string, std::string>> Entry(const Expr& e) {
    if (e.kind != ExprKind::kSelect && e.kind != ExprKind::kIndex && e.kind != ExprKind::kPresence) return std::nullopt;
    const Expr& domain = *e.args[0];
    if (domain.kind != ExprKind::kSelect && domain.kind != ExprKind::kIndex) return std::nullopt;
    std::optional<std::string> map = DeviceMap(*domain.args[0]);
    std::optional<std::string> d = Key(domain, domain.kind == ExprKind::kIndex);
    std::optional<std::string> n = Key(e, e.kind == ExprKind::kIndex);
    if (!map || !d || !n) return std::nullopt;
    return std::make_pair(*map, *d + "/" + *n);
  }

  static std::optional<Constant> ConstantOf(const Expr& e) {
    Constant c;
    switch (e.kind) {
      case ExprKind::kString: c.text = e.text; return c;
      case ExprKind::kInt: c.kind = Constant::Kind::kInt; c.number = e.int_value; return c;
      case ExprKind::kBool: c.kind = Constant::Kind::kBool; c.number = e.bool_value; return c;
      case ExprKind::kList:
        c.kind = Constant::Kind::kList;
        for (const auto& element : e.args) {
          std::optional<Constant> x = ConstantOf(*element);
          if (!x || x->kind == Constant::Kind::kList) return std::nullopt;
          c.list.push_back(std::move(*x));
        }
        return c;
      case ExprKind::kCall: {
        if (e.has_target || e.text != "quantity" || e.args.size() != 1 || e.args[0]->kind != ExprKind::kString) return std::nullopt;
        std::optional<int64_t> milli = ExactMilli(e.args[0]->text);
        if (!milli) return std::nullopt;
        c.kind = Constant::Kind::kQuantity;
        c.number = *milli;
        return c;
      }
      default: return std::nullopt;
    }
  }

  // `text` as a quantity in milli-units when that is exact.
  static std::optional<int64_t> ExactMilli(std::string_view text) {
    std::optional<k8s::Quantity> q = k8s::Quantity::Parse(text);
    if (!q || q->nanos() % 1000000 != 0) return std::nullopt;
    k8s::Quantity::Nanos milli = q->nanos() / 1000000;
    if (milli > INT64_MAX || milli < -INT64_MAX) return std::nullopt;
    return static_cast<int64_t>(milli);
  }

  std::optional<Operand> OperandOf(const Expr& e) {
    Operand o;
    if (std::optional<Constant> c = ConstantOf(e)) {
      o.constant = std::move(*c);
      return o;
    }
    if (e.kind == ExprKind::kSelect && IsDevice(*e.args[0]) && e.text == "driver") {
      o.kind = Operand::Kind::kDriver;
      return o;
    }
    if (auto entry = Entry(e)) {
      o.kind = entry->first == "attributes" ? Operand::Kind::kAttribute : Operand::Kind::kCapacity;
      o.name = entry->second;
      return o;
    }
    // device.capacity[D].N.compareTo(quantity("..."))
    if (e.kind == ExprKind::kCall && e.has_target && e.text == "compareTo" && e.args.size() == 2) {
      auto entry = Entry(*e.args[0]);
      std::optional<Constant> q = ConstantOf(*e.args[1]);
      if (entry && entry->first == "capacity" && q && q->kind == Constant::Kind::kQuantity) {
        o.kind = Operand::Kind::kCapacityCompare;
        o.name = entry->second;
        o.against = q->number;
        return o;
      }
    }
    return std::nullopt;
  }

  // --- bools -------------------------------------------------------------

  Expected<Lowered> Bool(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kBool: return Lowered{BoolConst(e.bool_value), BoolConst(false)};
      case ExprKind::kPresence: return Presence(e);
      case ExprKind::kCall: return Call(e);
      case ExprKind::kSelect:
      case ExprKind::kIndex: {
        auto entry = Entry(e);
        if (!entry || entry->first != "attributes") return Unsupported(e, "this selection");
        // An attribute used as a bool: an error unless it is a bool.
        std::string key = DeviceAttributeKey(AttributeColumn::kBool, entry->second);
        return Lowered{LabelIs(key, "true"), Not(HasLabel(key))};
      }
      default: return Unsupported(e, "this expression");
    }
  }

  Expected<Lowered> Presence(const Expr& e) {
    // has(device.attributes[D].N): Presence of a select whose operand is the domain.
    auto entry = Entry(e);
    if (!entry) return Unsupported(e, "this has()");
    if (entry->first == "capacity") return Lowered{HasLabel(DeviceCapacityKey(entry->second)), BoolConst(false)};
    return Lowered{AttributePresent(entry->second), BoolConst(false)};
  }

  Expected<Lowered> Call(const Expr& e) {
    const std::string& f = e.text;
    if (!e.has_target && (f == "_&&_" || f == "_||_")) {
      Expected<Lowered> a = Bool(*e.args[0]);
      if (!a) return a;
      Expected<Lowered> b = Bool(*e.args[1]);
      if (!b) return b;
      // The side that decides: false for &&, true for ||, without an error.
      bool is_and = f == "_&&_";
      auto decides = [&](const Lowered& x) { return And(Not(x.err), is_and ? Not(x.value) : x.value); };
      NodeId decided = Or(decides(*a), decides(*b));
      NodeId err = And(Not(decided), Or(a->err, b->err));
      return Lowered{is_and ? Not(decided) : decided, err};
    }
    if (!e.has_target && f == "!_") {
      Expected<Lowered> a = Bool(*e.args[0]);
      if (!a) return a;
      return Lowered{Not(a->value), a->err};
    }
    if (!e.has_target && f == "_?_:_") {
      Expected<Lowered> c = Bool(*e.args[0]);
      if (!c) return c;
      Expected<Lowered> x = Bool(*e.args[1]);
      if (!x) return x;
      Expected<Lowered> y = Bool(*e.args[2]);
      if (!y) return y;
      return Lowered{Select(c->value, x->value, y->value), Or(c->err, Select(c->value, x->err, y->err))};
    }
    if (!e.has_target && f == "@in") return In(e);
    if (e.has_target && (f == "isGreaterThan" || f == "isLessThan") && e.args.size() == 2) {
      auto entry = Entry(*e.args[0]);
      std::optional<Constant> q = ConstantOf(*e.args[1]);
      if (!entry || entry->first != "capacity" || !q || q->kind != Constant::Kind::kQuantity) return Unsupported(e, f + "()");
      CompareOp op = f == "isGreaterThan" ? CompareOp::kGt : CompareOp::kLt;
      NodeId v = Add(ir::Compare{op, Capacity(entry->second), Int(q->number, true)}, types_.Bool(), true);
      return Lowered{v, Not(HasLabel(DeviceCapacityKey(entry->second)))};
    }
    if (std::optional<CompareOp> op = OperatorOf(f); op && !e.has_target) {
      std::optional<Operand> a = OperandOf(*e.args[0]);
      std::optional<Operand> b = OperandOf(*e.args[1]);
      if (!a || !b) return Unsupported(e, "this comparison");
      if (a->kind == Operand::Kind::kConstant) {
        std::swap(a, b);
        *op = Mirror(*op);
      }
      if (a->kind == Operand::Kind::kConstant || b->kind != Operand::Kind::kConstant) return Unsupported(e, "this comparison");
      return Compare(e, *op, *a, b->constant);
    }
    return Unsupported(e, fmt::format("`{}`", f));
  }

  // `operand op constant`.
  Expected<Lowered> Compare(const Expr& e, CompareOp op, const Operand& operand, const Constant& c) {
    bool equality = op == CompareOp::kEq || op == CompareOp::kNe;
    auto negated = [&](Lowered l) { return op == CompareOp::kNe ? Lowered{Not(l.value), l.err} : l; };
    switch (operand.kind) {
      case Operand::Kind::kDriver:
        if (!equality) return Unsupported(e, "ordering a driver");
        if (c.kind != Constant::Kind::kString) return negated({BoolConst(false), BoolConst(false)});
        return negated({LabelIs(std::string(kDeviceDriverKey), c.text), BoolConst(false)});
      case Operand::Kind::kAttribute: {
        NodeId missing = AttributeMissing(operand.name);
        if (equality) {
          std::optional<std::pair<AttributeColumn, std::string>> label = AsLabel(c);
          if (!label) return Unsupported(e, "comparing an attribute with this constant");
          return negated({LabelIs(DeviceAttributeKey(label->first, operand.name), label->second), missing});
        }
        if (c.kind != Constant::Kind::kInt) return Unsupported(e, "ordering an attribute but by an int");
        std::string key = DeviceAttributeKey(AttributeColumn::kInt, operand.name);
        NodeId number = Add(ir::CallBuiltin{lang::BuiltinId::kToInt, {Label(key)}}, types_.Optional(types_.Int()), true);
        NodeId v = Add(ir::Compare{op, number, Int(c.number)}, types_.Bool(), true);
        return Lowered{v, Not(HasLabel(key))};
      }
      case Operand::Kind::kCapacity: {
        NodeId missing = Not(HasLabel(DeviceCapacityKey(operand.name)));
        if (!equality) return Lowered{BoolConst(false), BoolConst(true)};  // quantities have no <: no such overload
        if (c.kind != Constant::Kind::kQuantity) return negated({BoolConst(false), missing});
        NodeId v = Add(ir::Compare{CompareOp::kEq, Capacity(operand.name), Int(c.number, true)}, types_.Bool(), true);
        return negated({v, missing});
      }
      case Operand::Kind::kCapacityCompare: {
        // compareTo's -1, 0 or 1 against an int; other constants are unequal
        // (==) or no overload (<).
        NodeId missing = Not(HasLabel(DeviceCapacityKey(operand.name)));
        if (c.kind != Constant::Kind::kInt) {
          if (equality) return negated({BoolConst(false), missing});
          return Lowered{BoolConst(false), BoolConst(true)};
        }
        NodeId capacity = Capacity(operand.name);
        NodeId against = Int(operand.against, true);
        NodeId less = Add(ir::Compare{CompareOp::kLt, capacity, against}, types_.Bool(), true);
        NodeId more = Add(ir::Compare{CompareOp::kGt, capacity, against}, types_.Bool(), true);
        NodeId sign = Select(less, Int(-1), Select(more, Int(1), Int(0)));
        NodeId v = Add(ir::Compare{op, sign, Int(c.number)}, types_.Bool(), true);
        return Lowered{v, missing};
      }
      case Operand::Kind::kConstant: break;
    }
    return Unsupported(e, "this comparison");
  }

  // A scalar constant as the label an equal attribute has.
  static std::optional<std::pair<AttributeColumn, std::string>> AsLabel(const Constant& c) {
    switch (c.kind) {
      case Constant::Kind::kString: return std::make_pair(AttributeColumn::kString, c.text);
      case Constant::Kind::kInt: return std::make_pair(AttributeColumn::kInt, std::to_string(c.number));
      case Constant::Kind::kBool: return std::make_pair(AttributeColumn::kBool, std::string(c.number ? "true" : "false"));
      default: return std::nullopt;
    }
  }

  Expected<Lowered> In(const Expr& e) {
    std::optional<Operand> element = OperandOf(*e.args[0]);
    std::optional<Constant> list = ConstantOf(*e.args[1]);
    if (!element || !list || list->kind != Constant::Kind::kList) return Unsupported(e, "this `in`");
    if (element->kind == Operand::Kind::kDriver) {
      std::vector<std::string> values;
      for (const Constant& c : list->list) {
        if (c.kind == Constant::Kind::kString) values.push_back(c.text);
      }
      return Lowered{LabelIn(std::string(kDeviceDriverKey), values), BoolConst(false)};
    }
    if (element->kind != Operand::Kind::kAttribute) return Unsupported(e, "this `in`");
    std::vector<std::string> by_type[3];
    for (const Constant& c : list->list) {
      std::optional<std::pair<AttributeColumn, std::string>> label = AsLabel(c);
      if (!label) return Unsupported(e, "this `in` list");
      by_type[static_cast<int>(label->first)].push_back(label->second);
    }
    NodeId v = BoolConst(false);
    for (AttributeColumn t : {AttributeColumn::kString, AttributeColumn::kInt, AttributeColumn::kBool}) {
      v = Or(v, LabelIn(DeviceAttributeKey(t, element->name), by_type[static_cast<int>(t)]));
    }
    return Lowered{v, AttributeMissing(element->name)};
  }

  lang::TypeTable& types_;
  const lang::Schema& schema_;
  ir::Program program_;
  std::optional<NodeId> node_, labels_;
  std::vector<std::string> capacities_;
};

}  // namespace

Expected<LoweredSelector> LowerSelector(const cel::Expr& expr, lang::TypeTable& types, const lang::Schema& schema) {
  return SelectorLowerer(types, schema).Run(expr);
}

}  // namespace policy::lower
