// What the extender keeps between calls (the rejected nodes' words for a
// template, the rows of the last list of names) follows every change of the
// cluster: after each event the answer is what a fresh server says.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runtime/host/host.h"
#include "server/extender.h"

namespace {

const char kSnapshot[] = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"kubernetes.io/hostname": "a"}},
   "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"kubernetes.io/hostname": "b"}},
   "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}]})";

const char kFilter[] = R"({"Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}, "NodeNames": ["a", "b", "c"]})";

struct Server {
  policy::host::ClusterState state;
  std::unique_ptr<policy::host::Decisions> decisions;
  explicit Server(std::string snapshot = kSnapshot) {
    policy::DiagnosticSink diags;
    REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", std::move(snapshot)), diags));
    decisions = std::make_unique<policy::host::Decisions>(
        policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
    REQUIRE(decisions != nullptr);
  }
  std::string Filter() { return policy::server::Extender(*decisions, state).Filter(kFilter).body; }
  void Apply(const std::string& event) {
    policy::DiagnosticSink diags;
    REQUIRE(state.Apply(policy::Source("event", event), diags).has_value());
  }
};

}  // namespace

TEST_CASE("the rejected nodes' words follow each change of the cluster") {
  Server kept;
  std::string first = kept.Filter();
  CHECK(first.find(R"("a": "Insufficient cpu")") != std::string::npos);
  CHECK(first.find(R"("NodeNames": ["b"])") != std::string::npos);
  CHECK(kept.Filter() == first);  // the same table: the same words

  // Node a becomes unschedulable too: its words change.
  kept.Apply(R"({"type": "MODIFIED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a",
    "labels": {"kubernetes.io/hostname": "a"}}, "spec": {"unschedulable": true},
    "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}}})");
  std::string second = kept.Filter();
  CHECK(second.find("unschedulable") != std::string::npos);
  // A pod fills node b: b is rejected now, with words of its own.
  kept.Apply(R"({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
    "spec": {"nodeName": "b", "containers": [{"name": "c", "resources": {"requests": {"cpu": "7"}}}]},
    "status": {"phase": "Running"}}})");
  std::string third = kept.Filter();
  CHECK(third.find(R"("b": "Insufficient cpu")") != std::string::npos);
  CHECK(third.find(R"("NodeNames": [])") != std::string::npos);

  // A fresh server on the same state answers the same.
  Server fresh(R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"kubernetes.io/hostname": "a"}},
     "spec": {"unschedulable": true}, "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"kubernetes.io/hostname": "b"}},
     "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
     "spec": {"nodeName": "b", "containers": [{"name": "c", "resources": {"requests": {"cpu": "7"}}}]},
     "status": {"phase": "Running"}}]})");
  CHECK(fresh.Filter() == third);
}

TEST_CASE("the same list of names resolves again when nodes come and go") {
  Server kept;
  CHECK(kept.Filter().find(R"("c": "node(s) not found in policyc's cluster state")") != std::string::npos);
  kept.Apply(R"({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c",
    "labels": {"kubernetes.io/hostname": "c"}}, "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}})");
  std::string joined = kept.Filter();
  CHECK(joined.find(R"("NodeNames": ["b", "c"])") != std::string::npos);
  kept.Apply(R"({"type": "DELETED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}}})");
  std::string left = kept.Filter();
  CHECK(left.find(R"("NodeNames": ["c"])") != std::string::npos);
  CHECK(left.find(R"("b": "node(s) not found in policyc's cluster state")") != std::string::npos);
}

namespace {

// A pod's JSON: one of a few templates (requests, a node selector, a
// toleration, anti-affinity by hostname, spread over zones).
std::string PodJson(int shape, const std::string& name, const std::string& node) {
  const char* specs[] = {
      R"("containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}])",
      R"("nodeSelector": {"tier": "a"}, "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}])",
      R"("tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
         "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}])",
      R"("affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector":
         {"matchLabels": {"app": "s3"}}, "topologyKey": "kubernetes.io/hostname"}]}},
         "containers": [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}])",
      R"("topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
         "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "s4"}}}],
         "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}])",
  };
  std::string bound = node.empty() ? "" : R"("nodeName": ")" + node + R"(", )";
  return R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ")" + name + R"(", "namespace": "default",
    "labels": {"app": "s)" + std::to_string(shape) + R"("}}, "spec": {)" + bound + specs[shape] + R"(},
    "status": {"phase": ")" + (node.empty() ? "Pending" : "Running") + R"("}})";
}

