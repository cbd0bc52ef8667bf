// The IR's integer arithmetic as LLVM IR (arith_emitter.h).

#include "compiler/codegen/arith_emitter.h"

#include <cstdint>

namespace policy::codegen {

using ir::ArithOp;

ArithEmitter::ArithEmitter(llvm::IRBuilder<>& b, bool fast_isel)
    : b_(b), cx_(b.getContext()), i64_(b.getInt64Ty()), i128_(b.getInt128Ty()), fast_isel_(fast_isel) {}

void ArithEmitter::SetFast(bool fast, llvm::Value* slow) {
  fast_ = fast;
  slow_ = slow;
}

llvm::Value* ArithEmitter::Clamp(llvm::Value* wide) {
  llvm::Value* hi = llvm::ConstantInt::get(i128_, INT64_MAX);
  llvm::Value* lo = llvm::ConstantInt::get(i128_, INT64_MIN, true);
  wide = b_.CreateSelect(b_.CreateICmpSGT(wide, hi), hi, wide);
  wide = b_.CreateSelect(b_.CreateICmpSLT(wide, lo), lo, wide);
  return b_.CreateTrunc(wide, i64_);
}
llvm::Value* ArithEmitter::Wide(llvm::Value* v) { return b_.CreateSExt(v, i128_); }

// Saturating i64 arithmetic: the exact result clamped to [INT64_MIN,
// INT64_MAX], without 128-bit values (a flag test and a select).
llvm::Value* ArithEmitter::Add(llvm::Value* a, llvm::Value* b) {
  if (fast_isel_) return Saturated(llvm::Intrinsic::sadd_with_overflow, a, b, b_.CreateICmpSLT(a, b_.getInt64(0)));
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_sat, a, b);
}
llvm::Value* ArithEmitter::Sub(llvm::Value* a, llvm::Value* b) {
  if (fast_isel_) return Saturated(llvm::Intrinsic::ssub_with_overflow, a, b, b_.CreateICmpSLT(a, b_.getInt64(0)));
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::ssub_sat, a, b);
}
llvm::Value* ArithEmitter::Select(llvm::Value* c, llvm::Value* t, llvm::Value* f) {
  if (const auto* k = llvm::dyn_cast<llvm::ConstantInt>(c)) return k->isOne() ? t : f;
  if (fast_isel_ && t->getType()->isIntegerTy(1)) return b_.CreateOr(b_.CreateAnd(c, t), b_.CreateAnd(b_.CreateNot(c), f));
  return b_.CreateSelect(c, t, f);
}

// The wrapping result, or on overflow the limit on the side of `a` (for a
// sum or difference that overflows, the exact result has a's sign).
llvm::Value* ArithEmitter::Saturated(llvm::Intrinsic::ID with_overflow, llvm::Value* a, llvm::Value* b,
                                     llvm::Value* negative) {
  llvm::Value* result = b_.CreateBinaryIntrinsic(with_overflow, a, b);
  llvm::Value* bound = b_.CreateSelect(negative, b_.getInt64(INT64_MIN), b_.getInt64(INT64_MAX));
  return b_.CreateSelect(b_.CreateExtractValue(result, 1), bound, b_.CreateExtractValue(result, 0));
}
llvm::Value* ArithEmitter::Mul(llvm::Value* a, llvm::Value* b) {
  if (llvm::isa<llvm::ConstantInt>(a)) std::swap(a, b);
  if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(b); c != nullptr && c->getSExtValue() > 0) {
    // By a positive constant: two compares (the bounds divided by it), which vectorize.
    int64_t k = c->getSExtValue();
    llvm::Value* product = b_.CreateMul(a, b);
    product = b_.CreateSelect(b_.CreateICmpSGT(a, b_.getInt64(INT64_MAX / k)), b_.getInt64(INT64_MAX), product);
    return b_.CreateSelect(b_.CreateICmpSLT(a, b_.getInt64(INT64_MIN / k)), b_.getInt64(INT64_MIN), product);
  }
  llvm::Value* mul = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smul_with_overflow, a, b);
  llvm::Value* negative = b_.CreateICmpSLT(b_.CreateXor(a, b), b_.getInt64(0));  // the exact product's sign
  llvm::Value* bound = b_.CreateSelect(negative, b_.getInt64(INT64_MIN), b_.getInt64(INT64_MAX));
  return b_.CreateSelect(b_.CreateExtractValue(mul, 1), bound, b_.CreateExtractValue(mul, 0));
}

