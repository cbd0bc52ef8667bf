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
#include "compiler/k8s/pod_reader.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"
#include "compiler/support/suggest.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/sched/profile.h"
#include "stdlib/embedded.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc check --cluster CLUSTER --pod POD [--plugins P1,P2,...] [--profile PROFILE.yaml]
                     [--policy FILE.policy ...] [--output text|json] [--node NAME ...] [--all-nodes]
                     [--disable-pass NAME|all ...]
       policyc check POLICY.policy...

Places POD (a Pod, or a workload whose template is the pod) on the nodes of
CLUSTER (`kubectl get nodes,pods -A -o yaml` or `-o json`) with kube-scheduler's
default plugins (or a KubeSchedulerConfiguration profile's), or only those named
by --plugins, plus every --policy (DSL or YAML form). Prints
kube-scheduler's summary, the reasons grouped with the nodes they apply to, and
with --node/--all-nodes the details per node. Exit status: 0 schedulable,
1 schedulable nowhere, 2 bad input or usage.

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

// Inter-pod constraints are not evaluated yet: refuse rather than answer wrong.
std::optional<std::string> Unsupported(const k8s::Pod& pod, const rt::LoadReport& report, const rt::Profile& profile) {
  auto on = [&](std::string_view name) {
    for (const rt::PluginSetting& p : profile.plugins) {
      if (p.name == name) return p.filter || p.score;
    }
    return false;
  };
  if (on("InterPodAffinity") && (pod.affinity.pod_affinity || pod.affinity.pod_anti_affinity)) {
    return "the pod has pod affinity or anti-affinity terms, and InterPodAffinity is not implemented in this build";
  }
  if (on("InterPodAffinity") && report.pods_with_pod_affinity > 0) {
    return fmt::format("{} bound pod(s) have pod (anti-)affinity terms, and InterPodAffinity is not implemented in "
                       "this build",
                       report.pods_with_pod_affinity);
  }
  if (on("PodTopologySpread") && !pod.topology_spread.empty()) {
    return "the pod has topology spread constraints, and PodTopologySpread is not implemented in this build";
  }
  return std::nullopt;
}

}  // namespace

