// libpolicyc.so through include/policyc.h alone, as a host uses it: the
// version check, events against a snapshot of the same state, assume and
// forget, candidates, decisions on several threads while a writer applies
// events, and every entry point given nulls, garbage and truncated input.

#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "policyc.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Example(const std::string& path) { return ReadFile(std::string(POLICYC_SOURCE_DIR) + "/" + path); }

struct Engine {
  policyc_engine* e = nullptr;
  explicit Engine(const std::string& config = "") {
    REQUIRE_MESSAGE(policyc_engine_new(POLICYC_ABI_VERSION, config.data(), config.size(), &e) == POLICYC_OK,
                    policyc_last_error());
  }
  ~Engine() { policyc_engine_free(e); }
};

struct Cluster {
  policyc_cluster* c = nullptr;
  Cluster() { REQUIRE(policyc_cluster_new(&c) == POLICYC_OK); }
  explicit Cluster(const std::string& snapshot) : Cluster() {
    REQUIRE_MESSAGE(policyc_cluster_load(c, snapshot.data(), snapshot.size()) == POLICYC_OK, policyc_last_error());
  }
  ~Cluster() { policyc_cluster_free(c); }
  policyc_status Apply(const std::string& event) { return policyc_cluster_apply(c, event.data(), event.size()); }
};

// What a decision says, as one comparable text: feasible nodes with
// scores, the selected one, failed nodes with reasons, the summary.
std::string Answer(const Engine& engine, Cluster& cluster, const std::string& pod,
                   const std::vector<const char*>* candidates = nullptr) {
  policyc_view* view = nullptr;
  REQUIRE(policyc_cluster_view(cluster.c, &view) == POLICYC_OK);
  policyc_decide_opts opts{sizeof(policyc_decide_opts), 0, nullptr, 0};
  if (candidates != nullptr) {
    opts.candidates = candidates->data();
    opts.n_candidates = candidates->size();
  }
  policyc_result* r = nullptr;
  policyc_status status = policyc_decide(engine.e, view, pod.data(), pod.size(), &opts, &r);
  policyc_view_free(view);
  REQUIRE_MESSAGE(status == POLICYC_OK, policyc_last_error());
  std::string out;
  for (size_t i = 0; i < policyc_result_feasible_count(r); ++i) {
    int64_t score = 0;
    const char* name = policyc_result_feasible(r, i, &score);
    out += fmt::format("fits {} {}\n", name, score);
  }
  const char* selected = policyc_result_selected(r);
  out += fmt::format("selected {}\n", selected != nullptr ? selected : "-");
  for (size_t i = 0; i < policyc_result_failed_count(r); ++i) {
    const char* reason = nullptr;
    int unresolvable = -1;
    const char* name = policyc_result_failed(r, i, &reason, &unresolvable);
    out += fmt::format("fails {} {} {}\n", name, unresolvable, reason);
  }
  out += fmt::format("summary {}\n", policyc_result_summary(r));
  policyc_result_free(r);
  return out;
}

const char* kWebPod = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-9", "namespace": "shop"},
  "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}})";

std::string NodeEvent(const std::string& type, const std::string& name, const std::string& zone, int cpu) {
  return fmt::format(R"({{"type": "{}", "object": {{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "{}",
    "labels": {{"kubernetes.io/hostname": "{}", "topology.kubernetes.io/zone": "{}"}}}},
    "status": {{"allocatable": {{"cpu": "{}", "memory": "16Gi", "pods": "110"}}}}}}}})",
                     type, name, name, zone, cpu);
}

std::string PodEvent(const std::string& type, const std::string& name, const std::string& node, int cpu) {
  return fmt::format(R"({{"type": "{}", "object": {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{}",
    "namespace": "shop", "labels": {{"app": "web"}}}}, "spec": {{"nodeName": "{}", "containers": [{{"name": "c",
    "image": "nginx", "resources": {{"requests": {{"cpu": "{}"}}}}}}]}}, "status": {{"phase": "Running"}}}}}})",
                     type, name, node, cpu);
}

}  // namespace

