#pragma once
/// The typed IR that back ends evaluate: one Program per policy file, one
/// Function per policy.
///
/// Nodes are final structs in a std::variant, held in an arena and named by
/// a 32-bit id; spans and types live in side tables. Names are resolved:
/// `let`s, `def` parameters and loop variables are slots; `def` calls are
/// inlined (each call gets its own parameter slots). Numbers are int64:
/// `int` as is, `quantity` in milli-units; an `int` used as a quantity goes
/// through an explicit IntToQuantity node. Arithmetic saturates at the int64
/// limits; division and remainder by zero give 0.
///
/// Evaluation order per node: a `let` slot is computed at its first use and
/// kept for the rest of that node; an argument slot is computed at each use;
/// loop slots are set by their loop.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/lang/builtins.h"
#include "compiler/lang/normalize.h"
#include "compiler/lang/schema.h"
#include "compiler/lang/types.h"
#include "support/source.h"

namespace policy::ir {

using NodeId = uint32_t;
using SlotId = uint32_t;

enum class ArithOp : uint8_t { kAdd, kSub, kMul, kDiv, kMod };
enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
/// The operator with its operands swapped: `a < b` is `b > a`.
constexpr CompareOp Mirror(CompareOp op) {
  switch (op) {
    case CompareOp::kLt: return CompareOp::kGt;
    case CompareOp::kLe: return CompareOp::kGe;
    case CompareOp::kGt: return CompareOp::kLt;
    case CompareOp::kGe: return CompareOp::kLe;
    default: return op;
  }
}

struct NoneConst final {};
struct BoolConst final { bool value; };
struct IntConst final { int64_t value; };  ///< int, or quantity in milli-units (see the node's type)
struct StringConst final { std::string value; };
struct PodRoot final {};
struct NodeRoot final {};
struct LoadField final { lang::FieldId field; NodeId object; };  ///< none when `object` is none
struct Index final { NodeId object; NodeId key; };
struct Local final { SlotId slot; };
struct Not final { NodeId operand; };
struct Negate final { NodeId operand; };
struct Arith final { ArithOp op; NodeId lhs; NodeId rhs; };
struct Compare final { CompareOp op; NodeId lhs; NodeId rhs; };  ///< false when an operand is none, except ==/!= none
struct Member final { NodeId element; NodeId collection; };      ///< `in`: element of a list/set, key of a map
struct And final { NodeId lhs; NodeId rhs; };                    ///< short-circuit
struct Or final { NodeId lhs; NodeId rhs; };
struct Coalesce final { NodeId value; NodeId fallback; };
struct Select final { NodeId condition; NodeId then_value; NodeId else_value; };
struct IntToQuantity final { NodeId operand; };
enum class LoopKind : uint8_t { kAny, kAll, kSum, kCount, kFirst };
/// A loop over a collection: binds `first` (element, or key) and `second`
/// (map value) per element; `body` is the condition or summand (absent for
/// `count` without `where`).
struct Loop final {
  LoopKind kind;
  NodeId collection;
  SlotId first;
  std::optional<SlotId> second;
  std::optional<NodeId> body;
};
struct MakeList final { std::vector<NodeId> elements; bool is_set; };
struct CallBuiltin final { lang::BuiltinId builtin; std::vector<NodeId> args; };  ///< receiver first for methods

// Nodes bound to a node table's dictionaries by the `bind-table` pass (see
// Program::table_version). They read the node; they have no operands.

/// Whether the node's value of label `key` is one of `domains`: the label
/// column's dictionary ids, ascending; 0 stands for "the node lacks the label".
struct LabelIn final {
  std::string key;
  std::vector<uint32_t> domains;
};
/// A loop over the node's taints whose body was decided per taint of the
/// dictionary: `taints` (ascending ids) are those for which it holds. `any`:
/// the node has one of them; `all`: every taint of the node is one; `count`:
/// how many it has; `first`: the first of them in the node's order (Taint?).
struct TaintScan final {
  LoopKind kind;
  std::vector<uint32_t> taints;
};

using Node = std::variant<NoneConst, BoolConst, IntConst, StringConst, PodRoot, NodeRoot, LoadField, Index, Local, Not,
                          Negate, Arith, Compare, Member, And, Or, Coalesce, Select, IntToQuantity, Loop, MakeList,
                          CallBuiltin, LabelIn, TaintScan>;

/// What a slot holds: a `let` (computed at first use, then kept for the
/// node), a `def` argument (computed at each use: it may read loop
/// variables that change between uses), or a loop variable set by its loop.
struct Slot {
  enum class Kind : uint8_t { kLet, kArgument, kLoop };
  std::string name;
  std::optional<NodeId> value;  ///< lets and arguments; absent for loop variables
  lang::TypeRef type;
  Kind kind = Kind::kLet;
};

/// A reason or detail message: literal text and interpolated values.
struct Message {
  struct Part {
    std::string text;
    std::optional<NodeId> value;
  };
  std::vector<Part> parts;
};

struct Filter {
  /// `filter for x in C: cond`: one failure per element where cond is false.
  std::optional<NodeId> each_collection;
  std::optional<SlotId> each_first, each_second;
  NodeId condition;
  Message reason;  ///< empty: the policy's name
  Message detail;
  /// A node it rejects is UnschedulableAndUnresolvable (`unresolvable` in
  /// the language): no eviction makes room there.
  bool unresolvable = false;
  /// A node it rejects ends the attempt (`aborts` in the language:
  /// kube-scheduler's Error status) when every filtering plugin before
  /// this one passes there: PluginContext::FilterError.
  bool aborts = false;
  Span span;
};

struct Score {
  NodeId value;
  lang::Normalize normalize;
  Span span;
};

struct Function {
  std::string name;
  std::string doc;
  int64_t weight = 1;
  std::optional<NodeId> when;
  std::vector<Filter> prefilters;  ///< kube-scheduler's PreFilter: see syntax::PrefilterDecl
  std::vector<Filter> filters;
  std::vector<Score> scores;
  std::vector<Slot> slots;
};

/// The IR of one policy file: node arena (with types and spans) and functions.
struct Program {
  const Source* source = nullptr;
  std::vector<Node> nodes;
  std::vector<lang::TypeRef> types;  ///< by NodeId
  std::vector<Span> spans;           ///< by NodeId
  std::vector<uint8_t> reads_node;   ///< by NodeId: varies per node
  std::vector<Function> functions;
  /// Set by `bind-table`: the dictionary version of the node table the
  /// LabelIn/TaintScan nodes were bound to. The program is valid for that
  /// table only while its dictionaries keep that version.
  std::optional<uint64_t> table_version;

  NodeId Add(Node node, lang::TypeRef type, Span span, bool reads_node);
};

/// The program as text (`policyc compile --emit=ir`).
std::string Print(const Program& program);
/// One node as Print() writes it, without its id: `add %3 %4 : int`.
std::string PrintNode(const Program& program, NodeId id);

/// Reads Print()'s output back (spans are lost; everything else round-trips),
/// so tests and `policyc compile FILE.ir` can start mid-pipeline. On bad
/// input returns nullopt and says where in `error`.
std::optional<Program> Parse(std::string_view text, lang::TypeTable& types, const lang::Schema& schema,
                             std::string* error);

/// Checks the program's invariants (ids in range, children defined before
/// parents, slots in range, types present); returns the problems found.
std::vector<std::string> Verify(const Program& program);

}  // namespace policy::ir
