// The verbs' answers as kube-scheduler's HTTPExtender reads them
// (host-reference.md 1.6-1.7): prioritize's 0-10 scores rank the nodes it
// sent as policyc's totals rank them, spread over the totals' range.

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "k8s/pod_reader.h"
#include "runtime/host/host.h"
#include "server/extender.h"

namespace {

// Five nodes of growing size, each with some of it used: the default
// profile's totals for a small pod differ between each two, by little.
std::string Snapshot() {
  std::string items;
  for (int i = 0; i < 5; ++i) {
    int cpu = 4 << i;
    items += fmt::format(R"({}{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n{}", "labels": {{"kubernetes.io/hostname": "n{}"}}}},
      "status": {{"allocatable": {{"cpu": "{}", "memory": "{}Gi", "pods": "110"}}}}}},
      {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "used-{}", "namespace": "default"}},
      "spec": {{"nodeName": "n{}", "containers": [{{"name": "c", "resources": {{"requests": {{"cpu": "{}", "memory": "{}Gi"}}}}}}]}},
      "status": {{"phase": "Running"}}}})",
                         i == 0 ? "" : ",", i, i, cpu, cpu * 4, i, i, 2 + i, 3 * (i + 1));
  }
  return R"({"apiVersion": "v1", "kind": "List", "items": [)" + items + "]}";
}

constexpr char kPod[] = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}})";

}  // namespace

TEST_CASE("prioritize ranks the nodes sent as their totals rank them - the best one 10") {
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", Snapshot()), diags));
  policy::host::Decisions decisions(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  std::vector<std::string> names = {"n0", "n1", "n2", "n3", "n4"};

  // The totals, as check has them.
  std::optional<policy::k8s::Pod> pod = policy::k8s::ReadPod(policy::Source("pod.json", kPod), diags, policy::k8s::FieldValidation::kStrict);
  REQUIRE(pod);
  std::map<std::string, int64_t> totals;
  {
    policy::host::ClusterState::View view = state.Read();
    policy::host::Answer answer = decisions.Decide(*pod, view, &names);
    for (const auto& [name, total] : answer.feasible) totals[name] = total;
  }
  REQUIRE(totals.size() == names.size());
  int64_t best = totals.begin()->second, least = best;
  for (const auto& [name, total] : totals) {
    best = std::max(best, total);
    least = std::min(least, total);
  }
  REQUIRE(best > least);

  std::string body = fmt::format(R"({{"Pod": {}, "NodeNames": ["n0", "n1", "n2", "n3", "n4"], "Nodes": null}})", kPod);
  policy::server::Reply reply = policy::server::Extender(decisions, state).Prioritize(body);
  REQUIRE(reply.status == 200);
  std::map<std::string, int64_t> scores;
  std::regex entry(R"re(\{"Host": "([^"]+)", "Score": (-?\d+)\})re");
  for (std::sregex_iterator it(reply.body.begin(), reply.body.end(), entry), end; it != end; ++it) {
    scores[(*it)[1].str()] = std::stoll((*it)[2].str());
  }
  REQUIRE(scores.size() == names.size());
  for (const auto& entry : totals) {  // no structured binding: clang-14's CAPTURE lambda refuses one
    const std::string& name = entry.first;
    int64_t total = entry.second;
    CAPTURE(name);
    CAPTURE(total);
    CHECK(scores[name] == ((total - least) * 10 + (best - least) / 2) / (best - least));  // round(10 * (t - least) / range)
    CHECK(scores[name] >= 0);
    CHECK(scores[name] <= 10);
  }
  // The order survives: a higher total never scores lower, and these five
  // totals, more than a tenth of their range apart, get five levels (the
  // profile's possible maximum left them one, the best alone two).
  std::map<int64_t, int> levels;
  for (const auto& [a, ta] : totals) {
    ++levels[scores[a]];
    for (const auto& [b, tb] : totals) {
      if (ta > tb) CHECK(scores[a] >= scores[b]);
    }
  }
  CHECK(levels.size() == 5);
  CHECK(levels.begin()->first == 0);
  CHECK(levels.rbegin()->first == 10);
}

TEST_CASE("node objects sent are judged as sent for that call only - the state keeps its own") {
  policy::host::ClusterState state;
  state.KeepNodeObjects();
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", Snapshot()), diags));
  policy::host::Decisions decisions(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  policy::server::Metrics metrics;
  policy::server::Extender extender(decisions, state, {.metrics = &metrics});
  auto node = [](const std::string& name, const std::string& zone, const std::string& taints, int cpu = 8) {
    return fmt::format(R"({{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "{}", "labels": {{"kubernetes.io/hostname": "{}"{}}}}},
      "spec": {{"taints": {}}}, "status": {{"allocatable": {{"cpu": "{}", "memory": "{}Gi", "pods": "110"}}}}}})",
                       name, name, zone.empty() ? "" : fmt::format(R"(, "zone": "{}")", zone), taints, cpu, cpu * 4);
  };
  // The pod asks for zone a. kube-scheduler's objects: n0 with that label
  // (the state has none), n1 tainted (the state's n1 is not), n9 a node the
  // state has not seen yet, n2 as the state has it (no zone: fails).
  // (Snapshot's node i has 4 << i CPUs.)
  std::string pod = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "z", "namespace": "default"},
    "spec": {"nodeSelector": {"zone": "a"}, "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}})";
  std::string nodes = node("n0", "a", "[]") + "," + node("n1", "a", R"([{"key": "k", "value": "v", "effect": "NoSchedule"}])") +
                      "," + node("n9", "a", "[]") + "," + node("n2", "", "[]", 16);
  std::string body = fmt::format(R"({{"Pod": {}, "NodeNames": null, "Nodes": {{"items": [{}]}}}})", pod, nodes);
  policy::server::Reply reply = extender.Filter(body);
  REQUIRE(reply.status == 200);
  INFO(reply.body);
  std::regex passed(R"re("name": "(n\d)")re");
  std::string items = reply.body.substr(0, reply.body.find("\"NodeNames\""));
  std::vector<std::string> names;
  for (std::sregex_iterator it(items.begin(), items.end(), passed), end; it != end; ++it) names.push_back((*it)[1].str());
  CHECK(names == std::vector<std::string>{"n0", "n9"});
  CHECK(reply.body.find(R"x("n1": "node(s) had untolerated taint(s)")x") != std::string::npos);  // 1.34 names no taint
  CHECK(reply.body.find(R"("n2": "node(s) didn't match Pod's node affinity/selector")") != std::string::npos);
  // n0, n1 and n9 differed, counted once each, and stood in for that call
  // only: the state still has its own five nodes, n0 without the zone.
  std::string exposition = metrics.Render(0, 0);
  CHECK(exposition.find("policyc_sent_nodes_differing_total 3\n") != std::string::npos);
  CHECK(state.NodeCount() == 5);
  std::string by_name = fmt::format(R"({{"Pod": {}, "NodeNames": ["n0", "n1"], "Nodes": null}})", pod);
  CHECK(extender.Filter(by_name).body.find(R"("NodeNames": [])") != std::string::npos);
  // Sent again, they differ again and are judged the same.
  REQUIRE(extender.Filter(body).body == reply.body);
  CHECK(metrics.Render(0, 0).find("policyc_sent_nodes_differing_total 6\n") != std::string::npos);
  CHECK(state.NodeCount() == 5);
}

