// The Jit: template key -> kernel cache -> emit -> prepare -> load (jit.h).

#include "compiler/codegen/jit.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
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
    if (Status emitted = EmitKernels(context, *module, program, f, shape, options.opt_level == 0, out, prefix); !emitted) return emitted.error();
    if (Status prepared = PrepareModule(*module, options.opt_level, options.gathers); !prepared) return prepared.error();
    return module;
  }
};

Jit::Jit(JitOptions options) : impl_(std::make_unique<Impl>(options)) {}

Jit::~Jit() = default;

Expected<std::shared_ptr<const CompiledFunction>> Jit::Compile(const Program& program, size_t f) {
  FunctionRef one{&program, f};
  return std::move(CompileAll({&one, 1})[0]);
}

std::vector<Expected<std::shared_ptr<const CompiledFunction>>> Jit::CompileAll(std::span<const FunctionRef> functions) {
  using Result = Expected<std::shared_ptr<const CompiledFunction>>;
  std::vector<Result> results(functions.size(), Error{"not compiled"});
  std::vector<KernelShape> shapes;
  shapes.reserve(functions.size());
  // Cache hits; the first function of each new shape is compiled, the
  // others of that shape take its kernels.
  std::map<std::string, size_t> first_of;
  std::vector<size_t> compile;
  std::vector<size_t> same_as(functions.size(), SIZE_MAX);  // a function compiled here of the same shape
  for (size_t i = 0; i < functions.size(); ++i) {
    shapes.push_back(ShapeOf(*functions[i].program, functions[i].function));
    if (impl_->options.cache) {
      if (std::shared_ptr<CachedKernels> entry = impl_->cache.Find(shapes[i].key)) {
        results[i] = BindShape(std::shared_ptr<const CompiledFunction>(entry, &entry->kernels), std::move(shapes[i]));
        continue;
      }
    }
    auto [first, added] = first_of.emplace(shapes[i].key, i);
    if (added) compile.push_back(i);
    else same_as[i] = first->second;
  }
  if (!compile.empty()) {
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("policy", *context);
    uint64_t id = impl_->next_module++;
    std::vector<std::shared_ptr<CachedKernels>> entries(functions.size());
    std::vector<size_t> emitted;
    std::vector<uint8_t> has_pass(functions.size(), 0);
    for (size_t i : compile) {
      auto entry = std::make_shared<CachedKernels>();
      std::string prefix = fmt::format("k{}_{}_", id, i);
      Status status = EmitKernels(*context, *module, *functions[i].program, functions[i].function, shapes[i],
                                  impl_->options.opt_level == 0, entry->kernels, prefix);
      if (!status) {  // it stays with the interpreter; drop what it left in the module
        results[i] = status.error();
        std::vector<llvm::Function*> partial;
        for (llvm::Function& f : *module) {
          if (f.getName().starts_with(prefix)) partial.push_back(&f);
        }
        for (llvm::Function* f : partial) f->eraseFromParent();
        continue;
      }
      entry->kernels.resource_names = shapes[i].resource_names;
      entries[i] = std::move(entry);
      emitted.push_back(i);
      has_pass[i] = module->getFunction(prefix + "pass") != nullptr;
    }
    Status ready = Ok();
    auto code = std::make_shared<Code>();
    if (!emitted.empty()) {
      ready = PrepareModule(*module, impl_->options.opt_level, impl_->options.gathers);
      if (ready) ready = impl_->session.Load(std::move(module), std::move(context), *code);
    }
    for (size_t i : emitted) {
      CompiledFunction& out = entries[i]->kernels;
      std::string prefix = fmt::format("k{}_{}_", id, i);
      auto symbol = [&](const std::string& name, auto& kernel) -> Status {
        Expected<void*> address = impl_->session.Lookup(prefix + name);
        if (!address) return address.error();
        kernel = reinterpret_cast<std::remove_reference_t<decltype(kernel)>>(*address);
        return Ok();
      };
      Status found = ready;
      if (found && out.filters > 0) found = symbol("filter", out.filter);
      if (found && has_pass[i]) found = symbol("pass", out.pass);
      out.scores.resize(functions[i].program->functions[functions[i].function].scores.size());
      for (size_t sc = 0; found && sc < out.scores.size(); ++sc) found = symbol(fmt::format("score{}", sc), out.scores[sc]);
      if (!found) {
        results[i] = found.error();
        continue;
      }
      entries[i]->code = code;
      if (impl_->options.cache) impl_->cache.Insert(shapes[i].key, entries[i]);
      results[i] = std::shared_ptr<const CompiledFunction>(entries[i], &entries[i]->kernels);
    }
  }
  for (size_t i = 0; i < functions.size(); ++i) {
    if (same_as[i] == SIZE_MAX) continue;
    Result& made = results[same_as[i]];
    results[i] = made ? Result(BindShape(*made, std::move(shapes[i]))) : Result(made.error());
  }
  return results;
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
