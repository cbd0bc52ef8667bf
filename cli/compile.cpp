// `policyc compile`: runs the compiler pipeline on a policy file and prints
// the requested stage.

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "compiler/codegen/jit.h"
#include "compiler/driver/compilation.h"
#include "k8s/pod_reader.h"
#include "compiler/passes/pass.h"
#include "compiler/syntax/parser.h"
#include "runtime/engine/cluster.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc compile FILE.policy|FILE.yaml|FILE.ir --emit=ast|ir|ir-opt|llvm|asm [--pod POD.yaml]
                       [--cluster SNAPSHOT.yaml] [--disable-pass=NAME ...] [--print-after=NAME|all ...]
                       [--time-passes] [--jit-opt 0..3]

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

int RunCompile(const std::vector<std::string>& argv) {
  std::string error;
  std::variant<Args, int> parsed = ParseCommand("compile", argv, {{"emit"}, {"pod"}, {"cluster", true, true}, {"disable-pass", true, true}, {"print-after", true, true}, {"time-passes", false}, {"jit-opt"}}, kUsage);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  Args* args = &std::get<Args>(parsed);
  if (args->Positional().size() != 1) {
    fmt::print(stderr, "policyc compile: give exactly one policy file\n\n{}", kUsage);
    return kExitBadInput;
  }
  std::string emit = args->Get("emit", "ast");
  if (emit != "ast" && emit != "ir" && emit != "ir-opt" && emit != "llvm" && emit != "asm") {
    fmt::print(stderr, "policyc compile: `--emit={}` is not available; this build emits `ast`, `ir`, `ir-opt`, `llvm` and `asm`\n", emit);
    return kExitBadInput;
  }
  bool native = emit == "llvm" || emit == "asm";
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
  passes::PassOptions options;
  for (const std::string& name : args->GetAll("disable-pass")) options.disabled.insert(name);
  for (const std::string& name : args->GetAll("print-after")) options.print_after.insert(name);
  options.time = args->Has("time-passes");
  std::vector<std::string_view> known = passes::PassNames();
  for (const std::set<std::string>* names : {&options.disabled, &options.print_after}) {
    for (const std::string& name : *names) {
      if (name != "all" && std::find(known.begin(), known.end(), name) == known.end()) {
        fmt::print(stderr, "policyc compile: unknown pass `{}`; the passes are {}\n", name, fmt::join(known, ", "));
        return kExitBadInput;
      }
    }
  }
  const std::string& path = args->Positional()[0];
  DiagnosticSink diags;
  std::shared_ptr<Source> source = ReadInput(path, diags);
  if (!source) {
    std::fputs(RenderAll(diags).c_str(), stderr);
    return kExitBadInput;
  }
  driver::Compilation compilation;
  std::optional<k8s::Pod> pod;
  std::shared_ptr<Source> pod_source;  // the pod's spans point into it
  if (args->Has("pod")) {
    pod_source = ReadInput(args->Get("pod"), diags);
    if (pod_source) pod = k8s::ReadPod(*pod_source, diags);
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
    std::vector<std::shared_ptr<const Source>> snapshot = ReadSnapshot(args->GetAll("cluster"), diags);
    if (!snapshot.empty()) cluster = engine::Cluster::Load(snapshot, diags);
    if (!cluster) {
      std::fputs(RenderAll(diags).c_str(), stderr);
      return kExitBadInput;
    }
    options.table = &cluster->Dictionary();
  }
  if (std::string_view(path).ends_with(".ir")) {
    // Printed IR: start in the middle of the pipeline.
    if (emit == "ast") {
      fmt::print(stderr, "policyc compile: {} is IR; there is no syntax tree to emit\n", path);
      return kExitBadInput;
    }
    Expected<ir::Program> program = compilation.ParseIr(source->Text());
    if (!program) {
      fmt::print(stderr, "policyc compile: {}:{}\n", path, program.error().message);
      return kExitBadInput;
    }
    if (emit == "ir-opt") {
      std::string trace;
      program = compilation.Optimize(*program, options, &trace);
      fmt::print("{}", trace);
    }
    fmt::print("{}", ir::Print(*program));
    return kExitOk;
  }
  if (emit == "ast") {
    std::optional<syntax::Module> module = syntax::ParseAnyPolicyFile(*source, diags);
    if (!module) {
      std::fputs(RenderAll(diags).c_str(), stderr);
      return kExitBadInput;
    }
    fmt::print("{}", syntax::PrintModule(*module));
    return kExitOk;
  }
  const driver::CompiledFile* compiled = compilation.Add(source, diags);
  if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);
  if (!compiled) return kExitBadInput;
  if (emit == "ir") {
    fmt::print("{}", ir::Print(compiled->program));
    return kExitOk;
  }
  std::string trace;
  ir::Program optimized = compilation.Optimize(compiled->program, options, &trace);
  fmt::print("{}", trace);
  if (!native) {
    fmt::print("{}", ir::Print(optimized));
    return kExitOk;
  }
  codegen::Jit jit(codegen::JitOptions{static_cast<int>(*level)});
  for (size_t f = 0; f < optimized.functions.size(); ++f) {
    Expected<std::string> text = jit.EmitText(optimized, f, emit == "asm");
    if (text) {
      fmt::print("; policy {}\n{}", optimized.functions[f].name, *text);
    } else {
      fmt::print("; policy {}: not compiled (the interpreter runs it): {}\n", optimized.functions[f].name,
                 text.error().message);
    }
  }
  return kExitOk;
}

}  // namespace policy::cli
