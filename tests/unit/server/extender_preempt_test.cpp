// The preempt verb as kube-scheduler reads its answer (host-reference.md
// §Preempt): kube takes the answer in place of its own candidates, evicts
// the victims named and nominates the pod, so a node is given back only
// where the pod fits once its victims are gone — kube's victims when they
// make room, else the smallest set policyc's dry run picks there (lowest
// priority first, reprieve, budgets counted), else not at all.

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/source.h"
#include "runtime/host/host.h"
#include "server/extender.h"
#include "server/metrics.h"

namespace {

std::string Node(const std::string& name, const std::string& cpu, const std::string& taints = "[]") {
  return fmt::format(R"({{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "{}", "labels": {{"kubernetes.io/hostname": "{}"}}}},
    "spec": {{"taints": {}}}, "status": {{"allocatable": {{"cpu": "{}", "memory": "16Gi", "pods": "110"}}}}}})",
                     name, name, taints, cpu);
}

// A running pod on `node`: its uid is its name with `uid-` before it.
std::string Running(const std::string& name, const std::string& node, const std::string& cpu, int priority,
                    const std::string& started, const std::string& labels = "{}") {
  return fmt::format(R"({{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{}", "namespace": "default", "uid": "uid-{}", "labels": {}}},
    "spec": {{"nodeName": "{}", "priority": {}, "containers": [{{"name": "c", "resources": {{"requests": {{"cpu": "{}"}}}}}}]}},
    "status": {{"phase": "Running", "startTime": "{}"}}}})",
                     name, name, labels, node, priority, cpu, started);
}

// Four 4-CPU nodes and a 1-CPU one, and what runs on them; the pod asks 1.8
// CPU at priority 100.
//   a: low-a1 500m, low-a2 1500m, low-a3 1000m (priority 0, started in that
//      order) and high-a 800m (priority 1000): 200m free. Without a1 alone
//      700m: too little; without all three 3.2: a1 comes back (2.7 left),
//      a2 and a3 do not — the victims are a2 and a3.
//   b: as a; kube proposes a2 and a3 itself.
//   c: 1 CPU: the pod does not fit there even with nothing on it.
//   d: tainted NoSchedule: no eviction helps.
//   e: guarded-e 1000m (a budget allows no disruption) and free-e 1000m,
//      free-e started first, and high-e 1200m: 800m free, either one gone
//      makes room; the budget's pod comes back first.
std::string Snapshot() {
  std::vector<std::string> items = {
      Node("a", "4"), Node("b", "4"), Node("c", "1"),
      Node("d", "4", R"([{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}])"), Node("e", "4"),
      Running("low-a1", "a", "500m", 0, "2026-01-01T00:00:01Z"), Running("low-a2", "a", "1500m", 0, "2026-01-01T00:00:02Z"),
      Running("low-a3", "a", "1000m", 0, "2026-01-01T00:00:03Z"), Running("high-a", "a", "800m", 1000, "2026-01-01T00:00:00Z"),
      Running("low-b1", "b", "500m", 0, "2026-01-01T00:00:01Z"), Running("low-b2", "b", "1500m", 0, "2026-01-01T00:00:02Z"),
      Running("low-b3", "b", "1000m", 0, "2026-01-01T00:00:03Z"), Running("high-b", "b", "800m", 1000, "2026-01-01T00:00:00Z"),
      Running("low-c", "c", "500m", 0, "2026-01-01T00:00:01Z"),
      Running("low-d", "d", "3", 0, "2026-01-01T00:00:01Z"),
      Running("guarded-e", "e", "1000m", 0, "2026-01-01T00:00:05Z", R"({"app": "guarded"})"),
      Running("free-e", "e", "1000m", 0, "2026-01-01T00:00:01Z", R"({"app": "free"})"),
      Running("high-e", "e", "1200m", 1000, "2026-01-01T00:00:00Z"),
      R"({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "guarded"}}}, "status": {"disruptionsAllowed": 0}})",
  };
  std::string out = R"({"apiVersion": "v1", "kind": "List", "items": [)";
  for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ",") + items[i];
  return out + "]}";
}