TEST_CASE("a request that is not a JSON object is named for what it is - in the status kube-scheduler reads as an error") {
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", Snapshot()), diags));
  policy::host::Decisions decisions(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  policy::server::Extender extender(decisions, state);
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"null", "found null"}, {"[1, 2]", "found an array"}, {"", "found nothing"}, {" 7", "found a number"},
      {"\"x\"", "found a string"}, {"false", "found a boolean"}, {"<html>", "found text that is not JSON"}};
  for (const auto& entry : bodies) {
    const std::string& body = entry.first;
    const std::string& words = entry.second;
    CAPTURE(body);
    // prioritize and preempt answer nothing kube reads an error from but the
    // status; filter and bind carry it in Error, which kube reads.
    policy::server::Reply prioritize = extender.Prioritize(body), preempt = extender.Preempt(body);
    policy::server::Reply filter = extender.Filter(body), bind = extender.Bind(body);
    CHECK(prioritize.status == 400);
    CHECK(preempt.status == 400);
    CHECK(filter.status == 200);
    CHECK(bind.status == 200);
    for (const policy::server::Reply* r : {&prioritize, &preempt, &filter, &bind}) {
      CHECK(r->body.find("\"Error\": \"") != std::string::npos);
      CHECK(r->body.find("expected a JSON object (the request kube-scheduler sends), " + words) != std::string::npos);
    }
  }
}

namespace {

// Two GPU nodes; gpu-a's device lacks the `type` attribute the pod's claim
// selects on, so the selector fails there at run time (an allocator error).
constexpr char kDraSnapshot[] = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-a", "labels": {"kubernetes.io/hostname": "gpu-a"}},
   "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-b", "labels": {"kubernetes.io/hostname": "gpu-b"}},
   "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}}},
  {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
   "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.nvidia.com\""}}]}},
  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-a-slice"},
   "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-a", "pool": {"name": "gpu-a", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}]}},
  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-b-slice"},
   "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-b", "pool": {"name": "gpu-b", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}}]}},
  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "train-gpu", "namespace": "default"},
   "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
            "selectors": [{"cel": {"expression": "device.attributes[\"gpu.nvidia.com\"].type == \"gpu\""}}]}}]}}}]})";

constexpr char kClaimPod[] = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": "default"},
  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}],
           "resourceClaims": [{"name": "gpu", "resourceClaimName": "train-gpu"}]}})";

}  // namespace

TEST_CASE("filter answers a filter plugin's error as the extender's Error - only when a node sent meets it") {
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("dra.json", kDraSnapshot), diags));
  policy::host::Decisions decisions(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  policy::server::Extender extender(decisions, state);

  // Both nodes: gpu-a's error ends the attempt, though gpu-b would fit.
  policy::server::Reply both =
      extender.Filter(fmt::format(R"({{"Pod": {}, "NodeNames": ["gpu-a", "gpu-b"], "Nodes": null}})", kClaimPod));
  CHECK(both.status == 200);
  CHECK(both.body.find(R"("Error": "running \"DynamicResources\" filter plugin: claim default/train-gpu: selector #0: )"
                       R"(CEL runtime error: no such key: type")") != std::string::npos);
  CHECK(both.body.find(R"("NodeNames": null)") != std::string::npos);

  // gpu-b alone: the allocator never meets the error, and gpu-b passes.
  policy::server::Reply one =
      extender.Filter(fmt::format(R"({{"Pod": {}, "NodeNames": ["gpu-b"], "Nodes": null}})", kClaimPod));
  CHECK(one.status == 200);
  CHECK(one.body.find(R"("NodeNames": ["gpu-b"])") != std::string::npos);
  CHECK(one.body.find(R"("Error": "")") != std::string::npos);
}
