// The engine API: owned lifetimes, one decision path with words added for
// the rows asked, plans that follow the cluster, tiering.

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "runtime/engine/engine.h"

using namespace policy;

namespace {

k8s::Node Node(const std::string& name, int64_t cpu, k8s::StringMap labels = {}) {
  k8s::Node n;
  n.name = name;
  n.labels = std::move(labels);
  n.allocatable = {{"cpu", k8s::Quantity::FromUnits(cpu)}, {"memory", *k8s::Quantity::Parse("16Gi")},
                   {"pods", k8s::Quantity::FromUnits(110)}};
  return n;
}

k8s::Pod PodAsking(int64_t cpu) {
  k8s::Pod pod;
  pod.name = "p";
  pod.namespace_name = "default";
  k8s::Container c;
  c.requests = {{"cpu", k8s::Quantity::FromUnits(cpu)}};
  pod.containers = {c};
  return pod;
}

std::unique_ptr<engine::Engine> DefaultEngine(engine::Backend backend = engine::Backend::kInterp) {
  DiagnosticSink diags;
  engine::EngineOptions options;
  options.backend = backend;
  std::unique_ptr<engine::Engine> e = engine::Engine::Create(rt::DefaultProfile(), {}, options, diags);
  REQUIRE_MESSAGE(e != nullptr, RenderAll(diags));
  return e;
}

std::vector<std::string> Names(const engine::Cluster& cluster, const std::vector<rt::RowId>& rows) {
  std::vector<std::string> names;
  for (rt::RowId row : rows) names.emplace_back(cluster.Table().NodeName(row));
  return names;
}

}  // namespace

TEST_CASE("a diagnostic keeps the policy source it points into alive after the engine is refused") {
  DiagnosticSink diags;
  {
    // The only owner of the text is the engine being made, and it is refused.
    auto source = std::make_shared<const Source>("typo.policy", "policy P\n  filter node.lables['zone'] == 'a'\n");
    std::unique_ptr<engine::Engine> e = engine::Engine::Create(rt::Profile{}, {std::move(source)}, {}, diags);
    CHECK(e == nullptr);
  }
  REQUIRE(diags.HasErrors());
  std::string rendered = RenderAll(diags);
  CHECK(rendered.find("typo.policy:2:") != std::string::npos);
  CHECK(rendered.find("filter node.lables['zone'] == 'a'") != std::string::npos);  // the source line, still readable
}

TEST_CASE("two policies of one name are refused - the diagnostic shows both files after the engine is gone") {
  DiagnosticSink diags;
  {
    auto a = std::make_shared<const Source>("a.policy", "policy Cuda \"a\"\n  filter true\n");
    auto b = std::make_shared<const Source>("b.policy", "policy Cuda \"b\"\n  filter false\n");
    CHECK(engine::Engine::Create(rt::Profile{}, {std::move(a), std::move(b)}, {}, diags) == nullptr);
    // And a policy named as an in-tree plugin of the profile.
    auto taint = std::make_shared<const Source>("t.policy", "policy TaintToleration \"t\"\n  filter true\n");
    CHECK(engine::Engine::Create(rt::DefaultProfile(), {std::move(taint)}, {}, diags) == nullptr);
  }
  std::string rendered = RenderAll(diags);
  CHECK(rendered.find("b.policy:1:8: a second policy named `Cuda`") != std::string::npos);
  CHECK(rendered.find("policy Cuda \"a\"") != std::string::npos);  // the first file's line, still readable
  CHECK(rendered.find("the profile already has a plugin named `TaintToleration`") != std::string::npos);
}

