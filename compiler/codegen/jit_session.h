#pragma once
/// The LLVM side of the JIT: the native target, module preparation
/// (verify, target the host CPU, optimize) and the ORC LLJIT session that
/// loads modules and owns their code. Code is freed when the Code that owns
/// its ResourceTracker goes.

#include <memory>
#include <string>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "support/expected.h"

namespace policy::codegen {

/// Compiled code, freed (its ResourceTracker removed) when the last holder
/// of what owns it lets go.
struct Code {
  llvm::orc::ResourceTrackerSP tracker;
  Code() = default;
  Code(const Code&) = delete;
  Code& operator=(const Code&) = delete;
  ~Code();
};

/// The host's target machine (made once, for every session).
llvm::TargetMachine* HostMachine();

/// Verifies `module` and optimizes it for the host at `opt_level` (0..3);
/// an Error when the back end made invalid LLVM IR (a bug). `gathers`: let
/// vectorized code use gather instructions.
Status PrepareModule(llvm::Module& module, int opt_level, bool gathers);

class JitSession {
 public:
  /// `opt_level` (0..3) picks the machine-code generator's level: 0 is
  /// LLVM's fast instruction selection and register allocation.
  explicit JitSession(int opt_level);
  /// Loads `module` under a new tracker owned by `code`.
  Status Load(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context, Code& code);
  /// The address of a loaded symbol.
  Expected<void*> Lookup(const std::string& name);

 private:
  Status Start();
  int opt_level_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace policy::codegen
