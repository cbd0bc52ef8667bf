// The Jit: template key -> kernel cache -> emit -> prepare -> load (jit.h).

#include "compiler/codegen/jit.h"

#include <fmt/format.h>

#include <type_traits>

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/codegen/jit_session.h"
#include "compiler/codegen/kernel_cache.h"
#include "compiler/codegen/kernel_emitter.h"
#include "compiler/codegen/kernel_shape.h"

namespace policy::codegen {

using ir::Program;

struct Jit::Impl {
  JitOptions options;
  JitSession session;
  KernelCache cache;
  uint64_t next_module = 0;

  explicit Impl(JitOptions o) : options(o), session(o.opt_level), cache(o.cache_capacity) {}

  // Builds and prepares the module of function `f`; fills `out`'s slots.
  Expected<std::unique_ptr<llvm::Module>> Build(llvm::LLVMContext& context, const Program& program, size_t f,
                                                const KernelShape& shape, CompiledFunction& out,
                                                const std::string& prefix) {
    auto module = std::make_unique<llvm::Module>("policy", context);
    if (Status emitted = EmitKernels(context, *module, program, f, shape, out, prefix); !emitted) return emitted.error();
    if (Status prepared = PrepareModule(*module, options.opt_level, options.gathers); !prepared) return prepared.error();
    return module;
  }
};

Jit::Jit(JitOptions options) : impl_(std::make_unique<Impl>(options)) {}

Jit::~Jit() = default;

Expected<std::shared_ptr<const CompiledFunction>> Jit::Compile(const Program& program, size_t f) {
  KernelShape shape = ShapeOf(program, f);
  if (impl_->options.cache) {
    if (std::shared_ptr<CachedKernels> entry = impl_->cache.Find(shape.key)) {
      return BindShape(std::shared_ptr<const CompiledFunction>(entry, &entry->kernels), std::move(shape));
    }
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  auto entry = std::make_shared<CachedKernels>();
  CompiledFunction& out = entry->kernels;
  std::string prefix = fmt::format("k{}_", impl_->next_module++);
  Expected<std::unique_ptr<llvm::Module>> module = impl_->Build(*context, program, f, shape, out, prefix);
  if (!module) return module.error();
  if (Status loaded = impl_->session.Load(std::move(*module), std::move(context), *entry); !loaded) return loaded.error();
  auto symbol = [&](const std::string& name, auto& kernel) -> Status {
    Expected<void*> address = impl_->session.Lookup(prefix + name);
    if (!address) return address.error();
    kernel = reinterpret_cast<std::remove_reference_t<decltype(kernel)>>(*address);
    return Ok();
  };
  if (out.filters > 0) {
    if (Status s = symbol("filter", out.filter); !s) return s.error();
    if (Status s = symbol("pass", out.pass); !s) return s.error();
  }
  out.scores.resize(program.functions[f].scores.size());
  for (size_t s = 0; s < out.scores.size(); ++s) {
    if (Status found = symbol(fmt::format("score{}", s), out.scores[s]); !found) return found.error();
  }
  if (impl_->options.cache) impl_->cache.Insert(shape.key, entry);
  return std::shared_ptr<const CompiledFunction>(entry, &entry->kernels);
}

size_t Jit::CachedShapes() const { return impl_->cache.Size(); }

Expected<std::string> Jit::EmitText(const Program& program, size_t f, bool assembly) {
  llvm::LLVMContext context;
  CompiledFunction out;
  Expected<std::unique_ptr<llvm::Module>> module = impl_->Build(context, program, f, ShapeOf(program, f), out, "");
  if (!module) return module.error();
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!assembly) {
    (*module)->print(os, nullptr);
    return text;
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream asm_out(buffer);
  llvm::legacy::PassManager pm;
  if (HostMachine()->addPassesToEmitFile(pm, asm_out, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return Error{"this target cannot print assembly"};
  }
  pm.run(**module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace policy::codegen
