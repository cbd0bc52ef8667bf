#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <string>

#include <fmt/format.h>

#include "k8s/pod_resources.h"
#include "k8s/quantity.h"
#include "runtime/columnar/node_table.h"

using namespace policy;
using namespace policy::k8s;
using namespace policy::rt;

namespace {

Node MakeNode(const std::string& name, const std::string& zone, int cpus, std::vector<Taint> taints = {}) {
  Node n;
  n.name = name;
  n.labels = {{"kubernetes.io/hostname", name}, {"topology.kubernetes.io/zone", zone}, {"gen", std::to_string(cpus)}};
  n.allocatable = {{"cpu", Quantity::FromUnits(cpus)}, {"memory", *Quantity::Parse("16Gi")},
                   {"pods", Quantity::FromUnits(110)}};
  n.taints = std::move(taints);
  return n;
}

Pod MakePod(const std::string& name, const std::string& node, int64_t milli_cpu) {
  Pod p;
  p.name = name;
  p.node_name = node;
  p.phase = PodPhase::kRunning;
  Container c;
  c.requests = {{"cpu", Quantity::FromMilli(milli_cpu)}};
  p.containers = {c};
  return p;
}

int64_t Requested(const NodeTable& t, std::string_view node, std::string_view resource) {
  return t.Resource(resource)->requested[*t.FindNode(node)];
}

}  // namespace

TEST_CASE("nodes become rows with label - resource and taint columns") {
  NodeTable t;
  t.AddNode(MakeNode("a", "z1", 4));
  t.AddNode(MakeNode("b", "z2", 8, {{"gpu", "true", TaintEffect::kNoSchedule}}));
  t.AddNode(MakeNode("c", "z1", 8, {{"gpu", "true", TaintEffect::kNoSchedule}, {"spot", "", TaintEffect::kPreferNoSchedule}}));
  CHECK(t.NodeCount() == 3);
  CHECK_FALSE(t.AddNode(MakeNode("a", "z9", 1)).has_value());
  const LabelColumn* zone = t.Label("topology.kubernetes.io/zone");
  REQUIRE(zone != nullptr);
  CHECK(zone->DomainCount() == 2);
  CHECK(zone->domain[0] == zone->domain[2]);
  CHECK(zone->domain[0] != zone->domain[1]);
  CHECK(zone->live_nodes[zone->domain[0]] == 2);
  const LabelColumn* gen = t.Label("gen");
  CHECK(gen->is_int[gen->domain[1]]);
  CHECK(gen->int_value[gen->domain[1]] == 8);
  CHECK(t.Resource("cpu")->allocatable[1] == 8000);
  CHECK(t.Resource("memory")->allocatable[1] == 17179869184);
  CHECK(t.TaintDictionary().size() == 2);
  CHECK(t.Taints(0).empty());
  CHECK(t.Taints(2).size() == 2);
  CHECK(t.TaintBits(2)[0] == 0b11);
  CHECK(t.TaintBits(1)[0] == 0b01);
  CHECK(t.Label("no-such-key") == nullptr);
}

TEST_CASE("pods bind - unbind - and wait for their node") {
  NodeTable t;
  t.AddNode(MakeNode("a", "z1", 4));
  CHECK(t.BindPod(MakePod("p1", "a", 500)) == BindResult::kBound);
  CHECK(t.BindPod(MakePod("p2", "a", 250)) == BindResult::kBound);
  CHECK(t.BindPod(MakePod("p2", "a", 250)) == BindResult::kDuplicate);
  CHECK(t.BindPod(MakePod("p3", "later", 100)) == BindResult::kWaitingForNode);
  Pod done = MakePod("p4", "a", 100);
  done.phase = PodPhase::kSucceeded;
  CHECK(t.BindPod(done) == BindResult::kFinished);
  CHECK(t.BindPod(MakePod("p5", "", 100)) == BindResult::kNotBound);
  CHECK(Requested(t, "a", "cpu") == 750);
  CHECK(t.PodCount()[0] == 2);
  CHECK(t.NonZeroMemory()[0] == 2 * kDefaultMemoryRequest);
  CHECK(t.WaitingPodCount() == 1);

  t.AddNode(MakeNode("later", "z2", 2));
  CHECK(Requested(t, "later", "cpu") == 100);
  CHECK(t.WaitingPodCount() == 0);

  CHECK(t.UnbindPod("default", "p1"));
  CHECK_FALSE(t.UnbindPod("default", "p1"));
  CHECK(Requested(t, "a", "cpu") == 250);
  CHECK(t.PodCount()[0] == 1);
}

