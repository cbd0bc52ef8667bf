#pragma once
/// CEL text -> AST (grammar/Cel.g4), with CEL's macros expanded: has(),
/// all(), exists(), exists_one(), map(), filter() and cel.bind().

#include <string_view>
#include <vector>

#include "compiler/cel/ast.h"

namespace policy::cel {

/// The AST, or null with every syntax problem in `problems`.
ExprPtr Parse(std::string_view text, std::vector<Problem>* problems);

}  // namespace policy::cel
