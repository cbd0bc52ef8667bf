#pragma once
/// The kernel cache's key: a 128-bit structural hash of what a function's
/// kernels compute and nothing else (no spans, no messages, no names), so
/// the pods of one template share their kernels.

#include <string>

#include "compiler/ir/ir.h"

namespace policy::codegen {

/// The key of function `f` of `program` (16 bytes).
std::string TemplateKey(const ir::Program& program, size_t f);

}  // namespace policy::codegen