// Division by doubles for the kernels' fast pass (fast_): the quotient
// estimated with one double division (relative error under 2^-50) and
// corrected by the remainder, computed in wrapping 64-bit arithmetic; it is
// exact when the quotient is under 2^50 and the divisor under 2^61 in
// magnitude. Otherwise the row is marked slow_ and the exact pass redoes
// every row. No branch: the loop vectorizes.
llvm::Value* ArithEmitter::Below(llvm::Value* x, int bits) {  // |x| < 2^bits
  return b_.CreateICmpULT(b_.CreateAdd(x, b_.getInt64(int64_t{1} << bits)), b_.getInt64(int64_t{1} << (bits + 1)));
}
llvm::Value* ArithEmitter::Estimate(llvm::Value* qd, llvm::Value* divisor) {  // the estimate, its validity noted in slow_
  llvm::Value* ok = b_.CreateAnd(
      b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, qd), llvm::ConstantFP::get(b_.getDoubleTy(), 0x1p50)),
      Below(divisor, 61));
  slow_ = b_.CreateOr(slow_, b_.CreateNot(ok));
  return b_.CreateSelect(ok, qd, llvm::ConstantFP::get(b_.getDoubleTy(), 0.0));  // no out-of-range conversion
}
// trunc(a / b), b not 0 or -1: on magnitudes, the sign applied last.
llvm::Value* ArithEmitter::FastSDiv(llvm::Value* a, llvm::Value* b) {
  llvm::Type* f64 = b_.getDoubleTy();
  llvm::Value* negative = b_.CreateICmpSLT(b_.CreateXor(a, b), b_.getInt64(0));
  llvm::Value* ua = b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b_.getFalse());  // INT64_MIN: 2^63 unsigned
  llvm::Value* ub = b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, b, b_.getFalse());
  llvm::Value* qd = Estimate(b_.CreateFDiv(b_.CreateUIToFP(ua, f64), b_.CreateUIToFP(ub, f64)), b);
  llvm::Value* q = b_.CreateFPToUI(qd, i64_);
  llvm::Value* r = b_.CreateSub(ua, b_.CreateMul(q, ub));  // -ub < r < 2 ub, exact in wrapping arithmetic
  q = b_.CreateAdd(q, b_.CreateZExt(b_.CreateICmpSGE(r, ub), i64_));
  q = b_.CreateSub(q, b_.CreateZExt(b_.CreateICmpSLT(r, b_.getInt64(0)), i64_));
  return b_.CreateSelect(negative, b_.CreateNeg(q), q);
}
// floor(a * b / c), c not 0; a * b may overflow 64 bits.
llvm::Value* ArithEmitter::FastMulDiv(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
  llvm::Type* f64 = b_.getDoubleTy();
  llvm::Value* product = b_.CreateFMul(b_.CreateSIToFP(a, f64), b_.CreateSIToFP(b, f64));
  llvm::Value* qd = Estimate(b_.CreateFDiv(product, b_.CreateSIToFP(c, f64)), c);
  llvm::Value* e = b_.CreateFPToSI(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, qd), i64_);
  llvm::Value* r = b_.CreateSub(b_.CreateMul(a, b), b_.CreateMul(e, c));  // exact mod 2^64, and |r| < 2|c|
  // floor: 0 <= r < c (c > 0), c < r <= 0 (c < 0).
  llvm::Value* positive = b_.CreateICmpSGT(c, b_.getInt64(0));
  llvm::Value* down = Select(positive, b_.CreateICmpSLT(r, b_.getInt64(0)), b_.CreateICmpSGT(r, b_.getInt64(0)));
  llvm::Value* up = Select(positive, b_.CreateICmpSGE(r, c), b_.CreateICmpSLE(r, c));
  return b_.CreateAdd(b_.CreateSub(e, b_.CreateZExt(down, i64_)), b_.CreateZExt(up, i64_));
}

