#pragma once
/// A plugin as the scheduling core runs it: one function of a compiled,
/// specialized program, with its weight and, when the back end compiled
/// it, its native kernels.

#include <cstdint>
#include <string>

#include "compiler/codegen/compiled_function.h"
#include "compiler/ir/ir.h"

namespace policy::rt {

struct Plugin {
  std::string name;
  const ir::Program* program = nullptr;
  size_t function = 0;
  int64_t weight = 1;
  bool filter = true;  ///< run its filters
  bool score = true;   ///< run its scores
  /// Native kernels of the function (the JIT's), or null: the interpreter
  /// evaluates it. Messages always come from the interpreter.
  const codegen::CompiledFunction* kernels = nullptr;
};

}  // namespace policy::rt
