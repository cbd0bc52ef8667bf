// `policyc compile`: runs the compiler pipeline on a policy file and prints
// the requested stage.

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_setup.h"
#include "runtime/tooling/input.h"
#include "k8s/pod_reader.h"
#include "runtime/tooling/policy_compile.h"
#include "runtime/engine/cluster.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc compile FILE.policy|FILE.yaml|FILE.ir --emit=ast|ir|ir-opt|llvm|asm [--pod POD.yaml]
                       [--cluster SNAPSHOT.yaml] [--disable-pass=NAME ...] [--print-after=NAME|all ...]
                       [--time-passes] [--jit-opt 0..3] [--validate strict|warn|ignore]

Compiles a policy file and prints the requested stage:
  ast      the syntax tree, as an indented S-expression
  ir       the typed IR after lowering (names resolved, defs inlined)
  ir-opt   the IR after the optimisation pipeline (specialize, bind-table, fold, cse, dce, order);
           with --pod, specialized to that pod: its values folded, its loops unrolled;
           with --pod and --cluster, also bound to the cluster's label and taint
           dictionaries: label tests become `label_in` over value ids, taint loops
           `taints_*` over taint ids
  llvm     the native kernels' LLVM IR after optimization (needs --pod; with
           --cluster too, label and taint tests are bound, as `check` compiles them)
  asm      the same as host assembly
--jit-opt sets LLVM's optimization level for llvm/asm (default 2).
A function the back end does not compile is named with the reason.
A FILE.ir (printed IR, as --emit=ir writes it) starts mid-pipeline.
Errors are reported with file:line:col and exit status 2.
)";

}  // namespace

namespace {

int Run(const Args& parsed_args) {
  const Args* args = &parsed_args;
  if (args->Positional().size() != 1) {
    fmt::print(stderr, "policyc compile: give exactly one policy file\nRun `policyc compile --help` for usage.\n");
    return kExitBadInput;
  }
  std::string emit = args->Get("emit", "ast");
  std::optional<tooling::EmitStage> stage = tooling::EmitStageNamed(emit);
  if (!stage) {
    fmt::print(stderr, "policyc compile: `--emit={}` is not available; this build emits `ast`, `ir`, `ir-opt`, `llvm` and `asm`\n", emit);
    return kExitBadInput;
  }
  bool native = *stage == tooling::EmitStage::kLlvm || *stage == tooling::EmitStage::kAsm;
  std::string level_error;
  std::optional<int64_t> level = args->GetInt("jit-opt", 2, 0, 3, &level_error);
  if (!level) {
    fmt::print(stderr, "policyc compile: {}\n", level_error);
    return kExitBadInput;
  }
  if (native && !args->Has("pod")) {
    fmt::print(stderr, "policyc compile: `--emit={}` compiles a policy specialized to a pod; give `--pod`\n", emit);
    return kExitBadInput;
  }
  tooling::EmitOptions options;
  options.stage = *stage;
  options.jit_opt = static_cast<int>(*level);
  for (const std::string& name : args->GetAll("disable-pass")) options.disabled_passes.insert(name);
  for (const std::string& name : args->GetAll("print-after")) options.print_after.insert(name);
  options.time_passes = args->Has("time-passes");
  for (const std::set<std::string>* names : {&options.disabled_passes, &options.print_after}) {
    if (std::optional<std::string> unknown = tooling::UnknownPass(*names)) {
      fmt::print(stderr, "policyc compile: {}\n", *unknown);
      return kExitBadInput;
    }
  }
  const std::string& path = args->Positional()[0];
  DiagnosticSink diags;
  std::shared_ptr<Source> source = tooling::ReadInput(path, diags);
  if (!source) {
    std::fputs(RenderAll(diags).c_str(), stderr);
    return kExitBadInput;
  }
  std::optional<k8s::Pod> pod;
  std::shared_ptr<Source> pod_source;  // the pod's spans point into it
  if (args->Has("pod")) {
    pod_source = tooling::ReadInput(args->Get("pod"), diags);
    std::optional<k8s::FieldValidation> validation = ValidationFromFlags("compile", *args);
    if (!validation) return kExitBadInput;
    if (pod_source) pod = k8s::ReadPod(*pod_source, diags, *validation);
    if (!pod) {
      std::fputs(RenderAll(diags).c_str(), stderr);
      return kExitBadInput;
    }
    options.pod = &*pod;
  }
  std::unique_ptr<engine::Cluster> cluster;
  if (args->Has("cluster")) {
    if (!pod) {
      fmt::print(stderr, "policyc compile: `--cluster` binds a pod's specialized IR to a table; give `--pod` too\n");
      return kExitBadInput;
    }
    std::vector<std::shared_ptr<const Source>> snapshot = tooling::ReadSnapshot(args->GetAll("cluster"), diags);
    if (!snapshot.empty()) cluster = engine::Cluster::Load(snapshot, diags);
    if (!cluster) {
      std::fputs(RenderAll(diags).c_str(), stderr);
      return kExitBadInput;
    }
    options.cluster = cluster.get();
  }
  std::string error;
  std::optional<std::string> listing = tooling::Emit(source, options, diags, error);
  if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);
  if (!listing) {
    if (!error.empty()) fmt::print(stderr, "policyc compile: {}{}\n", path, error);
    return kExitBadInput;
  }
  fmt::print("{}", *listing);
  return kExitOk;
}

}  // namespace

Command CompileCommand() {
  return {"compile", "compile a policy file and print a compiler stage (--emit=ast|ir|ir-opt|llvm|asm)", kUsage,
          {{"emit"}, {"pod"}, {"cluster", true, true}, {"disable-pass", true, true}, {"print-after", true, true}, {"time-passes", false}, {"jit-opt"}, {"validate"}},
          &Run};
}

}  // namespace policy::cli
