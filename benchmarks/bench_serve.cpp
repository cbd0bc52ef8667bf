// `policyc serve` under load on loopback, as kube-scheduler calls it with
// `nodeCacheCapable: true`: a generated cluster of 5,000 nodes and 50,000
// bound pods, and clients that each send filter then prioritize for a web
// pod with all 5,000 node names, over keep-alive connections (cpp-httplib's
// client, TCP_NODELAY as Go's), as fast as the server answers. The
// template's first calls (kernel compilation) are made before measuring.
//
//   BM_Serve/<engine>/clients:N   calls_per_s over all clients; p50_ms, p99_ms per call (filter and prioritize)
//   BM_Serve/jit-changing-prioritize/... prioritize calls alone (its 0-10 over the feasible totals' range),
//                                 the same 5,000 names, the cluster changing as below
//   BM_Serve/jit-changing/...     the same with a pod bound or unbound (a watch event, not timed) before
//                                 every call, as in a busy cluster: nothing kept for the table's last
//                                 state (the rejected nodes' words) is reused
//   BM_ServeRealistic/<engine>/... filter calls for real-shaped pods (cluster_gen's realistic snapshot:
//                                 ~80 label keys a node, 50,000 bound pods; 50 of its Pending pods in
//                                 turn, each with its token volume, ReplicaSet/StatefulSet/Job owners,
//                                 claims, a typo'd affinity), on a changing cluster; second_call_ms: the
//                                 mean of each template's second call (not measured above), which makes
//                                 what the template keeps
//   BM_ServePreempt/jit/candidates:N one client, preempt calls on the realistic world for a pod of high
//                                 priority asking 6 CPUs, kube's candidates the first N nodes, each with
//                                 its least important pod as the victim (too little, mostly: replaced
//                                 by the dry run's set, or dropped); baseline_filter_ms: a filter
//                                 call of the same pod among the same names, in the same run;
//                                 nodes_kept: candidates in the answer
//   BM_ServeShapes/<engine>/...   one client, filter calls each for a pod of a shape never seen (its
//                                 own app label and a required hostname anti-affinity on it, as each
//                                 new Deployment brings; with the JIT its kernels made in the call):
//                                 p50, ms_first/ms_last per call over the first and last tenth,
//                                 rss_mb_first/rss_mb_last after them
//   BM_SlowClients/slow:S         200 keep-alive clients, 100 filter calls each (500 nodes, every name), while S
//                                 slowloris connections drip a request's headers a byte every 500 ms (and
//                                 connect again when the server, at --read-timeout 2, cuts them off):
//                                 p50_ms, p99_ms of the good calls, failed
//                                 (good calls not answered 200), healthz_max_ms (a prober's /healthz every
//                                 20 ms throughout). The figure: p99 with slow:16 over slow:0, one run
//
//   build/benchmarks/bench_serve

#include <benchmark/benchmark.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/extender_load.h"
#include "runtime/host/host.h"
#include "server/server.h"

namespace {

struct World : policy::bench::ExtenderWorld {
  policy::bench::LoopbackServer server;
  explicit World(policy::engine::Backend backend, bool realistic = false, int nodes = 5000, int read_timeout_s = 10)
      : ExtenderWorld(backend, realistic, nodes), server(*this, read_timeout_s) {}
};

void ChurnOn(World& world, int c, int i) {  // a pod of client c's comes and goes on the first node
  std::string event = fmt::format(
      R"({{"type": "{}", "object": {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "churn-{}", "namespace": "shop"}},
      "spec": {{"nodeName": "{}", "containers": [{{"name": "c", "resources": {{"requests": {{"cpu": "100m"}}}}}}]}},
      "status": {{"phase": "Running"}}}}}})",
      i % 2 == 0 ? "ADDED" : "DELETED", c, world.first_node);
  policy::DiagnosticSink diags;
  if (!world.state.Apply(policy::Source("event", event), diags)) std::abort();
}

