#pragma once
/// Lowering a policy function's specialized, bound IR to LLVM IR kernels
/// over the kernel ABI (kernel_abi.h): `PREFIXfilter`, `PREFIXpass` and one
/// `PREFIXscoreN` per score rule.
///
/// Algorithm: one LLVM function per kernel, a loop over the given rows whose
/// body evaluates the IR straight-line (every IR node is pure and total, so
/// `and`, `or` and `if` evaluate both sides and select: no branches in the
/// hot loop, and LLVM vectorizes what it can). Values are i64 (ints,
/// quantities in milli-units) or i1 (bools), with an i1 "is none" beside
/// them for optional types. Arithmetic is arith_emitter.h's. Each IR node
/// and `let` is computed once per row. Kernels with divisions by a value
/// run a fast pass first and an exact one only when a row needs it.

#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "compiler/codegen/compiled_function.h"
#include "compiler/codegen/kernel_shape.h"
#include "compiler/ir/ir.h"
#include "support/expected.h"

namespace policy::codegen {

/// Emits the kernels of function `f`, of shape `shape` (kernel_shape.h),
/// into `module` (not yet verified or optimized) and fills `out`'s column
/// slots, parameters and filter count; an Error
/// naming what the function uses that this back end does not compile (it
/// then stays with the interpreter). `fast_isel`: emit what LLVM's fast
/// instruction selector takes whole (opt level 0, where nothing is
/// vectorized): no saturating intrinsics, exact divisions only, and no
/// pass kernel (the filter kernel answers the same).
Status EmitKernels(llvm::LLVMContext& context, llvm::Module& module, const ir::Program& program, size_t f,
                   const KernelShape& shape, bool fast_isel, CompiledFunction& out, const std::string& prefix);

}  // namespace policy::codegen
