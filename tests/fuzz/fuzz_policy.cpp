// Fuzzes the policy language front half through the engine API: lexing,
// parsing, interpolation, sema, lowering, and the whole pass pipeline
// specialized to a sample pod and bound to a sample cluster (the IR verifier runs after each pass), then
// printing, and `policyc fmt` (same tree after, idempotent). A refusal must
// always come with a diagnostic. Differential: the
// interpreter must give the same failures, reasons and scores on every node
// for the program as lowered and as optimized.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/driver/compilation.h"
#include "compiler/syntax/formatter.h"
#include "compiler/syntax/parser.h"
#include "runtime/engine/engine.h"
#include "runtime/interp/interpreter.h"

namespace {

// A pod with something in every field policies loop over.
policy::k8s::Pod SamplePod() {
  using namespace policy::k8s;
  Pod pod;
  pod.name = "sample";
  pod.labels = {{"app", "web"}};
  pod.node_selector = {{"disk", "ssd"}};
  Container c;
  c.requests = {{"cpu", *Quantity::Parse("500m")}, {"nvidia.com/gpu", Quantity::FromUnits(1)}};
  pod.containers = {c};
  pod.tolerations = {{"gpu", TolerationOp::kExists, "", TaintEffect::kNoSchedule, std::nullopt},
                     {"", TolerationOp::kExists, "", std::nullopt, std::nullopt}};
  NodeAffinity affinity;
  NodeSelectorTerm term;
  term.match_expressions = {{"zone", SelectorOp::kIn, {"a", "b"}, {}}, {"gen", SelectorOp::kGt, {"3"}, {}}};
  term.match_fields = {{"metadata.name", SelectorOp::kIn, {"n1"}, {}}};
  affinity.required = std::vector<NodeSelectorTerm>{term};
  affinity.preferred = {{10, term}};
  pod.affinity.node_affinity = affinity;
  PodAffinityTerm same_zone;
  same_zone.label_selector = LabelSelector{{{"app", "web"}}, {}};
  same_zone.topology_key = "zone";
  PodAffinityTerm other_host;
  other_host.label_selector = LabelSelector{{}, {{"app", SelectorOp::kIn, {"db"}, {}}}};
  other_host.topology_key = "kubernetes.io/hostname";
  other_host.namespace_selector = LabelSelector{};
  pod.affinity.pod_affinity = PodAffinity{{same_zone}, {{20, other_host}}};
  pod.affinity.pod_anti_affinity = PodAffinity{{other_host}, {{5, same_zone}}};
  TopologySpreadConstraint hard;
  hard.topology_key = "zone";
  hard.label_selector = LabelSelector{{{"app", "web"}}, {}};
  TopologySpreadConstraint soft = hard;
  soft.topology_key = "kubernetes.io/hostname";
  soft.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
  soft.node_taints_policy = InclusionPolicy::kHonor;
  pod.topology_spread = {hard, soft};
  return pod;
}

// Three nodes with labels, taints and resources in the shapes policies test.
const policy::engine::Cluster& SampleCluster() {
  using namespace policy::k8s;
  static policy::engine::Cluster* cluster = [] {
    auto* t = new policy::engine::Cluster();
    Node a;
    a.name = "n1";
    a.labels = {{"zone", "a"}, {"gen", "8"}, {"disk", "ssd"}};
    a.taints = {{"gpu", "yes", TaintEffect::kNoSchedule}, {"spot", "", TaintEffect::kPreferNoSchedule}};
    a.allocatable = {{"cpu", Quantity::FromUnits(8)}, {"memory", *Quantity::Parse("16Gi")}, {"pods", Quantity::FromUnits(110)}};
    Node b;
    b.name = "n2";
    b.labels = {{"zone", "b"}, {"gen", "x"}};
    b.taints = {{"dedicated", "ml", TaintEffect::kNoExecute}};
    b.allocatable = {{"cpu", Quantity::FromUnits(4)}, {"nvidia.com/gpu", Quantity::FromUnits(2)}};
    Node c;
    c.name = "n3";
    t->AddNode(a);
    t->AddNode(b);
    t->AddNode(c);
    // Bound pods for the inter-pod builtins: a web pod on n1, a db pod with
    // anti-affinity to web pods on n2.
    Pod web;
    web.name = "web-0";
    web.node_name = "n1";
    web.labels = {{"app", "web"}};
    Pod db = web;
    db.name = "db-0";
    db.node_name = "n2";
    db.labels = {{"app", "db"}};
    PodAffinityTerm away;
    away.label_selector = LabelSelector{{{"app", "web"}}, {}};
    away.topology_key = "zone";
    db.affinity.pod_anti_affinity = PodAffinity{{away}, {{10, away}}};
    t->BindPod(web);
    t->BindPod(db);
    return t;
  }();
  return *cluster;
}

// Everything the interpreter says about `program` on every node, as text.
std::string Outcome(const policy::ir::Program& program, const policy::k8s::Pod& pod) {
  const policy::rt::NodeTable& table = SampleCluster().Table();
  policy::rt::Interpreter interp(program, pod, table);
  std::string out;
  for (size_t f = 0; f < program.functions.size(); ++f) {
    out += interp.Applies(f) ? "applies\n" : "skips\n";
    for (policy::rt::RowId row = 0; row < table.RowCount(); ++row) {
      for (bool node_level : {false, true}) {
        if (auto failure = interp.Prefilter(f, row, node_level)) out += "pre " + failure->reason + "|" + failure->detail + "\n";
      }
      for (const auto& failure : interp.Filter(f, row)) out += failure.reason + "|" + failure.detail + "\n";
      for (size_t s = 0; s < program.functions[f].scores.size(); ++s) out += std::to_string(interp.Score(f, s, row)) + "\n";
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const policy::k8s::Pod pod = SamplePod();
  auto source = std::make_shared<const policy::Source>("fuzz.policy",
                                                       std::string(reinterpret_cast<const char*>(data), size));
  policy::DiagnosticSink diags;
  // An engine with no built-in plugins: the input is its one policy file.
  std::unique_ptr<policy::engine::Engine> engine =
      policy::engine::Engine::Create(policy::rt::Profile{}, {source}, {}, diags);
  if (!engine && !diags.HasErrors()) __builtin_trap();
  if (engine) {
    const policy::driver::CompiledFile& compiled = *engine->Files()[0];
    (void)policy::syntax::PrintModule(compiled.module);
    std::string before = Outcome(compiled.program, pod);
    std::unique_ptr<policy::engine::PodPlan> plan = engine->Plan(pod, SampleCluster());
    (void)policy::ir::Print(plan->Program(0));
    if (Outcome(plan->Program(0), pod) != before) __builtin_trap();  // the passes changed a result
  }
  (void)policy::RenderAll(diags);
  // `policyc fmt`: a file that parses formats to one that parses to the same
  // syntax tree, and formatting is idempotent.
  policy::DiagnosticSink fmt_diags;
  std::optional<std::string> once = policy::syntax::FormatPolicyFile(*source, fmt_diags);
  if (once) {
    policy::Source formatted("fuzz-formatted.policy", *once);
    std::optional<std::string> twice = policy::syntax::FormatPolicyFile(formatted, fmt_diags);
    if (!twice || *twice != *once) __builtin_trap();  // not idempotent, or unreadable
    policy::DiagnosticSink a, b;
    std::optional<policy::syntax::Module> before = policy::syntax::ParsePolicyFile(*source, a);
    std::optional<policy::syntax::Module> after = policy::syntax::ParsePolicyFile(formatted, b);
    if (!before || !after || policy::syntax::PrintModule(*before) != policy::syntax::PrintModule(*after)) __builtin_trap();
  }
  return 0;
}
