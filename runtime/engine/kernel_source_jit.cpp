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

namespace {

std::vector<codegen::Jit::FunctionRef> Refs(std::span<const KernelSource::Function> functions) {
  std::vector<codegen::Jit::FunctionRef> refs;
  for (const KernelSource::Function& f : functions) refs.push_back({f.program, f.function});
  return refs;
}

}  // namespace

KernelSource::Kernels KernelSource::Compile(std::span<const Function> functions) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->jit) impl_->jit = std::make_unique<codegen::Jit>(impl_->options);
  Kernels out;
  for (auto& compiled : impl_->jit->CompileAll(Refs(functions))) {
    out.push_back(compiled ? *compiled : nullptr);  // a function that does not compile stays with the interpreter
  }
  return out;
}

KernelSource::Kernels KernelSource::Tiered(std::span<const Function> functions) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->tiered) {
    impl_->tiered = std::make_unique<codegen::TieredJit>(impl_->options, codegen::TieringOptions{impl_->hot_after});
  }
  return impl_->tiered->GetAll(Refs(functions));
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