constexpr char kPod[] = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
  "spec": {"priority": 100, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1800m"}}}]}})";

std::string Victims(const std::vector<std::string>& uids, int violations) {
  std::string pods;
  for (const std::string& uid : uids) pods += fmt::format(R"({}{{"UID": "{}"}})", pods.empty() ? "" : ", ", uid);
  return fmt::format(R"({{"Pods": [{}], "NumPDBViolations": {}}})", pods, violations);
}

// The answer's nodes, each with its victims' UIDs in order and its count.
std::map<std::string, std::pair<std::vector<std::string>, int>> Read(const std::string& body) {
  std::map<std::string, std::pair<std::vector<std::string>, int>> out;
  std::regex node(R"re("([a-z]+)": \{"Pods": \[([^\]]*)\], "NumPDBViolations": (\d+)\})re");
  std::regex uid(R"re("UID": "([^"]+)")re");
  for (std::sregex_iterator it(body.begin(), body.end(), node), end; it != end; ++it) {
    std::string pods = (*it)[2].str();
    std::vector<std::string> uids;
    for (std::sregex_iterator u(pods.begin(), pods.end(), uid); u != end; ++u) uids.push_back((*u)[1].str());
    out[(*it)[1].str()] = {uids, std::stoi((*it)[3].str())};
  }
  return out;
}

}  // namespace

TEST_CASE("preempt keeps a node only where the pod fits once its victims are gone") {
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", Snapshot()), diags));
  policy::host::Decisions decisions(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  policy::server::Metrics metrics;
  policy::server::Extender extender(decisions, state, {.metrics = &metrics});

  std::string body = fmt::format(
      R"({{"Pod": {}, "NodeNameToVictims": null, "NodeNameToMetaVictims": {{"a": {}, "b": {}, "c": {}, "d": {}, "e": {}, "ghost": {}}}}})",
      kPod, Victims({"uid-low-a1"}, 0), Victims({"uid-low-b2", "uid-low-b3"}, 1), Victims({"uid-low-c"}, 0),
      Victims({"uid-low-d"}, 0), Victims({"uid-not-here"}, 0), Victims({"uid-x"}, 0));
  policy::server::Reply reply = extender.Preempt(body);
  REQUIRE(reply.status == 200);
  INFO(reply.body);
  auto answer = Read(reply.body);

  // a: kube's one victim frees 500m of the 1.8 CPU: replaced by the set
  // that makes room, the more important (earlier started) first.
  REQUIRE(answer.count("a") == 1);
  CHECK(answer["a"].first == std::vector<std::string>{"uid-low-a2", "uid-low-a3"});
  CHECK(answer["a"].second == 0);
  // b: kube's victims make room: kept as sent, its PDB count as well.
  REQUIRE(answer.count("b") == 1);
  CHECK(answer["b"].first == std::vector<std::string>{"uid-low-b2", "uid-low-b3"});
  CHECK(answer["b"].second == 1);
  // c, d: nothing evicted makes room; ghost: not in the cluster state.
  CHECK(answer.count("c") == 0);
  CHECK(answer.count("d") == 0);
  CHECK(answer.count("ghost") == 0);
  // e: kube's victim is not on the node; either pod gone makes room. By
  // importance free-e (started first) would come back first, but the
  // budget's pod is reprieved first, so free-e is the victim.
  REQUIRE(answer.count("e") == 1);
  CHECK(answer["e"].first == std::vector<std::string>{"uid-free-e"});
  CHECK(answer["e"].second == 0);
  CHECK(answer.size() == 3);

  std::string exposition = metrics.Render(0, 0);
  CHECK(exposition.find("policyc_preempt_nodes_total{answer=\"kept\"} 1\n") != std::string::npos);
  CHECK(exposition.find("policyc_preempt_nodes_total{answer=\"replaced\"} 2\n") != std::string::npos);
  CHECK(exposition.find("policyc_preempt_nodes_total{answer=\"dropped\"} 3\n") != std::string::npos);

  // The trial left the cluster as it was: the same call answers the same.
  CHECK(extender.Preempt(body).body == reply.body);
  CHECK(state.PodCount() == 13);
}

TEST_CASE("preempt's own victims respect a budget only as far as it must") {
  // With the budget's pod the only way to make room, it is a victim and
  // counted as a violation.
  std::string snapshot = Snapshot();
  policy::host::ClusterState state;
  policy::DiagnosticSink diags;
  REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", snapshot), diags));
  policy::host::Decisions decisions(policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
  policy::server::Extender extender(decisions, state);
  // A pod of 2.6 CPU on e (1.8 free with one gone, 2.8 with both): both go.
  std::string pod = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "default"},
    "spec": {"priority": 100, "containers": [{"name": "c", "resources": {"requests": {"cpu": "2600m"}}}]}})";
  std::string body = fmt::format(R"({{"Pod": {}, "NodeNameToMetaVictims": {{"e": {}}}}})", pod, Victims({"uid-free-e"}, 0));
  policy::server::Reply reply = extender.Preempt(body);
  REQUIRE(reply.status == 200);
  INFO(reply.body);
  auto answer = Read(reply.body);
  REQUIRE(answer.count("e") == 1);
  std::set<std::string> victims(answer["e"].first.begin(), answer["e"].first.end());
  CHECK(victims == std::set<std::string>{"uid-free-e", "uid-guarded-e"});
  CHECK(answer["e"].second == 1);
}