// a op b with the IR's semantics; a and b are i64.
llvm::Value* ArithEmitter::Binary(ArithOp op, llvm::Value* a, llvm::Value* b) {
  switch (op) {
    case ArithOp::kAdd: return Add(a, b);
    case ArithOp::kSub: return Sub(a, b);
    case ArithOp::kMul: return Mul(a, b);
    case ArithOp::kDiv:
    case ArithOp::kMod: {
      // In 64 bits (a 128-bit division is a library call): a divisor of 0
      // gives 0; INT64_MIN / -1 saturates to INT64_MAX (and % -1 is 0), as
      // the 128-bit result clamped would.
      llvm::Value* zero = b_.CreateICmpEQ(b, b_.getInt64(0));
      llvm::Value* minus_one = b_.CreateICmpEQ(b, b_.getInt64(-1));
      llvm::Value* safe = b_.CreateSelect(b_.CreateOr(zero, minus_one), b_.getInt64(1), b);
      llvm::Value* r = nullptr;
      if (fast_ && !llvm::isa<llvm::ConstantInt>(b)) {  // (by a constant, LLVM multiplies)
        llvm::Value* q = FastSDiv(a, safe);
        r = op == ArithOp::kDiv ? q : b_.CreateSub(a, b_.CreateMul(q, safe));
      } else {
        r = op == ArithOp::kDiv ? b_.CreateSDiv(a, safe) : b_.CreateSRem(a, safe);
      }
      if (op == ArithOp::kDiv) {  // x / -1 is -x, saturated
        llvm::Value* neg = b_.CreateSelect(b_.CreateICmpEQ(a, b_.getInt64(INT64_MIN)), b_.getInt64(INT64_MAX), b_.CreateNeg(a));
        r = b_.CreateSelect(minus_one, neg, r);
      } else {
        r = b_.CreateSelect(minus_one, b_.getInt64(0), r);
      }
      return b_.CreateSelect(zero, b_.getInt64(0), r);
    }
  }
  return a;
}

