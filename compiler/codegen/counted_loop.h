#pragma once
/// A counted loop in LLVM IR, `for (i = start; i < end; ++i)`, entered only
/// when start < end, with the values it carries from one iteration to the
/// next: the scaffolding every loop the kernel emitter writes shares (the
/// rows of a kernel, the words of a taint bitset).
///
///   CountedLoop loop(b, "row", b.getInt64(0), n);   // builder now in the body
///   llvm::PHINode* sum = loop.Carry(b.getInt64(0));
///   ... body, reading loop.Index() and sum ...
///   loop.End({sum_next});                           // builder now after the loop
///   llvm::Value* total = loop.Final(0);             // sum_next, or 0 when it did not run

#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>

namespace policy::codegen {

class CountedLoop {
 public:
  CountedLoop(llvm::IRBuilder<>& b, const std::string& name, llvm::Value* start, llvm::Value* end)
      : b_(b), end_(end), before_(b.GetInsertBlock()) {
    llvm::Function* f = before_->getParent();
    body_ = llvm::BasicBlock::Create(b.getContext(), name, f);
    exit_ = llvm::BasicBlock::Create(b.getContext(), name + ".done", f);
    b.CreateCondBr(b.CreateICmpULT(start, end), body_, exit_);
    b.SetInsertPoint(body_);
    index_ = b.CreatePHI(start->getType(), 2, name + ".i");
    index_->addIncoming(start, before_);
  }

  llvm::PHINode* Index() const { return index_; }

  /// A value carried across iterations, `initial` on the first; call before
  /// the body adds blocks.
  llvm::PHINode* Carry(llvm::Value* initial, const std::string& name = "") {
    llvm::PHINode* phi = b_.CreatePHI(initial->getType(), 2, name);
    phi->addIncoming(initial, before_);
    carried_.push_back(phi);
    return phi;
  }

  /// Ends the body where the builder is: `next` holds each carried value
  /// for the next iteration, in the order carried. The builder is left in
  /// the block after the loop.
  void End(const std::vector<llvm::Value*>& next) {
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    llvm::Value* i_next = b_.CreateAdd(index_, llvm::ConstantInt::get(index_->getType(), 1));
    index_->addIncoming(i_next, latch);
    for (size_t c = 0; c < carried_.size(); ++c) carried_[c]->addIncoming(next[c], latch);
    b_.CreateCondBr(b_.CreateICmpULT(i_next, end_), body_, exit_);
    b_.SetInsertPoint(exit_);
    for (size_t c = 0; c < carried_.size(); ++c) {
      llvm::PHINode* final_value = b_.CreatePHI(carried_[c]->getType(), 2);
      final_value->addIncoming(carried_[c]->getIncomingValueForBlock(before_), before_);
      final_value->addIncoming(next[c], latch);
      finals_.push_back(final_value);
    }
  }

  /// After End(): the `c`th carried value's last, or its initial value when
  /// the loop did not run.
  llvm::Value* Final(size_t c) const { return finals_[c]; }
  llvm::BasicBlock* Exit() const { return exit_; }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Value* end_;
  llvm::BasicBlock* before_;
  llvm::BasicBlock* body_ = nullptr;
  llvm::BasicBlock* exit_ = nullptr;
  llvm::PHINode* index_ = nullptr;
  std::vector<llvm::PHINode*> carried_;
  std::vector<llvm::PHINode*> finals_;
};

}  // namespace policy::codegen
