// `policyc lint`: scheduling lints of workload manifests and policies
// against a cluster snapshot (docs/lints.md). Manifests: cli/manifest_lints.
// Policies: compiled (their language lints come from sema), then, for each
// pod of the manifests, every filter rule and score of every policy is
// evaluated on every node: a rule that rejects every node, one that rejects
// none for any pod, a score that is the same everywhere.

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "runtime/tooling/input.h"
#include "runtime/tooling/manifest_lints.h"
#include "runtime/tooling/snapshot_objects.h"
#include "k8s/pod_reader.h"
#include "runtime/tooling/structured_output.h"
#include "support/json_writer.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/policy_rules.h"
#include "runtime/sched/profile.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc lint [MANIFEST ...] [POLICY.policy ...] [--cluster CLUSTER ...]
                    [--policy FILE ...] [--output|-o text|json|yaml] [--no-cache]

Scheduling lints, each with a stable code, the place in your file and help
(docs/lints.md). MANIFEST: Pods and workloads (Deployment, StatefulSet, Job,
...), checked against the nodes of CLUSTER (a snapshot, as for `check`): a
nodeSelector entry or required node affinity no node satisfies, a topology
key no node has, more replicas than required anti-affinity allows, fewer
domains than minDomains, a request larger than any node, a toleration that
matches no taint, a GPU-memory request without a unit, a PriorityClass that
does not exist, a preferred term that changes no decision. POLICY (or
--policy, which also takes the YAML form): the language's own lints, and
with CLUSTER and manifests, per pod: a filter rule that rejects every node,
one that rejects no node for any pod, a score that is the same on every node.
Without CLUSTER, only what needs no snapshot is checked.

Exit status: 0 no errors (warnings only), 1 some lint is an error, 2 a file
could not be read as a manifest or policy, or bad usage.
)";

bool IsLint(DiagCode code) { return CodeString(code).starts_with("C04"); }

std::string Json(const std::vector<Diagnostic>& all) {
  JsonWriter w;
  size_t errors = 0, warnings = 0;
  w.BeginObject().Key("diagnostics").BeginArray();
  for (const Diagnostic& d : all) {
    (d.severity == Severity::kError ? errors : warnings) += d.severity != Severity::kNote;
    w.BeginObject();
    w.Key("code").String(CodeString(d.code)).Key("name").String(CodeName(d.code));
    w.Key("severity").String(d.severity == Severity::kError ? "error" : d.severity == Severity::kWarning ? "warning" : "note");
    w.Key("message").String(d.message);
    if (d.primary.span.Valid()) {
      const Source& s = *d.primary.span.source;
      LineCol begin = s.Locate(d.primary.span.begin), end = s.Locate(d.primary.span.end);
      w.Key("file").String(s.Name()).Key("line").Int(begin.line).Key("column").Int(begin.column);
      w.Key("endLine").Int(end.line).Key("endColumn").Int(end.column);
    }
    if (!d.primary.message.empty()) w.Key("label").String(d.primary.message);
    if (!d.notes.empty()) {
      w.Key("notes").BeginArray();
      for (const std::string& n : d.notes) w.String(n);
      w.EndArray();
    }
    if (!d.help.empty()) w.Key("help").String(d.help);
    w.EndObject();
  }
  w.EndArray().Key("errors").Int(static_cast<int64_t>(errors)).Key("warnings").Int(static_cast<int64_t>(warnings));
  w.EndObject();
  return w.Take() + "\n";
}

// What every pod linted said of one policy rule or score.
struct RuleFindings {
  Span span;
  std::string policy;
  size_t pods = 0;        // pods it was evaluated for
  size_t rejected = 0;    // pods for which it rejected some node
  std::vector<std::string> reject_all;  // pods for which it rejected every node
  size_t constant = 0;    // scores: pods for which it was the same on every node
};

// Per pod, every filter rule and score of every policy over every node.
void LintPolicies(engine::Engine& engine, engine::Cluster& cluster, const std::vector<k8s::Pod>& pods,
                  DiagnosticSink& diags) {
  std::map<std::pair<std::string, size_t>, RuleFindings> filters, scores;
  size_t nodes = cluster.Table().NodeCount();
  if (nodes < 1) return;
  for (const k8s::Pod& pod : pods) {
    std::unique_ptr<engine::PodPlan> plan = engine.Plan(pod, cluster);
    std::string who = pod.namespace_name + "/" + pod.name;
    for (const engine::PolicyRules& rules : engine::EvaluatePolicyRules(engine, *plan, cluster)) {
      for (size_t i = 0; i < rules.filters.size(); ++i) {
        RuleFindings& f = filters[{rules.plugin, i}];
        f.span = rules.filters[i];
        f.policy = rules.plugin;
        ++f.pods;
        f.rejected += rules.rejected[i] > 0;
        if (rules.rejected[i] == nodes) f.reject_all.push_back(who);
      }
      for (size_t s = 0; s < rules.scores.size(); ++s) {
        RuleFindings& f = scores[{rules.plugin, s}];
        f.span = rules.scores[s];
        f.policy = rules.plugin;
        ++f.pods;
        f.constant += rules.constant[s];
      }
    }
  }
  for (const auto& [key, f] : filters) {
    if (!f.reject_all.empty()) {
      Diagnostic& d = diags.Warning(DiagCode::kRuleAlwaysFails, f.span,
                                    fmt::format("this filter of `{}` rejects every node of the snapshot for {}", f.policy,
                                                f.reject_all.size() == 1 ? fmt::format("pod `{}`", f.reject_all[0])
                                                                         : fmt::format("{} pods", f.reject_all.size())),
                                    "false on every node");
      if (f.reject_all.size() > 1) d.notes.push_back(fmt::format("the pods: {}", fmt::join(f.reject_all, ", ")));
    } else if (f.rejected == 0) {
      Diagnostic& d = diags.Warning(DiagCode::kRuleNeverFails, f.span,
                                    fmt::format("this filter of `{}` rejects no node of the snapshot for any of the {} "
                                                "pod{} linted", f.policy, f.pods, f.pods == 1 ? "" : "s"),
                                    "true on every node");
      d.notes.push_back("it filters nothing here: a condition that never holds, or pods that never ask for it");
    }
  }
  for (const auto& [key, f] : scores) {
    if (f.constant != f.pods) continue;
    Diagnostic& d = diags.Warning(DiagCode::kConstantScore, f.span,
                                  fmt::format("this score of `{}` is the same on every node for each of the {} pod{} linted",
                                              f.policy, f.pods, f.pods == 1 ? "" : "s"),
                                  "the same value everywhere");
    d.notes.push_back("a score the same on every node changes no decision");
  }
}

