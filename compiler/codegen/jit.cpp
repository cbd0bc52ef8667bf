// IR -> LLVM IR -> native kernels with ORC LLJIT.
//
// Algorithm: one LLVM function per kernel, a loop over the given rows whose
// body evaluates the IR straight-line (every IR node is pure and total, so
// `and`, `or` and `if` evaluate both sides and select: no branches in the hot
// loop, and LLVM vectorizes what it can). Values are i64 (ints, quantities in
// milli-units) or i1 (bools), with an i1 "is none" beside them for optional
// types. Arithmetic goes through i128 and clamps to int64 (the IR saturates);
// a divisor of 0 gives 0. Each IR node and `let` is computed once per row.

#include "compiler/codegen/jit.h"

#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "compiler/passes/rewriter.h"

namespace policy::codegen {
namespace {

using namespace ir;
using sema::FieldId;

/// A value of one row: `v` (i64 or i1) and, for optional types, `none` (i1).
struct Val {
  llvm::Value* v = nullptr;
  llvm::Value* none = nullptr;
};

/// Thrown (and caught in Compile) when the IR uses what this back end does not compile.
struct Unsupported {
  std::string what;
};

class Emitter {
 public:
  Emitter(llvm::LLVMContext& context, llvm::Module& module, const Program& program, const Function& function,
          CompiledFunction& out)
      : cx_(context), module_(module), b_(context), program_(program), fn_(function), out_(out) {
    i1_ = b_.getInt1Ty();
    i8_ = b_.getInt8Ty();
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
    i128_ = b_.getInt128Ty();
    ptr_ = b_.getPtrTy();
  }

  /// Emits `name` over `rows`: a filter kernel (bit f of failed[k] set when
  /// filter f fails) or the kernel of score `score`.
  /// What a kernel computes per row.
  enum class Kind { kFilter, kPass, kScore };

  void EmitKernel(const std::string& name, Kind kind, size_t score = 0) {
    // void kernel(const PolicyColumns* columns, const uint32_t* rows, uint64_t n, T* out),
    // or for kPass: uint64_t kernel(..., uint32_t* passing), the count of passing rows.
    bool pass = kind == Kind::kPass;
    auto* type = llvm::FunctionType::get(pass ? i64_ : b_.getVoidTy(), {ptr_, ptr_, i64_, ptr_}, false);
    auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
    for (unsigned i : {0u, 1u, 3u}) f->addParamAttr(i, llvm::Attribute::NoAlias);
    f->addParamAttr(0, llvm::Attribute::ReadOnly);
    f->addParamAttr(1, llvm::Attribute::ReadOnly);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    auto* entry = llvm::BasicBlock::Create(cx_, "entry", f);
    b_.SetInsertPoint(entry);
    // Loop-invariant column pointers, loaded once.
    LoadColumns(f->getArg(0));
    if (!Divides()) {
      Rows rows = EmitRows(kind, score, false, f->getArg(1), f->getArg(2), f->getArg(3));
      if (pass) b_.CreateRet(rows.count);
      else b_.CreateRetVoid();
      return;
    }
    // Divisions: first every row with the fast ones (doubles, made exact by
    // the remainder; no branch, so the loop vectorizes). When a row needed
    // what they cannot do exactly (a quotient of 2^50 or more), every row
    // again with integer division; that pass overwrites the first's output.
    Rows fast = EmitRows(kind, score, true, f->getArg(1), f->getArg(2), f->getArg(3));
    auto* exact = llvm::BasicBlock::Create(cx_, "exact", f);
    auto* done = llvm::BasicBlock::Create(cx_, "done", f);
    b_.CreateCondBr(fast.slow, exact, done);
    b_.SetInsertPoint(exact);
    Rows again = EmitRows(kind, score, false, f->getArg(1), f->getArg(2), f->getArg(3));
    llvm::BasicBlock* again_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    if (pass) {
      llvm::PHINode* count = b_.CreatePHI(i64_, 2);
      count->addIncoming(fast.count, fast.end);
      count->addIncoming(again.count, again_end);
      b_.CreateRet(count);
    } else {
      b_.CreateRetVoid();
    }
  }

 private:
  /// A loop over the rows: the block it ends in, the rows it kept (kPass)
  /// and whether a fast division could not answer exactly on some row.
  struct Rows {
    llvm::BasicBlock* end = nullptr;
    llvm::Value* count = nullptr;
    llvm::Value* slow = nullptr;
  };

