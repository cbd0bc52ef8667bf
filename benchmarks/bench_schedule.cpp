// Throughput of the scheduling core (`policyc schedule`'s engine::Scheduler):
// pods per second placed one after another on a generated 5,000-node
// cluster, each cycle with the whole default profile (kube-scheduler's
// scheduler_perf measures the same: 270 pods/s for plain pods and 60 with
// anti-affinity are its floors). The baseline, measured in the same run, is
// the interpreter; `x_interp` is each engine's pods/s over it.
//
//   build/benchmarks/bench_schedule

#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "benchmarks/cluster_gen.h"
#include "compiler/k8s/pod_reader.h"
#include "runtime/engine/scheduler.h"

namespace {

// A web replica: cpu and memory requests, a zone spread; with `anti`, one per node.
std::string WebPod(bool anti) {
  std::string pod = R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  containers:
  - name: web
    image: 'nginx:1.27'
    resources: {requests: {cpu: 250m, memory: 256Mi}}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}
)";
  if (anti) {
    pod += R"(  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
)";
  }
  return pod;
}

double baseline = 0;  // interp pods/s, per shape

void BM_Schedule(benchmark::State& state, policy::engine::Backend backend, bool anti) {
  const int nodes = static_cast<int>(state.range(0));
  const int pods = static_cast<int>(state.range(1));
  policy::bench::ClusterSpec spec;
  spec.nodes = nodes;
  spec.pods_per_node = 2;
  static std::map<int, std::shared_ptr<const policy::Source>> snapshots;
  auto& snapshot = snapshots[nodes];
  if (!snapshot) {
    snapshot = std::make_shared<const policy::Source>("c.json", policy::bench::GenerateCluster(spec, policy::bench::Format::kJson));
  }
  policy::Source pod_source("pod.yaml", WebPod(anti));
  policy::DiagnosticSink diags;
  std::optional<policy::k8s::Pod> pod = policy::k8s::ReadPod(pod_source, diags);
  double seconds = 0;
  size_t placed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto cluster = policy::engine::Cluster::Load(snapshot, diags);
    policy::engine::EngineOptions options;
    options.backend = backend;
    auto engine = policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, options, diags);
    if (!cluster || !engine || !pod) {
      state.SkipWithError("setup failed");
      return;
    }
    std::vector<policy::k8s::Pod> queue;
    for (int i = 0; i < pods; ++i) {
      policy::k8s::Pod p = *pod;
      p.name = fmt::format("web-{}", i);
      queue.push_back(std::move(p));
    }
    policy::engine::Scheduler scheduler(*engine, *cluster, {}, {}, {});
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    std::vector<const policy::engine::Outcome*> out = scheduler.Run(std::move(queue));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto* o : out) placed += o->node ? 1 : 0;
  }
  double per_second = seconds > 0 ? static_cast<double>(pods) * static_cast<double>(state.iterations()) / seconds : 0;
  if (backend == policy::engine::Backend::kInterp) baseline = per_second;
  state.counters["pods_per_s"] = per_second;
  state.counters["placed"] = static_cast<double>(placed) / static_cast<double>(state.iterations());
  if (baseline > 0) state.counters["x_interp"] = per_second / baseline;
}

}  // namespace

using policy::engine::Backend;
BENCHMARK_CAPTURE(BM_Schedule, interp, Backend::kInterp, false)->Args({5000, 200})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Schedule, tiered, Backend::kTiered, false)->Args({5000, 200})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Schedule, interp_anti, Backend::kInterp, true)->Args({5000, 200})->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Schedule, tiered_anti, Backend::kTiered, true)->Args({5000, 200})->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
