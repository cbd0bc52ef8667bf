// `policyc check`: where can this pod go, and if nowhere, why?
// (../shared/spec/policyc-check.md). With policy files only, it type-checks
// and lints them instead.

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "cli/report.h"
#include "compiler/driver/compilation.h"
#include "compiler/k8s/pod_reader.h"
#include "compiler/passes/pass.h"
#include "compiler/support/suggest.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/profile.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc check --cluster CLUSTER --pod POD [--plugins P1,P2,...] [--profile PROFILE.yaml]
                     [--policy FILE.policy ...] [--output|-o text|json] [--node NAME ...] [--all-nodes]
                     [--disable-pass NAME|all ...] [--engine interp|jit|auto] [--jit-opt 0..3]
                     [--verify-jit]
       policyc check POLICY.policy...

Places POD (a Pod, or a workload whose template is the pod) on the nodes of
CLUSTER (`kubectl get nodes,pods -A -o yaml` or `-o json`; --cluster may be
given several times, and a directory stands for its .yaml, .yml and .json
files; `-` reads standard input) with kube-scheduler's
default plugins (or a KubeSchedulerConfiguration profile's), or only those named
by --plugins, plus every --policy (DSL or YAML form). Prints
kube-scheduler's summary, the reasons grouped with the nodes they apply to, and
with --node/--all-nodes the details per node. Exit status: 0 schedulable,
1 schedulable nowhere, 2 bad input or usage.

--engine: `interp` evaluates every plugin in the reference interpreter; `jit`
compiles each plugin the LLVM back end supports into native kernels (the rest,
and every message, stay with the interpreter); `auto` (the default) compiles
only for clusters of at least 250,000 nodes: compiling a profile takes about
150 ms, interpreting it about 0.65 us per node, and one `check` places one
pod. --jit-opt sets LLVM's optimization level (default 2; 0 compiles in a
third of the time). --verify-jit also runs the interpreter everywhere and
aborts on any difference (testing).

With policy files only, type-checks and lints them.
)";

int Fail(const DiagnosticSink& diags) {
  std::fputs(RenderAll(diags).c_str(), stderr);
  return kExitBadInput;
}

int Lint(const std::vector<std::string>& files) {
  driver::Compilation compilation;
  bool failed = false;
  for (const std::string& path : files) {
    DiagnosticSink diags;
    std::shared_ptr<Source> source = ReadInput(path, diags);
    const driver::CompiledFile* compiled = source ? compilation.Add(source, diags) : nullptr;
    if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);
    if (!compiled) {
      failed = true;
      continue;
    }
    std::vector<std::string> names;
    for (const syntax::PolicyDecl& p : compiled->module.policies) names.push_back(p.name);
    size_t warnings = diags.All().size();
    fmt::print("{}: {} polic{} ({}), {}\n", path, names.size(), names.size() == 1 ? "y" : "ies", fmt::join(names, ", "),
               warnings == 0 ? std::string("no problems")
                             : fmt::format("{} warning{}", warnings, warnings == 1 ? "" : "s"));
  }
  return failed ? kExitBadInput : kExitOk;
}

// One `policyc check --cluster --pod` run, step by step. Every step returns
// false after printing why (the run then exits 2).
class CheckRun {
 public:
  explicit CheckRun(const Args& args) : args_(args) {}

  int Run() {
    std::string output = args_.Get("output", "text");
    if (output != "text" && output != "json") {
      fmt::print(stderr, "policyc check: `--output` must be `text` or `json`, not `{}`\n", output);
      return kExitBadInput;
    }
    if (!ReadInputs() || !ChooseProfile() || !EngineFromFlags() || !NodesExist() || !BuildEngine()) {
      return kExitBadInput;
    }
    if (!diags_.All().empty()) std::fputs(RenderAll(diags_).c_str(), stderr);  // warnings
    std::unique_ptr<engine::PodPlan> plan = engine_->Plan(std::move(*pod_), *cluster_);
    const rt::Decision& decision = engine_->Decide(*plan, *cluster_, {.plugin_scores = true});
    rt::Placement placement = engine_->Explain(*plan, *cluster_, decision);
    std::string pod_name = plan->Pod().namespace_name + "/" + plan->Pod().name;
    PodNotes notes = NotesFor(plan->Pod());
    if (notes.gated) placement.summary = "Scheduling is blocked due to non-empty scheduling gates";
    if (output == "json") {
      fmt::print("{}", PlacementJson(pod_name, placement, notes));
    } else {
      fmt::print("{}", PlacementText(pod_name, placement, args_.GetAll("node"), args_.Has("all-nodes"), notes));
    }
    return placement.feasible > 0 && !notes.gated ? kExitOk : kExitNo;
  }