void BM_Serve(benchmark::State& state, policy::engine::Backend backend, bool changing, bool prioritize_only = false) {
  static std::unique_ptr<World> world;
  static policy::engine::Backend made = policy::engine::Backend::kAuto;
  if (!world || made != backend) {
    world.reset();
    world = std::make_unique<World>(backend);
    made = backend;
  }
  auto verb = [&](int i) {  // alternately, or prioritize alone
    return i % 2 == 0 && !prioritize_only ? "/policyc/filter" : "/policyc/prioritize";
  };
  {  // the template's first calls compile its kernels: measured apart (BM_TemplateKernels), not here
    httplib::Client warm("127.0.0.1", world->server.Port());
    for (int i = 0; i < 10; ++i) warm.Post(verb(i), world->body, "application/json");
  }
  auto call = [&](httplib::Client& client, int, int i) {
    auto res = client.Post(verb(i), world->body, "application/json");
    if (!res || res->status != 200) std::abort();
  };
  auto churn = [&](int c, int i) { ChurnOn(*world, c, i); };
  policy::bench::RunClients(state, world->server.Port(), static_cast<int>(state.range(0)), 500, call, "ms",
                            changing ? std::function<void(int, int)>(churn) : nullptr);
}

void BM_ServeRealistic(benchmark::State& state, policy::engine::Backend backend) {
  static std::unique_ptr<World> world;
  static policy::engine::Backend made = policy::engine::Backend::kAuto;
  if (!world || made != backend) {
    world.reset();
    world = std::make_unique<World>(backend, /*realistic=*/true);
    made = backend;
  }
  // Each template's first call compiles its kernels, its second makes what
  // it keeps (a decision and explanation of every node): not in the
  // figures, the second pass's mean apart (second_call_ms).
  double second_call_ms = 0;
  {
    httplib::Client warm("127.0.0.1", world->server.Port());
    for (int pass = 0; pass < 2; ++pass) {
      auto start = std::chrono::steady_clock::now();
      for (const std::string& body : world->bodies) warm.Post("/policyc/filter", body, "application/json");
      std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
      second_call_ms = took.count() / static_cast<double>(world->bodies.size());
    }
  }
  auto call = [&](httplib::Client& client, int c, int i) {
    const std::string& body = world->bodies[static_cast<size_t>(c * 7 + i) % world->bodies.size()];
    auto res = client.Post("/policyc/filter", body, "application/json");
    if (!res || res->status != 200) std::abort();
  };
  policy::bench::RunClients(state, world->server.Port(), static_cast<int>(state.range(0)), 500, call, "ms",
                            [&](int c, int i) { ChurnOn(*world, c, i); });
  state.counters["second_call_ms"] = second_call_ms;
}

// Bytes malloc has handed out and not had back (RSS less what the
// allocator holds free): flat while nothing kept grows.
double HeapMb() { return static_cast<double>(mallinfo2().uordblks) / (1 << 20); }

double RssMb() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

