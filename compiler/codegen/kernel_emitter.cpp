// IR -> LLVM IR kernels (kernel_emitter.h).

#include "compiler/codegen/kernel_emitter.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include <llvm/IR/IRBuilder.h>

#include "compiler/codegen/arith_emitter.h"
#include "compiler/codegen/counted_loop.h"
#include "compiler/codegen/kernel_shape.h"

namespace policy::codegen {
namespace {

using namespace ir;
using lang::FieldId;

/// A value of one row: `v` (i64 or i1) and, for optional types, `none` (i1).
struct Val {
  llvm::Value* v = nullptr;
  llvm::Value* none = nullptr;
};

/// Thrown (and caught in Compile) when the IR uses what this back end does not compile.
struct Unsupported {
  std::string what;
};

class KernelEmitter {
 public:
  KernelEmitter(llvm::LLVMContext& context, llvm::Module& module, const Program& program, const Function& function,
                const KernelShape& shape, bool fast_isel, CompiledFunction& out)
      : cx_(context), module_(module), b_(context), arith_(b_, fast_isel), program_(program), fn_(function),
        shape_(shape), out_(out), fast_isel_(fast_isel) {
    i1_ = b_.getInt1Ty();
    i8_ = b_.getInt8Ty();
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
    ptr_ = b_.getPtrTy();
  }

  /// What a kernel computes per row: bit f of failed[k] set when filter f
  /// fails (kFilter), the rows passing every filter (kPass), or the value of
  /// score `score` (kScore).
  enum class Kind { kFilter, kPass, kScore };

  /// Emits kernel `name` of `kind`.