 private:
  bool Refuse() {
    Fail(diags_);
    return false;
  }

  // What really happens to the pod beyond the plugins' answer.
  PodNotes NotesFor(const k8s::Pod& pod) const {
    PodNotes n;
    if (!pod.scheduling_gates.empty()) {  // the SchedulingGates plugin (PreEnqueue)
      n.gated = true;
      n.notes.push_back(fmt::format("the pod has scheduling gates ({}): kube-scheduler does not try it until they are "
                                    "removed; the nodes' answers say where it could go then",
                                    fmt::join(pod.scheduling_gates, ", ")));
    }
    if (!pod.node_name.empty()) {
      n.notes.push_back(fmt::format("`spec.nodeName` is `{}`: kube-scheduler never sees this pod; the kubelet on that "
                                    "node admits or rejects it, and no other node is tried",
                                    pod.node_name));
    }
    if (pod.scheduler_name != profile_.scheduler_name) {
      n.notes.push_back(fmt::format("`schedulerName` is `{}`: `{}` does not schedule this pod; give the other "
                                    "scheduler's KubeSchedulerConfiguration with --profile",
                                    pod.scheduler_name, profile_.scheduler_name));
    }
    if (pod.template_of.starts_with("DaemonSet/")) {
      n.notes.push_back("a DaemonSet runs one pod per node that its node affinity and the tolerations its controller "
                        "adds allow: each feasible node below gets one, the selected one has no special role");
    }
    return n;
  }

  bool ReadInputs() {
    std::vector<std::shared_ptr<const Source>> snapshot = ReadSnapshot(args_.GetAll("cluster"), diags_);
    if (snapshot.empty()) return Refuse();
    cluster_ = engine::Cluster::Load(snapshot, diags_);
    if (!cluster_) return Refuse();
    pod_source_ = ReadInput(args_.Get("pod"), diags_);
    if (!pod_source_) return Refuse();
    pod_ = k8s::ReadPod(*pod_source_, diags_);
    return pod_ ? true : Refuse();
  }