  /// `for k in [0, n)` from the current block, the kernel's work per row;
  /// the builder is left in the loop's exit block.
  Rows EmitRows(Kind kind, size_t score, bool fast, llvm::Value* rows, llvm::Value* n, llvm::Value* out) {
    llvm::Function* f = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(cx_, "row", f);
    auto* exit = llvm::BasicBlock::Create(cx_, "rows.done", f);
    b_.CreateCondBr(b_.CreateICmpEQ(n, b_.getInt64(0)), exit, loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* k = b_.CreatePHI(i64_, 2, "k");
    k->addIncoming(b_.getInt64(0), before);
    llvm::PHINode* m = b_.CreatePHI(i64_, 2, "m");  // kPass: rows written so far
    m->addIncoming(b_.getInt64(0), before);
    llvm::PHINode* slow = b_.CreatePHI(i1_, 2, "slow");
    slow->addIncoming(b_.getFalse(), before);
    fast_ = fast;
    slow_ = slow;
    row_ = b_.CreateZExt(b_.CreateLoad(i32_, b_.CreateGEP(i32_, rows, k)), i64_, "rownum");
    memo_.clear();
    slots_.clear();
    llvm::Value* m_next = m;
    if (kind == Kind::kScore) {
      Val v = Eval(fn_.scores[score].value);
      b_.CreateStore(v.v, b_.CreateGEP(i64_, out, k));
    } else {
      llvm::Value* mask = b_.getInt64(0);
      llvm::Value* all = b_.getTrue();
      for (size_t i = 0; i < fn_.filters.size(); ++i) {
        llvm::Value* ok = Bool(Eval(fn_.filters[i].condition));
        llvm::Value* bit = b_.CreateShl(b_.CreateZExt(b_.CreateNot(ok), i64_), b_.getInt64(i));
        mask = b_.CreateOr(mask, bit);
        all = b_.CreateAnd(all, ok);
      }
      if (kind == Kind::kPass) {  // write the row, keep it when every filter passed (no branch)
        b_.CreateStore(b_.CreateTrunc(row_, i32_), b_.CreateGEP(i32_, out, m));
        m_next = b_.CreateAdd(m, b_.CreateZExt(all, i64_));
      } else {
        b_.CreateStore(mask, b_.CreateGEP(i64_, out, k));
      }
    }
    llvm::Value* slow_next = slow_;
    fast_ = false;
    slow_ = nullptr;
    llvm::Value* next = b_.CreateAdd(k, b_.getInt64(1));
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    k->addIncoming(next, latch);
    m->addIncoming(m_next, latch);
    slow->addIncoming(slow_next, latch);
    b_.CreateCondBr(b_.CreateICmpULT(next, n), loop, exit);
    b_.SetInsertPoint(exit);
    llvm::PHINode* count = b_.CreatePHI(i64_, 2);
    count->addIncoming(b_.getInt64(0), before);
    count->addIncoming(m_next, latch);
    llvm::PHINode* any_slow = b_.CreatePHI(i1_, 2);
    any_slow->addIncoming(b_.getFalse(), before);
    any_slow->addIncoming(slow_next, latch);
    return {exit, count, any_slow};
  }

  /// Whether the program divides by a value that is not a constant (then
  /// the kernels get a fast pass and an exact one).
  bool Divides() const {
    for (const Node& node : program_.nodes) {
      if (const auto* a = std::get_if<Arith>(&node); a && (a->op == ArithOp::kDiv || a->op == ArithOp::kMod)) {
        if (!std::holds_alternative<IntConst>(program_.nodes[a->rhs])) return true;
      }
      if (const auto* c = std::get_if<CallBuiltin>(&node); c && c->builtin == sema::BuiltinId::kMulDiv) return true;
    }
    return false;
  }

 public:
  /// Loads the loop-invariant column pointers of `columns` here (the entry).
  void LoadColumns(llvm::Value* columns) {
    labels_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 0), "labels");
    resources_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 1), "resources");
    taint_bits_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 2), "taint_bits");
    taint_words_ = b_.CreateLoad(i64_, b_.CreateStructGEP(ColumnsType(), columns, 3), "taint_words");
    unschedulable_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 4), "unschedulable");
    pod_count_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 5), "pod_count");
    label_ints_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 6), "label_ints");
    label_is_int_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 7), "label_is_int");
    label_quantities_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 8), "label_quantities");
    label_is_quantity_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 9), "label_is_quantity");
    cluster_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 10), "cluster");
    label_columns_.clear();
    resource_columns_.clear();
  }

  // Fusing several functions into one kernel (Jit::CompileFilters).
  void At(llvm::BasicBlock* block) { b_.SetInsertPoint(block); }
  llvm::BasicBlock* Block() { return b_.GetInsertBlock(); }
  /// Whether every filter of the function passes on `row` (i64), evaluated here.
  llvm::Value* RowPasses(llvm::Value* row) {
    row_ = row;
    memo_.clear();
    slots_.clear();
    llvm::Value* all = b_.getTrue();
    for (const Filter& x : fn_.filters) all = b_.CreateAnd(all, Bool(Eval(x.condition)));
    return all;
  }

 private:
  llvm::StructType* ColumnsType() {
    if (columns_type_ == nullptr) {
      columns_type_ = llvm::StructType::get(cx_, {ptr_, ptr_, ptr_, i64_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_});
    }
    return columns_type_;
  }

  [[noreturn]] void Fail(std::string what) { throw Unsupported{std::move(what)}; }

  bool Optional(NodeId id) const { return program_.types[id]->kind == sema::TypeKind::kOptional; }
  sema::TypeRef Unwrapped(NodeId id) const {
    sema::TypeRef t = program_.types[id];
    return t->kind == sema::TypeKind::kOptional ? t->element : t;
  }

  llvm::Value* Bool(const Val& v) {
    if (v.v->getType() != i1_) Fail("a non-boolean condition");
    return v.none != nullptr ? b_.CreateAnd(v.v, b_.CreateNot(v.none)) : v.v;
  }
  llvm::Value* Int(const Val& v) {
    if (v.v->getType() == i1_) return b_.CreateZExt(v.v, i64_);
    return v.v;
  }
  llvm::Value* NoneOf(const Val& v) { return v.none != nullptr ? v.none : b_.getFalse(); }

  llvm::Value* Clamp(llvm::Value* wide) {
    llvm::Value* hi = llvm::ConstantInt::get(i128_, INT64_MAX);
    llvm::Value* lo = llvm::ConstantInt::get(i128_, INT64_MIN, true);
    wide = b_.CreateSelect(b_.CreateICmpSGT(wide, hi), hi, wide);
    wide = b_.CreateSelect(b_.CreateICmpSLT(wide, lo), lo, wide);
    return b_.CreateTrunc(wide, i64_);
  }
  llvm::Value* Wide(llvm::Value* v) { return b_.CreateSExt(v, i128_); }

  // Saturating i64 arithmetic: the exact result clamped to [INT64_MIN,
  // INT64_MAX], without 128-bit values (a flag test and a select).
  llvm::Value* SatAdd(llvm::Value* a, llvm::Value* b) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_sat, a, b); }
  llvm::Value* SatSub(llvm::Value* a, llvm::Value* b) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::ssub_sat, a, b); }
  llvm::Value* SatMul(llvm::Value* a, llvm::Value* b) {
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
  llvm::Value* Below(llvm::Value* x, int bits) {  // |x| < 2^bits
    return b_.CreateICmpULT(b_.CreateAdd(x, b_.getInt64(int64_t{1} << bits)), b_.getInt64(int64_t{1} << (bits + 1)));
  }
  llvm::Value* Estimate(llvm::Value* qd, llvm::Value* divisor) {  // the estimate, its validity noted in slow_
    llvm::Value* ok = b_.CreateAnd(
        b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, qd), llvm::ConstantFP::get(b_.getDoubleTy(), 0x1p50)),
        Below(divisor, 61));
    slow_ = b_.CreateOr(slow_, b_.CreateNot(ok));
    return b_.CreateSelect(ok, qd, llvm::ConstantFP::get(b_.getDoubleTy(), 0.0));  // no out-of-range conversion
  }
  // trunc(a / b), b not 0 or -1: on magnitudes, the sign applied last.
  llvm::Value* FastSDiv(llvm::Value* a, llvm::Value* b) {
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
  llvm::Value* FastMulDiv(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    llvm::Type* f64 = b_.getDoubleTy();
    llvm::Value* product = b_.CreateFMul(b_.CreateSIToFP(a, f64), b_.CreateSIToFP(b, f64));
    llvm::Value* qd = Estimate(b_.CreateFDiv(product, b_.CreateSIToFP(c, f64)), c);
    llvm::Value* e = b_.CreateFPToSI(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, qd), i64_);
    llvm::Value* r = b_.CreateSub(b_.CreateMul(a, b), b_.CreateMul(e, c));  // exact mod 2^64, and |r| < 2|c|
    // floor: 0 <= r < c (c > 0), c < r <= 0 (c < 0).
    llvm::Value* positive = b_.CreateICmpSGT(c, b_.getInt64(0));
    llvm::Value* down = b_.CreateSelect(positive, b_.CreateICmpSLT(r, b_.getInt64(0)), b_.CreateICmpSGT(r, b_.getInt64(0)));
    llvm::Value* up = b_.CreateSelect(positive, b_.CreateICmpSGE(r, c), b_.CreateICmpSLE(r, c));
    return b_.CreateAdd(b_.CreateSub(e, b_.CreateZExt(down, i64_)), b_.CreateZExt(up, i64_));
  }

  // a op b with the IR's semantics; a and b are i64.
  llvm::Value* EmitArith(ArithOp op, llvm::Value* a, llvm::Value* b) {
    switch (op) {
      case ArithOp::kAdd: return SatAdd(a, b);
      case ArithOp::kSub: return SatSub(a, b);
      case ArithOp::kMul: return SatMul(a, b);
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

  Val Eval(NodeId id) {
    if (auto it = memo_.find(id); it != memo_.end()) return it->second;
    Val v = EvalFresh(id);
    memo_[id] = v;
    return v;
  }

  Val EvalFresh(NodeId id) {
    const Node& node = program_.nodes[id];
    bool optional = Optional(id);
    auto wrap = [&](llvm::Value* v) { return Val{v, optional ? b_.getFalse() : nullptr}; };
    if (const auto* n = std::get_if<BoolConst>(&node)) return wrap(b_.getInt1(n->value));
    if (const auto* n = std::get_if<IntConst>(&node)) return wrap(b_.getInt64(n->value));
    if (std::holds_alternative<NoneConst>(node)) return Val{b_.getInt64(0), b_.getTrue()};
    if (const auto* n = std::get_if<Not>(&node)) return wrap(b_.CreateNot(Bool(Eval(n->operand))));
    if (const auto* n = std::get_if<And>(&node)) return wrap(b_.CreateAnd(Bool(Eval(n->lhs)), Bool(Eval(n->rhs))));
    if (const auto* n = std::get_if<Or>(&node)) return wrap(b_.CreateOr(Bool(Eval(n->lhs)), Bool(Eval(n->rhs))));
    if (const auto* n = std::get_if<Negate>(&node)) {
      Val a = Eval(n->operand);
      return Val{SatSub(b_.getInt64(0), Int(a)), a.none};
    }
    if (const auto* n = std::get_if<Arith>(&node)) {
      if (Optional(n->lhs) || Optional(n->rhs)) Fail("arithmetic on an optional value");
      return wrap(EmitArith(n->op, Int(Eval(n->lhs)), Int(Eval(n->rhs))));
    }
    if (const auto* n = std::get_if<IntToQuantity>(&node)) {
      Val a = Eval(n->operand);
      return Val{SatMul(Int(a), b_.getInt64(1000)), a.none};
    }
    if (const auto* n = std::get_if<Compare>(&node)) return wrap(EvalCompare(*n));
    if (const auto* n = std::get_if<Select>(&node)) {
      llvm::Value* c = Bool(Eval(n->condition));
      Val t = Eval(n->then_value), e = Eval(n->else_value);
      if (t.v->getType() != e.v->getType()) t.v = Int(t), e.v = Int(e);
      Val out{b_.CreateSelect(c, t.v, e.v), nullptr};
      if (optional) out.none = b_.CreateSelect(c, NoneOf(t), NoneOf(e));
      return out;
    }
    if (const auto* n = std::get_if<Coalesce>(&node)) {
      Val a = Eval(n->value), f = Eval(n->fallback);
      if (a.v->getType() != f.v->getType()) a.v = Int(a), f.v = Int(f);
      llvm::Value* none = NoneOf(a);
      Val out{b_.CreateSelect(none, f.v, a.v), nullptr};
      if (optional) out.none = b_.CreateAnd(none, NoneOf(f));
      return out;
    }
    if (const auto* n = std::get_if<Local>(&node)) {
      const Slot& slot = fn_.slots[n->slot];
      if (slot.kind != Slot::Kind::kLet || !slot.value) Fail("a loop variable");
      if (auto it = slots_.find(n->slot); it != slots_.end()) return it->second;
      Val v = Eval(*slot.value);
      slots_[n->slot] = v;
      return v;
    }
    if (const auto* n = std::get_if<LoadField>(&node)) {
      if (!std::holds_alternative<NodeRoot>(program_.nodes[n->object])) Fail("a field of a record other than the node");
      if (n->field == FieldId::kNodePods) {
        return wrap(b_.CreateZExt(b_.CreateLoad(i32_, b_.CreateGEP(i32_, pod_count_, row_)), i64_));
      }
      if (n->field == FieldId::kNodeUnschedulable) {
        return wrap(b_.CreateICmpNE(b_.CreateLoad(i8_, b_.CreateGEP(i8_, unschedulable_, row_)), b_.getInt8(0)));
      }
      Fail("a node field other than pods and unschedulable");
    }
    if (const auto* n = std::get_if<Index>(&node)) return wrap(EvalResource(*n));
    if (const auto* n = std::get_if<LabelIn>(&node)) {
      llvm::Value* domain = LabelDomain(n->key);
      llvm::Value* in = b_.getFalse();
      for (uint32_t d : n->domains) in = b_.CreateOr(in, b_.CreateICmpEQ(domain, b_.getInt32(d)));
      return wrap(in);
    }
    if (const auto* n = std::get_if<TaintScan>(&node)) return wrap(EvalTaints(*n));
    if (const auto* n = std::get_if<CallBuiltin>(&node);
        n && sema::Builtins()[static_cast<size_t>(n->builtin)].reads == sema::BuiltinReads::kCluster) {
      for (NodeId a : n->args) {
        if (program_.reads_node[a]) Fail("a cluster builtin whose arguments read the node");
      }
      size_t slot = 0;
      while (slot < out_.cluster.size() && out_.cluster[slot] != id) ++slot;
      if (slot == out_.cluster.size()) out_.cluster.push_back(id);
      llvm::Value* values = b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, cluster_, b_.getInt64(slot)));
      llvm::Value* v = b_.CreateLoad(i64_, b_.CreateGEP(i64_, values, row_));
      return wrap(Unwrapped(id)->kind == sema::TypeKind::kBool ? b_.CreateICmpNE(v, b_.getInt64(0)) : v);
    }
    if (const auto* n = std::get_if<CallBuiltin>(&node)) {
      if (n->builtin == sema::BuiltinId::kToInt || n->builtin == sema::BuiltinId::kToQuantity) {  // of a node label
        const auto* index = std::get_if<Index>(&program_.nodes[n->args[0]]);
        const auto* load = index ? std::get_if<LoadField>(&program_.nodes[index->object]) : nullptr;
        const auto* key = index ? std::get_if<StringConst>(&program_.nodes[index->key]) : nullptr;
        if (load == nullptr || key == nullptr || load->field != FieldId::kNodeLabels) {
          Fail("`.int()` or `.quantity()` of a value other than a node label");
        }
        return LabelNumber(key->value, n->builtin == sema::BuiltinId::kToQuantity);
      }
      return wrap(EvalCall(*n));
    }
    Fail(fmt::format("IR node kind {}", node.index()));
  }

  llvm::Value* EvalCompare(const Compare& c) {
    Val a = Eval(c.lhs), b = Eval(c.rhs);
    if (Unwrapped(c.lhs)->kind == sema::TypeKind::kString || Unwrapped(c.rhs)->kind == sema::TypeKind::kString) {
      Fail("a string comparison");
    }
    llvm::Value* x = Int(a);
    llvm::Value* y = Int(b);
    llvm::Value* an = NoneOf(a);
    llvm::Value* bn = NoneOf(b);
    llvm::Value* any_none = b_.CreateOr(an, bn);
    llvm::Value* both_none = b_.CreateAnd(an, bn);
    switch (c.op) {
      case CompareOp::kEq: return b_.CreateSelect(any_none, both_none, b_.CreateICmpEQ(x, y));
      case CompareOp::kNe: return b_.CreateNot(b_.CreateSelect(any_none, both_none, b_.CreateICmpEQ(x, y)));
      case CompareOp::kLt: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSLT(x, y));
      case CompareOp::kLe: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSLE(x, y));
      case CompareOp::kGt: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSGT(x, y));
      case CompareOp::kGe: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSGE(x, y));
    }
    return b_.getFalse();
  }

  // node.allocatable/requested/scoringRequested[NAME], in milli-units.
  llvm::Value* EvalResource(const Index& index) {
    const auto* load = std::get_if<LoadField>(&program_.nodes[index.object]);
    const auto* name = std::get_if<StringConst>(&program_.nodes[index.key]);
    if (load == nullptr || name == nullptr || !std::holds_alternative<NodeRoot>(program_.nodes[load->object])) {
      Fail("an index other than a node resource by a constant name");
    }
    ResourceSlot slot{name->value, ResourceSlot::Kind::kAllocatable};
    switch (load->field) {
      case FieldId::kNodeAllocatable: break;
      case FieldId::kNodeRequested: slot.kind = ResourceSlot::Kind::kRequested; break;
      case FieldId::kNodeScoringRequested: slot.kind = ResourceSlot::Kind::kScoringRequested; break;
      default: Fail("an index into a node map");
    }
    llvm::Value* column = ResourceColumn(slot);  // never null (zeros when no node has the resource)
    return b_.CreateLoad(i64_, b_.CreateGEP(i64_, column, row_));  // milli-units already
  }

  llvm::Value* ResourceColumn(const ResourceSlot& slot) {
    size_t index = 0;
    while (index < out_.resources.size() && !(out_.resources[index] == slot)) ++index;
    if (index == out_.resources.size()) out_.resources.push_back(slot);
    if (auto it = resource_columns_.find(index); it != resource_columns_.end()) return it->second;
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(&*llvm::cast<llvm::Instruction>(resources_)->getNextNode());
    llvm::Value* column = b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, resources_, b_.getInt64(index)), "res." + slot.name);
    return resource_columns_[index] = column;
  }

  // node.labels[K].int() / .quantity(): the domain's parsed value, none when
  // the node lacks the label or it does not parse.
  Val LabelNumber(const std::string& key, bool quantity) {
    llvm::Value* domain = b_.CreateZExt(LabelDomain(key), i64_);
    size_t index = LabelSlot(key);
    llvm::Value* ints = b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, quantity ? label_quantities_ : label_ints_, b_.getInt64(index)));
    llvm::Value* flags = b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, quantity ? label_is_quantity_ : label_is_int_, b_.getInt64(index)));
    // Domain 0 (absent) reads entry 0, which is never an integer.
    llvm::Value* is_int = b_.CreateICmpNE(b_.CreateLoad(i8_, b_.CreateGEP(i8_, flags, domain)), b_.getInt8(0));
    llvm::Value* value = b_.CreateLoad(i64_, b_.CreateGEP(i64_, ints, domain));
    llvm::Value* none = b_.CreateOr(b_.CreateICmpEQ(domain, b_.getInt64(0)), b_.CreateNot(is_int));
    return Val{b_.CreateSelect(none, b_.getInt64(0), value), none};
  }

  size_t LabelSlot(const std::string& key) {
    size_t index = 0;
    while (index < out_.labels.size() && out_.labels[index] != key) ++index;
    if (index == out_.labels.size()) out_.labels.push_back(key);
    return index;
  }

  llvm::Value* LabelDomain(const std::string& key) {
    size_t index = LabelSlot(key);
    llvm::Value* column;
    if (auto it = label_columns_.find(index); it != label_columns_.end()) {
      column = it->second;
    } else {
      llvm::IRBuilderBase::InsertPointGuard guard(b_);
      b_.SetInsertPoint(&*llvm::cast<llvm::Instruction>(labels_)->getNextNode());
      column = b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, labels_, b_.getInt64(index)), "label." + key);
      label_columns_[index] = column;
    }
    return b_.CreateLoad(i32_, b_.CreateGEP(i32_, column, row_));  // never null (zeros: absent everywhere)
  }

  // The row's taint words masked by the scan's set: any / all / count.
  llvm::Value* EvalTaints(const TaintScan& scan) {
    if (scan.kind == LoopKind::kFirst || scan.kind == LoopKind::kSum) Fail("a taints_first scan");
    uint32_t words = scan.taints.empty() ? 0 : scan.taints.back() / 64 + 1;
    std::vector<uint64_t> mask(words, 0);
    for (uint32_t t : scan.taints) mask[t / 64] |= uint64_t{1} << (t % 64);
    llvm::Value* base = b_.CreateGEP(i64_, taint_bits_, b_.CreateMul(row_, taint_words_));
    llvm::Value* any = b_.getFalse();
    llvm::Value* outside = b_.getFalse();
    llvm::Value* count = b_.getInt64(0);
    // Words of the set (the table has at least this many: the program is bound to it).
    for (uint32_t w = 0; w < words; ++w) {
      llvm::Value* bits = b_.CreateLoad(i64_, b_.CreateGEP(i64_, base, b_.getInt64(w)));
      llvm::Value* in = b_.CreateAnd(bits, b_.getInt64(mask[w]));
      any = b_.CreateOr(any, b_.CreateICmpNE(in, b_.getInt64(0)));
      outside = b_.CreateOr(outside, b_.CreateICmpNE(b_.CreateAnd(bits, b_.getInt64(~mask[w])), b_.getInt64(0)));
      count = b_.CreateAdd(count, b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, in));
    }
    if (scan.kind == LoopKind::kAny) return any;
    if (scan.kind == LoopKind::kCount) return count;
    // all: no taint outside the set, in these words or any later word of the row.
    llvm::Function* f = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(cx_, "taint.rest", f);
    auto* after = llvm::BasicBlock::Create(cx_, "taint.done", f);
    llvm::Value* start = b_.getInt64(words);
    b_.CreateCondBr(b_.CreateICmpULT(start, taint_words_), loop, after);
    b_.SetInsertPoint(loop);
    llvm::PHINode* w = b_.CreatePHI(i64_, 2);
    llvm::PHINode* acc = b_.CreatePHI(i64_, 2);
    w->addIncoming(start, before);
    acc->addIncoming(b_.getInt64(0), before);
    llvm::Value* word = b_.CreateLoad(i64_, b_.CreateGEP(i64_, base, w));
    llvm::Value* acc2 = b_.CreateOr(acc, word);
    llvm::Value* w2 = b_.CreateAdd(w, b_.getInt64(1));
    w->addIncoming(w2, loop);
    acc->addIncoming(acc2, loop);
    b_.CreateCondBr(b_.CreateICmpULT(w2, taint_words_), loop, after);
    b_.SetInsertPoint(after);
    llvm::PHINode* rest = b_.CreatePHI(i64_, 2);
    rest->addIncoming(b_.getInt64(0), before);
    rest->addIncoming(acc2, loop);
    return b_.CreateAnd(b_.CreateNot(outside), b_.CreateICmpEQ(rest, b_.getInt64(0)));
  }

  llvm::Value* EvalCall(const CallBuiltin& call) {
    auto arg = [&](size_t i) {
      if (Optional(call.args[i])) Fail("an optional builtin argument");
      return Int(Eval(call.args[i]));
    };
    switch (call.builtin) {
      case sema::BuiltinId::kMax: {
        llvm::Value *a = arg(0), *b = arg(1);
        return b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b);
      }
      case sema::BuiltinId::kMin: {
        llvm::Value *a = arg(0), *b = arg(1);
        return b_.CreateSelect(b_.CreateICmpSLT(a, b), a, b);
      }
      case sema::BuiltinId::kMulDiv: {  // a * b / c rounded down, 0 when c is 0
        llvm::Value* a = arg(0);
        llvm::Value* bv = arg(1);
        llvm::Value* c64 = arg(2);
        if (fast_) {
          llvm::Value* zero = b_.CreateICmpEQ(c64, b_.getInt64(0));
          llvm::Value* q = FastMulDiv(a, bv, b_.CreateSelect(zero, b_.getInt64(1), c64));
          return b_.CreateSelect(zero, b_.getInt64(0), q);
        }
        // Fast path in 64 bits when a * b fits (a 128-bit division is a library call).
        llvm::Value* mul = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smul_with_overflow, a, bv);
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
        llvm::Value* signs64 = b_.CreateICmpNE(b_.CreateICmpSLT(p64, b_.getInt64(0)), b_.CreateICmpSLT(safe64, b_.getInt64(0)));
        q64 = b_.CreateSub(q64, b_.CreateZExt(b_.CreateAnd(inexact64, signs64), i64_));
        llvm::Value* fast_result = b_.CreateSelect(zero64, b_.getInt64(0), q64);
        llvm::BasicBlock* fast_end = b_.GetInsertBlock();
        b_.CreateBr(join);
        // When a * b overflows 64 bits: the quotient estimated in doubles
        // (relative error under 2^-50, so off by at most one below 2^50) and
        // corrected exactly with the 128-bit remainder: no 128-bit division.
        b_.SetInsertPoint(slow);
        llvm::Type* f64 = b_.getDoubleTy();
        llvm::Value* qd = b_.CreateFDiv(b_.CreateFMul(b_.CreateSIToFP(a, f64), b_.CreateSIToFP(bv, f64)), b_.CreateSIToFP(c64, f64));
        llvm::Value* small = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, qd), llvm::ConstantFP::get(f64, 0x1p50));
        auto* estimate = llvm::BasicBlock::Create(cx_, "muldiv.estimate", fn);
        auto* wide = llvm::BasicBlock::Create(cx_, "muldiv.wide", fn);
        b_.CreateCondBr(small, estimate, wide);
        b_.SetInsertPoint(estimate);
        llvm::Value* e = b_.CreateFPToSI(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, qd), i64_);
        llvm::Value* product = b_.CreateMul(Wide(a), Wide(bv));
        llvm::Value* c128 = Wide(c64);
        llvm::Value* rem = b_.CreateSub(product, b_.CreateMul(Wide(e), c128));  // exact: |e * c| < 2^113
        llvm::Value* zero128 = llvm::ConstantInt::get(i128_, 0);
        llvm::Value* positive = b_.CreateICmpSGT(c64, b_.getInt64(0));
        // floor(p / c) = e when 0 <= rem < c (c > 0), or c < rem <= 0 (c < 0).
        llvm::Value* down = b_.CreateSelect(positive, b_.CreateICmpSLT(rem, zero128), b_.CreateICmpSGT(rem, zero128));
        llvm::Value* up = b_.CreateSelect(positive, b_.CreateICmpSGE(rem, c128), b_.CreateICmpSLE(rem, c128));
        llvm::Value* estimate_result = b_.CreateAdd(b_.CreateSub(e, b_.CreateZExt(down, i64_)), b_.CreateZExt(up, i64_));
        llvm::BasicBlock* estimate_end = b_.GetInsertBlock();
        b_.CreateBr(join);
        b_.SetInsertPoint(wide);  // a quotient of 2^50 or more (or c == 0): 128-bit division
        llvm::Value* q = b_.CreateMul(Wide(a), Wide(bv));
        llvm::Value* c = Wide(c64);
        llvm::Value* zero = b_.CreateICmpEQ(c, llvm::ConstantInt::get(i128_, 0));
        llvm::Value* safe = b_.CreateSelect(zero, llvm::ConstantInt::get(i128_, 1), c);
        llvm::Value* r = b_.CreateSDiv(q, safe);
        llvm::Value* inexact = b_.CreateICmpNE(b_.CreateSRem(q, safe), llvm::ConstantInt::get(i128_, 0));
        llvm::Value* signs = b_.CreateICmpNE(b_.CreateICmpSLT(q, llvm::ConstantInt::get(i128_, 0)),
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
      case sema::BuiltinId::kUnits: {  // ceil for positive remainders, as the interpreter
        llvm::Value* v = arg(0);
        llvm::Value* q = b_.CreateSDiv(v, b_.getInt64(1000));
        llvm::Value* r = b_.CreateSRem(v, b_.getInt64(1000));
        return b_.CreateAdd(q, b_.CreateZExt(b_.CreateICmpSGT(r, b_.getInt64(0)), i64_));
      }
      case sema::BuiltinId::kMillis: return arg(0);
      case sema::BuiltinId::kInterpolate: {  // over constant points (a profile's shape): a chain of selects
        auto ints = [&](NodeId id) {
          const auto* list = std::get_if<MakeList>(&program_.nodes[id]);
          if (list == nullptr) Fail("`interpolate` over points that are not constants");
          std::vector<int64_t> out;
          for (NodeId e : list->elements) {
            const auto* c = std::get_if<IntConst>(&program_.nodes[e]);
            if (c == nullptr) Fail("`interpolate` over points that are not constants");
            out.push_back(c->value);
          }
          return out;
        };
        std::vector<int64_t> xs = ints(call.args[0]), ys = ints(call.args[1]);
        size_t n = std::min(xs.size(), ys.size());
        llvm::Value* x = arg(2);
        if (n == 0) return b_.getInt64(0);
        // The first point with x <= xs[i] decides: fold from the last point down.
        llvm::Value* result = b_.getInt64(ys[n - 1]);
        for (size_t i = n; i-- > 0;) {
          llvm::Value* value;
          if (i == 0) {
            value = b_.getInt64(ys[0]);
          } else if (xs[i] == xs[i - 1]) {
            value = b_.getInt64(ys[i]);
          } else {
            llvm::Value* t = b_.CreateMul(b_.getInt64(ys[i] - ys[i - 1]), b_.CreateSub(x, b_.getInt64(xs[i - 1])));
            value = b_.CreateAdd(b_.getInt64(ys[i - 1]), b_.CreateSDiv(t, b_.getInt64(xs[i] - xs[i - 1])));
          }
          result = b_.CreateSelect(b_.CreateICmpSLE(x, b_.getInt64(xs[i])), value, result);
        }
        return result;
      }
      default: Fail(fmt::format("the builtin `{}`", sema::Builtins()[static_cast<size_t>(call.builtin)].name));
    }
  }

  llvm::LLVMContext& cx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  const Program& program_;
  const Function& fn_;
  CompiledFunction& out_;
  llvm::Type *i1_, *i8_, *i32_, *i64_, *i128_;
  llvm::PointerType* ptr_;
  llvm::StructType* columns_type_ = nullptr;
  llvm::Value *labels_ = nullptr, *resources_ = nullptr, *taint_bits_ = nullptr, *taint_words_ = nullptr;
  llvm::Value *unschedulable_ = nullptr, *pod_count_ = nullptr, *row_ = nullptr;
  llvm::Value *label_ints_ = nullptr, *label_is_int_ = nullptr;
  llvm::Value *label_quantities_ = nullptr, *label_is_quantity_ = nullptr, *cluster_ = nullptr;
  std::map<size_t, llvm::Value*> label_columns_, resource_columns_;
  std::map<NodeId, Val> memo_;
  bool fast_ = false;             // divisions by doubles (EmitRows' first pass)
  llvm::Value* slow_ = nullptr;   // fast_: whether a row so far needs the exact pass
  std::map<SlotId, Val> slots_;
};

