// Filter + score + select for one realistic pod over generated clusters, with
// the reference interpreter: the stdlib's node-level plugins plus GPU-memory
// fit, on the IR as lowered (the baseline, in the same run) and as the pass
// pipeline specializes it for the pod (and binds it to the table).
//
//   BM_FilterScore/interp-unoptimized/N   lowered IR
//   BM_FilterScore/interp-unbound/N       specialized IR, not bound to the table
//   BM_FilterScore/interp/N               specialized and bound IR (what `policyc check` runs)
//
// Counters: ns/node; x_unoptimized on the specialized run is its time over
// the baseline's measured in the same process.

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "benchmarks/cluster_gen.h"
#include "compiler/codegen/jit.h"
#include "compiler/k8s/pod_reader.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/columnar/table_dictionary.h"
#include "runtime/sched/placement.h"
#include "stdlib/embedded.h"

namespace {

// A training pod: required and preferred node affinity, two tolerations,
// cpu, memory and GPU requests.
constexpr const char* kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: ml}
spec:
  containers:
  - name: trainer
    resources:
      requests: {cpu: "8", memory: 32Gi, nvidia.com/gpu: 1}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  - {key: spot, operator: Equal, value: "true", effect: PreferNoSchedule}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: nvidia.com/gpu.present, operator: In, values: ["true"]}
          - {key: topology.kubernetes.io/region, operator: In, values: [us-east-1, us-west-2]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        preference:
          matchExpressions:
          - {key: nvidia.com/gpu.memory, operator: Gt, values: ["40000"]}
)";

constexpr const char* kGpuMemoryFit = R"(policy GPUMemoryFit "GPU memory fit."
  let need  = pod.requests["nvidia.com/gpu-memory"]
  let total = node.labels["nvidia.com/gpu-memory.total"].quantity() ?? node.allocatable["nvidia.com/gpu-memory"]
  let free  = total - node.requested["nvidia.com/gpu-memory"]
  filter need == 0 or need <= free reason "GPU memory insufficient"
  score if total == 0 then 100 else (free - need) * 100 / total
)";

struct Setup {
  std::unique_ptr<policy::Source> cluster_source;
  std::unique_ptr<policy::rt::NodeTable> table;
  std::unique_ptr<policy::Source> pod_source;
  policy::k8s::Pod pod;
  policy::sema::TypeTable types;
  std::unique_ptr<policy::sema::Schema> schema;
  std::vector<std::unique_ptr<policy::Source>> sources;
  std::vector<std::unique_ptr<policy::passes::CompiledFile>> compiled;
  std::vector<policy::rt::Plugin> plugins;
  std::unique_ptr<policy::codegen::Jit> jit;
  std::deque<policy::codegen::CompiledFunction> kernels;
};

/// What the pass pipeline does to the plugins: nothing, specialize to the
/// pod, or specialize and bind to the table (what `policyc check` runs);
/// kJit: bound, and compiled to native kernels.
enum class Mode { kUnoptimized, kSpecialized, kBound, kJit };

