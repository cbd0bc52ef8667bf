#pragma once
/// Where the engine's kernels come from: the LLVM back end
/// (kernel_source_jit.cpp), kept behind this seam so that engine headers
/// never include LLVM's.
/// Owns the kernel cache and the tiering thread; both start on first use.

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "compiler/codegen/compiled_function.h"
#include "compiler/ir/ir.h"

namespace policy::engine {

class KernelSource {
 public:
  KernelSource(int opt_level, size_t hot_after);
  ~KernelSource();
  KernelSource(const KernelSource&) = delete;
  KernelSource& operator=(const KernelSource&) = delete;

  /// A function of a program.
  struct Function {
    const ir::Program* program;
    size_t function;
  };
  using Kernels = std::vector<std::shared_ptr<const codegen::CompiledFunction>>;
  /// Each function's kernels, compiled now (together, in one module) or
  /// found in the cache; null when the back end does not compile what it
  /// reads.
  Kernels Compile(std::span<const Function> functions);
  /// Each one's kernels when the tiering thread has them; else null, with
  /// the compilation of those hot enough queued (together).
  Kernels Tiered(std::span<const Function> functions);
  void Drain();
  /// Distinct kernels compiled (by Compile and by the tiering thread).
  size_t Compiled() const;
  static bool Available();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace policy::engine