// Whether the function is one the kernels can run: no `filter for` over a
// node collection, and prefilters and `when` left to the interpreter.
std::optional<std::string> Shape(const Function& f) {
  for (const Filter& x : f.filters) {
    if (x.each_collection) return "a `filter for` over a node collection";
  }
  if (f.filters.size() > 64) return "more than 64 filters";
  return std::nullopt;
}

// Compiled code, freed (its ResourceTracker removed) when the last holder
// of what owns it lets go.
struct Code {
  llvm::orc::ResourceTrackerSP tracker;
  Code() = default;
  Code(const Code&) = delete;
  Code& operator=(const Code&) = delete;
  ~Code() {
    if (tracker) llvm::consumeError(tracker->remove());
  }
};

void InitializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

}  // namespace

struct Jit::Impl {
  JitOptions options;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// A template's kernels and the tracker that owns their code.
  struct Entry : Code {
    CompiledFunction kernels;
  };
  std::map<std::string, std::shared_ptr<Entry>> cache;  // by CanonicalKey
  std::list<std::string> lru;                           // most recent first
  uint64_t next_module = 0;

  // The LLJIT, made at the first compile; false with the reason when it cannot be.
  bool Start(std::string* why) {
    if (jit) return true;
    auto made = llvm::orc::LLJITBuilder().create();
    if (!made) {
      *why = llvm::toString(made.takeError());
      return false;
    }
    jit = std::move(*made);
    return true;
  }

