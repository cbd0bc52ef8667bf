#pragma once
/// Type-checks a CEL device selector against Kubernetes' DRA environment:
/// the one variable `device` (`driver` a string, `attributes` a map of
/// domain to a map of name to a value of any attribute type, `capacity` a
/// map of domain to a map of name to a quantity), CEL's operators and
/// macros, and the functions of Kubernetes' CEL library that selectors use
/// (quantity, semver, regex and string functions). Attribute values are
/// `dyn` as in kube's environment, so their misuse shows at run time.

#include <vector>

#include "compiler/cel/ast.h"

namespace policy::cel {

/// Every problem of `expr` (cel-go's wording), including a result that is
/// not a bool; empty when it checks.
std::vector<Problem> Check(const Expr& expr);

}  // namespace policy::cel