llvm::Value* ArithEmitter::MulDiv(llvm::Value* a, llvm::Value* b, llvm::Value* c64) {
  if (fast_) {
    llvm::Value* zero = b_.CreateICmpEQ(c64, b_.getInt64(0));
    llvm::Value* q = FastMulDiv(a, b, b_.CreateSelect(zero, b_.getInt64(1), c64));
    return b_.CreateSelect(zero, b_.getInt64(0), q);
  }
  // Fast path in 64 bits when a * b fits (a 128-bit division is a library call).
  llvm::Value* mul = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smul_with_overflow, a, b);
  llvm::Value* p64 = b_.CreateExtractValue(mul, 0);
  llvm::Value* overflow = b_.CreateOr(b_.CreateExtractValue(mul, 1), b_.CreateICmpEQ(c64, b_.getInt64(-1)));
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* fast = llvm::BasicBlock::Create(cx_, "muldiv.fast", fn);
  auto* slow = llvm::BasicBlock::Create(cx_, "muldiv.slow", fn);
  auto* join = llvm::BasicBlock::Create(cx_, "muldiv.join", fn);
  b_.CreateCondBr(overflow, slow, fast);
  b_.SetInsertPoint(fast);
  llvm::Value* zero64 = b_.CreateICmpEQ(c64, b_.getInt64(0));
  llvm::Value* safe64 = b_.CreateSelect(zero64, b_.getInt64(1), c64);
  llvm::Value* q64 = b_.CreateSDiv(p64, safe64);
  llvm::Value* inexact64 = b_.CreateICmpNE(b_.CreateSRem(p64, safe64), b_.getInt64(0));
  llvm::Value* signs64 = b_.CreateXor(b_.CreateICmpSLT(p64, b_.getInt64(0)), b_.CreateICmpSLT(safe64, b_.getInt64(0)));
  q64 = b_.CreateSub(q64, b_.CreateZExt(b_.CreateAnd(inexact64, signs64), i64_));
  llvm::Value* fast_result = b_.CreateSelect(zero64, b_.getInt64(0), q64);
  llvm::BasicBlock* fast_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  // When a * b overflows 64 bits: the quotient estimated in doubles
  // (relative error under 2^-50, so off by at most one below 2^50) and
  // corrected exactly with the 128-bit remainder: no 128-bit division.
  b_.SetInsertPoint(slow);
  llvm::Type* f64 = b_.getDoubleTy();
  llvm::Value* qd = b_.CreateFDiv(b_.CreateFMul(b_.CreateSIToFP(a, f64), b_.CreateSIToFP(b, f64)), b_.CreateSIToFP(c64, f64));
  llvm::Value* small = b_.CreateAnd(b_.CreateFCmpOLT(qd, llvm::ConstantFP::get(f64, 0x1p50)),
                                    b_.CreateFCmpOGT(qd, llvm::ConstantFP::get(f64, -0x1p50)));
  auto* estimate = llvm::BasicBlock::Create(cx_, "muldiv.estimate", fn);
  auto* wide = llvm::BasicBlock::Create(cx_, "muldiv.wide", fn);
  b_.CreateCondBr(small, estimate, wide);
  b_.SetInsertPoint(estimate);
  llvm::Value* e = b_.CreateFPToSI(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, qd), i64_);
  llvm::Value* product = b_.CreateMul(Wide(a), Wide(b));
  llvm::Value* c128 = Wide(c64);
  llvm::Value* rem = b_.CreateSub(product, b_.CreateMul(Wide(e), c128));  // exact: |e * c| < 2^113
  llvm::Value* zero128 = llvm::ConstantInt::get(i128_, 0);
  llvm::Value* positive = b_.CreateICmpSGT(c64, b_.getInt64(0));
  // floor(p / c) = e when 0 <= rem < c (c > 0), or c < rem <= 0 (c < 0).
  llvm::Value* down = Select(positive, b_.CreateICmpSLT(rem, zero128), b_.CreateICmpSGT(rem, zero128));
  llvm::Value* up = Select(positive, b_.CreateICmpSGE(rem, c128), b_.CreateICmpSLE(rem, c128));
  llvm::Value* estimate_result = b_.CreateAdd(b_.CreateSub(e, b_.CreateZExt(down, i64_)), b_.CreateZExt(up, i64_));
  llvm::BasicBlock* estimate_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(wide);  // a quotient of 2^50 or more (or c == 0): 128-bit division
  llvm::Value* q = b_.CreateMul(Wide(a), Wide(b));
  llvm::Value* c = Wide(c64);
  llvm::Value* zero = b_.CreateICmpEQ(c, llvm::ConstantInt::get(i128_, 0));
  llvm::Value* safe = b_.CreateSelect(zero, llvm::ConstantInt::get(i128_, 1), c);
  llvm::Value* r = b_.CreateSDiv(q, safe);
  llvm::Value* inexact = b_.CreateICmpNE(b_.CreateSRem(q, safe), llvm::ConstantInt::get(i128_, 0));
  llvm::Value* signs = b_.CreateXor(b_.CreateICmpSLT(q, llvm::ConstantInt::get(i128_, 0)),
                                       b_.CreateICmpSLT(safe, llvm::ConstantInt::get(i128_, 0)));
  r = b_.CreateSub(r, b_.CreateZExt(b_.CreateAnd(inexact, signs), i128_));
  llvm::Value* slow_result = b_.CreateSelect(zero, b_.getInt64(0), Clamp(r));
  llvm::BasicBlock* slow_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* result = b_.CreatePHI(i64_, 3);
  result->addIncoming(fast_result, fast_end);
  result->addIncoming(estimate_result, estimate_end);
  result->addIncoming(slow_result, slow_end);
  return result;
}

}  // namespace policy::codegen
