// The C ABI (include/policyc.h) as a host calls it, on a generated 5,000-node
// cluster with 10 bound pods a node: one policyc_decide of a web pod (its
// template's plan kept after the first), on one thread and on two at once,
// per engine; and the cost of a watch event.
//
//   BM_HostDecide/<engine>/threads:N   a view, a decision, its result freed
//   BM_HostEvent/pod                   a pod bound and unbound (two events)
//
// Counters: decisions_per_s over all threads.
//
//   build/benchmarks/bench_host

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "benchmarks/cluster_gen.h"
#include "policyc.h"

namespace {

const char kPod[] = R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}},
  "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}})";

policyc_cluster* SharedCluster() {
  static policyc_cluster* cluster = [] {
    policy::bench::ClusterSpec spec;
    spec.nodes = 5000;
    spec.pods_per_node = 10;
    std::string snapshot = policy::bench::GenerateCluster(spec, policy::bench::Format::kJson);
    policyc_cluster* c = nullptr;
    policyc_cluster_new(&c);
    if (policyc_cluster_load(c, snapshot.data(), snapshot.size()) != POLICYC_OK) std::abort();
    return c;
  }();
  return cluster;
}

// One engine per configuration, made by whichever thread asks first.
policyc_engine* SharedEngine(const std::string& config) {
  static std::mutex mutex;
  static std::map<std::string, policyc_engine*> engines;
  std::lock_guard lock(mutex);
  policyc_engine*& engine = engines[config];
  if (engine == nullptr && policyc_engine_new(POLICYC_ABI_VERSION, config.data(), config.size(), &engine) != POLICYC_OK) {
    std::abort();
  }
  return engine;
}

void BM_HostDecide(benchmark::State& state, std::string config) {
  policyc_cluster* cluster = SharedCluster();
  policyc_engine* shared = SharedEngine(config);
  for (auto _ : state) {
    policyc_view* view = nullptr;
    policyc_cluster_view(cluster, &view);
    policyc_result* r = nullptr;
    if (policyc_decide(shared, view, kPod, sizeof(kPod) - 1, nullptr, &r) != POLICYC_OK) {
      state.SkipWithError(policyc_last_error());
      break;
    }
    benchmark::DoNotOptimize(policyc_result_selected(r));
    policyc_result_free(r);
    policyc_view_free(view);
  }
  state.counters["decisions_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_HostEvent(benchmark::State& state) {
  policyc_cluster* cluster = SharedCluster();
  std::string bind = R"({"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "ev", "namespace": "shop"},
    "spec": {"nodeName": "ip-10-0-0-42.ec2.internal", "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
    "status": {"phase": "Running"}}})";
  std::string unbind = bind;  // the API sends the whole object with DELETED too
  unbind.replace(unbind.find("ADDED"), 5, "DELETED");
  for (auto _ : state) {
    if (policyc_cluster_apply(cluster, bind.data(), bind.size()) != POLICYC_OK ||
        policyc_cluster_apply(cluster, unbind.data(), unbind.size()) != POLICYC_OK) {
      state.SkipWithError(policyc_last_error());
      break;
    }
  }
}

}  // namespace

// Warm the plan first (the first decision plans the template), then measure.
BENCHMARK_CAPTURE(BM_HostDecide, interp, std::string(R"({"engine": "interp"})"))
    ->Name("BM_HostDecide/interp")->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinWarmUpTime(0.5);
BENCHMARK_CAPTURE(BM_HostDecide, tiered, std::string(R"({"engine": "tiered", "jitOpt": 0})"))
    ->Name("BM_HostDecide/tiered-O0")->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond)->MinWarmUpTime(1.0);
BENCHMARK(BM_HostEvent)->Name("BM_HostEvent/pod")->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