TEST_CASE("the ABI version: the library's - and a host built for another major is refused") {
  CHECK(policyc_abi_version() == POLICYC_ABI_VERSION);
  policyc_engine* e = nullptr;
  CHECK(policyc_engine_new(POLICYC_ABI_VERSION + (1u << 16), nullptr, 0, &e) == POLICYC_E_ABI);
  CHECK(e == nullptr);
  CHECK(std::string(policyc_last_error()).find("ABI 2.0") != std::string::npos);
  CHECK(policyc_engine_new(POLICYC_ABI_VERSION + 1, nullptr, 0, &e) == POLICYC_E_ABI);  // a newer minor
}

TEST_CASE("engine configurations: errors name what is wrong") {
  policyc_engine* e = nullptr;
  auto make = [&](const std::string& config) {
    policyc_status s = policyc_engine_new(POLICYC_ABI_VERSION, config.data(), config.size(), &e);
    policyc_engine_free(e);
    e = nullptr;
    return s;
  };
  CHECK(make(R"({"engine": "interp"})") == POLICYC_OK);
  CHECK(make(R"({"engine": "warp"})") == POLICYC_E_PARSE);
  CHECK(std::string(policyc_last_error()).find("interp, jit or tiered") != std::string::npos);
  CHECK(make(R"({"enigne": "jit"})") == POLICYC_E_PARSE);
  CHECK(std::string(policyc_last_error()).find("unknown configuration field `enigne`") != std::string::npos);
  CHECK(make(R"({"plugins": ["NodeAfinity"]})") == POLICYC_E_PARSE);
  CHECK(std::string(policyc_last_error()).find("NodeAfinity") != std::string::npos);
  CHECK(make(R"({"policies": [{"name": "typo.policy", "source": "policy P\n  filter node.lables['x'] == 'y'\n"}]})") ==
        POLICYC_E_COMPILE);
  CHECK(std::string(policyc_last_error()).find("typo.policy:2:") != std::string::npos);
  CHECK(make(R"({"engine": "jit", )") == POLICYC_E_PARSE);
  CHECK(std::string(policyc_last_error()).find("engine-config.json:1:") != std::string::npos);
  CHECK(make("[1, 2]") == POLICYC_E_PARSE);
}

TEST_CASE("a decision on the example snapshot: feasible nodes best first - failed ones with reasons") {
  Engine engine;
  Cluster cluster(Example("examples/cluster.yaml"));
  std::string gpu = Example("examples/pods/gpu-training.yaml");
  std::string answer = Answer(engine, cluster, gpu);
  CHECK(answer.find("selected -") != std::string::npos);  // the bundled Pending GPU pod fits nowhere
  CHECK(answer.find("summary 0/6 nodes are available: ") != std::string::npos);
  CHECK(answer.find("Insufficient nvidia.com/gpu") != std::string::npos);
  // node affinity cannot be fixed by preemption; too little of a resource can
  CHECK(answer.find(" 1 node(s) didn't match Pod's node affinity/selector") != std::string::npos);
  CHECK(answer.find(" 0 Insufficient nvidia.com/gpu") != std::string::npos);
  std::string web = Answer(engine, cluster, kWebPod);
  CHECK(web.find("fits ") != std::string::npos);
  CHECK(web.find("selected ip-") != std::string::npos);
}

