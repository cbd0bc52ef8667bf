// The engine's kernels from the LLVM back end (compiler/codegen).

#include <mutex>
#include <string>

#include "compiler/codegen/jit.h"
#include "compiler/codegen/tiered_jit.h"
#include "runtime/engine/kernel_source.h"

namespace policy::engine {

struct KernelSource::Impl {
  codegen::JitOptions options;
  size_t hot_after;
  std::mutex mutex;  // guards making the two below
  std::unique_ptr<codegen::Jit> jit;
  std::unique_ptr<codegen::TieredJit> tiered;
};

KernelSource::KernelSource(int opt_level, size_t hot_after) : impl_(std::make_unique<Impl>()) {
  impl_->options.opt_level = opt_level;
  impl_->hot_after = hot_after;
}

KernelSource::~KernelSource() = default;

std::shared_ptr<const codegen::CompiledFunction> KernelSource::Compile(const ir::Program& program, size_t f) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->jit) impl_->jit = std::make_unique<codegen::Jit>(impl_->options);
  Expected<std::shared_ptr<const codegen::CompiledFunction>> compiled = impl_->jit->Compile(program, f);
  return compiled ? *compiled : nullptr;  // a function that does not compile stays with the interpreter
}

std::shared_ptr<const codegen::CompiledFunction> KernelSource::Tiered(const ir::Program& program, size_t f) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->tiered) {
    impl_->tiered = std::make_unique<codegen::TieredJit>(impl_->options, codegen::TieringOptions{impl_->hot_after});
  }
  return impl_->tiered->Get(program, f);
}

void KernelSource::Drain() {
  codegen::TieredJit* tiered;
  {
    std::lock_guard lock(impl_->mutex);
    tiered = impl_->tiered.get();
  }
  if (tiered != nullptr) tiered->Drain();
}

size_t KernelSource::Compiled() const {
  std::lock_guard lock(impl_->mutex);
  return (impl_->jit ? impl_->jit->CachedShapes() : 0) + (impl_->tiered ? impl_->tiered->Compiled() : 0);
}

bool KernelSource::Available() { return true; }

}  // namespace policy::engine