int Lint(const Args& args) {
  std::optional<tooling::OutputFormat> format = tooling::ParseOutputFormat("lint", args.Get("output", "text"));
  if (!format) return kExitBadInput;
  DiagnosticSink diags;
  std::unique_ptr<engine::Cluster> cluster;
  if (args.Has("cluster")) {
    std::optional<std::vector<rt::SnapshotFile>> snapshot = tooling::SnapshotFiles(args.GetAll("cluster"), diags);
    if (snapshot) cluster = engine::Cluster::LoadFiles(*snapshot, tooling::CacheFromFlags(args.Has("no-cache")), diags);
    if (!cluster) {
      std::fputs(RenderAll(diags).c_str(), stderr);
      return kExitBadInput;
    }
    if (std::optional<std::string> why =
            tooling::NotACluster(cluster->Report(), fmt::format("{}", fmt::join(args.GetAll("cluster"), ", ")))) {
      fmt::print(stderr, "policyc lint: {}\n", *why);
      return kExitBadInput;
    }
  }
  std::vector<std::string> policy_paths = args.GetAll("policy");
  std::vector<std::shared_ptr<Source>> manifests;
  std::vector<k8s::Pod> pods;
  for (const std::string& path : args.Positional()) {
    if (path.ends_with(".policy")) {
      policy_paths.push_back(path);
      continue;
    }
    std::shared_ptr<Source> source = tooling::ReadInput(path, diags);
    if (!source) continue;
    manifests.push_back(source);
    for (k8s::Pod& p : tooling::LintManifest(*source, cluster.get(), diags)) pods.push_back(std::move(p));
    // The CEL selectors of the DRA objects beside the pods (a
    // ResourceClaimTemplate's), checked as the dump's are (a file that does
    // not read was reported above).
    DiagnosticSink read;
    if (std::optional<k8s::Manifest> m = k8s::ReadManifest(*source, read, k8s::FieldValidation::kIgnore)) {
      tooling::CheckManifestSelectors(*m, *source, diags);
    }
  }
  std::vector<std::shared_ptr<const Source>> policies;
  for (const std::string& path : policy_paths) {
    if (std::shared_ptr<Source> source = tooling::ReadInput(path, diags)) policies.push_back(source);
  }
  if (!policies.empty()) {
    // Passes off: every rule as written, where the diagnostics point.
    engine::EngineOptions options;
    options.disabled_passes = {"all"};
    std::unique_ptr<engine::Engine> engine = engine::Engine::Create(rt::DefaultProfile(), policies, options, diags);
    if (engine && cluster && !pods.empty()) LintPolicies(*engine, *cluster, pods, diags);
  }
  bool unreadable = false, lint_errors = false;
  for (const Diagnostic& d : diags.All()) {
    if (d.severity != Severity::kError) continue;
    (IsLint(d.code) ? lint_errors : unreadable) = true;
  }
  if (unreadable) {
    std::fputs(RenderAll(diags).c_str(), stderr);
    return kExitBadInput;
  }
  if (*format == tooling::OutputFormat::kText) {
    if (diags.All().empty()) {
      fmt::print("no problems found ({} pod{}, {} polic{}{})\n", pods.size(), pods.size() == 1 ? "" : "s", policies.size(),
                 policies.size() == 1 ? "y" : "ies",
                 cluster ? fmt::format(", {} nodes", cluster->Table().NodeCount()) : std::string(", no snapshot"));
    } else {
      fmt::print("{}", RenderAll(diags));
    }
  } else {
    fmt::print("{}", tooling::Structured(*format, Json(diags.Sorted())));
  }
  return lint_errors ? kExitNo : kExitOk;
}

}  // namespace

namespace {

int Run(const Args& args) {
  if (args.Positional().empty() && !args.Has("policy")) {
    fmt::print(stderr, "policyc lint: give manifests or policies to lint\nRun `policyc lint --help` for usage.\n");
    return kExitBadInput;
  }
  return Lint(args);
}

}  // namespace

Command LintCommand() {
  return {"lint", "scheduling lints of manifests and policies against a snapshot", kUsage,
          {{"cluster", true, true}, {"policy", true, true}, {"output", true, false, 'o'}, {"no-cache", false}},
          &Run};
}

}  // namespace policy::cli
