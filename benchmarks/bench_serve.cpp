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

#include "benchmarks/extender_load.h"
#include "runtime/host/host.h"
#include "server/server.h"

namespace {

struct World : policy::bench::ExtenderWorld {
  policy::bench::LoopbackServer server{*this};
  explicit World(policy::engine::Backend backend) : ExtenderWorld(backend) {}
};

void BM_Serve(benchmark::State& state, policy::engine::Backend backend, bool changing) {
  static std::unique_ptr<World> world;
  static policy::engine::Backend made = policy::engine::Backend::kAuto;
  if (!world || made != backend) {
    world.reset();
    world = std::make_unique<World>(backend);
    made = backend;
  }
  auto verb = [](int i) { return i % 2 == 0 ? "/policyc/filter" : "/policyc/prioritize"; };  // alternately
  {  // the template's first calls compile its kernels: measured apart (BM_TemplateKernels), not here
    httplib::Client warm("127.0.0.1", world->server.Port());
    for (int i = 0; i < 10; ++i) warm.Post(verb(i), world->body, "application/json");
  }
  auto call = [&](httplib::Client& client, int, int i) {
    auto res = client.Post(verb(i), world->body, "application/json");
    if (!res || res->status != 200) std::abort();
  };
  auto churn = [&](int c, int i) {  // a pod of this client's comes and goes on the first node
    std::string event = fmt::format(
        R"({{"type": "{}", "object": {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "churn-{}", "namespace": "shop"}},
        "spec": {{"nodeName": "{}", "containers": [{{"name": "c", "resources": {{"requests": {{"cpu": "100m"}}}}}}]}},
        "status": {{"phase": "Running"}}}}}})",
        i % 2 == 0 ? "ADDED" : "DELETED", c, world->first_node);
    policy::DiagnosticSink diags;
    if (!world->state.Apply(policy::Source("event", event), diags)) std::abort();
  };
  policy::bench::RunClients(state, world->server.Port(), static_cast<int>(state.range(0)), 500, call, "ms",
                            changing ? std::function<void(int, int)>(churn) : nullptr);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Serve, interp, policy::engine::Backend::kInterp, false)
    ->Name("BM_Serve/interp")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, jit, policy::engine::Backend::kJit, false)
    ->Name("BM_Serve/jit")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Serve, jit_changing, policy::engine::Backend::kJit, true)
    ->Name("BM_Serve/jit-changing")->ArgName("clients")->Arg(1)->Arg(4)->Iterations(2)->UseRealTime()->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
