// `policyc check`'s whole answer for a pod that fits nowhere, after the
// snapshot is loaded, on a generated 5,000-node cluster with 10 pods a
// node and kube-scheduler's default profile (every plugin):
//
//   BM_Answer/<pod>/5000        plan, decide, explain every node (the baseline: check without suggestions)
//   BM_Suggest/<pod>/5000       the same plus what would make it fit (every suggestion verified)
//
// Pods: `gpu` asks for 16 GPUs (no node has more than 8) without tolerating
// the GPU taint; `zone` asks for a zone no node is in and more memory than
// most nodes have free. The goal is the whole answer under 100 ms.
// Counters: suggestions found; x_answer is BM_Suggest's time over BM_Answer's.

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "benchmarks/cluster_gen.h"
#include "k8s/pod_reader.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/suggest.h"
#include "runtime/sched/profile.h"

namespace {

using namespace policy;

constexpr const char* kGpuPod = R"(apiVersion: v1
kind: Pod
metadata: {name: train-big, namespace: ml}
spec:
  containers:
  - name: trainer
    resources:
      requests: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 16}
      limits: {nvidia.com/gpu: 16}
)";

constexpr const char* kZonePod = R"(apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: shop, labels: {app: db}}
spec:
  nodeSelector: {topology.kubernetes.io/zone: us-east-1x, kubernetes.io/os: linux}
  containers:
  - name: db
    resources:
      requests: {cpu: "4", memory: 200Gi}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: db}}}
)";

struct World {
  std::unique_ptr<engine::Cluster> cluster;
  std::unique_ptr<engine::Engine> engine;
  std::map<std::string, k8s::Pod> pods;
};

World& TheWorld() {
  static World* w = [] {
    auto* w = new World;
    bench::ClusterSpec spec;
    spec.nodes = 5000;
    spec.pods_per_node = 10;
    DiagnosticSink diags;
    w->cluster = engine::Cluster::Load(
        std::make_shared<const Source>("c.json", bench::GenerateCluster(spec, bench::Format::kJson)), diags);
    w->engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
    for (auto [name, text] : {std::pair{"gpu", kGpuPod}, std::pair{"zone", kZonePod}}) {
      Source source("pod.yaml", text);
      std::optional<k8s::Pod> pod = k8s::ReadPod(source, diags, k8s::FieldValidation::kStrict);
      if (pod) w->pods.emplace(name, std::move(*pod));
    }
    if (!w->cluster || !w->engine || w->pods.size() != 2) {
      std::fprintf(stderr, "bench_suggest: %s", RenderAll(diags).c_str());
      std::abort();
    }
    return w;
  }();
  return *w;
}

rt::Placement Answer(World& w, const k8s::Pod& pod) {
  std::unique_ptr<engine::PodPlan> plan = w.engine->Plan(pod, *w.cluster);
  const rt::Decision& d = w.engine->Decide(*plan, *w.cluster, {.plugin_scores = true});
  return w.engine->Explain(*plan, *w.cluster, d);
}

std::map<std::string, double>& AnswerSeconds() {
  static std::map<std::string, double> seconds;  // by pod, per answer, measured in this run
  return seconds;
}

void BM_Answer(benchmark::State& state, const char* pod) {
  World& w = TheWorld();
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    rt::Placement p = Answer(w, w.pods.at(pod));
    if (p.feasible != 0) state.SkipWithError("the pod fits somewhere");
    benchmark::DoNotOptimize(p);
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  AnswerSeconds()[pod] = took.count() / static_cast<double>(state.iterations());
}

void BM_Suggest(benchmark::State& state, const char* pod) {
  World& w = TheWorld();
  size_t found = 0;
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    rt::Placement p = Answer(w, w.pods.at(pod));
    std::vector<engine::Suggestion> s = engine::Suggest(*w.engine, *w.cluster, w.pods.at(pod), p);
    found = s.size();
    benchmark::DoNotOptimize(s);
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  state.counters["suggestions"] = static_cast<double>(found);
  if (double base = AnswerSeconds()[pod]; base > 0) {
    state.counters["x_answer"] = took.count() / static_cast<double>(state.iterations()) / base;
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_Answer, gpu, "gpu")->Name("BM_Answer/gpu/5000")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Suggest, gpu, "gpu")->Name("BM_Suggest/gpu/5000")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Answer, zone, "zone")->Name("BM_Answer/zone/5000")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Suggest, zone, "zone")->Name("BM_Suggest/zone/5000")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