TEST_CASE("events bring a cluster to the state a snapshot of it loads to - with the same answers") {
  Engine engine;
  Cluster by_events;
  const char* zones[] = {"a", "b", "c"};
  for (int i = 0; i < 6; ++i) REQUIRE(by_events.Apply(NodeEvent("ADDED", fmt::format("n{}", i), zones[i % 3], 4 + i)) == POLICYC_OK);
  for (int i = 0; i < 8; ++i) REQUIRE(by_events.Apply(PodEvent("ADDED", fmt::format("p{}", i), fmt::format("n{}", i % 4), 1)) == POLICYC_OK);
  REQUIRE(by_events.Apply(NodeEvent("MODIFIED", "n5", "a", 1)) == POLICYC_OK);       // smaller now
  REQUIRE(by_events.Apply(NodeEvent("DELETED", "n4", "b", 8)) == POLICYC_OK);
  REQUIRE(by_events.Apply(PodEvent("MODIFIED", "p0", "n1", 3)) == POLICYC_OK);       // moved and bigger
  REQUIRE(by_events.Apply(PodEvent("DELETED", "p7", "n3", 1)) == POLICYC_OK);
  REQUIRE(by_events.Apply(R"({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "12"}}})") == POLICYC_OK);
  CHECK(policyc_cluster_node_count(by_events.c) == 5);
  CHECK(policyc_cluster_pod_count(by_events.c) == 7);

  // The same state written as a snapshot.
  std::string items;
  auto add = [&](const std::string& event) {
    size_t at = event.find("\"object\": ");
    std::string object = event.substr(at + 10, event.size() - at - 11);
    items += (items.empty() ? "" : ",") + object;
  };
  for (int i : {0, 1, 2, 3}) add(NodeEvent("", fmt::format("n{}", i), zones[i % 3], 4 + i));
  add(NodeEvent("", "n5", "a", 1));
  add(PodEvent("", "p0", "n1", 3));
  for (int i = 1; i < 7; ++i) add(PodEvent("", fmt::format("p{}", i), fmt::format("n{}", i % 4), 1));
  Cluster snapshot(R"({"apiVersion": "v1", "kind": "List", "items": [)" + items + "]}");
  CHECK(Answer(engine, by_events, kWebPod) == Answer(engine, snapshot, kWebPod));

  // A bad event changes nothing and says why.
  std::string before = Answer(engine, by_events, kWebPod);
  CHECK(by_events.Apply(R"({"type": "ADDED", "object": {"kind": "Node", "metadata": {"name": "x"}, "status": {"allocatable": {"cpu": "lots"}}}})") ==
        POLICYC_E_PARSE);
  CHECK(std::string(policyc_last_error()).find("event:1:") != std::string::npos);
  CHECK(by_events.Apply(R"({"type": "ERROR", "object": {"kind": "Status", "code": 410}})") == POLICYC_E_PARSE);
  CHECK(std::string(policyc_last_error()).find("list again") != std::string::npos);
  CHECK(by_events.Apply(R"({"type": "ADDED"})") == POLICYC_E_PARSE);
  CHECK(Answer(engine, by_events, kWebPod) == before);
}

TEST_CASE("plans kept per template follow the objects they read - a Service's default spreading") {
  Engine kept;  // decides the same template before and after the Service arrives
  Cluster cluster;
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.Apply(NodeEvent("ADDED", fmt::format("n{}", i), i < 2 ? "a" : "b", 8)) == POLICYC_OK);
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.Apply(PodEvent("ADDED", fmt::format("web-{}", i), "n0", 1)) == POLICYC_OK);
  std::string pod = R"({"kind": "Pod", "metadata": {"name": "web-new", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}})";
  std::string before = Answer(kept, cluster, pod);
  REQUIRE(cluster.Apply(R"({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web",
    "namespace": "shop"}, "spec": {"selector": {"app": "web"}}}})") == POLICYC_OK);
  std::string after = Answer(kept, cluster, pod);
  Engine fresh;
  CHECK(after == Answer(fresh, cluster, pod));
  CHECK(after != before);  // the Service's spreading moves the scores
}

