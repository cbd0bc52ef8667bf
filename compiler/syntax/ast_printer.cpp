// The AST as an indented S-expression, for `policyc compile --emit=ast` and
// golden tests. One node per line; children indented by two spaces.

#include <fmt/format.h>

#include "compiler/syntax/ast.h"
#include "support/json_writer.h"

namespace policy::syntax {

std::string_view ToString(BinaryOp op) {
  static constexpr std::string_view kNames[] = {"*", "/", "%", "+", "-", "??", "==", "!=",
                                                "<", "<=", ">", ">=", "in", "not in", "and", "or"};
  return kNames[static_cast<size_t>(op)];
}

namespace {

class Printer {
 public:
  explicit Printer(const Module& m) : m_(m) {}

  std::string Run() {
    for (const PolicyDecl& p : m_.policies) Policy(p);
    return std::move(out_);
  }

 private:
  void Line(int depth, const std::string& text) { out_ += std::string(2 * depth, ' ') + text + '\n'; }

  static std::string BinderText(const Binder& b) {
    return b.second.empty() ? b.first : fmt::format("({}, {})", b.first, b.second);
  }

  void Policy(const PolicyDecl& p) {
    Line(0, fmt::format("(policy {}{}", p.name, p.doc.empty() ? "" : " " + JsonQuote(p.doc)));
    for (const Member& member : p.members) std::visit([&](const auto& d) { MemberOf(d); }, member);
    out_.back() = ')';
    out_ += '\n';
  }

  void MemberOf(const WeightDecl& d) { Line(1, fmt::format("(weight {})", d.weight)); }
  void MemberOf(const LetDecl& d) {
    Line(1, fmt::format("(let {}", d.name));
    Expr(d.value, 2);
    Close();
  }
  static std::string TypeText(const TypeExpr& t) {
    std::string out = t.name;
    if (!t.args.empty()) out += "<" + TypeText(t.args[0]) + ">";
    return out + (t.optional ? "?" : "");
  }

  void MemberOf(const ParamDecl& d) {
    Line(1, fmt::format("(param {}: {}", d.name, TypeText(d.type)));
    Expr(d.default_value, 2);
    Close();
  }
  void MemberOf(const DefDecl& d) {
    std::vector<std::string> params;
    for (const DefParam& p : d.params) params.push_back(p.name + ": " + TypeText(p.type));
    Line(1, fmt::format("(def {} ({})", d.name, fmt::join(params, ", ")));
    Expr(d.body, 2);
    Close();
  }
  void MemberOf(const FilterDecl& d) {
    Line(1, d.each ? fmt::format("(filter-each {}", BinderText(*d.each)) : "(filter");
    if (d.each_collection) Expr(*d.each_collection, 2);
    Expr(d.condition, 2);
    if (d.reason) TemplateOf("reason", *d.reason);
    if (d.detail) TemplateOf("detail", *d.detail);
    if (d.unresolvable) Line(2, "(unresolvable)");
    if (d.aborts) Line(2, "(aborts)");
    Close();
  }
  void MemberOf(const PrefilterDecl& d) {
    Line(1, "(prefilter");
    Expr(d.condition, 2);
    if (d.reason) TemplateOf("reason", *d.reason);
    if (d.detail) TemplateOf("detail", *d.detail);
    if (d.unresolvable) Line(2, "(unresolvable)");
    Close();
  }
  void MemberOf(const ScoreDecl& d) {
    Line(1, d.normalize.empty() ? "(score" : fmt::format("(score normalize={}", d.normalize));
    Expr(d.value, 2);
    Close();
  }
  void MemberOf(const WhenDecl& d) {
    Line(1, "(when");
    Expr(d.condition, 2);
    Close();
  }

  void TemplateOf(const char* what, const Template& t) {
    Line(2, fmt::format("({}", what));
    for (const Template::Part& part : t.parts) {
      if (part.expr) {
        Expr(*part.expr, 3);
      } else {
        Line(3, JsonQuote(part.text));
      }
    }
    Close();
  }

