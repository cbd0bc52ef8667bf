// The Jit: template key -> kernel cache -> emit -> prepare -> load (jit.h).

#include "compiler/codegen/jit.h"

#include <fmt/format.h>

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/codegen/jit_session.h"
#include "compiler/codegen/kernel_cache.h"
#include "compiler/codegen/kernel_emitter.h"
#include "compiler/codegen/template_key.h"

namespace policy::codegen {

using ir::Program;

struct Jit::Impl {
  JitOptions options;
  JitSession session;
  KernelCache cache;
  uint64_t next_module = 0;

  explicit Impl(JitOptions o) : options(o), cache(o.cache_capacity) {}

  // Builds and prepares the module of function `f`; fills `out`'s slots.
  std::unique_ptr<llvm::Module> Build(llvm::LLVMContext& context, const Program& program, size_t f,
                                      CompiledFunction& out, const std::string& prefix, std::string* why) {
    auto module = std::make_unique<llvm::Module>("policy", context);
    if (!EmitKernels(context, *module, program, f, out, prefix, why)) return nullptr;
    if (!PrepareModule(*module, options.opt_level, options.gathers, why)) return nullptr;
    return module;
  }
};

Jit::Jit(JitOptions options) : impl_(std::make_unique<Impl>(options)) {}

Jit::~Jit() = default;

std::shared_ptr<const CompiledFunction> Jit::Compile(const Program& program, size_t f, std::string* why) {
  std::string key = impl_->options.cache ? codegen::TemplateKey(program, f) : std::string();
  if (impl_->options.cache) {
    if (std::shared_ptr<CachedKernels> entry = impl_->cache.Find(key)) {
      return std::shared_ptr<const CompiledFunction>(entry, &entry->kernels);
    }
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  auto entry = std::make_shared<CachedKernels>();
  CompiledFunction& out = entry->kernels;
  std::string prefix = fmt::format("k{}_", impl_->next_module++);
  std::unique_ptr<llvm::Module> module = impl_->Build(*context, program, f, out, prefix, why);
  if (!module || !impl_->session.Load(std::move(module), std::move(context), *entry, why)) return nullptr;
  if (out.filters > 0) {
    out.filter = reinterpret_cast<PolicyFilterKernel>(impl_->session.Lookup(prefix + "filter", why));
    out.pass = reinterpret_cast<PolicyPassKernel>(impl_->session.Lookup(prefix + "pass", why));
    if (out.filter == nullptr || out.pass == nullptr) return nullptr;
  }
  for (size_t s = 0; s < program.functions[f].scores.size(); ++s) {
    auto* kernel = reinterpret_cast<PolicyScoreKernel>(impl_->session.Lookup(fmt::format("{}score{}", prefix, s), why));
    if (kernel == nullptr) return nullptr;
    out.scores.push_back(kernel);
  }
  if (impl_->options.cache) impl_->cache.Insert(key, entry);
  return std::shared_ptr<const CompiledFunction>(entry, &entry->kernels);
}

size_t Jit::CachedTemplates() const { return impl_->cache.Size(); }

std::string Jit::TemplateKey(const Program& program, size_t f) { return codegen::TemplateKey(program, f); }

std::optional<std::string> Jit::EmitText(const Program& program, size_t f, bool assembly, std::string* why) {
  llvm::LLVMContext context;
  CompiledFunction out;
  std::unique_ptr<llvm::Module> module = impl_->Build(context, program, f, out, "", why);
  if (!module) return std::nullopt;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!assembly) {
    module->print(os, nullptr);
    return text;
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream asm_out(buffer);
  llvm::legacy::PassManager pm;
  if (HostMachine()->addPassesToEmitFile(pm, asm_out, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    *why = "this target cannot print assembly";
    return std::nullopt;
  }
  pm.run(*module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace policy::codegen