TEST_CASE("assume and forget: an assumed pod counts until forgotten - an event for it replaces it") {
  Engine engine;
  Cluster cluster;
  REQUIRE(cluster.Apply(NodeEvent("ADDED", "only", "a", 4)) == POLICYC_OK);
  std::string big = R"({"kind": "Pod", "metadata": {"name": "big", "namespace": "shop"},
    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]}})";
  CHECK(Answer(engine, cluster, big).find("selected only") != std::string::npos);
  REQUIRE(policyc_cluster_assume(cluster.c, big.data(), big.size(), "only") == POLICYC_OK);
  CHECK(Answer(engine, cluster, big).find("Insufficient cpu") != std::string::npos);  // room for one
  REQUIRE(cluster.Apply(PodEvent("ADDED", "big", "only", 3)) == POLICYC_OK);          // the informer sees the bind
  CHECK(policyc_cluster_pod_count(cluster.c) == 1);
  REQUIRE(policyc_cluster_forget(cluster.c, "shop", "big") == POLICYC_OK);
  CHECK(Answer(engine, cluster, big).find("selected only") != std::string::npos);
  CHECK(policyc_cluster_forget(cluster.c, "shop", "big") == POLICYC_E_NOT_FOUND);
  CHECK(policyc_cluster_assume(cluster.c, big.data(), big.size(), "nowhere") == POLICYC_E_NOT_FOUND);
}

TEST_CASE("candidates: the decision among the names given - unknown names fail as unresolvable") {
  Engine engine;
  Cluster cluster(Example("examples/cluster.yaml"));
  std::vector<const char*> names = {"ip-10-0-2-17.ec2.internal", "no-such-node", "ip-10-0-1-17.ec2.internal"};
  std::string answer = Answer(engine, cluster, kWebPod, &names);
  CHECK(answer.find("fails no-such-node 1 node(s) not found") != std::string::npos);
  CHECK(answer.find("summary 2/2 nodes are available.") != std::string::npos);
  std::vector<const char*> none = {"no-such-node"};
  CHECK(Answer(engine, cluster, kWebPod, &none).find("selected -") != std::string::npos);
}

TEST_CASE("decisions on four threads while a writer applies events - each sees one state or the next") {
  Engine engine;
  Cluster cluster;
  for (int i = 0; i < 20; ++i) REQUIRE(cluster.Apply(NodeEvent("ADDED", fmt::format("n{}", i), "a", 8)) == POLICYC_OK);
  // The writer adds and removes node `extra` (20 or 21 nodes), and binds and
  // unbinds a pod that fills n0 (then 19 or 20 nodes fit a 2-cpu pod).
  std::atomic<bool> stop = false;
  std::atomic<int> decisions = 0, wrong = 0;
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        policyc_view* view = nullptr;
        if (policyc_cluster_view(cluster.c, &view) != POLICYC_OK) {
          ++wrong;
          continue;
        }
        policyc_result* r = nullptr;
        if (policyc_decide(engine.e, view, kWebPod, std::strlen(kWebPod), nullptr, &r) != POLICYC_OK) ++wrong;
        size_t fits = policyc_result_feasible_count(r);
        size_t all = fits + policyc_result_failed_count(r);
        if ((all != 20 && all != 21) || (fits != all && fits + 1 != all)) ++wrong;
        policyc_result_free(r);
        policyc_view_free(view);
        ++decisions;
      }
    });
  }
  for (int round = 0; round < 200; ++round) {
    REQUIRE(cluster.Apply(NodeEvent(round % 2 == 0 ? "ADDED" : "DELETED", "extra", "b", 8)) == POLICYC_OK);
    REQUIRE(cluster.Apply(PodEvent(round % 2 == 0 ? "ADDED" : "DELETED", "filler", "n0", 8)) == POLICYC_OK);
  }
  while (decisions < 40) std::this_thread::yield();
  stop = true;
  for (std::thread& t : readers) t.join();
  CHECK(wrong == 0);
  CHECK(policyc_cluster_node_count(cluster.c) == 20);
}

