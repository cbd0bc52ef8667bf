// `policyc check`: where can this pod go, and if nowhere, why?
// (../shared/spec/policyc-check.md). With policy files only, it type-checks
// and lints them instead.

#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "cli/report.h"
#include "compiler/k8s/pod_reader.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"
#include "runtime/columnar/cluster_loader.h"
#include "stdlib/embedded.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc check --cluster CLUSTER --pod POD [--plugins P1,P2,...]
                     [--policy FILE.policy ...] [--output text|json] [--node NAME ...] [--all-nodes]
       policyc check POLICY.policy...

Places POD (a Pod, or a workload whose template is the pod) on the nodes of
CLUSTER (`kubectl get nodes,pods -A -o yaml` or `-o json`) with kube-scheduler's
default plugins, or only those named by --plugins, plus every --policy. Prints
kube-scheduler's summary, the reasons grouped with the nodes they apply to, and
with --node/--all-nodes the details per node. Exit status: 0 schedulable,
1 schedulable nowhere, 2 bad input or usage.

With policy files only, type-checks and lints them.
)";

// kube-scheduler's filter order in the default profile, with default weights.
struct BuiltinPlugin {
  std::string_view name;
  std::string_view file;  ///< stdlib source; empty: not implemented in this build
  int64_t weight;
};
constexpr BuiltinPlugin kBuiltins[] = {
    {"NodeUnschedulable", "stdlib/node_unschedulable.policy", 0},
    {"NodeName", "stdlib/node_name.policy", 0},
    {"TaintToleration", "stdlib/taint_toleration.policy", 3},
    {"NodeAffinity", "stdlib/node_affinity.policy", 2},
    {"NodeResourcesFit", "stdlib/node_resources_fit.policy", 1},
    {"PodTopologySpread", "", 2},
    {"InterPodAffinity", "", 2},
    {"NodeResourcesBalancedAllocation", "stdlib/balanced_allocation.policy", 1},
};

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
std::optional<std::string> Unsupported(const k8s::Pod& pod, const rt::LoadReport& report,
                                       const std::vector<std::string_view>& enabled) {
  auto on = [&](std::string_view name) { return std::find(enabled.begin(), enabled.end(), name) != enabled.end(); };
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
  auto args = Args::Parse(argv,
                          {{"cluster"}, {"pod"}, {"plugins"}, {"policy", true, true}, {"output"},
                           {"node", true, true}, {"all-nodes", false}, {"help", false}},
                          &error);
  if (!args) {
    fmt::print(stderr, "policyc check: {}\n\n{}", error, kUsage);
    return kExitBadInput;
  }
  if (args->Has("help")) {
    fmt::print("{}", kUsage);
    return kExitOk;
  }
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

  // Which built-ins run.
  std::vector<std::string_view> enabled;
  if (args->Has("plugins")) {
    std::string list = args->Get("plugins");
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? list.size() + 1 : comma + 1;
      if (name.empty()) continue;
      const BuiltinPlugin* found = nullptr;
      for (const BuiltinPlugin& b : kBuiltins) {
        if (b.name == name) found = &b;
      }
      if (found == nullptr) {
        fmt::print(stderr, "policyc check: unknown plugin `{}` in --plugins\n", name);
        return kExitBadInput;
      }
      enabled.push_back(found->name);
    }
  } else {
    for (const BuiltinPlugin& b : kBuiltins) enabled.push_back(b.name);
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
  if (std::optional<std::string> why = Unsupported(*pod, report, enabled)) {
    fmt::print(stderr, "policyc check: cannot answer for this pod: {}\n", *why);
    return kExitBadInput;
  }

  // Compile the built-ins that run, then the --policy files.
  sema::TypeTable types;
  sema::Schema schema(types);
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<std::unique_ptr<passes::CompiledFile>> compiled;
  std::vector<rt::Plugin> plugins;
  auto add = [&](std::unique_ptr<Source> source, std::optional<int64_t> weight) {
    std::unique_ptr<passes::CompiledFile> file = passes::CompileFile(*source, types, schema, diags);
    if (!file) return false;
    passes::Optimize(file->program, {}, nullptr);
    for (size_t f = 0; f < file->program.functions.size(); ++f) {
      const ir::Function& fn = file->program.functions[f];
      plugins.push_back({fn.name, &file->program, f, weight.value_or(fn.weight), true, true});
    }
    sources.push_back(std::move(source));
    compiled.push_back(std::move(file));
    return true;
  };
  for (const BuiltinPlugin& b : kBuiltins) {
    if (b.file.empty() || std::find(enabled.begin(), enabled.end(), b.name) == enabled.end()) continue;
    for (const stdlib::EmbeddedPolicy& e : stdlib::Sources()) {
      if (e.path == b.file && !add(std::make_unique<Source>(std::string(e.path), std::string(e.text)), b.weight)) {
        return Fail(diags);
      }
    }
  }
  for (const std::string& path : args->GetAll("policy")) {
    std::unique_ptr<Source> source = ReadInput(path, diags);
    if (!source || !add(std::move(source), std::nullopt)) return Fail(diags);
  }
  if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);  // warnings

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