  void EmitKernel(const std::string& name, Kind kind, size_t score = 0) {
    // void kernel(const PolicyColumns* columns, const uint32_t* rows, uint64_t n, T* out),
    // or for kPass: uint64_t kernel(..., uint32_t* passing), the count of passing rows.
    bool pass = kind == Kind::kPass;
    kind_ = kind;
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
    if (!shape_.divides || fast_isel_) {  // (at O0 nothing vectorizes: exact divisions only)
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
    CountedLoop loop(b_, "row", b_.getInt64(0), n);
    llvm::Value* k = loop.Index();
    llvm::PHINode* m = loop.Carry(b_.getInt64(0), "m");  // kPass: rows written so far
    llvm::PHINode* slow = loop.Carry(b_.getFalse(), "slow");
    arith_.SetFast(fast, slow);
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
    llvm::Value* slow_next = arith_.Slow();
    arith_.SetFast(false, nullptr);
    loop.End({m_next, slow_next});
    return {loop.Exit(), loop.Final(0), loop.Final(1)};
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
    device_begin_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 12), "device_begin");
    device_ids_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 13), "device_ids");
    device_allocated_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 14), "device_allocated");
    device_capacity_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 15), "device_capacity");
    device_selector_ = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 16), "device_selector");
    // The pod's values, loaded once per call (no LICM at O0).
    llvm::Value* params = b_.CreateLoad(ptr_, b_.CreateStructGEP(ColumnsType(), columns, 11), "params");
    params_.clear();
    for (size_t i = 0; i < shape_.params.size(); ++i) {
      params_.push_back(b_.CreateLoad(i64_, b_.CreateGEP(i64_, params, b_.getInt64(i)), fmt::format("param{}", i)));
    }
    label_columns_.clear();
    device_columns_.clear();
    resource_columns_.clear();
  }

  llvm::StructType* ColumnsType() {
    if (columns_type_ == nullptr) {
      columns_type_ = llvm::StructType::get(
          cx_, {ptr_, ptr_, ptr_, i64_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_});
    }
    return columns_type_;
  }

  [[noreturn]] void Fail(std::string what) { throw Unsupported{std::move(what)}; }

  /// Parameter `i` of node `id` (kernel_shape.h), loaded in the entry block.
  llvm::Value* Param(NodeId id, size_t i) { return params_[static_cast<size_t>(shape_.first_param[id]) + i]; }

  bool Optional(NodeId id) const { return program_.types[id]->kind == lang::TypeKind::kOptional; }
  lang::TypeRef Unwrapped(NodeId id) const {
    lang::TypeRef t = program_.types[id];
    return t->kind == lang::TypeKind::kOptional ? t->element : t;
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
    if (const auto* n = std::get_if<IntConst>(&node)) {
      int32_t param = shape_.first_param[id];
      return wrap(param >= 0 ? params_[static_cast<size_t>(param)] : b_.getInt64(n->value));
    }
    if (std::holds_alternative<NoneConst>(node)) return Val{b_.getInt64(0), b_.getTrue()};
    if (const auto* n = std::get_if<Not>(&node)) return wrap(b_.CreateNot(Bool(Eval(n->operand))));
    if (const auto* n = std::get_if<And>(&node)) return wrap(b_.CreateAnd(Bool(Eval(n->lhs)), Bool(Eval(n->rhs))));
    if (const auto* n = std::get_if<Or>(&node)) return wrap(b_.CreateOr(Bool(Eval(n->lhs)), Bool(Eval(n->rhs))));
    if (const auto* n = std::get_if<Negate>(&node)) {
      Val a = Eval(n->operand);
      return Val{arith_.Sub(b_.getInt64(0), Int(a)), a.none};
    }
    if (const auto* n = std::get_if<Arith>(&node)) {
      if (Optional(n->lhs) || Optional(n->rhs)) Fail("arithmetic on an optional value");
      llvm::Value* lhs = Int(Eval(n->lhs));
      llvm::Value* rhs = Int(Eval(n->rhs));
      return wrap(arith_.Binary(n->op, lhs, rhs));
    }
    if (const auto* n = std::get_if<IntToQuantity>(&node)) {
      Val a = Eval(n->operand);
      return Val{arith_.Mul(Int(a), b_.getInt64(1000)), a.none};
    }
    if (const auto* n = std::get_if<Compare>(&node)) return wrap(EvalCompare(*n));
    if (const auto* n = std::get_if<Select>(&node)) {
      llvm::Value* c = Bool(Eval(n->condition));
      Val t = Eval(n->then_value), e = Eval(n->else_value);
      if (t.v->getType() != e.v->getType()) t.v = Int(t), e.v = Int(e);
      Val out{arith_.Select(c, t.v, e.v), nullptr};
      if (optional) out.none = arith_.Select(c, NoneOf(t), NoneOf(e));
      return out;
    }
    if (const auto* n = std::get_if<Coalesce>(&node)) {
      Val a = Eval(n->value), f = Eval(n->fallback);
      if (a.v->getType() != f.v->getType()) a.v = Int(a), f.v = Int(f);
      llvm::Value* none = NoneOf(a);
      Val out{arith_.Select(none, f.v, a.v), nullptr};
      if (optional) out.none = b_.CreateAnd(none, NoneOf(f));
      return out;
    }
    if (const auto* n = std::get_if<Local>(&node)) {
      const Slot& slot = fn_.slots[n->slot];
      if (slot.kind == Slot::Kind::kLoop) {  // a device of a loop over node.devices: its id
        auto it = devices_.find(n->slot);
        if (it == devices_.end()) Fail("a loop variable");
        return Val{it->second, nullptr};
      }
      if (slot.kind == Slot::Kind::kArgument && slot.value) return Eval(*slot.value);  // at each use
      if (slot.kind != Slot::Kind::kLet || !slot.value) Fail("a loop variable");
      if (auto it = slots_.find(n->slot); it != slots_.end()) return it->second;
      Val v = Eval(*slot.value);
      slots_[n->slot] = v;
      return v;
    }
    if (const auto* n = std::get_if<Loop>(&node)) return wrap(EvalDeviceLoop(*n));
    if (const auto* n = std::get_if<LoadField>(&node); n && n->field == FieldId::kDeviceAllocated) {
      llvm::Value* device = Eval(n->object).v;
      return wrap(b_.CreateICmpNE(b_.CreateLoad(i8_, b_.CreateGEP(i8_, device_allocated_, device)), b_.getInt8(0)));
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
      llvm::Value* domain = b_.CreateZExt(LabelDomain(n->key), i64_);
      llvm::Value* in = b_.getFalse();
      for (size_t i = 0; i < n->domains.size(); ++i) in = b_.CreateOr(in, b_.CreateICmpEQ(domain, Param(id, i)));
      return wrap(in);
    }
    if (const auto* n = std::get_if<TaintScan>(&node)) return wrap(EvalTaints(id, *n));
    if (const auto* n = std::get_if<CallBuiltin>(&node);
        n && lang::Builtins()[static_cast<size_t>(n->builtin)].reads == lang::BuiltinReads::kCluster) {
      for (NodeId a : n->args) {
        if (program_.reads_node[a]) Fail("a cluster builtin whose arguments read the node");
      }
      auto slot = static_cast<size_t>(shape_.cluster_slot[id]);  // every reachable call has one
      (kind_ == Kind::kScore ? out_.cluster_in_scores : out_.cluster_in_filters)[slot] = 1;
      llvm::Value* values = b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, cluster_, b_.getInt64(slot)));
      llvm::Value* v = b_.CreateLoad(i64_, b_.CreateGEP(i64_, values, row_));
      return wrap(Unwrapped(id)->kind == lang::TypeKind::kBool ? b_.CreateICmpNE(v, b_.getInt64(0)) : v);
    }
    if (const auto* n = std::get_if<CallBuiltin>(&node); n && n->builtin == lang::BuiltinId::kCel) {
      const auto* text = std::get_if<StringConst>(&program_.nodes[n->args[1]]);
      if (text == nullptr) Fail("a `cel` selector that is not a constant");
      llvm::Value* column = DeviceColumn(device_selector_, out_.device_selectors, text->value, "cel");
      llvm::Value* verdict = b_.CreateLoad(i8_, b_.CreateGEP(i8_, column, Eval(n->args[0]).v));
      return wrap(b_.CreateICmpEQ(verdict, b_.getInt8(1)));  // -1 (the selector failed there) is false
    }
    if (const auto* n = std::get_if<CallBuiltin>(&node)) {
      if (n->builtin == lang::BuiltinId::kToInt || n->builtin == lang::BuiltinId::kToQuantity) {  // of a node label
        const auto* index = std::get_if<Index>(&program_.nodes[n->args[0]]);
        const auto* load = index ? std::get_if<LoadField>(&program_.nodes[index->object]) : nullptr;
        const auto* key = index ? std::get_if<StringConst>(&program_.nodes[index->key]) : nullptr;
        if (load == nullptr || key == nullptr || load->field != FieldId::kNodeLabels) {
          Fail("`.int()` or `.quantity()` of a value other than a node label");
        }
        return LabelNumber(key->value, n->builtin == lang::BuiltinId::kToQuantity);
      }
      return wrap(EvalCall(*n));
    }
    Fail(fmt::format("IR node kind {}", node.index()));
  }

  llvm::Value* EvalCompare(const Compare& c) {
    Val a = Eval(c.lhs), b = Eval(c.rhs);
    if (Unwrapped(c.lhs)->kind == lang::TypeKind::kString || Unwrapped(c.rhs)->kind == lang::TypeKind::kString) {
      Fail("a string comparison");
    }
    llvm::Value* x = Int(a);
    llvm::Value* y = Int(b);
    llvm::Value* an = NoneOf(a);
    llvm::Value* bn = NoneOf(b);
    llvm::Value* any_none = b_.CreateOr(an, bn);
    llvm::Value* both_none = b_.CreateAnd(an, bn);
    switch (c.op) {
      case CompareOp::kEq: return arith_.Select(any_none, both_none, b_.CreateICmpEQ(x, y));
      case CompareOp::kNe: return b_.CreateNot(arith_.Select(any_none, both_none, b_.CreateICmpEQ(x, y)));
      case CompareOp::kLt: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSLT(x, y));
      case CompareOp::kLe: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSLE(x, y));
      case CompareOp::kGt: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSGT(x, y));
      case CompareOp::kGe: return b_.CreateAnd(b_.CreateNot(any_none), b_.CreateICmpSGE(x, y));
    }
    return b_.getFalse();
  }

  // `any/all/count/sum device in node.devices: body`: a loop over the row's
  // devices, the body's values dropped from the memo after it (they do not
  // dominate what follows the loop).
  llvm::Value* EvalDeviceLoop(const Loop& loop) {
    const auto* load = std::get_if<LoadField>(&program_.nodes[loop.collection]);
    if (load == nullptr || load->field != FieldId::kNodeDevices || loop.second || loop.kind == LoopKind::kFirst) {
      Fail("a loop other than any/all/count/sum over node.devices");
    }
    out_.devices = true;
    llvm::Value* begin = b_.CreateZExt(b_.CreateLoad(i32_, b_.CreateGEP(i32_, device_begin_, row_)), i64_);
    llvm::Value* end =
        b_.CreateZExt(b_.CreateLoad(i32_, b_.CreateGEP(i32_, device_begin_, b_.CreateAdd(row_, b_.getInt64(1)))), i64_);
    bool boolean = loop.kind == LoopKind::kAny || loop.kind == LoopKind::kAll;
    llvm::Value* start = boolean ? static_cast<llvm::Value*>(b_.getInt1(loop.kind == LoopKind::kAll)) : b_.getInt64(0);
    std::map<NodeId, Val> memo = memo_;
    std::map<SlotId, Val> slots = slots_;
    llvm::Value* slow = arith_.Slow();
    CountedLoop counted(b_, "device", begin, end);
    llvm::PHINode* acc = counted.Carry(start, "acc");
    llvm::Value* device = b_.CreateZExt(b_.CreateLoad(i32_, b_.CreateGEP(i32_, device_ids_, counted.Index())), i64_);
    devices_[loop.first] = device;
    llvm::Value* next = acc;
    switch (loop.kind) {
      case LoopKind::kAny: next = b_.CreateOr(acc, Bool(Eval(*loop.body))); break;
      case LoopKind::kAll: next = b_.CreateAnd(acc, Bool(Eval(*loop.body))); break;
      case LoopKind::kCount: next = loop.body ? b_.CreateAdd(acc, b_.CreateZExt(Bool(Eval(*loop.body)), i64_))
                                              : b_.CreateAdd(acc, b_.getInt64(1));
        break;
      case LoopKind::kSum: {
        Val v = Eval(*loop.body);
        if (v.none != nullptr) Fail("a sum of optional values");
        next = arith_.Binary(ArithOp::kAdd, acc, Int(v));
        break;
      }
      case LoopKind::kFirst: break;
    }
    if (arith_.Slow() != slow) Fail("a division in a loop over node.devices");
    devices_.erase(loop.first);
    memo_ = std::move(memo);
    slots_ = std::move(slots);
    counted.End({next});
    return counted.Final(0);
  }

  // A device column of `slots` (capacity names or selector texts) by name,
  // its pointer loaded once in the entry block.
  llvm::Value* DeviceColumn(llvm::Value* table, std::vector<std::string>& slots, const std::string& name, const char* what) {
    size_t index = 0;
    while (index < slots.size() && slots[index] != name) ++index;
    if (index == slots.size()) slots.push_back(name);
    auto key = std::make_pair(table, index);
    if (auto it = device_columns_.find(key); it != device_columns_.end()) return it->second;
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(&*llvm::cast<llvm::Instruction>(table)->getNextNode());
    llvm::Value* column = b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, table, b_.getInt64(index)), what);
    return device_columns_[key] = column;
  }

  // node.allocatable/requested/scoringRequested[NAME] and a device's
  // capacity[NAME], in milli-units.
  llvm::Value* EvalResource(const Index& index) {
    const auto* load = std::get_if<LoadField>(&program_.nodes[index.object]);
    const auto* name = std::get_if<StringConst>(&program_.nodes[index.key]);
    if (load != nullptr && name != nullptr && load->field == FieldId::kDeviceCapacity) {
      llvm::Value* column = DeviceColumn(device_capacity_, out_.device_capacities, name->value, "capacity");
      return b_.CreateLoad(i64_, b_.CreateGEP(i64_, column, Eval(load->object).v));
    }
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
  llvm::Value* EvalTaints(NodeId id, const TaintScan& scan) {
    if (scan.kind == LoopKind::kFirst || scan.kind == LoopKind::kSum) Fail("a taints_first scan");
    auto words = static_cast<uint32_t>(TaintMask(scan).size());  // the mask's words are parameters
    llvm::Value* base = b_.CreateGEP(i64_, taint_bits_, b_.CreateMul(row_, taint_words_));
    llvm::Value* any = b_.getFalse();
    llvm::Value* outside = b_.getFalse();
    llvm::Value* count = b_.getInt64(0);
    // Words of the set (the table has at least this many: the program is bound to it).
    for (uint32_t w = 0; w < words; ++w) {
      llvm::Value* bits = b_.CreateLoad(i64_, b_.CreateGEP(i64_, base, b_.getInt64(w)));
      llvm::Value* mask = Param(id, w);
      llvm::Value* in = b_.CreateAnd(bits, mask);
      any = b_.CreateOr(any, b_.CreateICmpNE(in, b_.getInt64(0)));
      outside = b_.CreateOr(outside, b_.CreateICmpNE(b_.CreateAnd(bits, b_.CreateNot(mask)), b_.getInt64(0)));
      count = b_.CreateAdd(count, b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, in));
    }
    if (scan.kind == LoopKind::kAny) return any;
    if (scan.kind == LoopKind::kCount) return count;
    // all: no taint outside the set, in these words or any later word of the row.
    CountedLoop loop(b_, "taint.rest", b_.getInt64(words), taint_words_);
    llvm::PHINode* acc = loop.Carry(b_.getInt64(0));
    llvm::Value* word = b_.CreateLoad(i64_, b_.CreateGEP(i64_, base, loop.Index()));
    loop.End({b_.CreateOr(acc, word)});
    llvm::Value* rest = loop.Final(0);
    return b_.CreateAnd(b_.CreateNot(outside), b_.CreateICmpEQ(rest, b_.getInt64(0)));
  }

  llvm::Value* EvalCall(const CallBuiltin& call) {
    auto arg = [&](size_t i) {
      if (Optional(call.args[i])) Fail("an optional builtin argument");
      return Int(Eval(call.args[i]));
    };
    switch (call.builtin) {
      case lang::BuiltinId::kMax: {
        llvm::Value *a = arg(0), *b = arg(1);
        return b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b);
      }
      case lang::BuiltinId::kMin: {
        llvm::Value *a = arg(0), *b = arg(1);
        return b_.CreateSelect(b_.CreateICmpSLT(a, b), a, b);
      }
      case lang::BuiltinId::kMulDiv: {  // a * b / c rounded down, 0 when c is 0
        llvm::Value* a = arg(0);
        llvm::Value* b = arg(1);
        llvm::Value* c = arg(2);
        return arith_.MulDiv(a, b, c);
      }
      case lang::BuiltinId::kUnits: {  // ceil for positive remainders, as the interpreter
        llvm::Value* v = arg(0);
        llvm::Value* q = b_.CreateSDiv(v, b_.getInt64(1000));
        llvm::Value* r = b_.CreateSRem(v, b_.getInt64(1000));
        return b_.CreateAdd(q, b_.CreateZExt(b_.CreateICmpSGT(r, b_.getInt64(0)), i64_));
      }
      case lang::BuiltinId::kMillis: return arg(0);
      case lang::BuiltinId::kInterpolate: {  // over constant points (a profile's shape): a chain of selects
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
      default: Fail(fmt::format("the builtin `{}`", lang::Builtins()[static_cast<size_t>(call.builtin)].name));
    }
  }

  llvm::LLVMContext& cx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  ArithEmitter arith_;
  const Program& program_;
  const Function& fn_;
  const KernelShape& shape_;
  CompiledFunction& out_;
  bool fast_isel_;
  llvm::Type *i1_, *i8_, *i32_, *i64_;
  llvm::PointerType* ptr_;
  llvm::StructType* columns_type_ = nullptr;
  llvm::Value *labels_ = nullptr, *resources_ = nullptr, *taint_bits_ = nullptr, *taint_words_ = nullptr;
  llvm::Value *unschedulable_ = nullptr, *pod_count_ = nullptr, *row_ = nullptr;
  llvm::Value *label_ints_ = nullptr, *label_is_int_ = nullptr;
  llvm::Value *label_quantities_ = nullptr, *label_is_quantity_ = nullptr, *cluster_ = nullptr;
  Kind kind_ = Kind::kFilter;  // the kernel being emitted
  std::map<size_t, llvm::Value*> label_columns_, resource_columns_;
  std::vector<llvm::Value*> params_;
  std::map<NodeId, Val> memo_;
  std::map<SlotId, Val> slots_;
  llvm::Value *device_begin_ = nullptr, *device_ids_ = nullptr, *device_allocated_ = nullptr;
  llvm::Value *device_capacity_ = nullptr, *device_selector_ = nullptr;
  std::map<SlotId, llvm::Value*> devices_;  // loop variables over node.devices: the device id
  std::map<std::pair<llvm::Value*, size_t>, llvm::Value*> device_columns_;
};

