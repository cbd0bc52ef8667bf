// Builds without the LLVM back end (the fuzzers'): no kernels, every plugin
// is interpreted.

#include "runtime/engine/kernel_source.h"

namespace policy::engine {

struct KernelSource::Impl {};

KernelSource::KernelSource(int, size_t) {}
KernelSource::~KernelSource() = default;
std::shared_ptr<const codegen::CompiledFunction> KernelSource::Compile(const ir::Program&, size_t) { return nullptr; }
std::shared_ptr<const codegen::CompiledFunction> KernelSource::Tiered(const ir::Program&, size_t) { return nullptr; }
void KernelSource::Drain() {}
bool KernelSource::Available() { return false; }

}  // namespace policy::engine
