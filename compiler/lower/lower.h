#pragma once
/// Lowering: a checked AST (sema) to the IR (compiler/ir).
///
/// Names become slots or roots, `def` calls are inlined with one slot per
/// argument, `int`s used as quantities get an explicit conversion, and
/// reason/detail templates become messages over IR values.

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/sema/check.h"

namespace policy::lower {

/// A value a scheduler profile gives a `param` (plugin args).
using ParamValue = std::variant<int64_t, bool, std::string, std::vector<int64_t>, std::vector<std::string>>;
/// policy name -> param name -> value. Under kEveryPolicy, values for
/// every policy that declares a param of that name (the release the
/// profile follows, `kubernetesMinor`); a policy without it is not told.
using ParamValues = std::map<std::string, std::map<std::string, ParamValue>>;
inline constexpr const char* kEveryPolicy = "*";

/// Lowers `checked`; `params` replace the defaults of the `param`s they name
/// (CompileFile checks them against the declared types first).
ir::Program Lower(const sema::CheckedModule& checked, lang::TypeTable& types, const ParamValues* params = nullptr);

}  // namespace policy::lower