TEST_CASE("removing a node keeps the others' order - its pods wait for it") {
  NodeTable t;
  for (int i = 0; i < 5; ++i) t.AddNode(MakeNode(fmt::format("n{}", i), "z", 4));
  t.BindPod(MakePod("p", "n2", 300));
  CHECK(t.RemoveNode("n2"));
  CHECK_FALSE(t.RemoveNode("n2"));
  CHECK(t.NodeCount() == 4);
  CHECK(t.WaitingPodCount() == 1);
  CHECK(t.Label("topology.kubernetes.io/zone")->live_nodes[1] == 4);
  t.AddNode(MakeNode("n2", "z", 4));
  CHECK(Requested(t, "n2", "cpu") == 300);
  std::vector<std::string> order;
  for (RowId r = 0; r < t.RowCount(); ++r) {
    if (t.Live()[r]) order.emplace_back(t.NodeName(r));
  }
  CHECK(order == std::vector<std::string>{"n0", "n1", "n3", "n4", "n2"});
}

TEST_CASE("updating a node replaces labels and taints - keeps pods") {
  NodeTable t;
  t.AddNode(MakeNode("a", "z1", 4));
  t.BindPod(MakePod("p", "a", 1000));
  Node changed = MakeNode("a", "z2", 16, {{"maintenance", "", TaintEffect::kNoExecute}});
  changed.unschedulable = true;
  CHECK(t.UpdateNode(changed));
  const LabelColumn* zone = t.Label("topology.kubernetes.io/zone");
  CHECK(t.pool().Get(zone->value[zone->domain[0]]) == "z2");
  CHECK(zone->live_nodes[1] == 0);
  CHECK(t.Resource("cpu")->allocatable[0] == 16000);
  CHECK(Requested(t, "a", "cpu") == 1000);
  CHECK(t.Unschedulable()[0] == 1);
  CHECK(t.Taints(0).size() == 1);
  CHECK_FALSE(t.UpdateNode(MakeNode("zz", "z", 1)));
}

TEST_CASE("the taint bitset widens past 64 taints") {
  NodeTable t;
  for (int i = 0; i < 150; ++i) {
    t.AddNode(MakeNode(fmt::format("n{}", i), "z", 1, {{fmt::format("t{}", i), "", TaintEffect::kNoSchedule}}));
  }
  CHECK(t.TaintWords() >= 3);
  for (RowId r = 0; r < 150; ++r) {
    auto bits = t.TaintBits(r);
    uint32_t id = t.Taints(r)[0];
    CHECK(((bits[id / 64] >> (id % 64)) & 1) == 1);
    size_t set = 0;
    for (uint64_t w : bits) set += static_cast<size_t>(__builtin_popcountll(w));
    CHECK(set == 1);
  }
}

