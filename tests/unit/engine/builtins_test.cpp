// Every row of stdlib/builtins.def against the back ends its column names:
// an expression using the builtin on node values must compile to kernels
// exactly when the row says kJit (and then decide as the interpreter does),
// and the same builtin on constants must fold away exactly when it says
// kFold. A row without a sample here fails the first case.

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>

#include "compiler/ir/ir.h"
#include "compiler/lang/builtins.h"
#include "runtime/engine/engine.h"

using namespace policy;

namespace {

struct Sample {
  const char* on_node;   ///< the builtin on node values (a `score` when `boolean` is false, else a `filter`)
  const char* constant;  ///< the builtin on constants (pod values count: the pod is a constant when planned)
  bool boolean = false;
};

const std::map<lang::BuiltinId, Sample>& Samples() {
  using B = lang::BuiltinId;
  static const std::map<B, Sample> kSamples = {
      {B::kMax, {"max(node.pods, 2)", "max(1, 2)"}},
      {B::kMin, {"min(node.pods, 2)", "min(1, 2)"}},
      {B::kMulDiv, {"muldiv(node.pods, 3, 2)", "muldiv(7, 3, 2)"}},
      {B::kInterpolate, {"interpolate([0, 5, 10], [0, 50, 100], node.pods)", "interpolate([0, 10], [0, 100], 5)"}},
      {B::kLen, {"len(node.labels)", "len([1, 2, 3])"}},
      {B::kToInt, {"node.labels['gen'].int() ?? 0", "'42'.int() ?? 0"}},
      {B::kToQuantity, {"(node.labels['mem'].quantity() ?? 0m) / 1m", "('1Gi'.quantity() ?? 0m) / 1m"}},
      {B::kUnits, {"node.allocatable['cpu'].units()", "1500m.units()"}},
      {B::kMillis, {"node.allocatable['cpu'].millis()", "1500m.millis()"}},
      {B::kStartsWith, {"node.labels['zone'].startsWith('a')", "'abc'.startsWith('a')", true}},
      {B::kContains, {"node.labels['zone'].contains('a')", "'abc'.contains('b')", true}},
      {B::kHas, {"node.allocatable.has('cpu')", "pod.labels.has('app')", true}},
      {B::kPodsInDomain, {"sum t in pod.podAffinity.required: podsInDomain([t], 'zone')",
                          "sum t in pod.podAffinity.required: podsInDomain([t], 'zone')"}},
      {B::kPodsWithKey, {"sum t in pod.podAffinity.required: podsWithKey([t], 'zone')",
                         "sum t in pod.podAffinity.required: podsWithKey([t], 'zone')"}},
      {B::kPodMatches, {"podMatches(pod.podAffinity.required)", "podMatches(pod.podAffinity.required)", true}},
      {B::kExistingAntiAffinity, {"existingAntiAffinity()", "existingAntiAffinity()"}},
      {B::kExistingAffinityWeight, {"existingAffinityWeight(1, true)", "existingAffinityWeight(1, true)"}},
      {B::kSpreadCount, {"sum c in pod.topologySpreadConstraints: spreadCount(c)",
                         "sum c in pod.topologySpreadConstraints: spreadCount(c)"}},
      {B::kSpreadMin, {"sum c in pod.topologySpreadConstraints: spreadMin(c)",
                       "sum c in pod.topologySpreadConstraints: spreadMin(c)"}},
      {B::kSpreadSkew, {"sum c in pod.topologySpreadConstraints: spreadSkew(c)",
                        "sum c in pod.topologySpreadConstraints: spreadSkew(c)"}},
      {B::kSpreadScoreCount, {"sum c in pod.topologySpreadConstraints: spreadScoreCount(c)",
                              "sum c in pod.topologySpreadConstraints: spreadScoreCount(c)"}},
      {B::kImageScore, {"imageScore('nginx:1.27')", "imageScore('nginx:1.27')"}},
      {B::kNodesWithLabel, {"nodesWithLabel('zone')", "nodesWithLabel('zone')"}},
      {B::kClosestLabelKey, {"closestLabelKey('zon') == 'zone'", "closestLabelKey('zon') == 'zone'", true}},
      {B::kClaimsFit, {"claimsFit() == 0", "claimsFit() == 0", true}},
      {B::kClaimsError, {"claimsError() == ''", "claimsError() == ''", true}},
      {B::kClaimsDetail, {"claimsDetail() == ''", "claimsDetail() == ''", true}},
      // A device is never a constant: `cel` is decided per device, at run time.
      {B::kCel, {"any device in node.devices: cel \"device.driver == 'x'\"",
                 "any device in node.devices: cel \"device.driver == 'x'\"", true}},
      {B::kSpreadWeight, {"sum c in pod.topologySpreadConstraints: spreadWeight(c)",
                          "sum c in pod.topologySpreadConstraints: spreadWeight(c)"}},
  };
  return kSamples;
}

// Nodes in two zones with int and quantity labels, web pods bound on some.
std::unique_ptr<engine::Cluster> SampleCluster() {
  auto cluster = std::make_unique<engine::Cluster>();
  for (int i = 0; i < 6; ++i) {
    k8s::Node n;
    n.name = "n" + std::to_string(i);
    n.labels = {{"zone", i % 2 ? "a" : "b"}, {"gen", std::to_string(i)}, {"mem", std::to_string(i) + "Gi"}};
    n.allocatable = {{"cpu", k8s::Quantity::FromUnits(4 + i)}, {"pods", k8s::Quantity::FromUnits(110)}};
    cluster->AddNode(n);
    for (int p = 0; p < i % 3; ++p) {
      k8s::Pod web;
      web.name = "web-" + std::to_string(i) + "-" + std::to_string(p);
      web.namespace_name = "default";
      web.node_name = n.name;
      web.labels = {{"app", "web"}};
      cluster->BindPod(web);
    }
  }
  return cluster;
}

k8s::Pod SamplePod() {
  k8s::Pod pod;
  pod.name = "p";
  pod.namespace_name = "default";
  pod.labels = {{"app", "web"}};
  k8s::PodAffinityTerm zone;
  zone.label_selector = k8s::LabelSelector{{{"app", "web"}}, {}};
  zone.topology_key = "zone";
  pod.affinity.pod_affinity = k8s::PodAffinity{{zone}, {}};
  k8s::TopologySpreadConstraint spread;
  spread.topology_key = "zone";
  spread.label_selector = k8s::LabelSelector{{{"app", "web"}}, {}};
  spread.when_unsatisfiable = k8s::WhenUnsatisfiable::kScheduleAnyway;
  pod.topology_spread = {spread};
  return pod;
}

struct Planned {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::PodPlan> plan;
};

Planned Plan(const std::string& expr, bool boolean, engine::Backend backend, const engine::Cluster& cluster) {
  std::string text = std::string("policy P\n  ") + (boolean ? "filter " : "score ") + expr + "\n";
  DiagnosticSink diags;
  engine::EngineOptions options;
  options.backend = backend;
  Planned p;
  p.engine = engine::Engine::Create(rt::Profile{}, {std::make_shared<const Source>("sample.policy", text)}, options, diags);
  REQUIRE_MESSAGE(p.engine != nullptr, text, "\n", RenderAll(diags));
  p.plan = p.engine->Plan(SamplePod(), cluster);
  return p;
}

}  // namespace