  // The default profile or --profile's (the one for the pod's schedulerName),
  // restricted by --plugins.
  bool ChooseProfile() {
    profile_ = rt::DefaultProfile();
    if (args_.Has("profile")) {
      std::shared_ptr<Source> profile_source = ReadInput(args_.Get("profile"), diags_);
      if (!profile_source) return Refuse();
      std::optional<std::vector<rt::Profile>> profiles = rt::ReadProfiles(*profile_source, diags_);
      if (!profiles) return Refuse();
      const rt::Profile* chosen = profiles->size() == 1 ? &profiles->front() : nullptr;
      for (const rt::Profile& p : *profiles) {
        if (p.scheduler_name == pod_->scheduler_name) chosen = &p;
      }
      if (chosen == nullptr) {
        fmt::print(stderr, "policyc check: no profile in {} is for schedulerName `{}`\n", args_.Get("profile"),
                   pod_->scheduler_name);
        return false;
      }
      profile_ = *chosen;
    }
    if (!args_.Has("plugins")) return true;
    std::vector<std::string> only;
    std::string list = args_.Get("plugins");
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      std::string name = list.substr(start, comma - start);
      start = comma + 1;
      if (name.empty()) continue;
      if (rt::FindInTreePlugin(name) == nullptr) {
        fmt::print(stderr, "policyc check: unknown plugin `{}` in --plugins\n", name);
        return false;
      }
      only.push_back(name);
    }
    for (rt::PluginSetting& p : profile_.plugins) {
      if (std::find(only.begin(), only.end(), p.name) == only.end()) p.filter = p.score = false;
    }
    return true;
  }

  // --disable-pass, --engine, --jit-opt, --verify-jit.
  bool EngineFromFlags() {
    std::vector<std::string_view> known = passes::PassNames();
    for (const std::string& name : args_.GetAll("disable-pass")) {
      if (name != "all" && std::find(known.begin(), known.end(), name) == known.end()) {
        fmt::print(stderr, "policyc check: unknown pass `{}`; the passes are {}\n", name, fmt::join(known, ", "));
        return false;
      }
      options_.disabled_passes.insert(name);
    }
    std::string backend = args_.Get("engine", "auto");
    if (backend != "interp" && backend != "jit" && backend != "auto") {
      fmt::print(stderr, "policyc check: `--engine` must be `interp`, `jit` or `auto`, not `{}`\n", backend);
      return false;
    }
    options_.backend = backend == "interp" ? engine::Backend::kInterp
                       : backend == "jit"  ? engine::Backend::kJit
                                           : engine::Backend::kAuto;
    std::string error;
    std::optional<int64_t> level = args_.GetInt("jit-opt", 2, 0, 3, &error);
    if (!level) {
      fmt::print(stderr, "policyc check: {}\n", error);
      return false;
    }
    options_.jit_opt_level = static_cast<int>(*level);
    options_.verify_kernels = args_.Has("verify-jit");
    return true;
  }

  // The profile's built-ins and every --policy, compiled.
  bool BuildEngine() {
    std::vector<std::shared_ptr<const Source>> policies;
    for (const std::string& path : args_.GetAll("policy")) {
      std::shared_ptr<Source> source = ReadInput(path, diags_);
      if (!source) return Refuse();
      policies.push_back(std::move(source));
    }
    engine_ = engine::Engine::Create(profile_, std::move(policies), options_, diags_);
    return engine_ ? true : Refuse();
  }

  bool NodesExist() {
    const rt::NodeTable& table = cluster_->Table();
    for (const std::string& name : args_.GetAll("node")) {
      if (table.FindNode(name)) continue;
      std::vector<std::string_view> names;
      for (rt::RowId row : table.LiveRows()) names.push_back(table.NodeName(row));
      std::string_view close = Closest(name, names);
      fmt::print(stderr, "policyc check: no node named `{}` in {}{}\n", name, fmt::join(args_.GetAll("cluster"), ", "),
                 close.empty() ? "" : fmt::format("; did you mean `{}`?", close));
      return false;
    }
    return true;
  }

  const Args& args_;
  DiagnosticSink diags_;
  std::unique_ptr<engine::Cluster> cluster_;
  std::shared_ptr<Source> pod_source_;  // the pod's spans point into it
  std::optional<k8s::Pod> pod_;
  rt::Profile profile_;
  engine::EngineOptions options_;
  std::unique_ptr<engine::Engine> engine_;
};

}  // namespace

int RunCheck(const std::vector<std::string>& argv) {
  std::variant<Args, int> parsed =
      ParseCommand("check", argv,
                   {{"cluster", true, true}, {"pod"}, {"plugins"}, {"profile"}, {"policy", true, true}, {"output", true, false, 'o'},
                    {"disable-pass", true, true}, {"node", true, true}, {"all-nodes", false},
                    {"engine"}, {"jit-opt"}, {"verify-jit", false}},
                   kUsage);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  const Args& args = std::get<Args>(parsed);
  if (!args.Has("cluster") && !args.Has("pod")) {
    std::vector<std::string> files = args.Positional();
    for (const std::string& f : args.GetAll("policy")) files.push_back(f);
    if (files.empty()) {
      fmt::print(stderr, "policyc check: give --cluster and --pod, or policy files to lint\n\n{}", kUsage);
      return kExitBadInput;
    }
    return Lint(files);
  }
  if (!args.Positional().empty()) {
    fmt::print(stderr, "policyc check: unexpected argument `{}` beside --cluster and --pod (policies go with --policy)\n\n{}",
               args.Positional().front(), kUsage);
    return kExitBadInput;
  }
  if (!args.Has("cluster") || !args.Has("pod")) {
    fmt::print(stderr, "policyc check: `--{}` is missing: give both --cluster and --pod\n\n{}",
               args.Has("cluster") ? "pod" : "cluster", kUsage);
    return kExitBadInput;
  }
  return CheckRun(args).Run();
}

}  // namespace policy::cli
