#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "runtime/engine/cluster.h"
#include "runtime/engine/drain.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/profile.h"

using namespace policy;

namespace {

k8s::Node Node(std::string name, int64_t cpu) {
  k8s::Node n;
  n.name = std::move(name);
  n.labels = {{"kubernetes.io/hostname", n.name}};
  n.allocatable = {{"cpu", k8s::Quantity::FromUnits(cpu)}, {"memory", k8s::Quantity::FromUnits(8LL << 30)},
                   {"pods", k8s::Quantity::FromUnits(110)}};
  return n;
}

k8s::Pod Pod(std::string name, int64_t cpu, std::string node, std::string owner = "ReplicaSet") {
  k8s::Pod p;
  p.name = std::move(name);
  p.namespace_name = "default";
  k8s::Container c;
  c.name = "app";
  c.requests = {{"cpu", k8s::Quantity::FromUnits(cpu)}};
  p.containers = {c};
  p.node_name = std::move(node);
  p.controller = k8s::OwnerReference{"apps/v1", owner, "owner"};
  return p;
}

}  // namespace

TEST_CASE("a node drains when its pods fit elsewhere and one that cannot stays as it was") {
  auto cluster = std::make_unique<engine::Cluster>();
  std::vector<k8s::Node> nodes = {Node("a", 4), Node("b", 4), Node("c", 8)};
  for (const k8s::Node& n : nodes) cluster->AddNode(n);
  std::unordered_map<std::string, k8s::Pod> bound;
  for (k8s::Pod p : {Pod("small", 1, "a"), Pod("ds-a", 1, "a", "DaemonSet"), Pod("mid", 3, "b"), Pod("big", 7, "c")}) {
    cluster->BindPod(p);
    bound.emplace("default/" + p.name, p);
  }
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
  REQUIRE(engine);
  engine::DrainOptions options;
  options.nodes = {"c", "a", "b", "nope"};
  engine::DrainPlan plan = engine::PlanDrain(*engine, *cluster, bound, nodes, options);

  // c: `big` (7 cpu) fits neither a (4) nor b (4): pinned, and c is as it was.
  REQUIRE(plan.pinned.size() >= 1);
  CHECK(plan.pinned[0].node == "c");
  CHECK(plan.pinned[0].pod == "default/big");
  CHECK(plan.pinned[0].summary.find("Insufficient cpu") != std::string::npos);
  const rt::NodeTable& t = cluster->Table();
  REQUIRE(t.FindNode("c"));
  CHECK(t.Resource("cpu")->requested[*t.FindNode("c")] == 7000);
  // a: `small` moves (to b or c), its DaemonSet pod goes with it.
  REQUIRE(plan.drained.size() >= 1);
  CHECK(plan.drained[0].node == "a");
  REQUIRE(plan.drained[0].moves.size() == 1);
  CHECK(plan.drained[0].moves[0].pod == "default/small");
  CHECK(plan.drained[0].go_along == std::vector<std::string>{"default/ds-a"});
  CHECK_FALSE(t.FindNode("a"));
  // b: `mid` (3 cpu) fits nowhere with a gone and c 1 cpu short.
  bool b_pinned = false;
  for (const engine::PinnedNode& p : plan.pinned) b_pinned = b_pinned || (p.node == "b" && p.pod == "default/mid");
  CHECK(b_pinned);
  CHECK(plan.skipped == std::vector<std::string>{"nope"});
  // Headroom: a's 4 cpu gone.
  for (const engine::Headroom& h : plan.headroom) {
    if (h.resource != "cpu") continue;
    CHECK(h.allocatable_before == 16000);
    CHECK(h.allocatable_after == 12000);
    CHECK(h.free_before == 16000 - 12000);
    CHECK(h.free_after == 12000 - 11000);
  }
}
