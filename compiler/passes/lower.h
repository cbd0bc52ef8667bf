#pragma once
/// Lowering: a checked AST (sema) to the IR (compiler/ir).
///
/// Names become slots or roots, `def` calls are inlined with one slot per
/// argument, `int`s used as quantities get an explicit conversion, and
/// reason/detail templates become messages over IR values.

#include "compiler/ir/ir.h"
#include "compiler/sema/check.h"

namespace policy::passes {

ir::Program Lower(const sema::CheckedModule& checked, sema::TypeTable& types);

}  // namespace policy::passes
