#pragma once
/// Sema: names, types and lint for parsed policy files.
///
/// Check() resolves every name (pod, node, let, def parameter, loop
/// variable), types every expression (types.h), resolves fields against the
/// schema and calls against the builtin table and the policy's `def`s, and
/// reports each problem as a diagnostic with a span, a stable code and help.
/// Lowering to IR reads the CheckedModule.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/lang/builtins.h"
#include "compiler/lang/normalize.h"
#include "compiler/lang/schema.h"
#include "compiler/lang/types.h"
#include "support/diagnostic.h"
#include "compiler/syntax/ast.h"

namespace policy::sema {

/// What a NameRef refers to.
struct NameTarget {
  enum class Kind : uint8_t { kNone, kPod, kNode, kLet, kParam, kBinder, kBinderValue };
  Kind kind = Kind::kNone;
  uint32_t index = 0;  ///< kLet: member index; kParam: parameter index; kBinder*: the binding expression's id
};

struct CheckedPolicy {
  size_t decl = 0;       ///< index into Module::policies
  int64_t weight = 1;
  std::optional<syntax::ExprId> when;
  std::vector<size_t> filters;  ///< member indexes, in order
  std::vector<size_t> prefilters;
  std::vector<size_t> scores;
  std::vector<lang::Normalize> normalize;  ///< per score
  std::vector<std::pair<size_t, lang::TypeRef>> params;  ///< `param` members: member index, declared type
};

struct CheckedModule {
  const syntax::Module* module = nullptr;
  std::vector<lang::TypeRef> type;                 ///< by ExprId
  std::vector<NameTarget> name;              ///< by ExprId (NameRef)
  std::vector<const lang::FieldSchema*> field;     ///< by ExprId (FieldRef)
  std::vector<const lang::Builtin*> builtin;       ///< by ExprId (Call, MethodCall of a builtin)
  std::vector<int32_t> def;                  ///< by ExprId (Call of a def): member index, else -1
  std::vector<uint8_t> reads_node;           ///< by ExprId: depends on the node
  std::map<const syntax::DefDecl*, std::vector<lang::TypeRef>> def_params;  ///< declared parameter types
  std::vector<CheckedPolicy> policies;
};

/// Checks `module`; nullopt when it has errors (all reported). Warnings
/// (unused lets) do not fail the check.
std::optional<CheckedModule> Check(const syntax::Module& module, lang::TypeTable& types, const lang::Schema& schema,
                                   DiagnosticSink& diags);

}  // namespace policy::sema