void BM_ServeShapes(benchmark::State& state, policy::engine::Backend backend) {
  const int calls = static_cast<int>(state.range(0));
  World world(backend, /*realistic=*/true, /*nodes=*/static_cast<int>(state.range(1)));
  httplib::Client client("127.0.0.1", world.server.Port());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  const int tenth = calls / 10;
  double first_s = 0, last_s = 0, rss_first = 0, rss_half = 0, rss_last = 0, heap_first = 0, heap_half = 0, heap_last = 0;
  std::vector<double> took;
  for (auto _ : state) {
    for (int i = 0; i < calls; ++i) {
      std::string app = fmt::format("shape-{}", i);
      std::string body = fmt::format(
          R"({{"Pod": {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{0}-0", "namespace": "shop", "labels": {{"app": "{0}"}}}},
          "spec": {{"containers": [{{"name": "c", "image": "nginx", "resources": {{"requests": {{"cpu": "100m"}}}}}}],
          "affinity": {{"podAntiAffinity": {{"requiredDuringSchedulingIgnoredDuringExecution": [
            {{"labelSelector": {{"matchLabels": {{"app": "{0}"}}}}, "topologyKey": "kubernetes.io/hostname"}}]}}}}}}}},
          "NodeNames": [{1}], "Nodes": null}})",
          app, world.node_names);
      auto t0 = std::chrono::steady_clock::now();
      auto res = client.Post("/policyc/filter", body, "application/json");
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!res || res->status != 200) std::abort();
      took.push_back(s);
      if (i < tenth) first_s += s;
      if (i >= calls - tenth) last_s += s;
      if (i == tenth - 1) rss_first = RssMb(), heap_first = HeapMb();
      if (i == calls / 2 - 1) rss_half = RssMb(), heap_half = HeapMb();
    }
    rss_last = RssMb();
    heap_last = HeapMb();
  }
  std::sort(took.begin(), took.end());
  state.counters["p50_ms"] = took[took.size() / 2] * 1e3;
  state.counters["ms_first"] = first_s * 1e3 / tenth;
  state.counters["ms_last"] = last_s * 1e3 / tenth;
  state.counters["rss_mb_first"] = rss_first;
  state.counters["rss_mb_half"] = rss_half;
  state.counters["rss_mb_last"] = rss_last;
  state.counters["heap_mb_first"] = heap_first;
  state.counters["heap_mb_half"] = heap_half;
  state.counters["heap_mb_last"] = heap_last;
}

// kube-scheduler's preempt call on a realistic cluster: the pod fits
// nowhere, kube's dry run proposes N candidates (100 is its minimum,
// minCandidateNodesAbsolute), each with one victim that does not make room.
void BM_ServePreempt(benchmark::State& state) {
  static std::unique_ptr<World> world;
  if (!world) world = std::make_unique<World>(policy::engine::Backend::kJit, /*realistic=*/true);
  const size_t candidates = static_cast<size_t>(state.range(0));
  std::string pod = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent-0", "namespace": "shop", "uid": "u-urgent"},
    "spec": {"priority": 1000000, "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "6", "memory": "8Gi"}}}]}})";
  std::string victims, names;
  {
    policy::host::ClusterState::View view = world->state.Read();
    const policy::rt::NodeTable& table = view.cluster().Table();
    for (policy::rt::RowId row : table.LiveRows()) {
      if (names.size() > 0 && std::count(names.begin(), names.end(), ',') + 1 >= static_cast<long>(candidates)) break;
      std::vector<policy::rt::NodeTable::PodOnRow> pods = table.PodsBoundTo(row);
      auto least = std::min_element(pods.begin(), pods.end(), [](const auto& a, const auto& b) { return a.priority < b.priority; });
      if (least == pods.end() || least->uid.empty()) continue;
      std::string name(table.NodeName(row));
      victims += fmt::format(R"({}"{}": {{"Pods": [{{"UID": "{}"}}], "NumPDBViolations": 0}})", victims.empty() ? "" : ", ", name, least->uid);
      names += fmt::format(R"({}"{}")", names.empty() ? "" : ", ", name);
    }
  }
  std::string preempt = fmt::format(R"({{"Pod": {}, "NodeNameToVictims": null, "NodeNameToMetaVictims": {{{}}}}})", pod, victims);
  std::string filter = fmt::format(R"({{"Pod": {}, "NodeNames": [{}], "Nodes": null}})", pod, names);
  httplib::Client client("127.0.0.1", world->server.Port());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  auto timed = [&](const char* path, const std::string& body, std::string* answer) {
    auto t0 = std::chrono::steady_clock::now();
    auto res = client.Post(path, body, "application/json");
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!res || res->status != 200) std::abort();
    if (answer != nullptr) *answer = res->body;
    return ms;
  };
  for (int i = 0; i < 3; ++i) timed("/policyc/filter", filter, nullptr), timed("/policyc/preempt", preempt, nullptr);  // compiled, kept
  std::vector<double> took, base;
  std::string answer;
  for (auto _ : state) {
    for (int i = 0; i < 20; ++i) {
      took.push_back(timed("/policyc/preempt", preempt, &answer));
      base.push_back(timed("/policyc/filter", filter, nullptr));
    }
  }
  std::sort(took.begin(), took.end());
  std::sort(base.begin(), base.end());
  state.counters["p50_ms"] = took[took.size() / 2];
  state.counters["p99_ms"] = took[took.size() * 99 / 100];
  state.counters["baseline_filter_ms"] = base[base.size() / 2];
  size_t kept = 0;
  for (size_t at = answer.find("\"Pods\""); at != std::string::npos; at = answer.find("\"Pods\"", at + 1)) ++kept;
  state.counters["nodes_kept"] = static_cast<double>(kept);
}

