#pragma once
/// The checker behind Check() (internal to compiler/sema): scopes, the
/// current policy, and one method per kind of expression and member.

#include <string>
#include <vector>

#include "compiler/sema/check.h"

namespace policy::sema {

// The vocabulary the checker speaks in (compiler/lang).
using lang::Builtin;
using lang::BuiltinReads;
using lang::Builtins;
using lang::FindBuiltin;
using lang::FieldId;
using lang::Side;
using lang::BuiltinId;
using lang::BuiltinKind;
using lang::FieldSchema;
using lang::RecordSchema;
using lang::Schema;
using lang::TypeKind;
using lang::TypeRef;
using lang::TypeTable;
using lang::Normalize;
using lang::IsNumeric;
using lang::Unwrapped;

class Checker {
 public:
  Checker(const syntax::Module& module, TypeTable& types, const Schema& schema, DiagnosticSink& diags);
  std::optional<CheckedModule> Run();

  // --- expressions (check_expr.cpp) ---
  TypeRef Expr(syntax::ExprId id);

 private:
  struct Binding {
    std::string name;
    NameTarget target;
    TypeRef type;
    bool reads_node;
    Span span;
    bool used = false;
    bool warn_unused = false;
  };
  struct DefInfo {
    std::string name;
    size_t member;
    const syntax::DefDecl* decl;
    std::vector<TypeRef> params;
    TypeRef result;
    bool reads_node;
    bool used = false;
    uint64_t inlined = 0;  ///< expression nodes its body makes once inlined (its calls' bodies too)
  };

  // Members (check.cpp).
  void Policy(size_t index);
  void Member(CheckedPolicy& policy, size_t index, const syntax::Member& member);
  void Template(const syntax::Template& t);
  TypeRef ResolveType(const syntax::TypeExpr& t);
  bool IsConstant(syntax::ExprId id) const;
  bool Declare(const std::string& name, Span span);

  // Expressions (check_expr.cpp).
  TypeRef Visit(syntax::ExprId id, const syntax::IntLit&);
  TypeRef Visit(syntax::ExprId id, const syntax::QuantityLit&);
  TypeRef Visit(syntax::ExprId id, const syntax::StringLit&);
  TypeRef Visit(syntax::ExprId id, const syntax::BoolLit&);
  TypeRef Visit(syntax::ExprId id, const syntax::NoneLit&);
  TypeRef Visit(syntax::ExprId id, const syntax::NameRef&);
  TypeRef Visit(syntax::ExprId id, const syntax::FieldRef&);
  TypeRef Visit(syntax::ExprId id, const syntax::IndexRef&);
  TypeRef Visit(syntax::ExprId id, const syntax::Call&);
  TypeRef Visit(syntax::ExprId id, const syntax::MethodCall&);
  TypeRef Visit(syntax::ExprId id, const syntax::Unary&);
  TypeRef Visit(syntax::ExprId id, const syntax::Binary&);
  TypeRef Visit(syntax::ExprId id, const syntax::IfElse&);
  TypeRef Visit(syntax::ExprId id, const syntax::Fold&);
  TypeRef Visit(syntax::ExprId id, const syntax::Select&);
  TypeRef Visit(syntax::ExprId id, const syntax::SetLit&);
  TypeRef Visit(syntax::ExprId id, const syntax::ListLit&);
  TypeRef Arithmetic(syntax::ExprId id, const syntax::Binary& e, TypeRef lhs, TypeRef rhs);
  TypeRef Comparison(syntax::ExprId id, const syntax::Binary& e, TypeRef lhs, TypeRef rhs);
  TypeRef Elements(syntax::ExprId id, const std::vector<syntax::ExprId>& elements);

  // Loops: binds `binder` over a collection; pops with Unbind().
  bool Bind(syntax::ExprId owner, const syntax::Binder& binder, TypeRef collection, Span collection_span);
  void Unbind(const syntax::Binder& binder);
  // Calls (check_calls.cpp).
  TypeRef BuiltinCall(syntax::ExprId id, const Builtin& builtin, TypeRef receiver, const std::vector<syntax::ExprId>& args);
  TypeRef DefCall(syntax::ExprId id, DefInfo& def, const std::vector<syntax::ExprId>& args);
  TypeRef CelCall(syntax::ExprId id, syntax::ExprId text);
  TypeRef UnknownCall(syntax::ExprId id, BuiltinKind kind, std::string_view name, std::vector<std::string_view> names,
                      const std::vector<syntax::ExprId>& args);

  // Type helpers.
  bool Assignable(TypeRef from, TypeRef to) const;
  TypeRef Unify(TypeRef a, TypeRef b);
  TypeRef Expect(syntax::ExprId id, TypeRef want, std::string_view what);
  bool NeedBool(syntax::ExprId id, std::string_view what);
  TypeRef Mismatch(syntax::ExprId at, std::string message, std::string help = {});
  Span SpanOf(syntax::ExprId id) const { return module_.exprs.SpanOf(id); }
  void MarkNode(syntax::ExprId id, syntax::ExprId from) { out_.reads_node[id] |= out_.reads_node[from]; }
  const Binding* Lookup(std::string_view name);
  std::vector<std::string_view> VisibleNames() const;

  // Expression nodes the policy makes once its def calls are inlined, as
  // lowering will: bounded (kMaxInlined), said once where it passes.
  static constexpr uint64_t kMaxInlined = 100'000;
  uint64_t inlined_ = 0;
  bool inlined_said_ = false;

  const syntax::Module& module_;
  TypeTable& types_;
  const Schema& schema_;
  DiagnosticSink& diags_;
  CheckedModule out_;
  std::vector<Binding> scope_;
  std::vector<DefInfo> defs_;  // the current policy's, in order
};

}  // namespace policy::sema
