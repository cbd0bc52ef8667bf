#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "runtime/engine/scheduler.h"

using namespace policy;

namespace {

std::unique_ptr<engine::Cluster> Nodes(int count, int64_t cpu) {
  auto cluster = std::make_unique<engine::Cluster>();
  for (int i = 0; i < count; ++i) {
    k8s::Node n;
    n.name = "n" + std::to_string(i);
    n.labels = {{"kubernetes.io/hostname", n.name}};
    n.allocatable = {{"cpu", k8s::Quantity::FromUnits(cpu)}, {"memory", k8s::Quantity::FromUnits(8LL << 30)},
                     {"pods", k8s::Quantity::FromUnits(110)}};
    cluster->AddNode(n);
  }
  return cluster;
}

k8s::Pod Pod(std::string name, int64_t cpu, int32_t priority = 0) {
  k8s::Pod p;
  p.name = std::move(name);
  p.namespace_name = "default";
  k8s::Container c;
  c.name = "app";
  c.requests = {{"cpu", k8s::Quantity::FromUnits(cpu)}};
  p.containers = {c};
  p.priority = priority;
  return p;
}

std::unique_ptr<engine::Engine> DefaultEngine() {
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
  REQUIRE_MESSAGE(engine, RenderAll(diags));
  return engine;
}

}  // namespace

TEST_CASE("each bind counts for the next pod and the queue runs by priority") {
  auto cluster = Nodes(1, 2);
  auto engine = DefaultEngine();
  engine::Scheduler scheduler(*engine, *cluster, {});
  std::vector<const engine::Outcome*> out = scheduler.Run({Pod("low", 1, 1), Pod("high", 1, 10), Pod("late", 1, 5)});
  REQUIRE(out.size() == 3);
  CHECK(out[0]->pod.name == "high");
  CHECK(out[1]->pod.name == "late");
  CHECK(out[1]->node == std::optional<std::string>("n0"));
  // The node is full: the last stays Pending, tried again in a second round.
  CHECK(out[2]->pod.name == "low");
  CHECK_FALSE(out[2]->node);
  CHECK(out[2]->attempts == 2);
  CHECK(out[2]->placement().summary == "0/1 nodes are available: 1 Insufficient cpu.");
}

TEST_CASE("percentageOfNodesToScore samples from where the last cycle stopped") {
  auto cluster = Nodes(200, 4);
  auto engine = DefaultEngine();
  engine::ScheduleOptions sampled;
  sampled.percentage_of_nodes_to_score = 50;  // 100 of 200 nodes
  engine::Scheduler scheduler(*engine, *cluster, sampled);
  const engine::Outcome& first = scheduler.Place(Pod("a", 1));
  CHECK(first.feasible == 100);
  CHECK(first.node == std::optional<std::string>("n0"));
  // The next cycle starts at the 101st node: every node there is as good.
  const engine::Outcome& second = scheduler.Place(Pod("b", 1));
  CHECK(second.node == std::optional<std::string>("n100"));
  // Without sampling the second pod would take n1 (n0 now scores lower).
  auto all = Nodes(200, 4);
  engine::Scheduler every(*engine, *all, {});
  every.Place(Pod("a", 1));
  CHECK(every.Place(Pod("b", 1)).node == std::optional<std::string>("n1"));
}

TEST_CASE("preemption evicts the lower-priority pod and binds in its place") {
  auto cluster = Nodes(1, 2);
  k8s::Pod victim = Pod("victim", 2, 0);
  victim.node_name = "n0";
  cluster->BindPod(victim);
  auto engine = DefaultEngine();
  engine::Scheduler scheduler(*engine, *cluster, {});
  const engine::Outcome& o = scheduler.Place(Pod("urgent", 1, 100));
  CHECK(o.node == std::optional<std::string>("n0"));
  CHECK(o.preempted == std::vector<std::string>{"default/victim"});
  CHECK(scheduler.Preempted() == 1);
  // With preemption off it stays Pending, and says why in kube's words.
  auto again = Nodes(1, 2);
  again->BindPod(victim);
  engine::ScheduleOptions off;
  off.preemption = false;
  engine::Scheduler none(*engine, *again, off);
  CHECK_FALSE(none.Place(Pod("urgent", 1, 100)).node);
}