TEST_CASE("explaining adds words to the decision - never a second decision") {
  engine::Cluster cluster;
  cluster.AddNode(Node("small", 4));
  cluster.AddNode(Node("big", 8));
  std::unique_ptr<engine::Engine> e = DefaultEngine();
  std::unique_ptr<engine::PodPlan> plan = e->Plan(PodAsking(6), cluster);
  const rt::Decision& d = e->Decide(*plan, cluster, {.plugin_scores = true});
  REQUIRE(Names(cluster, d.feasible) == std::vector<std::string>{"big"});
  REQUIRE(d.selected == 0u);

  rt::Placement all = e->Explain(*plan, cluster, d);
  REQUIRE(all.nodes.size() == 2);
  CHECK(all.feasible == 1);
  CHECK(all.summary == "1/2 nodes are available.");
  CHECK_FALSE(all.nodes[0].feasible);
  REQUIRE(all.nodes[0].reasons.size() == 1);
  CHECK(all.nodes[0].reasons[0].plugin == "NodeResourcesFit");
  CHECK(all.nodes[0].reasons[0].reason == "Insufficient cpu");
  CHECK(all.nodes[1].feasible);
  CHECK(all.nodes[1].score == d.score[0]);
  CHECK_FALSE(all.nodes[1].scores.empty());  // per plugin, from the decision
  CHECK(all.selected == 1u);

  // Words for one row only: the selected node is not among them.
  rt::RowId small = *cluster.Table().FindNode("small");
  rt::Placement one = e->Explain(*plan, cluster, d, std::vector<rt::RowId>{small});
  REQUIRE(one.nodes.size() == 1);
  CHECK(one.nodes[0].name == "small");
  CHECK_FALSE(one.selected.has_value());
}

