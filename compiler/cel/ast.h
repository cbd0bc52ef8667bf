#pragma once
/// The AST of a CEL expression (a DRA device selector), macros expanded.
///
/// Positions are byte offsets into the expression's text; the caller knows
/// where the text was written (k8s::CelSelector) and turns them into
/// file:line:col.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace policy::cel {

enum class ExprKind : uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kIdent,     ///< name
  kSelect,    ///< args[0].name
  kPresence,  ///< has(args[0].name)
  kIndex,     ///< args[0][args[1]]
  kCall,      ///< name(args...) or, with has_target, args[0].name(args[1...])
  kList,      ///< [args...]
  kMap,       ///< {args[0]: args[1], ...}
  /// A macro over a list or map: name is all, exists, exists_one, map or
  /// filter; var the loop variable; args[0] the range, args[1] the body
  /// (map with three arguments: args[1] the filter, args[2] the body).
  /// With var2 set, a two-variable comprehension (kube's
  /// TwoVarComprehensions): all, exists, exists_one, transformList,
  /// transformMap or transformMapEntry, var the index or key and var2 the
  /// element or value; a transform with a filter has it in args[1].
  kComprehension,
  kBind,  ///< cel.bind(var, args[0], args[1])
};

struct Expr {
  ExprKind kind = ExprKind::kNull;
  uint32_t begin = 0, end = 0;
  uint32_t at = 0;  ///< where problems point: an operator's or a call's own position, else begin
  bool bool_value = false;
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double double_value = 0;
  std::string text;  ///< string/bytes value, identifier, field, function or macro name
  std::string var;   ///< a comprehension's or bind's variable
  std::string var2;  ///< a two-variable comprehension's second variable
  bool has_target = false;
  std::vector<std::unique_ptr<Expr>> args;
};

using ExprPtr = std::unique_ptr<Expr>;

/// A problem with a CEL expression, at byte offsets of its text.
struct Problem {
  uint32_t begin = 0, end = 0;
  std::string message;
  bool syntax = false;  ///< a syntax problem (else a type problem)
};

}  // namespace policy::cel
