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
#include "compiler/codegen/jit.h"
#include "compiler/k8s/pod_reader.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"
#include "runtime/columnar/table_dictionary.h"
#include "runtime/sched/decide.h"
#include "runtime/sched/default_spread.h"
#include "compiler/support/suggest.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/sched/profile.h"
#include "stdlib/embedded.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc check --cluster CLUSTER --pod POD [--plugins P1,P2,...] [--profile PROFILE.yaml]
                     [--policy FILE.policy ...] [--output text|json] [--node NAME ...] [--all-nodes]
                     [--disable-pass NAME|all ...] [--engine interp|jit|auto] [--jit-opt 0..3]
                     [--verify-jit]
       policyc check POLICY.policy...

Places POD (a Pod, or a workload whose template is the pod) on the nodes of
CLUSTER (`kubectl get nodes,pods -A -o yaml` or `-o json`) with kube-scheduler's
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
  sema::TypeTable types;
  sema::Schema schema(types);
  bool failed = false;
  for (const std::string& path : files) {
    DiagnosticSink diags;
    std::unique_ptr<Source> source = ReadInput(path, diags);
    std::unique_ptr<passes::CompiledFile> compiled = source ? passes::CompileFile(*source, types, schema, diags) : nullptr;
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

// What this build cannot answer for the pod: refuse rather than answer wrong.
std::optional<std::string> Unsupported(const k8s::Pod&, const rt::LoadReport&, const rt::Profile&) {
  return std::nullopt;
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
    if (!ReadInputs() || !ChooseProfile() || !DefaultSpread() || !Supported() || !PassOptionsFromFlags() || !BuildPlugins() ||
        !NodesExist() || !CompileKernels()) {
      return kExitBadInput;
    }
    if (!diags_.All().empty()) std::fputs(RenderAll(diags_).c_str(), stderr);  // warnings
    rt::PlaceOptions place_options;
    place_options.verify_kernels = args_.Has("verify-jit");
    rt::Placement placement = rt::Place(plugins_, *pod_, *table_, place_options);
    if (place_options.verify_kernels) VerifyDecision(placement);
    std::string pod_name = pod_->namespace_name + "/" + pod_->name;
    if (output == "json") {
      fmt::print("{}", PlacementJson(pod_name, placement));
    } else {
      fmt::print("{}", PlacementText(pod_name, placement, args_.GetAll("node"), args_.Has("all-nodes")));
    }
    return placement.feasible > 0 ? kExitOk : kExitNo;
  }

 private:
  bool Refuse() {
    Fail(diags_);
    return false;
  }

  bool ReadInputs() {
    cluster_source_ = ReadInput(args_.Get("cluster"), diags_);
    if (!cluster_source_) return Refuse();
    table_ = rt::LoadCluster(*cluster_source_, diags_, &report_);
    if (!table_) return Refuse();
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
      profile_source_ = ReadInput(args_.Get("profile"), diags_);
      if (!profile_source_) return Refuse();
      std::optional<std::vector<rt::Profile>> profiles = rt::ReadProfiles(*profile_source_, diags_);
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
      if (rt::FindBuiltin(name) == nullptr) {
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

  bool Supported() {
    std::optional<std::string> why = Unsupported(*pod_, report_, profile_);
    if (why) fmt::print(stderr, "policyc check: cannot answer for this pod: {}\n", *why);
    return !why;
  }

  // kube-scheduler's default spread constraints (the system's or the profile's list).
  bool DefaultSpread() {
    for (const rt::PluginSetting& p : profile_.plugins) {
      if (p.name != "PodTopologySpread" || !(p.filter || p.score)) continue;
      rt::ApplyDefaultSpread(*pod_, *table_, profile_.spread_defaults ? &*profile_.spread_defaults : nullptr);
    }
    return true;
  }

  bool PassOptionsFromFlags() {
    pass_options_.pod = &*pod_;
    pass_options_.types = &types_;
    dictionary_ = std::make_unique<rt::TableDictionary>(*table_);
    pass_options_.table = dictionary_.get();
    std::vector<std::string_view> known = passes::PassNames();
    for (const std::string& name : args_.GetAll("disable-pass")) {
      if (name == "all") {
        for (std::string_view k : known) pass_options_.disabled.insert(std::string(k));
      } else if (std::find(known.begin(), known.end(), name) != known.end()) {
        pass_options_.disabled.insert(name);
      } else {
        fmt::print(stderr, "policyc check: unknown pass `{}`; the passes are {}\n", name, fmt::join(known, ", "));
        return false;
      }
    }
    return true;
  }

  // Compiles and optimizes one file; null after diagnostics.
  const ir::Program* Compile(std::unique_ptr<Source> source) {
    std::unique_ptr<passes::CompiledFile> file = passes::CompileFile(*source, types_, schema_, diags_, &profile_.params);
    if (!file) return nullptr;
    passes::Optimize(file->program, pass_options_, nullptr);
    sources_.push_back(std::move(source));
    compiled_.push_back(std::move(file));
    return &compiled_.back()->program;
  }

  const ir::Program* StdlibProgram(std::string_view path) {
    if (auto it = by_file_.find(path); it != by_file_.end()) return it->second;
    for (const stdlib::EmbeddedPolicy& e : stdlib::Sources()) {
      if (e.path == path) return by_file_[path] = Compile(std::make_unique<Source>(std::string(e.path), std::string(e.text)));
    }
    return nullptr;
  }

  // The profile's built-ins in filter order (a plugin's filter and score may
  // come from different stdlib files), then every --policy.
  bool BuildPlugins() {
    for (const rt::PluginSetting& setting : profile_.plugins) {
      const rt::BuiltinPlugin& builtin = *rt::FindBuiltin(setting.name);
      if (!builtin.implemented) continue;
      std::string_view filter_file = setting.filter ? builtin.filter_file : std::string_view();
      std::string_view score_file = setting.score ? profile_.ScoreFile(builtin) : std::string_view();
      auto push = [&](std::string_view file, bool filters, bool scores) {
        const ir::Program* program = StdlibProgram(file);
        if (program != nullptr) plugins_.push_back({setting.name, program, 0, setting.weight, filters, scores});
        return program != nullptr;
      };
      bool ok = true;
      if (!filter_file.empty() && filter_file == score_file) {
        ok = push(filter_file, true, true);
      } else {
        if (!filter_file.empty()) ok = ok && push(filter_file, true, false);
        if (!score_file.empty()) ok = ok && push(score_file, false, true);
      }
      if (!ok) return Refuse();
    }
    for (const std::string& path : args_.GetAll("policy")) {
      std::unique_ptr<Source> source = ReadInput(path, diags_);
      const ir::Program* program = source ? Compile(std::move(source)) : nullptr;
      if (program == nullptr) return Refuse();
      for (size_t f = 0; f < program->functions.size(); ++f) {
        const ir::Function& fn = program->functions[f];
        plugins_.push_back({fn.name, program, f, fn.weight, true, true});
      }
    }
    return true;
  }

  // --verify-jit: the decision alone (rt::Decide, the hot path) must agree
  // with the explained placement.
  void VerifyDecision(const rt::Placement& placement) {
    rt::Decision decision = rt::Decide(plugins_, *pod_, *table_);
    std::vector<rt::RowId> feasible;
    std::vector<int64_t> scores;
    for (const rt::NodeResult& node : placement.nodes) {
      if (!node.feasible) continue;
      feasible.push_back(node.row);
      scores.push_back(node.score);
    }
    bool same = decision.feasible == feasible && decision.score == scores &&
                decision.selected.has_value() == placement.selected.has_value() &&
                (!decision.selected || decision.feasible[*decision.selected] == placement.nodes[*placement.selected].row);
    if (!same) {
      std::fputs("policyc: the decision (Decide) and the explained placement (Place) disagree\n", stderr);
      std::abort();
    }
  }

  // --engine: native kernels for the plugins the back end compiles.
  bool CompileKernels() {
    std::string engine = args_.Get("engine", "auto");
    if (engine != "interp" && engine != "jit" && engine != "auto") {
      fmt::print(stderr, "policyc check: `--engine` must be `interp`, `jit` or `auto`, not `{}`\n", engine);
      return false;
    }
    std::string error;
    std::optional<int64_t> level = args_.GetInt("jit-opt", 2, 0, 3, &error);
    if (!level) {
      fmt::print(stderr, "policyc check: {}\n", error);
      return false;
    }
    constexpr size_t kJitFromNodes = 250000;  // below, the interpreter answers before LLVM would
    if (engine == "interp" || (engine == "auto" && table_->NodeCount() < kJitFromNodes)) return true;
    jit_ = std::make_unique<codegen::Jit>(codegen::JitOptions{static_cast<int>(*level)});
    for (rt::Plugin& plugin : plugins_) {
      std::string why;
      std::shared_ptr<const codegen::CompiledFunction> compiled = jit_->Compile(*plugin.program, plugin.function, &why);
      if (!compiled) continue;  // stays with the interpreter
      plugin.kernels = compiled.get();
      kernels_.push_back(std::move(compiled));
    }
    return true;
  }

  bool NodesExist() {
    for (const std::string& name : args_.GetAll("node")) {
      if (table_->FindNode(name)) continue;
      std::vector<std::string_view> names;
      for (rt::RowId row = 0; row < table_->RowCount(); ++row) {
        if (table_->Live()[row]) names.push_back(table_->NodeName(row));
      }
      std::string_view close = Closest(name, names);
      fmt::print(stderr, "policyc check: no node named `{}` in {}{}\n", name, args_.Get("cluster"),
                 close.empty() ? "" : fmt::format("; did you mean `{}`?", close));
      return false;
    }
    return true;
  }

  const Args& args_;
  DiagnosticSink diags_;
  std::unique_ptr<Source> cluster_source_, pod_source_, profile_source_;
  std::unique_ptr<rt::NodeTable> table_;
  rt::LoadReport report_;
  std::optional<k8s::Pod> pod_;
  rt::Profile profile_;
  sema::TypeTable types_;
  sema::Schema schema_{types_};
  std::unique_ptr<rt::TableDictionary> dictionary_;
  passes::PassOptions pass_options_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<std::unique_ptr<passes::CompiledFile>> compiled_;
  std::map<std::string_view, const ir::Program*> by_file_;
  std::vector<rt::Plugin> plugins_;
  std::unique_ptr<codegen::Jit> jit_;
  std::vector<std::shared_ptr<const codegen::CompiledFunction>> kernels_;
};

}  // namespace

int RunCheck(const std::vector<std::string>& argv) {
  std::variant<Args, int> parsed =
      ParseCommand("check", argv,
                   {{"cluster"}, {"pod"}, {"plugins"}, {"profile"}, {"policy", true, true}, {"output"},
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
  if (!args.Has("cluster") || !args.Has("pod") || !args.Positional().empty()) {
    fmt::print(stderr, "policyc check: give both --cluster and --pod (policies go with --policy)\n\n{}", kUsage);
    return kExitBadInput;
  }
  return CheckRun(args).Run();
}

}  // namespace policy::cli
