#pragma once
/// Where the engine's kernels come from: the LLVM back end
/// (kernel_source_jit.cpp), kept behind this seam so that engine headers
/// never include LLVM's.
/// Owns the kernel cache and the tiering thread; both start on first use.

#include <cstddef>
#include <memory>

#include "compiler/codegen/compiled_function.h"
#include "compiler/ir/ir.h"

namespace policy::engine {

class KernelSource {
 public:
  KernelSource(int opt_level, size_t hot_after);
  ~KernelSource();
  KernelSource(const KernelSource&) = delete;
  KernelSource& operator=(const KernelSource&) = delete;

  /// Function `f`'s kernels, compiled now or found in the cache; null when
  /// the back end does not compile what it reads.
  std::shared_ptr<const codegen::CompiledFunction> Compile(const ir::Program& program, size_t f);
  /// Its kernels when the tiering thread has them; else null, with the
  /// compilation queued once the template is hot.
  std::shared_ptr<const codegen::CompiledFunction> Tiered(const ir::Program& program, size_t f);
  void Drain();
  /// Distinct kernels compiled (by Compile and by the tiering thread).
  size_t Compiled() const;
  static bool Available();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace policy::engine