std::string NodeJson(int i, int variant) {
  std::string taints = variant % 4 == 0 ? R"("taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}], )" : "";
  std::string unschedulable = variant % 7 == 3 ? R"("unschedulable": true, )" : "";
  std::string spec = taints + unschedulable;
  if (!spec.empty()) spec = R"("spec": {)" + spec.substr(0, spec.size() - 2) + "}, ";
  return R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n)" + std::to_string(i) + R"(", "labels": {
    "kubernetes.io/hostname": "n)" + std::to_string(i) + R"(", "topology.kubernetes.io/zone": "z)" + std::to_string(i % 3) +
         R"(", "tier": ")" + (variant % 2 == 0 ? "a" : "b") + R"("}}, )" + spec + R"("status": {"allocatable": {"cpu": ")" +
         std::to_string(2 + variant % 3) + R"(", "memory": "8Gi", "pods": "110"}}})";
}

}  // namespace

TEST_CASE("kept words and decisions equal fresh ones on a random stream of binds - unbinds and node changes") {
  constexpr int kNodes = 24;
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string snapshot = R"({"apiVersion": "v1", "kind": "List", "items": [)";
  for (int i = 0; i < kNodes; ++i) snapshot += (i ? ", " : "") + NodeJson(i, pick(0, 27));
  snapshot += "]}";
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", snapshot), diags));
  policy::engine::EngineOptions verify;
  verify.verify_incremental = true;  // every kept explanation is checked against a full one as it is made
  policy::host::Decisions kept(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, verify, diags));
  std::vector<std::string> bound;  // the pods' JSON (a DELETED event carries the object's last state)
  for (int step = 0; step < 300; ++step) {
    int op = pick(0, 9);
    std::string event;
    if (op < 5) {  // a pod binds
      bound.push_back(PodJson(pick(0, 4), "p" + std::to_string(step), "n" + std::to_string(pick(0, kNodes - 1))));
      event = R"({"type": "ADDED", "object": )" + bound.back() + "}";
    } else if (op < 8 && !bound.empty()) {  // one goes away
      size_t k = static_cast<size_t>(pick(0, static_cast<int>(bound.size()) - 1));
      event = R"({"type": "DELETED", "object": )" + bound[k] + "}";
      bound.erase(bound.begin() + static_cast<long>(k));
    } else {  // a node changes (taint, tier, cordon, size)
      event = R"({"type": "MODIFIED", "object": )" + NodeJson(pick(0, kNodes - 1), pick(0, 27)) + "}";
    }
    policy::Source source("event", event);
    policy::DiagnosticSink problems;
    bool applied = state.Apply(source, problems).has_value();
    CAPTURE(event);
    CAPTURE(policy::RenderAll(problems));
    REQUIRE(applied);
    int shape = pick(0, 4);
    std::string names;
    for (int i = 0; i < kNodes; ++i) {
      if (step % 3 != 0 || pick(0, 1) == 1) names += std::string(names.empty() ? "" : ", ") + "\"n" + std::to_string(i) + "\"";
    }
    std::string body = R"({"Pod": )" + PodJson(shape, "incoming", "") + R"(, "NodeNames": [)" + names + "]}";
    std::string with_kept = policy::server::Extender(kept, state).Filter(body).body;
    policy::host::Decisions fresh(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
    std::string from_scratch = policy::server::Extender(fresh, state).Filter(body).body;
    CAPTURE(step);
    CAPTURE(event);
    REQUIRE(with_kept == from_scratch);
  }
}