std::unique_ptr<Setup> Build(int nodes, Mode mode) {
  auto s = std::make_unique<Setup>();
  policy::bench::ClusterSpec spec;
  spec.nodes = nodes;
  spec.pods_per_node = 2;
  s->cluster_source = std::make_unique<policy::Source>(
      "c.json", policy::bench::GenerateCluster(spec, policy::bench::Format::kJson));
  policy::DiagnosticSink diags;
  s->table = policy::rt::LoadCluster(*s->cluster_source, diags);
  s->pod_source = std::make_unique<policy::Source>("pod.yaml", kPod);
  s->pod = *policy::k8s::ReadPod(*s->pod_source, diags);
  s->schema = std::make_unique<policy::sema::Schema>(s->types);
  const std::pair<const char*, int64_t> kPlugins[] = {
      {"stdlib/node_unschedulable.policy", 0}, {"stdlib/node_name.policy", 0},
      {"stdlib/taint_toleration.policy", 3},   {"stdlib/node_affinity.policy", 2},
      {"stdlib/node_resources_fit.policy", 1}, {"stdlib/least_allocated.policy", 1},
      {"stdlib/balanced_allocation.policy", 1}};
  auto add = [&](std::string name, std::string text, int64_t weight) {
    s->sources.push_back(std::make_unique<policy::Source>(std::move(name), std::move(text)));
    auto file = policy::passes::CompileFile(*s->sources.back(), s->types, *s->schema, diags);
    if (mode != Mode::kUnoptimized) {
      policy::rt::TableDictionary dictionary(*s->table);
      policy::passes::PassOptions options;
      options.pod = &s->pod;
      options.types = &s->types;
      if (mode == Mode::kBound || mode == Mode::kJit) options.table = &dictionary;
      policy::passes::Optimize(file->program, options, nullptr);
    }
    s->plugins.push_back({file->program.functions[0].name, &file->program, 0, weight, true, true});
    if (mode == Mode::kJit) {
      if (!s->jit) s->jit = std::make_unique<policy::codegen::Jit>();
      std::string why;
      auto compiled = s->jit->Compile(file->program, 0, &why);
      if (!compiled) {
        std::fprintf(stderr, "bench_check: %s does not compile: %s\n", file->program.functions[0].name.c_str(), why.c_str());
        std::abort();
      }
      s->kernels.push_back(std::move(*compiled));
      s->plugins.back().kernels = &s->kernels.back();
    }
    s->compiled.push_back(std::move(file));
  };
  for (auto [path, weight] : kPlugins) {
    for (const auto& e : policy::stdlib::Sources()) {
      if (e.path == path) add(std::string(e.path), std::string(e.text), weight);
    }
  }
  add("gpu.policy", kGpuMemoryFit, 1);
  return s;
}

double Seconds(const Setup& s) {
  auto start = std::chrono::steady_clock::now();
  policy::rt::PlaceOptions options;
  options.explain = false;  // the scheduling decision; words are for the nodes a person asks about
  policy::rt::Placement p = policy::rt::Place(s.plugins, s.pod, *s.table, options);
  benchmark::DoNotOptimize(p.selected);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Run(benchmark::State& state, Mode mode) {
  int nodes = static_cast<int>(state.range(0));
  static std::map<std::pair<int, Mode>, std::unique_ptr<Setup>> cache;
  auto& setup = cache[{nodes, mode}];
  if (!setup) setup = Build(nodes, mode);
  auto& baseline = cache[{nodes, Mode::kUnoptimized}];
  if (!baseline) baseline = Build(nodes, Mode::kUnoptimized);
  double base = 1e30;
  for (int i = 0; i < 3; ++i) base = std::min(base, Seconds(*baseline));
  double total = 0;
  for (auto _ : state) total += Seconds(*setup);
  double per = total / static_cast<double>(state.iterations());
  state.counters["ns/node"] = per * 1e9 / nodes;
  state.counters["x_unoptimized"] = per / base;
}

void BM_FilterScore_Interp(benchmark::State& state) { Run(state, Mode::kBound); }
void BM_FilterScore_Jit(benchmark::State& state) { Run(state, Mode::kJit); }
void BM_FilterScore_InterpUnbound(benchmark::State& state) { Run(state, Mode::kSpecialized); }
void BM_FilterScore_InterpUnoptimized(benchmark::State& state) { Run(state, Mode::kUnoptimized); }

}  // namespace

BENCHMARK(BM_FilterScore_InterpUnoptimized)->Name("BM_FilterScore/interp-unoptimized")->Arg(5000)->Arg(50000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_FilterScore_InterpUnbound)->Name("BM_FilterScore/interp-unbound")->Arg(5000)->Arg(50000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_FilterScore_Interp)->Name("BM_FilterScore/interp")->Arg(5000)->Arg(50000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_FilterScore_Jit)->Name("BM_FilterScore/jit")->Arg(5000)->Arg(50000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

BENCHMARK_MAIN();