// Random updates against a recount from scratch.
TEST_CASE("random node and pod updates agree with a recount") {
  std::mt19937 rng(12345);
  NodeTable t;
  std::map<std::string, std::string> pods;  // pod -> node
  std::map<std::string, int64_t> pod_cpu;
  std::set<std::string> nodes;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int step = 0; step < 4000; ++step) {
    int op = pick(10);
    std::string node = fmt::format("n{}", pick(60));
    if (op < 3) {
      bool added = t.AddNode(MakeNode(node, fmt::format("z{}", pick(4)), 1 + pick(8))).has_value();
      CHECK(added == nodes.insert(node).second);
    } else if (op < 4) {
      CHECK(t.RemoveNode(node) == (nodes.erase(node) == 1));
    } else if (op < 8) {
      std::string pod = fmt::format("p{}", pick(300));
      int64_t cpu = 1 + pick(1000);
      BindResult r = t.BindPod(MakePod(pod, node, cpu));
      if (pods.contains(pod)) {
        CHECK(r == BindResult::kDuplicate);
      } else {
        CHECK(r == (nodes.contains(node) ? BindResult::kBound : BindResult::kWaitingForNode));
        pods[pod] = node;
        pod_cpu[pod] = cpu;
      }
    } else {
      std::string pod = fmt::format("p{}", pick(300));
      CHECK(t.UnbindPod("default", pod) == (pods.erase(pod) == 1));
    }
  }
  // Recount.
  std::map<std::string, int64_t> cpu;
  std::map<std::string, uint32_t> count;
  size_t bound = 0;
  for (const auto& [pod, node] : pods) {
    if (!nodes.contains(node)) continue;
    cpu[node] += pod_cpu[pod];
    ++count[node];
    ++bound;
  }
  CHECK(t.NodeCount() == nodes.size());
  CHECK(t.BoundPodCount() == bound);
  CHECK(t.WaitingPodCount() == pods.size() - bound);
  const ResourceColumn* column = t.Resource("cpu");
  for (const std::string& node : nodes) {
    CAPTURE(node);
    RowId row = *t.FindNode(node);
    CHECK(column->requested[row] == cpu[node]);
    CHECK(t.PodCount()[row] == count[node]);
    // The milli-unit copies the kernels read follow every bind and unbind.
    for (const ResourceColumn* c : {t.Resource("cpu"), t.Resource("memory")}) {
      if (c == nullptr) continue;
      CHECK(c->requested_milli[row] == (c->cpu ? c->requested[row] : k8s::SaturatedMilli(c->requested[row])));
      CHECK(c->allocatable_milli[row] == (c->cpu ? c->allocatable[row] : k8s::SaturatedMilli(c->allocatable[row])));
    }
    CHECK(t.NonZeroMemoryMilli()[row] == k8s::SaturatedMilli(t.NonZeroMemory()[row]));
  }
  // Domain counts match the live rows.
  const LabelColumn* zone = t.Label("topology.kubernetes.io/zone");
  std::vector<uint32_t> live(zone->live_nodes.size(), 0);
  std::vector<RowId> live_rows;
  for (RowId r = 0; r < t.RowCount(); ++r) {
    if (t.Live()[r]) ++live[zone->domain[r]];
    if (t.Live()[r]) live_rows.push_back(r);
  }
  for (uint32_t d = 1; d < live.size(); ++d) CHECK(zone->live_nodes[d] == live[d]);
  // The live-row list (what Decide starts from) is the live rows, in order.
  CHECK(std::vector<RowId>(t.LiveRows().begin(), t.LiveRows().end()) == live_rows);
}

TEST_CASE("compaction after many removals keeps rows consistent") {
  NodeTable t;
  for (int i = 0; i < 3000; ++i) t.AddNode(MakeNode(fmt::format("n{}", i), "z", 2));
  for (int i = 0; i < 3000; i += 3) t.BindPod(MakePod(fmt::format("p{}", i), fmt::format("n{}", i), 10 + i));
  for (int i = 0; i < 3000; ++i) {
    if (i % 3 != 0) t.RemoveNode(fmt::format("n{}", i));
  }
  CHECK(t.NodeCount() == 1000);
  CHECK(t.RowCount() < 3000);  // compacted at least once
  std::vector<RowId> live_rows;
  for (RowId r = 0; r < t.RowCount(); ++r) {
    if (t.Live()[r]) live_rows.push_back(r);
  }
  CHECK(std::vector<RowId>(t.LiveRows().begin(), t.LiveRows().end()) == live_rows);
  for (int i = 0; i < 3000; i += 3) {
    std::optional<RowId> row = t.FindNode(fmt::format("n{}", i));
    REQUIRE(row.has_value());
    CHECK(t.NodeName(*row) == fmt::format("n{}", i));
    CHECK(t.Resource("cpu")->requested[*row] == 10 + i);
  }
  CHECK(t.UnbindPod("default", "p2997"));
  CHECK(Requested(t, "n2997", "cpu") == 0);
}

TEST_CASE("row memory stays under a kilobyte per node") {
  NodeTable t;
  for (int i = 0; i < 5000; ++i) t.AddNode(MakeNode(fmt::format("n{}", i), fmt::format("z{}", i % 3), 8));
  CHECK(t.RowMemoryBytes() / t.NodeCount() < 1024);
}

