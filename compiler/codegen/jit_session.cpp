#include "compiler/codegen/jit_session.h"

#include <mutex>

#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

namespace policy::codegen {
namespace {

void InitializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

}  // namespace

Code::~Code() {
  if (tracker) llvm::consumeError(tracker->remove());
}

llvm::TargetMachine* HostMachine() {
  InitializeLlvm();
  static std::unique_ptr<llvm::TargetMachine> machine = [] {
    std::string triple = llvm::sys::getProcessTriple();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
    llvm::TargetOptions options;
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        triple, llvm::sys::getHostCPUName(), "", options, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  }();
  return machine.get();
}

namespace {

void Optimize(llvm::Module& module, int opt_level, bool gathers) {
  module.setTargetTriple(HostMachine()->getTargetTriple().str());
  module.setDataLayout(HostMachine()->createDataLayout());
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", HostMachine()->getTargetCPU());
    std::string features = HostMachine()->getTargetFeatureString().str();
    // Vectorized kernels load rows' values one by one rather than with
    // gather instructions, unless asked (slower on the hosts measured).
    if (!gathers && HostMachine()->getTargetTriple().isX86()) features += ",+prefer-no-gather";
    f.addFnAttr("target-features", features);
  }
  if (opt_level == 0) return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(HostMachine());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level == 1   ? llvm::OptimizationLevel::O1
                                 : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  pb.buildPerModuleDefaultPipeline(level).run(module, mam);
}

}  // namespace

Status PrepareModule(llvm::Module& module, int opt_level, bool gathers) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyModule(module, &os)) return Error{"the back end made invalid LLVM IR (a bug): " + error};
  Optimize(module, opt_level, gathers);
  return Ok();
}

JitSession::JitSession(int opt_level) : opt_level_(opt_level) { InitializeLlvm(); }

Status JitSession::Start() {
  if (jit_) return Ok();
  auto machine = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine) return Error{llvm::toString(machine.takeError())};
  machine->setCodeGenOptLevel(opt_level_ <= 0   ? llvm::CodeGenOptLevel::None
                              : opt_level_ == 1 ? llvm::CodeGenOptLevel::Less
                              : opt_level_ == 2 ? llvm::CodeGenOptLevel::Default
                                                : llvm::CodeGenOptLevel::Aggressive);
  auto made = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*machine)).create();
  if (!made) return Error{llvm::toString(made.takeError())};
  jit_ = std::move(*made);
  return Ok();
}

Status JitSession::Load(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context, Code& code) {
  if (Status started = Start(); !started) return started;
  code.tracker = jit_->getMainJITDylib().createResourceTracker();
  if (llvm::Error e = jit_->addIRModule(code.tracker, llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    return Error{llvm::toString(std::move(e))};
  }
  return Ok();
}

Expected<void*> JitSession::Lookup(const std::string& name) {
  auto address = jit_->lookup(name);
  if (!address) return Error{llvm::toString(address.takeError())};
  return address->toPtr<void*>();
}

}  // namespace policy::codegen
