#pragma once
/// The LLVM back end: compiles a policy function's specialized, bound IR
/// into native filter and score kernels (kernel_abi.h) with ORC LLJIT.
///
/// What compiles: integer, quantity and boolean arithmetic with the IR's
/// semantics (saturating, division by zero is 0, none compares unequal),
/// `let`s, if/then/else, `??`, the node's pods, unschedulable flag and
/// resource columns, `label_in` and `taints_*` (what bind-table leaves of
/// label and taint tests), labels' `.int()`/`.quantity()`, max/min/muldiv,
/// and the cluster builtins with pod-side arguments (read per row from
/// values the runtime computes). A function that reads anything else
/// (strings, loops over node collections) does not compile and stays with
/// the interpreter. Messages are never compiled: the
/// interpreter renders them for the nodes a person asks about.
///
/// No LLVM header leaks out of this one: the rest of policyc sees kernels as
/// C function pointers.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/compiled_function.h"
#include "compiler/ir/ir.h"

namespace policy::codegen {

/// The filters of several functions (a profile's plugins) in one kernel.
struct FusedFilters {
  PolicyFusedPassKernel pass = nullptr;
  /// Per function, in the kernel's order: its column slots (fill a
  /// PolicyColumns for each, as for its own kernels).
  std::vector<CompiledFunction> slots;
};

struct JitOptions {
  int opt_level = 2;  ///< 0..3
  bool cache = true;  ///< reuse kernels of an identical specialized function (one pod template)
  /// Templates kept compiled; beyond, the least recently used one that no
  /// caller holds is dropped and its code freed (an ORC ResourceTracker).
  size_t cache_capacity = 256;
  /// Let vectorized kernels use gather instructions for rows' values. Off:
  /// on the machines measured (AMD Zen 4) scalar loads into vectors are
  /// faster: BM_FilterScore/jit/50000 takes 0.30 ms with gathers, 0.23 ms
  /// without.
  bool gathers = false;
};

class Jit {
 public:
  explicit Jit(JitOptions options = {});
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  /// Compiles function `f` of `program`, or finds its kernels in the cache;
  /// null (with the reason in `why`) when it uses what the back end does not
  /// compile. The kernels stay valid while the pointer is held (and the Jit
  /// lives).
  std::shared_ptr<const CompiledFunction> Compile(const ir::Program& program, size_t f, std::string* why);
  /// The filters of `functions` (program, function), in order, fused into
  /// one pass kernel; null (with the reason) when one of them does not
  /// compile. Not cached; its code is freed when the last holder lets go.
  std::shared_ptr<const FusedFilters> CompileFilters(const std::vector<std::pair<const ir::Program*, size_t>>& functions,
                                                     std::string* why);
  /// Templates whose code is loaded now.
  size_t CachedTemplates() const;
  /// The cache key of function `f`: what its kernels compute (no spans, no
  /// messages), equal for the pods of one template.
  static std::string TemplateKey(const ir::Program& program, size_t f);

  /// The LLVM IR (after optimization) or the host assembly that Compile
  /// would produce, for `policyc compile --emit=llvm|asm`.
  std::optional<std::string> EmitText(const ir::Program& program, size_t f, bool assembly, std::string* why);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// When a template is hot enough to compile.
struct TieringOptions {
  /// Pods of a template seen before its compilation is queued (1: the first
  /// pod queues it); a template seen fewer times stays interpreted.
  size_t hot_after = 1;
};

/// Tiering: a template's first pods run in the interpreter while its kernels
/// compile on a background thread; later pods of the template get them. A
/// pod never waits for LLVM.
class TieredJit {
 public:
  explicit TieredJit(JitOptions options = {}, TieringOptions tiering = {});
  ~TieredJit();  ///< finishes the compilation under way, drops the queue
  TieredJit(const TieredJit&) = delete;
  TieredJit& operator=(const TieredJit&) = delete;

  /// The kernels of function `f` of `program` when they are ready; else null
  /// (evaluate it in the interpreter), with its compilation queued the first
  /// time. A function the back end does not compile stays null.
  std::shared_ptr<const CompiledFunction> Get(const ir::Program& program, size_t f);
  /// Waits until every queued compilation is done (tests, benchmarks).
  void Drain();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace policy::codegen
