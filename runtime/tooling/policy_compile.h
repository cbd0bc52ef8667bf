#pragma once
/// The compiler's own commands as library calls: policy files checked as
/// `check FILE.policy` checks them, and a file's listing at one stage of the
/// pipeline (`policyc compile --emit`).

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/objects.h"
#include "support/diagnostic.h"

namespace policy::driver {
class Compilation;
}
namespace policy::engine {
class Cluster;
}

namespace policy::tooling {

/// Policy files parsed, type-checked, lowered and verified one after
/// another in one compilation, as an engine takes them.
class PolicyChecker {
 public:
  PolicyChecker();
  ~PolicyChecker();
  /// The names of `source`'s policies; nullopt when it does not compile.
  /// Its diagnostics (warnings too) go to `diags`.
  std::optional<std::vector<std::string>> Check(std::shared_ptr<Source> source, DiagnosticSink& diags);

 private:
  std::unique_ptr<driver::Compilation> compilation_;
};

/// What `compile --emit` prints.
enum class EmitStage { kAst, kIr, kIrOpt, kLlvm, kAsm };
std::optional<EmitStage> EmitStageNamed(std::string_view name);

struct EmitOptions {
  EmitStage stage = EmitStage::kAst;
  std::set<std::string> disabled_passes;  ///< pass names, or `all`
  std::set<std::string> print_after;      ///< pass names, or `all`: the IR after each, in the listing
  bool time_passes = false;
  int jit_opt = 2;                        ///< LLVM's level for kLlvm and kAsm
  const k8s::Pod* pod = nullptr;          ///< specialize for it (kLlvm and kAsm need one)
  const engine::Cluster* cluster = nullptr;  ///< bind to its dictionaries (needs `pod`)
};

/// The first name in `names` that is neither a pass of the pipeline nor
/// `all`, with the pipeline's pass names; nullopt when each is one.
std::optional<std::string> UnknownPass(const std::set<std::string>& names);

/// `source` at `options.stage`: a `.ir` file (printed IR) enters the
/// pipeline after lowering. Functions the back end does not compile are
/// named with the reason in the listing. nullopt after an error in `diags`
/// (the source's) or in `error` (a sentence to follow the file's name).
std::optional<std::string> Emit(std::shared_ptr<Source> source, const EmitOptions& options, DiagnosticSink& diags,
                                std::string& error);

}  // namespace policy::tooling
