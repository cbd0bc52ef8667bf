#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/suggest.h"
#include "runtime/sched/profile.h"

using namespace policy;

namespace {

k8s::Node Node(std::string name, int64_t cpu, std::vector<k8s::Taint> taints = {}) {
  k8s::Node n;
  n.name = std::move(name);
  n.labels = {{"kubernetes.io/hostname", n.name}, {"tier", cpu > 4 ? "big" : "small"}};
  n.allocatable = {{"cpu", k8s::Quantity::FromUnits(cpu)}, {"memory", k8s::Quantity::FromUnits(8LL << 30)},
                   {"pods", k8s::Quantity::FromUnits(110)}};
  n.taints = std::move(taints);
  return n;
}

k8s::Pod Pod(std::string name, int64_t cpu, std::string node = "") {
  k8s::Pod p;
  p.name = std::move(name);
  p.namespace_name = "default";
  p.labels = {{"app", "x"}};
  k8s::Container c;
  c.name = "app";
  c.requests = {{"cpu", k8s::Quantity::FromUnits(cpu)}};
  p.containers = {c};
  p.node_name = std::move(node);
  return p;
}

struct World {
  std::unique_ptr<engine::Cluster> cluster = std::make_unique<engine::Cluster>();
  std::unique_ptr<engine::Engine> engine;
  World() {
    DiagnosticSink diags;
    engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
    REQUIRE_MESSAGE(engine, RenderAll(diags));
  }
  rt::Placement Answer(const k8s::Pod& pod) {
    auto plan = engine->Plan(pod, *cluster);
    const rt::Decision& d = engine->Decide(*plan, *cluster, {.plugin_scores = true});
    return engine->Explain(*plan, *cluster, d);
  }
  std::vector<engine::Suggestion> Suggest(const k8s::Pod& pod) {
    return engine::Suggest(*engine, *cluster, pod, Answer(pod));
  }
};

const engine::Suggestion* Find(const std::vector<engine::Suggestion>& all, std::string_view kind) {
  for (const engine::Suggestion& s : all) {
    if (s.changes.size() == 1 && s.changes[0].kind == kind) return &s;
  }
  return nullptr;
}

// A field as text (a number as its digits).
std::string Field(const engine::Change& c, std::string_view key) {
  for (const auto& [k, v] : c.fields) {
    if (k != key) continue;
    if (const int64_t* n = std::get_if<int64_t>(&v)) return std::to_string(*n);
    return std::get<std::string>(v);
  }
  return {};
}

}  // namespace

TEST_CASE("a pod set aside counts nowhere until it is put back") {
  World w;
  w.cluster->AddNode(Node("a", 4));
  w.cluster->BindPod(Pod("p", 3, "a"));
  const rt::NodeTable& t = w.cluster->Table();
  rt::RowId row = *t.FindNode("a");
  const rt::ResourceColumn* cpu = t.Resource("cpu");
  CHECK(cpu->requested[row] == 3000);
  REQUIRE(t.PodsBoundTo(row).size() == 1);
  CHECK(t.PodsBoundTo(row)[0].key == "default/p");

  CHECK(w.cluster->SetPodAside("default/p"));
  CHECK_FALSE(w.cluster->SetPodAside("default/p"));  // once
  CHECK(cpu->requested[row] == 0);
  CHECK(t.PodsBoundTo(row).empty());
  CHECK(t.BoundPodCount() == 0);
  CHECK(t.WaitingPodCount() == 0);
  CHECK(w.Answer(Pod("new", 4)).feasible == 1);

  CHECK(w.cluster->PutPodBack("default/p"));
  CHECK_FALSE(w.cluster->PutPodBack("default/p"));
  CHECK(cpu->requested[row] == 3000);
  CHECK(t.BoundPodCount() == 1);
  CHECK(w.Answer(Pod("new", 4)).feasible == 0);

  // Unbinding a pod that is set aside takes nothing off twice.
  CHECK(w.cluster->SetPodAside("default/p"));
  CHECK(w.cluster->UnbindPod("default", "p"));
  CHECK(cpu->requested[row] == 0);
  CHECK(t.BoundPodCount() == 0);
  CHECK(t.WaitingPodCount() == 0);
}