  void Touch(const std::string& key) {
    lru.remove(key);
    lru.push_front(key);
    // Evict the least recent templates nobody holds, down to the capacity.
    for (auto it = lru.end(); cache.size() > options.cache_capacity && it != lru.begin();) {
      --it;
      auto entry = cache.find(*it);
      if (entry != cache.end() && entry->second.use_count() == 1) {
        cache.erase(entry);
        it = lru.erase(it);
      }
    }
  }

  // Builds and optimizes the module of function `f`; fills `out`'s slots.
  std::unique_ptr<llvm::Module> Build(llvm::LLVMContext& context, const Program& program, size_t f,
                                      CompiledFunction& out, const std::string& prefix, std::string* why) {
    const Function& fn = program.functions[f];
    if (std::optional<std::string> shape = Shape(fn)) {
      *why = *shape;
      return nullptr;
    }
    auto module = std::make_unique<llvm::Module>("policy", context);
    try {
      bool always = true;  // every filter is constant true (NodeName for a pod without nodeName): no kernel
      for (const Filter& x : fn.filters) {
        const auto* b = std::get_if<BoolConst>(&program.nodes[x.condition]);
        always = always && b != nullptr && b->value;
      }
      if (!always) {
        Emitter(context, *module, program, fn, out).EmitKernel(prefix + "filter", Emitter::Kind::kFilter);
        Emitter(context, *module, program, fn, out).EmitKernel(prefix + "pass", Emitter::Kind::kPass);
        out.filters = fn.filters.size();
      }
      for (size_t s = 0; s < fn.scores.size(); ++s) {
        Emitter(context, *module, program, fn, out).EmitKernel(fmt::format("{}score{}", prefix, s), Emitter::Kind::kScore, s);
      }
    } catch (const Unsupported& u) {
      *why = u.what;
      return nullptr;
    }
    if (!Finish(*module, why)) return nullptr;
    return module;
  }