int RunCheck(const std::vector<std::string>& argv) {
  std::string error;
  std::variant<Args, int> parsed = ParseCommand("check", argv, {{"cluster"}, {"pod"}, {"plugins"}, {"profile"}, {"policy", true, true}, {"output"},
                           {"disable-pass", true, true},
                           {"node", true, true}, {"all-nodes", false}}, kUsage);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  Args* args = &std::get<Args>(parsed);
  if (!args->Has("cluster") && !args->Has("pod")) {
    std::vector<std::string> files = args->Positional();
    for (const std::string& f : args->GetAll("policy")) files.push_back(f);
    if (files.empty()) {
      fmt::print(stderr, "policyc check: give --cluster and --pod, or policy files to lint\n\n{}", kUsage);
      return kExitBadInput;
    }
    return Lint(files);
  }
  if (!args->Has("cluster") || !args->Has("pod") || !args->Positional().empty()) {
    fmt::print(stderr, "policyc check: give both --cluster and --pod (policies go with --policy)\n\n{}", kUsage);
    return kExitBadInput;
  }
  std::string output = args->Get("output", "text");
  if (output != "text" && output != "json") {
    fmt::print(stderr, "policyc check: `--output` must be `text` or `json`, not `{}`\n", output);
    return kExitBadInput;
  }

  // --plugins: names of built-ins that may run (others are switched off).
  std::vector<std::string> only;
  if (args->Has("plugins")) {
    std::string list = args->Get("plugins");
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      std::string name = list.substr(start, comma - start);
      start = comma + 1;
      if (name.empty()) continue;
      if (rt::FindBuiltin(name) == nullptr) {
        fmt::print(stderr, "policyc check: unknown plugin `{}` in --plugins\n", name);
        return kExitBadInput;
      }
      only.push_back(name);
    }
  }

  DiagnosticSink diags;
  std::unique_ptr<Source> cluster_source = ReadInput(args->Get("cluster"), diags);
  if (!cluster_source) return Fail(diags);
  rt::LoadReport report;
  std::unique_ptr<rt::NodeTable> table = rt::LoadCluster(*cluster_source, diags, &report);
  if (!table) return Fail(diags);
  std::unique_ptr<Source> pod_source = ReadInput(args->Get("pod"), diags);
  if (!pod_source) return Fail(diags);
  std::optional<k8s::Pod> pod = k8s::ReadPod(*pod_source, diags);
  if (!pod) return Fail(diags);
  rt::Profile profile = rt::DefaultProfile();
  std::unique_ptr<Source> profile_source;
  if (args->Has("profile")) {
    profile_source = ReadInput(args->Get("profile"), diags);
    if (!profile_source) return Fail(diags);
    std::optional<std::vector<rt::Profile>> profiles = rt::ReadProfiles(*profile_source, diags);
    if (!profiles) return Fail(diags);
    const rt::Profile* chosen = profiles->size() == 1 ? &profiles->front() : nullptr;
    for (const rt::Profile& p : *profiles) {
      if (p.scheduler_name == pod->scheduler_name) chosen = &p;
    }
    if (chosen == nullptr) {
      fmt::print(stderr, "policyc check: no profile in {} is for schedulerName `{}`\n", args->Get("profile"),
                 pod->scheduler_name);
      return kExitBadInput;
    }
    profile = *chosen;
  }
  if (!only.empty()) {
    for (rt::PluginSetting& p : profile.plugins) {
      if (std::find(only.begin(), only.end(), p.name) == only.end()) p.filter = p.score = false;
    }
  }
  if (std::optional<std::string> why = Unsupported(*pod, report, profile)) {
    fmt::print(stderr, "policyc check: cannot answer for this pod: {}\n", *why);
    return kExitBadInput;
  }

  // Compile the built-ins that run (each stdlib file once), then the --policy files.
  sema::TypeTable types;
  sema::Schema schema(types);
  passes::PassOptions pass_options;
  pass_options.pod = &*pod;
  pass_options.types = &types;
  for (const std::string& name : args->GetAll("disable-pass")) {
    std::vector<std::string_view> known = passes::PassNames();
    if (name != "all" && std::find(known.begin(), known.end(), name) == known.end()) {
      fmt::print(stderr, "policyc check: unknown pass `{}`; the passes are {}\n", name, fmt::join(known, ", "));
      return kExitBadInput;
    }
    if (name == "all") {
      for (std::string_view k : known) pass_options.disabled.insert(std::string(k));
    } else {
      pass_options.disabled.insert(name);
    }
  }
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<std::unique_ptr<passes::CompiledFile>> compiled;
  std::map<std::string_view, const ir::Program*> by_file;
  std::vector<rt::Plugin> plugins;
  auto compile = [&](std::unique_ptr<Source> source) -> const ir::Program* {
    std::unique_ptr<passes::CompiledFile> file = passes::CompileFile(*source, types, schema, diags, &profile.params);
    if (!file) return nullptr;
    passes::Optimize(file->program, pass_options, nullptr);
    sources.push_back(std::move(source));
    compiled.push_back(std::move(file));
    return &compiled.back()->program;
  };
  auto stdlib_program = [&](std::string_view path) -> const ir::Program* {
    auto it = by_file.find(path);
    if (it != by_file.end()) return it->second;
    for (const stdlib::EmbeddedPolicy& e : stdlib::Sources()) {
      if (e.path != path) continue;
      const ir::Program* program = compile(std::make_unique<Source>(std::string(e.path), std::string(e.text)));
      by_file[path] = program;
      return program;
    }
    return nullptr;
  };
  for (const rt::PluginSetting& setting : profile.plugins) {
    const rt::BuiltinPlugin& builtin = *rt::FindBuiltin(setting.name);
    if (!builtin.implemented) continue;
    std::string_view filter_file = setting.filter ? builtin.filter_file : std::string_view();
    std::string_view score_file = setting.score ? profile.ScoreFile(builtin) : std::string_view();
    auto push = [&](std::string_view file, bool filters, bool scores) {
      const ir::Program* program = stdlib_program(file);
      if (program != nullptr) plugins.push_back({setting.name, program, 0, setting.weight, filters, scores});
      return program != nullptr;
    };
    bool ok = true;
    if (!filter_file.empty() && filter_file == score_file) {
      ok = push(filter_file, true, true);
    } else {
      if (!filter_file.empty()) ok = ok && push(filter_file, true, false);
      if (!score_file.empty()) ok = ok && push(score_file, false, true);
    }
    if (!ok) return Fail(diags);
  }
  auto add = [&](std::unique_ptr<Source> source, std::optional<int64_t>) {
    const ir::Program* program = compile(std::move(source));
    if (program == nullptr) return false;
    for (size_t f = 0; f < program->functions.size(); ++f) {
      const ir::Function& fn = program->functions[f];
      plugins.push_back({fn.name, program, f, fn.weight, true, true});
    }
    return true;
  };
  for (const std::string& path : args->GetAll("policy")) {
    std::unique_ptr<Source> source = ReadInput(path, diags);
    if (!source || !add(std::move(source), std::nullopt)) return Fail(diags);
  }
  if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);  // warnings

  for (const std::string& name : args->GetAll("node")) {
    if (!table->FindNode(name)) {
      std::vector<std::string_view> names;
      for (rt::RowId row = 0; row < table->RowCount(); ++row) {
        if (table->Live()[row]) names.push_back(table->NodeName(row));
      }
      std::string_view close = Closest(name, names);
      fmt::print(stderr, "policyc check: no node named `{}` in {}{}\n", name, args->Get("cluster"),
                 close.empty() ? "" : fmt::format("; did you mean `{}`?", close));
      return kExitBadInput;
    }
  }
  rt::Placement placement = rt::Place(plugins, *pod, *table);
  std::string pod_name = pod->namespace_name + "/" + pod->name;
  if (output == "json") {
    fmt::print("{}", PlacementJson(pod_name, placement));
  } else {
    fmt::print("{}", PlacementText(pod_name, placement, args->GetAll("node"), args->Has("all-nodes")));
  }
  return placement.feasible > 0 ? kExitOk : kExitNo;
}

}  // namespace policy::cli