TEST_CASE("the topology index agrees with a recount under random binds - unbinds and node changes") {
  std::mt19937 rng(42);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> zones = {"z1", "z2", "z3"};
  const std::vector<std::string> apps = {"web", "db", "cache"};
  const std::vector<std::string> namespaces = {"shop", "ops"};
  NodeTable table;
  std::map<std::string, std::string> node_zone;  // name -> zone ("" = no zone label); the model
  struct Bound { std::string node, ns, app; bool front, anti; };
  std::map<std::string, Bound> bound;            // pod name -> placement; the model

  // The sets and groups under test: web pods in shop; web-or-db pods in any
  // namespace that also carry tier=front (two clauses).
  PodSelector web_shop;
  web_shop.clauses.push_back({LabelSelector{{{"app", "web"}}, {}}, false, {"shop"}});
  PodSelector front;
  front.clauses.push_back({LabelSelector{{}, {{"app", SelectorOp::kIn, {"web", "db"}, {}}}}, true, {}});
  front.clauses.push_back({LabelSelector{{{"tier", "front"}}, {}}, true, {}});

  auto make_node = [&](const std::string& name, const std::string& zone) {
    Node n = MakeNode(name, zone, 8);
    if (zone.empty()) n.labels.erase(n.labels.begin() + 1);  // no zone label
    return n;
  };
  for (int i = 0; i < 12; ++i) {
    std::string name = fmt::format("n{}", i), zone = i % 5 == 4 ? "" : zones[static_cast<size_t>(i % 3)];
    REQUIRE(table.AddNode(make_node(name, zone)));
    node_zone[name] = zone;
  }
  uint32_t s1 = table.PodSet(web_shop);  // registered before any pod
  for (int step = 0; step < 3000; ++step) {
    int op = pick(10);
    if (op < 6) {  // bind
      Pod p = MakePod(fmt::format("p{}", step), fmt::format("n{}", pick(14)), 100);  // n12, n13: not (yet) nodes
      p.namespace_name = namespaces[static_cast<size_t>(pick(2))];
      std::string app = apps[static_cast<size_t>(pick(3))];
      p.labels = {{"app", app}};
      bool tier_front = pick(2) == 0;
      if (tier_front) p.labels.emplace_back("tier", "front");
      bool anti = pick(3) == 0;
      if (anti) {
        PodAffinityTerm t;
        t.label_selector = LabelSelector{{{"app", app}}, {}};
        t.topology_key = "topology.kubernetes.io/zone";
        p.affinity.pod_anti_affinity = PodAffinity{{t}, {}};
      }
      if (table.BindPod(p) != BindResult::kDuplicate) bound[p.name] = {p.node_name, p.namespace_name, app, tier_front, anti};
    } else if (op < 8 && !bound.empty()) {  // unbind
      auto it = std::next(bound.begin(), pick(static_cast<int>(bound.size())));
      REQUIRE(table.UnbindPod(it->second.ns, it->first));
      bound.erase(it);
    } else if (op == 8) {  // a node changes zone, or arrives
      std::string name = fmt::format("n{}", pick(14));
      std::string zone = pick(4) == 0 ? "" : zones[static_cast<size_t>(pick(3))];
      if (node_zone.contains(name)) REQUIRE(table.UpdateNode(make_node(name, zone)));
      else REQUIRE(table.AddNode(make_node(name, zone)));
      node_zone[name] = zone;
    } else if (!node_zone.empty() && pick(3) == 0) {  // a node leaves (its pods wait for it)
      auto it = std::next(node_zone.begin(), pick(static_cast<int>(node_zone.size())));
      REQUIRE(table.RemoveNode(it->first));
      node_zone.erase(it);
    }
    if (step % 50 != 0 && step < 2990) continue;
    uint32_t s2 = table.PodSet(front);  // registered late: counts what is bound by then
    // A selector never asked for before, matching as web_shop does (its
    // extra namespace has no pods): counted now, from the pods labelled
    // app=web (NodeTable's label index), binds, unbinds and nodes gone
    // included.
    PodSelector fresh = web_shop;
    fresh.clauses[0].namespaces = {"shop", fmt::format("x{}", step)};
    uint32_t s3 = table.PodSet(fresh);
    std::map<std::string, int64_t> web_by_zone, front_by_zone, anti_by_zone;
    std::map<std::string, int64_t> web_by_node;
    for (const auto& [name, b] : bound) {
      auto node = node_zone.find(b.node);
      if (node == node_zone.end()) continue;  // waiting for its node
      bool is_web = b.app == "web" && b.ns == "shop";
      web_by_node[b.node] += is_web;
      if (node->second.empty()) continue;
      web_by_zone[node->second] += is_web;
      front_by_zone[node->second] += b.front && (b.app == "web" || b.app == "db");
      anti_by_zone[node->second + "/" + b.app + "/" + b.ns] += b.anti;
    }
    int64_t web_with_zone = 0;
    for (const auto& [zone, n] : web_by_zone) web_with_zone += n;
    CHECK(table.PodsWithKey(s1, "topology.kubernetes.io/zone") == web_with_zone);
    for (const auto& entry : node_zone) {
      const std::string& name = entry.first;
      const std::string& zone = entry.second;
      RowId row = *table.FindNode(name);
      CAPTURE(step);
      CAPTURE(name);
      CHECK(table.PodsOnRow(s1, row) == web_by_node[name]);
      CHECK(table.PodsOnRow(s3, row) == web_by_node[name]);
      CHECK(table.PodsInDomain(s1, "topology.kubernetes.io/zone", row) == (zone.empty() ? 0 : web_by_zone[zone]));
      CHECK(table.PodsInDomain(s1, "kubernetes.io/hostname", row) == web_by_node[name]);
      CHECK(table.PodsInDomain(s2, "topology.kubernetes.io/zone", row) == (zone.empty() ? 0 : front_by_zone[zone]));
      // Groups: the anti-affinity term of each app, counted by zone.
      for (uint32_t g = 0; g < table.TermGroups().size(); ++g) {
        const TermGroup& group = table.TermGroups()[g];
        std::string app = group.term.label_selector->match_labels[0].second;
        CHECK(table.TermGroupInDomain(g, row) ==
              (zone.empty() ? 0 : anti_by_zone[zone + "/" + app + "/" + group.owner_namespace]));
      }
    }
  }
}

