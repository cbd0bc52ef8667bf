#pragma once
/// The LLVM back end's entry point: compiles a policy function's
/// specialized, bound IR into native filter and score kernels (kernel_abi.h)
/// with ORC LLJIT, through the kernel cache.
///
/// The back end's files: kernel_emitter (IR -> LLVM IR), arith_emitter (the
/// IR's integer arithmetic), jit_session (the LLJIT and code ownership),
/// kernel_shape and kernel_cache (the cache: kernels are shared by every
/// function of one shape, the pod's values being parameters), tiered_jit
/// (background compilation), this (the Jit that ties them together).
///
/// What compiles: integer, quantity and boolean arithmetic with the IR's
/// semantics (saturating, division by zero is 0, none compares unequal),
/// `let`s, if/then/else, `??`, the node's pods, unschedulable flag and
/// resource columns, `label_in` and `taints_*` (what bind-table leaves of
/// label and taint tests), labels' `.int()`/`.quantity()`, max/min/muldiv,
/// and the cluster builtins with pod-side arguments (read per row from
/// values the runtime computes), and any/all/count/sum loops over
/// `node.devices` reading a device's `allocated`, its capacities and `cel`
/// selectors (per-device columns; the selectors decided by the device
/// table). A function that reads anything else (strings, loops over other
/// node collections) does not compile and stays with the interpreter. Messages are never compiled: the
/// interpreter renders them for the nodes a person asks about.
///
/// No LLVM header leaks out of the headers the rest of policyc includes
/// (this, tiered_jit.h, compiled_function.h, kernel_abi.h): it sees kernels
/// as C function pointers.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/codegen/compiled_function.h"
#include "compiler/ir/ir.h"
#include "support/expected.h"

namespace policy::codegen {

struct JitOptions {
  int opt_level = 2;  ///< 0..3, for the IR and the machine-code generator (0: LLVM's fast instruction selection)
  bool cache = true;  ///< reuse kernels of a function of the same shape (kernel_shape.h)
  /// Shapes kept compiled; beyond, the least recently used one that no
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

  /// Compiles function `f` of `program`, or finds kernels of its shape in
  /// the cache, with `f`'s own parameters; an Error naming what the back end
  /// does not compile (the function then stays with the interpreter). The
  /// kernels stay valid while the pointer is held (and the Jit lives).
  Expected<std::shared_ptr<const CompiledFunction>> Compile(const ir::Program& program, size_t f);
  /// A function of a program.
  struct FunctionRef {
    const ir::Program* program;
    size_t function;
  };
  /// Compile() for each of `functions` (a template's plugins): the shapes
  /// not in the cache are compiled together, in one LLVM module, so the
  /// per-module costs (context, code generator set-up, linking, memory) are
  /// paid once.
  std::vector<Expected<std::shared_ptr<const CompiledFunction>>> CompileAll(std::span<const FunctionRef> functions);
  /// Distinct shapes whose code is loaded now.
  size_t CachedShapes() const;

  /// The LLVM IR (after optimization) or the host assembly that Compile
  /// would produce, for `policyc compile --emit=llvm|asm`.
  Expected<std::string> EmitText(const ir::Program& program, size_t f, bool assembly);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace policy::codegen