  // Verifies `module`, then optimizes it; false (with the reason) when the
  // back end made invalid LLVM IR.
  bool Finish(llvm::Module& module, std::string* why) {
    std::string error;
    llvm::raw_string_ostream os(error);
    if (llvm::verifyModule(module, &os)) {
      *why = "the back end made invalid LLVM IR (a bug): " + error;
      return false;
    }
    Optimize(module);
    return true;
  }

  llvm::TargetMachine* Machine() {
    static std::unique_ptr<llvm::TargetMachine> machine = [] {
      std::string triple = llvm::sys::getProcessTriple();
      std::string error;
      const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
      llvm::TargetOptions options;
      return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
          triple, llvm::sys::getHostCPUName(), "", options, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
    }();
    return machine.get();
  }

  void Optimize(llvm::Module& module) {
    module.setTargetTriple(Machine()->getTargetTriple().str());
    module.setDataLayout(Machine()->createDataLayout());
    for (llvm::Function& f : module) {
      if (f.isDeclaration()) continue;
      f.addFnAttr("target-cpu", Machine()->getTargetCPU());
      std::string features = Machine()->getTargetFeatureString().str();
      // Vectorized kernels load rows' values one by one rather than with
      // gather instructions, unless asked (slower on the hosts measured).
      if (!options.gathers && Machine()->getTargetTriple().isX86()) features += ",+prefer-no-gather";
      f.addFnAttr("target-features", features);
    }
    if (options.opt_level == 0) return;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(Machine());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = options.opt_level == 1   ? llvm::OptimizationLevel::O1
                                    : options.opt_level == 2 ? llvm::OptimizationLevel::O2
                                                             : llvm::OptimizationLevel::O3;
    pb.buildPerModuleDefaultPipeline(level).run(module, mam);
  }
};