TEST_CASE("filters on four threads while events change the cluster end where a fresh server would") {
  constexpr int kNodes = 16;
  std::string snapshot = R"({"apiVersion": "v1", "kind": "List", "items": [)";
  for (int i = 0; i < kNodes; ++i) snapshot += (i ? ", " : "") + NodeJson(i, i);
  snapshot += "]}";
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", snapshot), diags));
  policy::host::Decisions kept(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  policy::server::RecentPods recent;
  std::string names;
  for (int i = 0; i < kNodes; ++i) names += std::string(names.empty() ? "" : ", ") + "\"n" + std::to_string(i) + "\"";
  auto body = [&](int shape, const std::string& name) {
    return R"({"Pod": )" + PodJson(shape, name, "") + R"(, "NodeNames": [)" + names + "]}";
  };
  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  std::vector<std::thread> deciders;
  // A fifth thread does what changes the cluster from inside calls:
  // preempt's dry runs (pods set aside and put back under the writer's
  // hold) and node objects sent (taken into the state where they differ).
  deciders.emplace_back([&] {
    for (int i = 0; !done || i < 20; ++i) {
      policy::server::Extender extender(kept, state);
      std::string pod = PodJson(i % 5, "v", "");
      std::string victims;
      for (int n = 0; n < kNodes; n += 3) {
        victims += fmt::format(R"({}"n{}": {{"Pods": [{{"UID": "u{}"}}], "NumPDBViolations": 0}})", victims.empty() ? "" : ", ", n, i);
      }
      policy::server::Reply r = extender.Preempt(R"({"Pod": )" + pod + R"(, "NodeNameToMetaVictims": {)" + victims + "}}");
      if (r.status == 200) ++answered;
      std::string sent = R"({"Pod": )" + pod + R"(, "Nodes": {"items": [)" + NodeJson(i % kNodes, i % kNodes) + "]}}";
      extender.Filter(sent);
    }
  });
  for (int t = 0; t < 4; ++t) {
    deciders.emplace_back([&, t] {
      policy::server::ExtenderOptions options;
      options.recent = &recent;
      options.decide = t == 3;  // one filters as --mode decide: it assumes its pods
      for (int i = 0; !done || i < 20; ++i) {
        policy::server::Reply r = policy::server::Extender(kept, state, options).Filter(body((t + i) % 5, "w" + std::to_string(t)));
        if (r.status == 200 && r.error.empty()) ++answered;
        if (i % 2 == 0) policy::server::Extender(kept, state, options).Prioritize(body(i % 5, "x"));
      }
    });
  }
  for (int step = 0; step < 200; ++step) {
    std::string event = step % 3 == 2
        ? R"({"type": "MODIFIED", "object": )" + NodeJson(step % kNodes, step) + "}"
        : R"({"type": ")" + std::string(step % 3 == 0 ? "ADDED" : "DELETED") + R"(", "object": )" +
              PodJson(step % 5, "b" + std::to_string(step / 3), "n" + std::to_string(step % kNodes)) + "}";
    policy::Source source("event", event);
    policy::DiagnosticSink problems;
    REQUIRE(state.Apply(source, problems).has_value());
  }
  done = true;
  for (std::thread& t : deciders) t.join();
  CHECK(answered >= 100);
  // The decide thread's last pod counts where it was put; forget it, and
  // the kept answer is the fresh one.
  state.Forget("default", "w3");
  policy::host::Decisions fresh(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  for (int shape = 0; shape < 5; ++shape) {
    CHECK(policy::server::Extender(kept, state).Filter(body(shape, "z")).body ==
          policy::server::Extender(fresh, state).Filter(body(shape, "z")).body);
  }
}

TEST_CASE("calls for pods of ever new shapes keep what the table counts for them bounded") {
  // No event between the calls: only the readers ask the table for pod sets
  // (one per new anti-affinity selector), and the last reader out trims.
  Server server;
  size_t most = 0;
  const size_t calls = policy::rt::NodeTable::kMaxPodSets * 3;
  for (size_t i = 0; i < calls; ++i) {
    std::string body = fmt::format(
        R"({{"Pod": {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "p", "namespace": "default", "labels": {{"app": "s{0}"}}}},
        "spec": {{"containers": [{{"name": "c"}}], "affinity": {{"podAntiAffinity": {{"requiredDuringSchedulingIgnoredDuringExecution": [
          {{"labelSelector": {{"matchLabels": {{"app": "s{0}"}}}}, "topologyKey": "kubernetes.io/hostname"}}]}}}}}}}},
        "NodeNames": ["a", "b"]}})",
        i);
    std::string answer = policy::server::Extender(*server.decisions, server.state).Filter(body).body;
    REQUIRE(answer.find(R"("NodeNames": ["a", "b"])") != std::string::npos);
    policy::host::ClusterState::View view = server.state.Read();
    most = std::max(most, view.cluster().Table().PodSetsKept());
  }
  policy::host::ClusterState::View view = server.state.Read();
  CHECK(view.cluster().Table().PodSetsCounted() >= calls);  // each shape's selector was counted
  CHECK(most <= policy::rt::NodeTable::kMaxPodSets);
}

