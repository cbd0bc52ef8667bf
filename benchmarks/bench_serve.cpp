// `policyc serve` under load on loopback, as kube-scheduler calls it with
// `nodeCacheCapable: true`: a generated cluster of 5,000 nodes and 50,000
// bound pods, and clients that each send filter then prioritize for a web
// pod with all 5,000 node names, over keep-alive connections (cpp-httplib's
// client, TCP_NODELAY as Go's), as fast as the server answers. The
// template's first calls (kernel compilation) are made before measuring.
//
//   BM_Serve/<engine>/clients:N   calls_per_s over all clients; p50_ms, p99_ms per call (filter and prioritize)
//   BM_Serve/jit-changing/...     the same with a pod bound or unbound (a watch event, not timed) before
//                                 every call, as in a busy cluster: nothing kept for the table's last
//                                 state (the rejected nodes' words) is reused
//
//   build/benchmarks/bench_serve

#include <benchmark/benchmark.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/cluster_gen.h"
#include "runtime/host/host.h"
#include "server/server.h"

namespace {

struct World {
  policy::host::ClusterState state;
  std::unique_ptr<policy::host::Decisions> decisions;
  std::unique_ptr<policy::server::Server> server;
  std::thread serving;
  std::string body;  // ExtenderArgs: the pod and every node name
  std::string first_node;

  explicit World(policy::engine::Backend backend) {
    policy::bench::ClusterSpec spec;
    spec.nodes = 5000;
    spec.pods_per_node = 10;
    auto snapshot = std::make_shared<const policy::Source>("c.json", policy::bench::GenerateCluster(spec, policy::bench::Format::kJson));
    policy::DiagnosticSink diags;
    if (!state.Load(snapshot, diags)) std::abort();
    policy::engine::EngineOptions options;
    options.backend = backend;
    auto engine = policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, options, diags);
    decisions = std::make_unique<policy::host::Decisions>(std::move(engine));
    policy::server::ServerOptions server_options;
    server_options.port = 0;
    server = std::make_unique<policy::server::Server>(*decisions, state, server_options);
    std::string error;
    if (!server->Bind(&error)) std::abort();
    serving = std::thread([this] { server->Listen(); });
    std::string names;
    {
      policy::host::ClusterState::View view = state.Read();
      const policy::rt::NodeTable& t = view.cluster().Table();
      for (policy::rt::RowId r : t.LiveRows()) names += fmt::format("{}\"{}\"", names.empty() ? "" : ",", t.NodeName(r));
      first_node = std::string(t.NodeName(t.LiveRows().front()));
    }
    body = R"({"Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}},
      "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}},
      "NodeNames": [)" + names + "], \"Nodes\": null}";
  }
  ~World() {
    server->Stop();
    serving.join();
  }
};

void BM_Serve(benchmark::State& state, policy::engine::Backend backend, bool changing) {
  static std::unique_ptr<World> world;
  static policy::engine::Backend made = policy::engine::Backend::kAuto;
  if (!world || made != backend) {
    world.reset();
    world = std::make_unique<World>(backend);
    made = backend;
  }
  const int clients = static_cast<int>(state.range(0));
  constexpr int kCalls = 500;  // per client and iteration: filter and prioritize alternately
  {  // the template's first calls compile its kernels: measured apart (BM_TemplateKernels), not here
    httplib::Client warm("127.0.0.1", world->server->Port());
    for (int i = 0; i < 10; ++i) warm.Post(i % 2 == 0 ? "/policyc/filter" : "/policyc/prioritize", world->body, "application/json");
  }
  std::vector<double> latencies;
  double seconds = 0;
  for (auto _ : state) {
    std::vector<std::vector<double>> per(static_cast<size_t>(clients));
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", world->server->Port());
        client.set_keep_alive(true);
        client.set_tcp_nodelay(true);  // as Go's net/http, kube-scheduler's client
        for (int i = 0; i < kCalls; ++i) {
          if (changing) {  // a pod of this client's comes and goes on the first node
            std::string event = fmt::format(
                R"({{"type": "{}", "object": {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "churn-{}", "namespace": "shop"}},
                "spec": {{"nodeName": "{}", "containers": [{{"name": "c", "resources": {{"requests": {{"cpu": "100m"}}}}}}]}},
                "status": {{"phase": "Running"}}}}}})",
                i % 2 == 0 ? "ADDED" : "DELETED", c, world->first_node);
            policy::DiagnosticSink diags;
            if (!world->state.Apply(policy::Source("event", event), diags)) std::abort();
          }
          auto t0 = std::chrono::steady_clock::now();
          auto res = client.Post(i % 2 == 0 ? "/policyc/filter" : "/policyc/prioritize", world->body, "application/json");
          if (!res || res->status != 200) std::abort();
          per[static_cast<size_t>(c)].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
      });
    }
    for (std::thread& t : threads) t.join();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto& p : per) latencies.insert(latencies.end(), p.begin(), p.end());
  }
  std::sort(latencies.begin(), latencies.end());
  state.counters["calls_per_s"] = static_cast<double>(latencies.size()) / seconds;
  state.counters["p50_ms"] = latencies[latencies.size() / 2];
  state.counters["p99_ms"] = latencies[latencies.size() * 99 / 100];
}

}  // namespace

BENCHMARK_CAPTURE(BM_Serve, interp, policy::engine::Backend::kInterp, false)
    ->Name("BM_Serve/interp")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, jit, policy::engine::Backend::kJit, false)
    ->Name("BM_Serve/jit")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, jit_changing, policy::engine::Backend::kJit, true)
    ->Name("BM_Serve/jit-changing")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