Jit::Jit(JitOptions options) : impl_(std::make_unique<Impl>()) {
  InitializeLlvm();
  impl_->options = options;
}

Jit::~Jit() = default;

namespace {

// 128 bits of structural hash: two 64-bit multiply-xorshift streams.
class Hasher {
 public:
  void Add(uint64_t v) {
    a_ = Mix(a_ ^ v, 0x9E3779B97F4A7C15ULL);
    b_ = Mix(b_ + v, 0xC2B2AE3D27D4EB4FULL);
  }
  void Add(std::string_view s) {
    Add(s.size());
    for (char c : s) Add(static_cast<uint8_t>(c));
  }
  void Add(sema::TypeRef t) {  // what codegen depends on: the kinds, through optionals and elements
    for (int depth = 0; t != nullptr && depth < 4; ++depth, t = t->element) Add(static_cast<uint64_t>(t->kind) + 1);
    Add(uint64_t{0});
  }
  std::string Key() const { return std::string(reinterpret_cast<const char*>(&a_), 8) + std::string(reinterpret_cast<const char*>(&b_), 8); }

 private:
  static uint64_t Mix(uint64_t x, uint64_t k) {
    x *= k;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ULL;
    return x ^ (x >> 32);
  }
  uint64_t a_ = 0x243F6A8885A308D3ULL, b_ = 0x13198A2E03707344ULL;
};

// The kernel cache's key: a hash of what the kernels compute, nothing else
// (no spans, no messages, no names), so pods of one template share their
// kernels: the nodes the filters, scores and lets reach, with their fields,
// operands and types' kinds.
std::string CanonicalKey(const Program& program, size_t f) {
  const Function& fn = program.functions[f];
  std::vector<uint8_t> seen(program.nodes.size(), 0);
  std::vector<NodeId> stack;
  for (const Filter& x : fn.filters) stack.push_back(x.condition);
  for (const Score& sc : fn.scores) stack.push_back(sc.value);
  for (const Slot& slot : fn.slots) {
    if (slot.value) stack.push_back(*slot.value);
  }
  Hasher h;
  while (!stack.empty()) {  // the reachable nodes
    NodeId id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = 1;
    passes::ForEachOperand(program.nodes[id], [&](NodeId operand) { stack.push_back(operand); });
  }
  for (NodeId id = 0; id < program.nodes.size(); ++id) {
    if (!seen[id]) continue;
    const Node& node = program.nodes[id];
    h.Add(id);
    h.Add(node.index());
    h.Add(program.types[id]);
    h.Add(program.reads_node[id]);
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, BoolConst>) h.Add(n.value);
          if constexpr (std::is_same_v<T, IntConst>) h.Add(static_cast<uint64_t>(n.value));
          if constexpr (std::is_same_v<T, StringConst>) h.Add(n.value);
          if constexpr (std::is_same_v<T, LoadField>) h.Add(static_cast<uint64_t>(n.field));
          if constexpr (std::is_same_v<T, Local>) h.Add(n.slot);
          if constexpr (std::is_same_v<T, Arith>) h.Add(static_cast<uint64_t>(n.op));
          if constexpr (std::is_same_v<T, Compare>) h.Add(static_cast<uint64_t>(n.op));
          if constexpr (std::is_same_v<T, Loop>) {
            h.Add(static_cast<uint64_t>(n.kind));
            h.Add(n.first);
            h.Add(n.second ? *n.second + 1 : 0);
            h.Add(n.body.has_value());
          }
          if constexpr (std::is_same_v<T, MakeList>) h.Add(n.is_set);
          if constexpr (std::is_same_v<T, CallBuiltin>) h.Add(static_cast<uint64_t>(n.builtin));
          if constexpr (std::is_same_v<T, LabelIn>) {
            h.Add(n.key);
            h.Add(n.domains.size());
            for (uint32_t d : n.domains) h.Add(d);
          }
          if constexpr (std::is_same_v<T, TaintScan>) {
            h.Add(static_cast<uint64_t>(n.kind));
            h.Add(n.taints.size());
            for (uint32_t t : n.taints) h.Add(t);
          }
        },
        node);
    passes::ForEachOperand(node, [&](NodeId operand) { h.Add(operand); });
  }
  h.Add(fn.filters.size());
  for (const Filter& x : fn.filters) h.Add(x.condition);
  h.Add(fn.scores.size());
  for (const Score& sc : fn.scores) h.Add(sc.value);
  h.Add(fn.slots.size());
  for (const Slot& slot : fn.slots) {
    h.Add(static_cast<uint64_t>(slot.kind));
    h.Add(slot.value ? *slot.value + 1 : 0);
  }
  return h.Key();
}

}  // namespace