TEST_CASE("the string pool finds every string it interned across its growth and no other") {
  policy::rt::StringPool pool;
  std::vector<uint32_t> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(pool.Intern("s" + std::to_string(i)));
  CHECK(pool.Intern("") != 0);  // the empty string is a string too; id 0 is none
  for (int i = 0; i < 20000; ++i) {
    std::string s = "s" + std::to_string(i);
    REQUIRE(pool.Lookup(s) == ids[static_cast<size_t>(i)]);
    REQUIRE(pool.Get(ids[static_cast<size_t>(i)]) == s);
    REQUIRE(pool.Intern(s) == ids[static_cast<size_t>(i)]);  // interned once
  }
  CHECK_FALSE(pool.Lookup("s20000").has_value());
  CHECK_FALSE(pool.Lookup("t1").has_value());
  CHECK(pool.size() == 20002);
}

TEST_CASE("a node's name finds its row after removals and compaction - and a removed name none") {
  policy::rt::NodeTable table;
  for (int i = 0; i < 3000; ++i) {
    policy::k8s::Node n;
    n.name = "node-" + std::to_string(i);
    REQUIRE(table.AddNode(n).has_value());
  }
  for (int i = 0; i < 3000; i += 2) REQUIRE(table.RemoveNode("node-" + std::to_string(i)));  // compacts past half
  for (int i = 0; i < 3000; ++i) {
    std::string name = "node-" + std::to_string(i);
    std::optional<policy::rt::RowId> row = table.FindNode(name);
    if (i % 2 == 0) {
      REQUIRE_FALSE(row.has_value());
    } else {
      REQUIRE(row.has_value());
      REQUIRE(table.NodeName(*row) == name);
    }
  }
  policy::k8s::Node again;
  again.name = "node-0";
  REQUIRE(table.AddNode(again).has_value());
  CHECK(table.NodeName(*table.FindNode("node-0")) == "node-0");
}

TEST_CASE("the string pool interns the empty string first without a block") {
  policy::rt::StringPool pool;
  uint32_t empty = pool.Intern("");
  CHECK(pool.Get(empty).empty());
  CHECK(pool.Intern("") == empty);
  uint32_t zone = pool.Intern("zone-a");
  CHECK(pool.Get(zone) == "zone-a");
  CHECK(pool.Lookup("") == std::optional<uint32_t>(empty));
}

TEST_CASE("requests whose sum passes int64 wrap as kube-scheduler's and unbind exactly") {
  policy::rt::NodeTable table;
  policy::k8s::Node node;
  node.name = "n";
  node.allocatable = {{"memory", policy::k8s::Quantity::FromUnits(8LL << 30)}};
  table.AddNode(node);
  policy::k8s::Pod pod;
  pod.namespace_name = "default";
  pod.node_name = "n";
  policy::k8s::Container c;
  c.requests = {{"memory", policy::k8s::Quantity::FromUnits(INT64_MAX)}};
  pod.containers = {c};
  pod.name = "a";
  table.BindPod(pod);
  pod.name = "b";
  table.BindPod(pod);
  policy::rt::RowId row = *table.FindNode("n");
  CHECK(table.Resource("memory")->requested[row] == -2);  // INT64_MAX + INT64_MAX, wrapped
  table.UnbindPod("default", "a");
  table.UnbindPod("default", "b");
  CHECK(table.Resource("memory")->requested[row] == 0);
}
