#pragma once
/// Integer arithmetic with the IR's semantics (compiler/ir/ir.h: saturating
/// at the int64 limits, division and remainder by zero give 0) emitted as
/// LLVM IR at a builder's insertion point. The interpreter's side of the
/// same rules is compiler/ir/scalar.h; the differential tests keep the two
/// equal.
///
/// Divisions have two forms. The exact one divides in 64 bits (128 only for
/// muldiv quotients of 2^50 or more). The fast one, for a kernel's first
/// pass over its rows, estimates the quotient with one double division and
/// corrects it by the remainder: exact when the quotient is under 2^50 and
/// the divisor under 2^61 in magnitude, branch-free so the loop vectorizes;
/// a row outside that range sets Slow(), and the kernel redoes every row
/// exactly.

#include <llvm/IR/IRBuilder.h>

#include "compiler/ir/ir.h"

namespace policy::codegen {

class ArithEmitter {
 public:
  /// `fast_isel`: for code that LLVM's fast instruction selector takes
  /// whole (opt level 0): saturation by overflow flags rather than the
  /// saturating intrinsics it does not select.
  ArithEmitter(llvm::IRBuilder<>& b, bool fast_isel);

  /// Divisions from here on are fast ones (true) or exact ones; `slow` is
  /// the i1 "a row so far needs the exact pass" the fast ones extend.
  void SetFast(bool fast, llvm::Value* slow);
  /// The i1 "some row needs the exact pass" after the divisions emitted.
  llvm::Value* Slow() const { return slow_; }

  llvm::Value* Add(llvm::Value* a, llvm::Value* b);
  llvm::Value* Sub(llvm::Value* a, llvm::Value* b);
  llvm::Value* Mul(llvm::Value* a, llvm::Value* b);
  /// a op b for any ArithOp; a and b are i64.
  llvm::Value* Binary(ir::ArithOp op, llvm::Value* a, llvm::Value* b);
  /// floor(a * b / c), 0 when c is 0, saturated: the `muldiv` builtin.
  llvm::Value* MulDiv(llvm::Value* a, llvm::Value* b, llvm::Value* c);
  /// c ? t : f; of booleans as and/or for the fast instruction selector.
  llvm::Value* Select(llvm::Value* c, llvm::Value* t, llvm::Value* f);

 private:
  llvm::Value* Clamp(llvm::Value* wide);
  llvm::Value* Saturated(llvm::Intrinsic::ID with_overflow, llvm::Value* a, llvm::Value* b, llvm::Value* negative);
  llvm::Value* Wide(llvm::Value* v);
  llvm::Value* Below(llvm::Value* x, int bits);
  llvm::Value* Estimate(llvm::Value* qd, llvm::Value* divisor);
  llvm::Value* FastSDiv(llvm::Value* a, llvm::Value* b);
  llvm::Value* FastMulDiv(llvm::Value* a, llvm::Value* b, llvm::Value* c);

  llvm::IRBuilder<>& b_;
  llvm::LLVMContext& cx_;
  llvm::Type *i64_, *i128_;
  bool fast_isel_;
  bool fast_ = false;
  llvm::Value* slow_ = nullptr;
};

}  // namespace policy::codegen