std::shared_ptr<const CompiledFunction> Jit::Compile(const Program& program, size_t f, std::string* why) {
  std::string key = impl_->options.cache ? CanonicalKey(program, f) : std::string();
  if (impl_->options.cache) {
    if (auto it = impl_->cache.find(key); it != impl_->cache.end()) {
      std::shared_ptr<Impl::Entry> entry = it->second;
      impl_->Touch(key);
      return std::shared_ptr<const CompiledFunction>(entry, &entry->kernels);
    }
  }
  if (!impl_->Start(why)) return nullptr;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto entry = std::make_shared<Impl::Entry>();
  CompiledFunction& out = entry->kernels;
  std::string prefix = fmt::format("k{}_", impl_->next_module++);
  std::unique_ptr<llvm::Module> module = impl_->Build(*context, program, f, out, prefix, why);
  if (!module) return nullptr;
  llvm::orc::JITDylib& dylib = impl_->jit->getMainJITDylib();
  entry->tracker = dylib.createResourceTracker();
  if (llvm::Error e = impl_->jit->addIRModule(entry->tracker, llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    *why = llvm::toString(std::move(e));
    return nullptr;
  }
  auto lookup = [&](const std::string& name) -> void* {
    auto address = impl_->jit->lookup(name);
    if (!address) {
      *why = llvm::toString(address.takeError());
      return nullptr;
    }
    return address->toPtr<void*>();
  };
  if (out.filters > 0) {
    out.filter = reinterpret_cast<PolicyFilterKernel>(lookup(prefix + "filter"));
    out.pass = reinterpret_cast<PolicyPassKernel>(lookup(prefix + "pass"));
    if (out.filter == nullptr || out.pass == nullptr) return nullptr;
  }
  for (size_t s = 0; s < program.functions[f].scores.size(); ++s) {
    auto* kernel = reinterpret_cast<PolicyScoreKernel>(lookup(fmt::format("{}score{}", prefix, s)));
    if (kernel == nullptr) return nullptr;
    out.scores.push_back(kernel);
  }
  if (impl_->options.cache) {
    impl_->cache.emplace(key, entry);
    impl_->Touch(key);
  }
  return std::shared_ptr<const CompiledFunction>(entry, &entry->kernels);
}

std::shared_ptr<const FusedFilters> Jit::CompileFilters(const std::vector<std::pair<const Program*, size_t>>& functions,
                                                        std::string* why) {
  if (!impl_->Start(why)) return nullptr;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("profile", *context);
  struct FusedEntry : Code {
    FusedFilters filters;
  };
  auto entry = std::make_shared<FusedEntry>();
  FusedFilters* out = &entry->filters;
  out->slots.resize(functions.size());
  std::string name = fmt::format("fused{}", impl_->next_module++);
  try {
    llvm::IRBuilder<> b(*context);
    llvm::Type* i64 = b.getInt64Ty();
    llvm::Type* i32 = b.getInt32Ty();
    llvm::PointerType* ptr = b.getPtrTy();
    // uint64_t fused(const PolicyColumns* const* columns, const uint32_t* rows, uint64_t n, uint32_t* passing)
    auto* f = llvm::Function::Create(llvm::FunctionType::get(i64, {ptr, ptr, i64, ptr}, false),
                                     llvm::Function::ExternalLinkage, name, *module);
    for (unsigned a : {0u, 1u, 3u}) f->addParamAttr(a, llvm::Attribute::NoAlias);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    auto* entry = llvm::BasicBlock::Create(*context, "entry", f);
    auto* loop = llvm::BasicBlock::Create(*context, "row", f);
    auto* accept = llvm::BasicBlock::Create(*context, "accept", f);
    auto* latch = llvm::BasicBlock::Create(*context, "latch", f);
    auto* done = llvm::BasicBlock::Create(*context, "done", f);
    std::vector<std::unique_ptr<Emitter>> emitters;
    b.SetInsertPoint(entry);
    for (size_t i = 0; i < functions.size(); ++i) {
      const auto& [program, index] = functions[i];
      const Function& fn = program->functions[index];
      if (std::optional<std::string> shape = Shape(fn)) {
        *why = *shape;
        return nullptr;
      }
      emitters.push_back(std::make_unique<Emitter>(*context, *module, *program, fn, out->slots[i]));
      llvm::Value* columns = b.CreateLoad(ptr, b.CreateGEP(ptr, f->getArg(0), b.getInt64(i)));
      emitters.back()->At(entry);
      emitters.back()->LoadColumns(columns);
    }
    b.SetInsertPoint(entry);
    b.CreateCondBr(b.CreateICmpEQ(f->getArg(2), b.getInt64(0)), done, loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* k = b.CreatePHI(i64, 2, "k");
    llvm::PHINode* m = b.CreatePHI(i64, 2, "m");
    k->addIncoming(b.getInt64(0), entry);
    m->addIncoming(b.getInt64(0), entry);
    llvm::Value* row = b.CreateZExt(b.CreateLoad(i32, b.CreateGEP(i32, f->getArg(1), k)), i64, "rownum");
    // Each function in turn; the first that fails rejects the row.
    llvm::BasicBlock* at = loop;
    std::vector<llvm::BasicBlock*> rejects;
    for (size_t i = 0; i < emitters.size(); ++i) {
      emitters[i]->At(at);
      llvm::Value* ok = emitters[i]->RowPasses(row);
      llvm::BasicBlock* from = emitters[i]->Block();
      llvm::BasicBlock* next = i + 1 < emitters.size() ? llvm::BasicBlock::Create(*context, fmt::format("f{}", i + 1), f) : accept;
      b.SetInsertPoint(from);
      b.CreateCondBr(ok, next, latch);
      rejects.push_back(from);
      at = next;
    }
    b.SetInsertPoint(accept);
    b.CreateStore(b.CreateTrunc(row, i32), b.CreateGEP(i32, f->getArg(3), m));
    llvm::Value* m_accept = b.CreateAdd(m, b.getInt64(1));
    b.CreateBr(latch);
    b.SetInsertPoint(latch);
    llvm::PHINode* m_next = b.CreatePHI(i64, static_cast<unsigned>(rejects.size() + 1));
    for (llvm::BasicBlock* from : rejects) m_next->addIncoming(m, from);
    m_next->addIncoming(m_accept, accept);
    llvm::Value* k_next = b.CreateAdd(k, b.getInt64(1));
    k->addIncoming(k_next, latch);
    m->addIncoming(m_next, latch);
    b.CreateCondBr(b.CreateICmpULT(k_next, f->getArg(2)), loop, done);
    b.SetInsertPoint(done);
    llvm::PHINode* count = b.CreatePHI(i64, 2);
    count->addIncoming(b.getInt64(0), entry);
    count->addIncoming(m_next, latch);
    b.CreateRet(count);
  } catch (const Unsupported& u) {
    *why = u.what;
    return nullptr;
  }
  if (!impl_->Finish(*module, why)) return nullptr;
  entry->tracker = impl_->jit->getMainJITDylib().createResourceTracker();
  if (llvm::Error e = impl_->jit->addIRModule(entry->tracker, llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    *why = llvm::toString(std::move(e));
    return nullptr;
  }
  auto address = impl_->jit->lookup(name);
  if (!address) {
    *why = llvm::toString(address.takeError());
    return nullptr;
  }
  out->pass = address->toPtr<PolicyFusedPassKernel>();
  return std::shared_ptr<const FusedFilters>(entry, out);
}

size_t Jit::CachedTemplates() const { return impl_->cache.size(); }

std::string Jit::TemplateKey(const Program& program, size_t f) { return CanonicalKey(program, f); }

// --- tiering ---------------------------------------------------------------

struct TieredJit::State {
  Jit jit;  // used by the worker only
  std::mutex mutex;
  std::condition_variable wake, idle;
  struct Job {
    std::string key;
    Program program;  // a copy: the caller's may go away
    size_t function;
  };
  std::deque<Job> queue;
  bool busy = false, stopping = false;
  std::string current;  // the key being compiled
  std::map<std::string, std::shared_ptr<const CompiledFunction>> ready;  // null: does not compile
  std::map<std::string, size_t> seen;  // pods of a template not queued yet
  TieringOptions tiering;
  std::thread worker;

  State(JitOptions options, TieringOptions tiering) : jit(options), tiering(tiering) {
    worker = std::thread([this] { Run(); });
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
      if (stopping) return;
      Job job = std::move(queue.front());
      queue.pop_front();
      busy = true;
      current = job.key;
      lock.unlock();
      std::string why;
      std::shared_ptr<const CompiledFunction> kernels = jit.Compile(job.program, job.function, &why);
      lock.lock();
      ready[job.key] = std::move(kernels);
      busy = false;
      current.clear();
      idle.notify_all();
    }
  }
};

TieredJit::TieredJit(JitOptions options, TieringOptions tiering) : state_(std::make_unique<State>(options, tiering)) {}

TieredJit::~TieredJit() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    state_->queue.clear();
  }
  state_->wake.notify_all();
  state_->worker.join();
}