TEST_CASE("every entry point survives nulls - garbage and every truncation of valid input") {
  policyc_engine* e = nullptr;
  policyc_view* v = nullptr;
  policyc_result* r = nullptr;
  CHECK(policyc_engine_new(POLICYC_ABI_VERSION, nullptr, 5, &e) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_engine_new(POLICYC_ABI_VERSION, nullptr, 0, nullptr) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_cluster_new(nullptr) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_cluster_load(nullptr, "x", 1) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_cluster_apply(nullptr, "x", 1) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_cluster_assume(nullptr, "x", 1, "n") == POLICYC_E_INVALID_ARG);
  CHECK(policyc_cluster_forget(nullptr, "a", "b") == POLICYC_E_INVALID_ARG);
  CHECK(policyc_cluster_view(nullptr, &v) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_decide(nullptr, nullptr, "x", 1, nullptr, &r) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_decide(nullptr, nullptr, "x", 1, nullptr, nullptr) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_result_explain_json(nullptr, nullptr, nullptr) == POLICYC_E_INVALID_ARG);
  CHECK(policyc_result_feasible(nullptr, 0, nullptr) == nullptr);
  CHECK(policyc_result_failed(nullptr, 0, nullptr, nullptr) == nullptr);
  CHECK(policyc_result_selected(nullptr) == nullptr);
  CHECK(policyc_cluster_node_count(nullptr) == 0);
  policyc_engine_free(nullptr);
  policyc_cluster_free(nullptr);
  policyc_view_free(nullptr);
  policyc_result_free(nullptr);

  Engine engine;
  Cluster cluster(Example("examples/cluster.yaml"));
  std::string before = Answer(engine, cluster, kWebPod);
  std::string event = PodEvent("ADDED", "p", "ip-10-0-1-20.ec2.internal", 1);
  std::string config = R"({"engine": "interp", "plugins": ["NodeAffinity", "TaintToleration"]})";
  std::string pod = kWebPod;
  std::string snapshot = Example("examples/cluster.yaml").substr(0, 2000);
  int refused = 0;
  for (size_t n = 0; n < event.size(); ++n) {  // a prefix of an event is never half applied
    refused += cluster.Apply(event.substr(0, n)) != POLICYC_OK;
    CHECK(std::string(policyc_last_error()).size() > 0);
  }
  CHECK(refused == static_cast<int>(event.size()));
  CHECK(Answer(engine, cluster, kWebPod) == before);
  for (size_t n = 0; n < config.size(); ++n) {
    policyc_engine* made = nullptr;
    policyc_status s = policyc_engine_new(POLICYC_ABI_VERSION, config.data(), n, &made);
    CHECK((s == POLICYC_OK) == (made != nullptr));
    CHECK((n == 0 || s != POLICYC_OK));  // only the empty configuration (the default) is whole
    policyc_engine_free(made);
  }
  policyc_view* view = nullptr;
  REQUIRE(policyc_cluster_view(cluster.c, &view) == POLICYC_OK);
  for (size_t n = 0; n < pod.size(); ++n) {
    policyc_result* got = nullptr;
    CHECK(policyc_decide(engine.e, view, pod.data(), n, nullptr, &got) == POLICYC_E_PARSE);
    CHECK(got == nullptr);
  }
  std::string garbage = "\xff\xfe{\"kind\": \"Pod\"\x00\x01 \xc3\x28";
  garbage.push_back('\0');
  policyc_result* got = nullptr;
  CHECK(policyc_decide(engine.e, view, garbage.data(), garbage.size(), nullptr, &got) == POLICYC_E_PARSE);
  policyc_decide_opts bad{3, 0, nullptr, 0};
  CHECK(policyc_decide(engine.e, view, pod.data(), pod.size(), &bad, &got) == POLICYC_E_INVALID_ARG);
  policyc_decide_opts flags{sizeof(policyc_decide_opts), 8, nullptr, 0};
  CHECK(policyc_decide(engine.e, view, pod.data(), pod.size(), &flags, &got) == POLICYC_E_INVALID_ARG);
  policyc_view_free(view);
  for (size_t n = 1; n < snapshot.size(); n += 97) {  // a refused load keeps the state
    Cluster other(Example("examples/cluster.yaml"));
    size_t nodes = policyc_cluster_node_count(other.c);
    if (policyc_cluster_load(other.c, snapshot.data(), n) != POLICYC_OK) CHECK(policyc_cluster_node_count(other.c) == nodes);
  }
  CHECK(policyc_cluster_load(cluster.c, garbage.data(), garbage.size()) == POLICYC_E_PARSE);
  CHECK(Answer(engine, cluster, kWebPod) == before);
}
