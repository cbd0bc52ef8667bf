#pragma once
/// The AST of policy files: what the parser (parser.h) builds and sema reads.
///
/// Expressions are final structs in a std::variant, held in an arena and
/// named by a 32-bit id; their spans live in a side table keyed by id, so
/// structural equality and hashing can ignore positions (STYLE.md).

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "support/source.h"

namespace policy::syntax {

using ExprId = uint32_t;

enum class UnaryOp : uint8_t { kNeg, kNot };
enum class BinaryOp : uint8_t {
  kMul, kDiv, kMod, kAdd, kSub, kCoalesce, kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn, kAnd, kOr
};
enum class FoldKind : uint8_t { kAny, kAll, kSum };
enum class SelectKind : uint8_t { kCount, kFirst };

/// `x` or `(key, value)` in a quantifier or `filter for`.
struct Binder {
  std::string first;
  std::string second;  ///< empty for a single name
  Span span;
};

struct IntLit final { int64_t value; };
struct QuantityLit final { std::string text; };
struct StringLit final { std::string value; };
struct BoolLit final { bool value; };
struct NoneLit final {};
struct NameRef final { std::string name; };
struct FieldRef final { ExprId object; std::string field; };
struct IndexRef final { ExprId object; ExprId index; };
struct Call final { std::string callee; std::vector<ExprId> args; };
struct MethodCall final { ExprId object; std::string method; std::vector<ExprId> args; };
struct Unary final { UnaryOp op; ExprId operand; };
struct Binary final { BinaryOp op; ExprId lhs; ExprId rhs; };
struct IfElse final { ExprId condition; ExprId then_value; ExprId else_value; };
struct Fold final { FoldKind kind; Binder binder; ExprId collection; ExprId body; };
struct Select final { SelectKind kind; Binder binder; ExprId collection; std::optional<ExprId> where; };
struct SetLit final { std::vector<ExprId> elements; };
struct ListLit final { std::vector<ExprId> elements; };

using Expr = std::variant<IntLit, QuantityLit, StringLit, BoolLit, NoneLit, NameRef, FieldRef, IndexRef, Call,
                          MethodCall, Unary, Binary, IfElse, Fold, Select, SetLit, ListLit>;

/// Expressions of one file.
class ExprArena {
 public:
  ExprId Add(Expr expr, Span span) {
    exprs_.push_back(std::move(expr));
    spans_.push_back(span);
    return static_cast<ExprId>(exprs_.size() - 1);
  }
  const Expr& operator[](ExprId id) const { return exprs_[id]; }
  Span SpanOf(ExprId id) const { return spans_[id]; }
  size_t size() const { return exprs_.size(); }

 private:
  std::vector<Expr> exprs_;
  std::vector<Span> spans_;  // side table: spans never take part in equality
};

/// A reason or detail string: literal text and `{expr}` interpolations.
struct Template {
  struct Part {
    std::string text;             ///< literal text (when expr is absent)
    std::optional<ExprId> expr;  ///< an interpolated expression
  };
  std::vector<Part> parts;
  Span span;
};

struct LetDecl {
  std::string name;
  ExprId value;
  Span span;
};

/// A written type: `int`, `string?`, `list<Taint>`.
struct TypeExpr {
  std::string name;
  std::vector<TypeExpr> args;
  bool optional = false;
  Span span;
};

struct DefParam {
  std::string name;
  TypeExpr type;
};

struct DefDecl {
  std::string name;
  std::vector<DefParam> params;
  ExprId body;
  Span span;
};

struct FilterDecl {
  /// `filter for r in C: cond` fails once per element of C where cond is false.
  std::optional<Binder> each;
  std::optional<ExprId> each_collection;
  ExprId condition;
  std::optional<Template> reason;
  std::optional<Template> detail;
  /// `unresolvable`: a node this rejects is UnschedulableAndUnresolvable in
  /// kube-scheduler's terms: no eviction makes room (preemption skips it,
  /// the extender lists it in FailedAndUnresolvableNodes).
  bool unresolvable = false;
  /// `aborts`: a node this rejects ends the whole attempt, as a Filter
  /// returning kube-scheduler's Error status does (`running "PLUGIN" filter
  /// plugin: REASON`): the pod goes nowhere, whatever other nodes say.
  bool aborts = false;
  Span span;
};

/// kube-scheduler's PreFilter stage. A condition that does not read the node
/// decides for the pod: false rejects every node with this reason. One that
/// reads the node excludes the nodes where it is false: they carry this
/// reason first, and the policy's filters do not run on them.
struct PrefilterDecl {
  ExprId condition;
  std::optional<Template> reason;
  std::optional<Template> detail;
  bool unresolvable = false;  ///< as FilterDecl's
  Span span;
};

struct ScoreDecl {
  ExprId value;
  std::string normalize;  ///< empty: none
  Span normalize_span;
  Span span;
};

struct WhenDecl {
  ExprId condition;
  Span span;
};

struct WeightDecl {
  int64_t weight;
  Span span;
};

/// `param NAME: TYPE = DEFAULT`: a constant that a scheduler profile may set
/// (plugin args); the default is used otherwise.
struct ParamDecl {
  std::string name;
  TypeExpr type;
  ExprId default_value;
  Span span;
};

using Member = std::variant<LetDecl, ParamDecl, DefDecl, FilterDecl, PrefilterDecl, ScoreDecl, WhenDecl, WeightDecl>;

struct PolicyDecl {
  std::string name;
  Span name_span;
  std::string doc;
  std::vector<Member> members;  ///< in source order
  Span span;
};

/// One parsed policy file.
struct Module {
  const Source* source = nullptr;
  ExprArena exprs;
  std::vector<PolicyDecl> policies;
};

/// The AST as an indented S-expression (`policyc compile --emit=ast`).
std::string PrintModule(const Module& module);
std::string_view ToString(BinaryOp op);

}  // namespace policy::syntax