// A slowloris: a request's headers a byte every 500 ms, on a connection
// made again whenever the server cuts it off, until `stop`.
void Drip(int port, const std::atomic<bool>& stop) {
  const std::string headers = "POST /policyc/filter HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(4096, 'a');
  while (!stop) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      for (size_t i = 0; i < headers.size() && !stop; ++i) {
        if (::send(fd, &headers[i], 1, MSG_NOSIGNAL) != 1) break;
        for (int t = 0; t < 10 && !stop; ++t) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    ::close(fd);
  }
}

void BM_SlowClients(benchmark::State& state) {
  // --read-timeout 2: the drips are cut off and connect again within the run.
  static std::unique_ptr<World> world = std::make_unique<World>(policy::engine::Backend::kJit, false, 500, 2);
  {
    httplib::Client warm("127.0.0.1", world->server.Port());
    for (int i = 0; i < 10; ++i) warm.Post("/policyc/filter", world->body, "application/json");
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> drips;
  for (int i = 0; i < state.range(0); ++i) drips.emplace_back([&] { Drip(world->server.Port(), stop); });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // every drip connected and dripping
  std::atomic<double> healthz_max_ms{0};
  std::thread prober([&] {
    httplib::Client probe("127.0.0.1", world->server.Port());
    probe.set_keep_alive(true);
    while (!stop) {
      auto t0 = std::chrono::steady_clock::now();
      auto res = probe.Get("/healthz");
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!res || res->status != 200) ms = 1e9;
      if (ms > healthz_max_ms) healthz_max_ms = ms;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::atomic<int> failed{0};
  auto call = [&](httplib::Client& client, int, int) {
    auto res = client.Post("/policyc/filter", world->body, "application/json");
    if (!res || res->status != 200) ++failed;
  };
  policy::bench::RunClients(state, world->server.Port(), 200, 100, call, "ms");
  stop = true;
  prober.join();
  for (std::thread& t : drips) t.join();
  state.counters["failed"] = static_cast<double>(failed.load());
  state.counters["healthz_max_ms"] = healthz_max_ms.load();
}

}  // namespace

BENCHMARK(BM_SlowClients)->ArgName("slow")->Arg(0)->Arg(16)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_ServePreempt)->Name("BM_ServePreempt/jit")->ArgName("candidates")->Arg(100)->Arg(500)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_ServeRealistic, interp, policy::engine::Backend::kInterp)
    ->Name("BM_ServeRealistic/interp")->ArgName("clients")->Arg(1)->Arg(2)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_ServeRealistic, jit, policy::engine::Backend::kJit)
    ->Name("BM_ServeRealistic/jit")->ArgName("clients")->Arg(1)->Arg(2)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_ServeShapes, interp, policy::engine::Backend::kInterp)
    ->Name("BM_ServeShapes/interp")->ArgNames({"calls", "nodes"})->Args({20000, 500})->Args({100000, 100})->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_ServeShapes, jit, policy::engine::Backend::kJit)
    ->Name("BM_ServeShapes/jit")->ArgNames({"calls", "nodes"})->Args({6000, 5000})->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, interp, policy::engine::Backend::kInterp, false)
    ->Name("BM_Serve/interp")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, jit, policy::engine::Backend::kJit, false)
    ->Name("BM_Serve/jit")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, jit_changing, policy::engine::Backend::kJit, true)
    ->Name("BM_Serve/jit-changing")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, jit_prioritize, policy::engine::Backend::kJit, true, true)
    ->Name("BM_Serve/jit-changing-prioritize")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