  void Close() {
    out_.pop_back();
    out_ += ")\n";
  }

  // Prints `head` and its children: on one line when short, else one
  // child per line, indented.
  void Expr(ExprId id, int depth) { Line(depth, Render(id, depth)); }

  std::string Group(const std::string& head, const std::vector<std::string>& children, int depth) {
    std::string flat = "(" + head;
    for (const std::string& c : children) flat += " " + c;
    flat += ")";
    bool multiline = false;
    for (const std::string& c : children) multiline |= c.find('\n') != std::string::npos;
    if (!multiline && flat.size() + 2 * depth <= 100) return flat;
    std::string out = "(" + head;
    std::string pad(2 * (depth + 1), ' ');
    for (const std::string& c : children) out += "\n" + pad + c;
    return out + ")";
  }

  std::string Render(ExprId id, int depth) {
    return std::visit([&](const auto& e) { return Node(e, depth); }, m_.exprs[id]);
  }
  std::vector<std::string> RenderAll(const std::vector<ExprId>& ids, int depth) {
    std::vector<std::string> out;
    for (ExprId x : ids) out.push_back(Render(x, depth + 1));
    return out;
  }

  std::string Node(const IntLit& e, int) { return fmt::format("{}", e.value); }
  std::string Node(const QuantityLit& e, int) { return fmt::format("(quantity {})", e.text); }
  std::string Node(const StringLit& e, int) { return JsonQuote(e.value); }
  std::string Node(const BoolLit& e, int) { return e.value ? "true" : "false"; }
  std::string Node(const NoneLit&, int) { return "none"; }
  std::string Node(const NameRef& e, int) { return e.name; }
  std::string Node(const FieldRef& e, int d) { return Group(". " + e.field, {Render(e.object, d + 1)}, d); }
  std::string Node(const IndexRef& e, int d) { return Group("[]", {Render(e.object, d + 1), Render(e.index, d + 1)}, d); }
  std::string Node(const Call& e, int d) { return Group("call " + e.callee, RenderAll(e.args, d), d); }
  std::string Node(const MethodCall& e, int d) {
    std::vector<std::string> children = {Render(e.object, d + 1)};
    for (const std::string& a : RenderAll(e.args, d)) children.push_back(a);
    return Group("method " + e.method, children, d);
  }
  std::string Node(const Unary& e, int d) {
    return Group(e.op == UnaryOp::kNeg ? "neg" : "not", {Render(e.operand, d + 1)}, d);
  }
  std::string Node(const Binary& e, int d) {
    return Group(std::string(ToString(e.op)), {Render(e.lhs, d + 1), Render(e.rhs, d + 1)}, d);
  }
  std::string Node(const IfElse& e, int d) {
    return Group("if", {Render(e.condition, d + 1), Render(e.then_value, d + 1), Render(e.else_value, d + 1)}, d);
  }
  std::string Node(const Fold& e, int d) {
    static constexpr const char* kNames[] = {"any", "all", "sum"};
    return Group(fmt::format("{} {}", kNames[static_cast<int>(e.kind)], BinderText(e.binder)),
                 {Render(e.collection, d + 1), Render(e.body, d + 1)}, d);
  }
  std::string Node(const Select& e, int d) {
    std::vector<std::string> children = {Render(e.collection, d + 1)};
    if (e.where) children.push_back(Render(*e.where, d + 1));
    return Group(fmt::format("{} {}", e.kind == SelectKind::kCount ? "count" : "first", BinderText(e.binder)),
                 children, d);
  }
  std::string Node(const SetLit& e, int d) { return Group("set", RenderAll(e.elements, d), d); }
  std::string Node(const ListLit& e, int d) { return Group("list", RenderAll(e.elements, d), d); }

  const Module& m_;
  std::string out_;
};

}  // namespace

std::string PrintModule(const Module& module) { return Printer(module).Run(); }

}  // namespace policy::syntax