TEST_CASE("nowhere: kube-scheduler's summary counts the first failing plugin of every node") {
  engine::Cluster cluster;
  cluster.AddNode(Node("a", 2));
  k8s::Node cordoned = Node("b", 2);
  cordoned.unschedulable = true;
  cluster.AddNode(cordoned);
  std::unique_ptr<engine::Engine> e = DefaultEngine();
  std::unique_ptr<engine::PodPlan> plan = e->Plan(PodAsking(3), cluster);
  const rt::Decision& d = e->Decide(*plan, cluster, {.plugin_scores = true});
  CHECK(d.feasible.empty());
  rt::Placement p = e->Explain(*plan, cluster, d);
  CHECK(p.summary == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable.");
  // Every failing plugin is named on the node, not only the first.
  REQUIRE(p.nodes[1].reasons.size() == 2);
  CHECK(p.nodes[1].first_failing_reasons == 1);
}

TEST_CASE("a plan follows the cluster: nodes added and changed after planning are decided on") {
  engine::Cluster cluster;
  cluster.AddNode(Node("a", 4, {{"zone", "x"}}));
  std::unique_ptr<engine::Engine> e = DefaultEngine();
  k8s::Pod pod = PodAsking(6);
  std::unique_ptr<engine::PodPlan> plan = e->Plan(pod, cluster);
  CHECK(e->Decide(*plan, cluster).feasible.empty());
  // A node with a label value the plan's programs were not bound to.
  cluster.AddNode(Node("b", 16, {{"zone", "y"}}));
  CHECK(Names(cluster, e->Decide(*plan, cluster).feasible) == std::vector<std::string>{"b"});
  REQUIRE(cluster.UpdateNode(Node("a", 32, {{"zone", "x"}})));
  CHECK(Names(cluster, e->Decide(*plan, cluster).feasible) == std::vector<std::string>{"a", "b"});
  // A pod bound there takes its cpu.
  k8s::Pod bound = PodAsking(30);
  bound.name = "hog";
  bound.node_name = "a";
  bound.phase = k8s::PodPhase::kRunning;
  CHECK(cluster.BindPod(bound) == rt::BindResult::kBound);
  CHECK(Names(cluster, e->Decide(*plan, cluster).feasible) == std::vector<std::string>{"b"});
  CHECK(cluster.UnbindPod("default", "hog"));
  CHECK(cluster.RemoveNode("b"));
  CHECK(Names(cluster, e->Decide(*plan, cluster).feasible) == std::vector<std::string>{"a"});
}

TEST_CASE("namespace and selector-owner events reach the next plan") {
  engine::Cluster cluster;
  cluster.AddNode(Node("a", 8, {{"topology.kubernetes.io/zone", "z1"}, {"kubernetes.io/hostname", "a"}}));
  std::unique_ptr<engine::Engine> e = DefaultEngine();
  k8s::Pod pod = PodAsking(1);
  pod.labels = {{"app", "web"}};
  CHECK(e->Plan(pod, cluster)->Pod().topology_spread.empty());
  // A Service selecting the pod: kube-scheduler's default spreading applies.
  k8s::SelectorOwner service;
  service.kind = "Service";
  service.name = "web";
  service.match_labels = k8s::StringMap{{"app", "web"}};
  cluster.SetSelectorOwner(service);
  cluster.SetSelectorOwner(service);  // replaced, not added twice
  CHECK(cluster.Table().SelectorOwners().size() == 1);
  CHECK(e->Plan(pod, cluster)->Pod().topology_spread.size() == 2);
  CHECK(cluster.RemoveSelectorOwner("Service", "default", "web"));
  CHECK_FALSE(cluster.RemoveSelectorOwner("Service", "default", "web"));
  CHECK(e->Plan(pod, cluster)->Pod().topology_spread.empty());
  // Namespaces come and go with their labels.
  cluster.SetNamespace("team", {{"tier", "gold"}});
  CHECK(cluster.Table().NamespaceLabels("team").size() == 1);
  CHECK(cluster.RemoveNamespace("team"));
  CHECK(cluster.Table().NamespaceLabels("team").empty());
  CHECK_FALSE(cluster.RemoveNamespace("team"));
}

TEST_CASE("partial evaluation stays linear in the pod: loops past the unrolling budget are kept") {
  engine::Cluster cluster;
  cluster.AddNode(Node("a", 8));
  k8s::Pod pod = PodAsking(1);
  for (int i = 0; i < 60; ++i) {  // a triple loop over them is 216,000 bodies unrolled
    pod.tolerations.push_back({"k" + std::to_string(i), k8s::TolerationOp::kExists, "", k8s::TaintEffect::kNoSchedule,
                               std::nullopt});
  }
  const std::string text =
      "policy Tri \"t\"\n  filter all a in pod.tolerations: all b in pod.tolerations: all c in pod.tolerations: "
      "a.key != b.key or b.key != c.key or node.pods < 100\n";
  std::vector<rt::Decision> decisions;
  for (bool passes : {true, false}) {
    DiagnosticSink diags;
    engine::EngineOptions options;
    if (!passes) options.disabled_passes = {"all"};
    auto e = engine::Engine::Create(rt::Profile{}, {std::make_shared<const Source>("tri.policy", text)}, options, diags);
    REQUIRE(e != nullptr);
    auto plan = e->Plan(pod, cluster);
    CHECK(plan->Program(0).nodes.size() < 300000);  // the budget, not 60^3 bodies
    decisions.push_back(e->Decide(*plan, cluster));
  }
  CHECK(decisions[0].feasible == decisions[1].feasible);
  CHECK(decisions[0].feasible.size() == 1);
}

TEST_CASE("tiered: the first decisions are interpreted - then the kernels give the same decision") {
  if (!engine::Engine::HasJit()) return;
  engine::Cluster cluster;
  for (int i = 0; i < 50; ++i) cluster.AddNode(Node("n" + std::to_string(i), 1 + i % 9, {{"zone", i % 2 ? "a" : "b"}}));
  k8s::Pod pod = PodAsking(3);
  std::unique_ptr<engine::Engine> interp = DefaultEngine();
  std::unique_ptr<engine::PodPlan> interp_plan = interp->Plan(pod, cluster);
  rt::Decision want = interp->Decide(*interp_plan, cluster);
  REQUIRE_FALSE(want.feasible.empty());

  std::unique_ptr<engine::Engine> tiered = DefaultEngine(engine::Backend::kTiered);
  std::unique_ptr<engine::PodPlan> plan = tiered->Plan(pod, cluster);
  CHECK(plan->NativePlugins() == 0);  // queued, not waited for
  tiered->DrainCompilations();
  rt::Decision got = tiered->Decide(*plan, cluster, {.verify_kernels = true});
  CHECK(plan->NativePlugins() > 0);
  CHECK(got.feasible == want.feasible);
  CHECK(got.score == want.score);
  CHECK(got.selected == want.selected);
}

TEST_CASE("files specialized for earlier pods that read alike decide and explain as files specialized afresh") {
  // Pods that differ in one field each (requests by amount or by extended
  // resource, tolerations, nodeSelector, node affinity, labels with a spread
  // constraint, host ports, images), some alike in what a file reads: a
  // plan that takes the files specialized before gives the decision and the
  // words of a plan of the pod's own; and files were taken.
  engine::Cluster cluster;
  for (int i = 0; i < 8; ++i) {
    k8s::Node n = Node(fmt::format("n{}", i), 2 + i % 3, {{"zone", i % 2 ? "x" : "y"}, {"kubernetes.io/hostname", fmt::format("n{}", i)}});
    n.allocatable.emplace_back(fmt::format("example.com/dev-{}", i % 3), k8s::Quantity::FromUnits(1));
    if (i % 4 == 0) n.taints.push_back({"dedicated", "gpu", k8s::TaintEffect::kNoSchedule});
    cluster.AddNode(n);
  }
  for (auto backend : {engine::Backend::kInterp, engine::Backend::kJit}) {
    std::unique_ptr<engine::Engine> e = DefaultEngine(backend);
    std::vector<k8s::Pod> pods;
    for (int v = 0; v < 24; ++v) {
      k8s::Pod pod = PodAsking(1 + v % 2);
      pod.name = fmt::format("p{}", v);
      if (v % 3 == 1) pod.containers[0].requests.emplace_back(fmt::format("example.com/dev-{}", v % 4), k8s::Quantity::FromUnits(1));
      if (v % 5 == 2) pod.tolerations.push_back({"dedicated", k8s::TolerationOp::kEqual, "gpu", std::nullopt, std::nullopt});
      if (v % 7 == 3) pod.node_selector = {{"zone", v % 2 ? "x" : "y"}};
      if (v % 6 == 4) {
        pod.affinity.node_affinity.emplace();
        pod.affinity.node_affinity->preferred.push_back({10, {{{"zone", k8s::SelectorOp::kIn, {"x"}}}, {}}});
      }
      if (v % 4 == 3) {
        std::string app = v % 8 == 3 ? "a" : "b";
        pod.labels = {{"app", app}};
        k8s::TopologySpreadConstraint c;
        c.topology_key = "zone";
        c.label_selector.emplace();
        c.label_selector->match_labels = {{"app", app}};
        pod.topology_spread.push_back(c);
      }
      if (v % 9 == 5) pod.containers[0].host_ports.push_back({8080, "TCP", "0.0.0.0"});
      pod.containers[0].image = v % 2 ? "nginx:1" : "busybox";
      pods.push_back(std::move(pod));
    }
    for (const k8s::Pod& pod : pods) {
      CAPTURE(pod.name);
      std::unique_ptr<engine::PodPlan> kept = e->Plan(pod, cluster);
      std::unique_ptr<engine::PodPlan> afresh = e->PlanAfresh(pod, cluster);
      rt::Decision got = e->Decide(*kept, cluster, {.plugin_scores = true});
      rt::Decision want = e->Decide(*afresh, cluster, {.plugin_scores = true});
      CHECK(got.feasible == want.feasible);
      CHECK(got.score == want.score);
      CHECK(got.selected == want.selected);
      rt::Placement words = e->Explain(*kept, cluster, got, {}, true);
      rt::Placement want_words = e->Explain(*afresh, cluster, want, {}, true);
      CHECK(words.summary == want_words.summary);
      REQUIRE(words.nodes.size() == want_words.nodes.size());
      for (size_t n = 0; n < words.nodes.size(); ++n) {
        REQUIRE(words.nodes[n].reasons.size() == want_words.nodes[n].reasons.size());
        for (size_t r = 0; r < words.nodes[n].reasons.size(); ++r) {
          CHECK(words.nodes[n].reasons[r].reason == want_words.nodes[n].reasons[r].reason);
          CHECK(words.nodes[n].reasons[r].detail == want_words.nodes[n].reasons[r].detail);
        }
      }
    }
    // Most files read none of what differs: taken, not specialized again.
    CHECK(e->FilesReused() > pods.size() * 5);
  }
}