std::shared_ptr<const CompiledFunction> TieredJit::Get(const Program& program, size_t f) {
  std::string key = Jit::TemplateKey(program, f);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (auto it = state_->ready.find(key); it != state_->ready.end()) return it->second;
  if (state_->busy && state_->current == key) return nullptr;  // compiling now
  for (const State::Job& job : state_->queue) {
    if (job.key == key) return nullptr;  // queued already
  }
  if (++state_->seen[key] < state_->tiering.hot_after) return nullptr;  // not hot yet
  state_->seen.erase(key);
  state_->queue.push_back({key, program, f});
  state_->wake.notify_one();
  return nullptr;
}

void TieredJit::Drain() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->idle.wait(lock, [&] { return state_->queue.empty() && !state_->busy; });
}

std::optional<std::string> Jit::EmitText(const Program& program, size_t f, bool assembly, std::string* why) {
  llvm::LLVMContext context;
  CompiledFunction out;
  std::unique_ptr<llvm::Module> module = impl_->Build(context, program, f, out, "", why);
  if (!module) return std::nullopt;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!assembly) {
    module->print(os, nullptr);
    return text;
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream asm_out(buffer);
  llvm::legacy::PassManager pm;
  if (impl_->Machine()->addPassesToEmitFile(pm, asm_out, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    *why = "this target cannot print assembly";
    return std::nullopt;
  }
  pm.run(*module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace policy::codegen