TEST_CASE("what the templates keep stays within the budget and answers as if nothing were dropped") {
  constexpr int kNodes = 40;
  std::string snapshot = R"({"apiVersion": "v1", "kind": "List", "items": [)";
  for (int i = 0; i < kNodes; ++i) snapshot += (i ? ", " : "") + NodeJson(i, i % 28);
  snapshot += "]}";
  Server unbounded(snapshot), tight(snapshot);
  tight.decisions->SetKeptBytesLimit(1);  // room for none but the template deciding now
  std::string names;
  for (int i = 0; i < kNodes; ++i) names += fmt::format("{}\"n{}\"", i ? ", " : "", i);
  size_t largest_alone = 0;  // one template's share, as a server that only ever saw it keeps
  for (int step = 0; step < 30; ++step) {
    int shape = step % 5;
    std::string bind = R"({"type": "ADDED", "object": )" +
                       PodJson(shape, "b" + std::to_string(step), "n" + std::to_string(step % kNodes)) + "}";
    unbounded.Apply(bind);
    tight.Apply(bind);
    std::string body = R"({"Pod": )" + PodJson(shape, "incoming", "") + R"(, "NodeNames": [)" + names + "]}";
    Server alone(snapshot);
    std::string answer = policy::server::Extender(*unbounded.decisions, unbounded.state).Filter(body).body;
    CAPTURE(step);
    REQUIRE(policy::server::Extender(*tight.decisions, tight.state).Filter(body).body == answer);
    for (int twice = 0; twice < 2; ++twice) policy::server::Extender(*alone.decisions, alone.state).Filter(body);  // kept from the second
    largest_alone = std::max(largest_alone, alone.decisions->KeptBytes());
    CHECK(tight.decisions->KeptBytes() <= 2 * largest_alone);
  }
  CHECK(tight.decisions->KeptBytes() > 0);
  CHECK(unbounded.decisions->KeptBytes() > 3 * tight.decisions->KeptBytes());  // five templates kept there
}

TEST_CASE("pods assumed and never confirmed are forgotten - after the ttl and past the count") {
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", kSnapshot), diags));
  auto pod = [](const std::string& name) {
    policy::k8s::Pod p;
    p.namespace_name = "default";
    p.name = name;
    return p;
  };
  for (const char* name : {"p1", "p2", "p3"}) REQUIRE(state.Assume(pod(name), "b"));
  CHECK(state.PodCount() == 3);
  // p2 is confirmed by the watch: an event replaces it, and it stays.
  policy::Source event("event", R"({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p2", "namespace": "default"}, "spec": {"nodeName": "b", "containers": [{"name": "c"}]}}})");
  REQUIRE(state.Apply(event, diags).has_value());
  // Past the count: the oldest unconfirmed goes first.
  CHECK(state.ExpireAssumed(std::chrono::hours(1), 1) == 1);
  CHECK(state.PodCount() == 2);
  CHECK(state.ExpireAssumed(std::chrono::hours(1), 1) == 0);
  // Past the ttl: the rest of the unconfirmed.
  CHECK(state.ExpireAssumed(std::chrono::seconds(0), 4096) == 1);
  CHECK(state.PodCount() == 1);  // p2, confirmed
  CHECK(state.ExpireAssumed(std::chrono::seconds(0), 4096) == 0);
}

TEST_CASE("node objects sent stand in for one call - and what they leave in the table is bounded") {
  policy::host::ClusterState state;
  state.KeepNodeObjects();
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", kSnapshot), diags));
  // Node `a` sent with a new 2 MB label value each call: each value stays
  // in the table's strings after the call. Past the bound (64 MiB), sent
  // nodes are judged as the state holds them.
  size_t stood_in = 0, calls = 0;
  for (; calls < 60; ++calls) {
    policy::k8s::Node a;
    a.name = "a";
    a.labels.emplace_back("kubernetes.io/hostname", "a");
    a.labels.emplace_back("big", std::to_string(calls) + std::string(2 << 20, 'x'));
    a.allocatable.emplace_back("cpu", *policy::k8s::Quantity::Parse("1"));
    size_t differed = 0;
    { policy::host::ClusterState::View view = state.Overlay({a}, &differed); }
    if (differed == 0) break;
    stood_in += differed;
  }
  CHECK(stood_in >= 30);  // 64 MiB of 2 MB values
  CHECK(calls < 60);      // and then no more
  CHECK(state.NodeCount() == 2);
}