TEST_CASE("the smallest request cut and a toleration leave the cluster as it was") {
  World w;
  w.cluster->AddNode(Node("small", 4));
  w.cluster->AddNode(Node("big", 16, {{"dedicated", "batch", k8s::TaintEffect::kNoSchedule}}));
  w.cluster->BindPod(Pod("busy", 1, "small"));
  k8s::Pod pod = Pod("web", 8);
  rt::Placement before = w.Answer(pod);
  REQUIRE(before.feasible == 0);
  std::vector<engine::Suggestion> s = w.Suggest(pod);

  const engine::Suggestion* lower = Find(s, "lower-request");
  REQUIRE(lower);
  CHECK(Field(lower->changes[0], "resource") == "cpu");
  CHECK(Field(lower->changes[0], "to") == "3");  // 4 allocatable, 1 requested
  CHECK(lower->nodes == std::vector<std::string>{"small"});

  const engine::Suggestion* tolerate = Find(s, "tolerate");
  REQUIRE(tolerate);
  CHECK(Field(tolerate->changes[0], "key") == "dedicated");
  CHECK(Field(tolerate->changes[0], "value") == "batch");
  CHECK(tolerate->nodes == std::vector<std::string>{"big"});

  // The pod edits come before the cluster's; more nodes first.
  CHECK_FALSE(s.front().cluster);

  // Nothing tried stays behind: the same answer, the same table.
  rt::Placement after = w.Answer(pod);
  CHECK(after.summary == before.summary);
  CHECK(w.cluster->Table().NodeCount() == 2);
  CHECK(w.cluster->Table().BoundPodCount() == 1);
  CHECK(w.cluster->Table().Resource("cpu")->requested[*w.cluster->Table().FindNode("small")] == 1000);
}

TEST_CASE("edits are combined when no single one opens a node") {
  World w;
  w.cluster->AddNode(Node("big", 16, {{"dedicated", "batch", k8s::TaintEffect::kNoSchedule}}));
  w.cluster->BindPod(Pod("busy", 10, "big"));
  k8s::Pod pod = Pod("job", 8);  // needs the toleration and a cut to 6
  std::vector<engine::Suggestion> s = w.Suggest(pod);
  REQUIRE(!s.empty());
  const engine::Suggestion& both = s.front();
  REQUIRE(both.changes.size() == 2);
  std::vector<std::string> kinds = {both.changes[0].kind, both.changes[1].kind};
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"lower-request", "tolerate"});
  CHECK(both.nodes == std::vector<std::string>{"big"});
  CHECK_FALSE(Find(s, "tolerate"));  // alone it opens nothing: not suggested
}

TEST_CASE("a node like one the cluster has and the fewest pods whose removal frees one") {
  World w;
  w.cluster->AddNode(Node("a", 4));
  w.cluster->BindPod(Pod("p1", 1, "a"));
  w.cluster->BindPod(Pod("p2", 2, "a"));
  w.cluster->BindPod(Pod("p3", 1, "a"));
  k8s::Pod pod = Pod("new", 2);  // fits once 2 cpu go: p2 alone
  std::vector<engine::Suggestion> s = w.Suggest(pod);

  const engine::Suggestion* add = Find(s, "add-node");
  REQUIRE(add);
  CHECK(add->cluster);
  CHECK(Field(add->changes[0], "like") == "a");
  const engine::Suggestion* remove = Find(s, "remove-pods");
  REQUIRE(remove);
  CHECK(remove->nodes == std::vector<std::string>{"a"});
  CHECK(remove->pods == std::vector<std::string>{"default/p2"});
  CHECK(w.cluster->Table().NodeCount() == 1);
  CHECK(w.cluster->Table().BoundPodCount() == 3);
}

TEST_CASE("the smallest maxSkew that opens a node") {
  World w;
  for (const char* n : {"a", "b", "c"}) w.cluster->AddNode(Node(n, 16));
  for (int i = 0; i < 3; ++i) w.cluster->BindPod(Pod("a" + std::to_string(i), 1, "a"));
  for (int i = 0; i < 2; ++i) w.cluster->BindPod(Pod("b" + std::to_string(i), 1, "b"));
  // c carries the taint nothing tolerates: its count of 0 is the minimum.
  w.cluster->UpdateNode(Node("c", 16, {{"dedicated", "x", k8s::TaintEffect::kNoSchedule}}));
  k8s::Pod pod = Pod("new", 1);
  k8s::TopologySpreadConstraint c;
  c.max_skew = 1;
  c.topology_key = "kubernetes.io/hostname";
  c.label_selector = k8s::LabelSelector{{{"app", "x"}}, {}};
  pod.topology_spread = {c};
  std::vector<engine::Suggestion> s = w.Suggest(pod);
  const engine::Suggestion* skew = Find(s, "raise-max-skew");
  REQUIRE(skew);
  CHECK(Field(skew->changes[0], "maxSkew") == "3");  // b: 2 + 1 - 0
  CHECK(skew->nodes == std::vector<std::string>{"b"});
}