TEST_CASE("every builtin has a sample") {
  for (const lang::Builtin& b : lang::Builtins()) {
    CAPTURE(b.name);
    CHECK(Samples().contains(b.id));
    CHECK((b.backends & lang::kInterp) != 0);  // the reference evaluates everything
  }
}

TEST_CASE("each backend implements exactly the builtins its column in builtins.def names") {
  std::unique_ptr<engine::Cluster> cluster = SampleCluster();
  for (const lang::Builtin& b : lang::Builtins()) {
    auto it = Samples().find(b.id);
    if (it == Samples().end()) continue;
    const Sample& sample = it->second;
    std::string call = "call " + std::string(b.name) + "(";
    CAPTURE(b.name);

    // Folding: on constants the call is gone after the passes, or it stays.
    Planned folded = Plan(sample.constant, sample.boolean, engine::Backend::kInterp, *cluster);
    bool gone = ir::Print(folded.plan->Program(0)).find(call) == std::string::npos;
    CHECK_MESSAGE(gone == ((b.backends & lang::kFold) != 0), "folded: ", gone);

    // The interpreter and the JIT on node values: the call is still there,
    // kernels exist exactly when the column says kJit, and they decide as
    // the interpreter does.
    Planned interp = Plan(sample.on_node, sample.boolean, engine::Backend::kInterp, *cluster);
    REQUIRE(ir::Print(interp.plan->Program(0)).find(call) != std::string::npos);
    rt::Decision want = interp.engine->Decide(*interp.plan, *cluster);
    if (!engine::Engine::HasJit()) continue;
    Planned native = Plan(sample.on_node, sample.boolean, engine::Backend::kJit, *cluster);
    bool compiled = native.plan->NativePlugins() == 1;
    CHECK_MESSAGE(compiled == ((b.backends & lang::kJit) != 0), "compiled: ", compiled);
    if (!compiled) continue;
    rt::Decision got = native.engine->Decide(*native.plan, *cluster, {.verify_kernels = true});
    CHECK(got.feasible == want.feasible);
    CHECK(got.score == want.score);
  }
}