// Whether the function is one the kernels can run: no `filter for` over a
// node collection, and prefilters and `when` left to the interpreter.
std::optional<std::string> NotCompiled(const Function& f) {
  for (const Filter& x : f.filters) {
    if (x.each_collection) return "a `filter for` over a node collection";
  }
  if (f.filters.size() > 64) return "more than 64 filters";
  return std::nullopt;
}

}  // namespace

Status EmitKernels(llvm::LLVMContext& context, llvm::Module& module, const Program& program, size_t f,
                   const KernelShape& shape, bool fast_isel, CompiledFunction& out, const std::string& prefix) {
  const Function& fn = program.functions[f];
  if (std::optional<std::string> why = NotCompiled(fn)) return Error{*why};
  out.cluster = shape.cluster;
  out.cluster_in_filters.assign(shape.cluster.size(), 0);
  out.cluster_in_scores.assign(shape.cluster.size(), 0);
  out.params = shape.params;
  try {
    bool always = true;  // every filter is constant true (NodeName for a pod without nodeName): no kernel
    for (const Filter& x : fn.filters) {
      const auto* b = std::get_if<BoolConst>(&program.nodes[x.condition]);
      always = always && b != nullptr && b->value;
    }
    if (!always) {
      KernelEmitter(context, module, program, fn, shape, fast_isel, out).EmitKernel(prefix + "filter", KernelEmitter::Kind::kFilter);
      if (!fast_isel) {  // at O0 the filter kernel serves alone: half the code to generate
        KernelEmitter(context, module, program, fn, shape, fast_isel, out).EmitKernel(prefix + "pass", KernelEmitter::Kind::kPass);
      }
      out.filters = fn.filters.size();
    }
    for (size_t s = 0; s < fn.scores.size(); ++s) {
      KernelEmitter(context, module, program, fn, shape, fast_isel, out).EmitKernel(fmt::format("{}score{}", prefix, s), KernelEmitter::Kind::kScore, s);
    }
  } catch (const Unsupported& u) {  // the emitter's own; it stops here
    return Error{u.what};
  }
  return Ok();
}

}  // namespace policy::codegen
