// Filter + score + select for one realistic pod over generated clusters
// (the stdlib's node-level plugins plus GPU-memory fit), each engine against
// the baselines measured in the same run.
//
//   BM_FilterScore/interp-unoptimized/N   the interpreter on the IR as lowered (the baseline)
//   BM_FilterScore/interp-unbound/N       on the IR specialized to the pod
//   BM_FilterScore/interp/N               specialized and bound to the table (`check --engine interp`)
//   BM_FilterScore/jit/N                  the same as native kernels
// (each through the engine: engine::Engine::Decide on a PodPlan)
//   BM_FilterScore/handwritten/N          "the limit": a C++ loop over the same columns
//   BM_Compile/O0, /O2, /cache-hit        a template's kernels: compile latency p50/p99, a cache hit
//   BM_Tiering/300-pods/5000              a stream of pods while the kernels compile in the background
//   BM_CheckProcess/<engine>/5000         the whole `policyc check` process
//
// Counters: ns/node; x_unoptimized is the time over the baseline's; x_jit on
// the hand-written loop is the JIT's time over its own.

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <memory>
#include <span>
#include <string>

#include "benchmarks/cluster_gen.h"
#include "benchmarks/handwritten_scores.h"
#include "compiler/codegen/jit.h"
#include "k8s/pod_reader.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/normalize.h"

namespace {

// A training pod: required and preferred node affinity, two tolerations,
// cpu, memory, GPU and GPU-memory requests.
constexpr const char* kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: ml}
spec:
  containers:
  - name: trainer
    resources:
      requests: {cpu: "8", memory: 32Gi, nvidia.com/gpu: 1, nvidia.com/gpu-memory: 40Gi}
      limits: {nvidia.com/gpu: 1, nvidia.com/gpu-memory: 40Gi}
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

/// What the pass pipeline does to the plugins: nothing, specialize to the
/// pod, or specialize and bind to the table (what `policyc check` runs);
/// kJit: bound, and compiled to native kernels.
enum class Mode { kUnoptimized, kSpecialized, kBound, kJit };

/// The node-level plugins the hand-written loop mirrors, from the default
/// profile (kube's weights): the same set in every measurement.
policy::rt::Profile NodeLevelProfile() {
  policy::rt::Profile profile = policy::rt::DefaultProfile();
  const std::set<std::string> kept = {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                                      "NodeResourcesFit", "NodeResourcesBalancedAllocation"};
  for (policy::rt::PluginSetting& p : profile.plugins) {
    if (!kept.contains(p.name)) p.filter = p.score = false;
  }
  return profile;
}

struct Setup {
  std::unique_ptr<policy::engine::Cluster> cluster;
  std::unique_ptr<policy::engine::Engine> engine;
  std::unique_ptr<policy::engine::PodPlan> plan;
  const policy::rt::NodeTable& table() const { return cluster->Table(); }
  const std::vector<policy::rt::Plugin>& plugins() const { return plan->Plugins(); }
};

/// The engine for `mode` (`backend` overrides its back end), its options otherwise as `policyc check`'s.
std::unique_ptr<policy::engine::Engine> MakeEngine(Mode mode, policy::engine::Backend backend) {
  policy::engine::EngineOptions options;
  options.backend = mode == Mode::kJit ? policy::engine::Backend::kJit : backend;
  if (mode == Mode::kUnoptimized) options.disabled_passes = {"all"};
  if (mode == Mode::kSpecialized) options.disabled_passes = {"bind-table"};
  policy::DiagnosticSink diags;
  auto policy = std::make_shared<const policy::Source>("gpu.policy", kGpuMemoryFit);
  auto engine = policy::engine::Engine::Create(NodeLevelProfile(), {policy}, options, diags);
  if (!engine) {
    std::fprintf(stderr, "bench_check: %s", policy::RenderAll(diags).c_str());
    std::abort();
  }
  return engine;
}

std::unique_ptr<Setup> Build(int nodes, Mode mode, policy::engine::Backend backend = policy::engine::Backend::kInterp) {
  auto s = std::make_unique<Setup>();
  policy::bench::ClusterSpec spec;
  spec.nodes = nodes;
  spec.pods_per_node = 2;
  policy::DiagnosticSink diags;
  s->cluster = policy::engine::Cluster::Load(
      std::make_shared<const policy::Source>("c.json", policy::bench::GenerateCluster(spec, policy::bench::Format::kJson)),
      diags);
  policy::Source pod_source("pod.yaml", kPod);
  std::optional<policy::k8s::Pod> pod = policy::k8s::ReadPod(pod_source, diags, policy::k8s::FieldValidation::kStrict);
  if (!s->cluster || !pod) {
    std::fprintf(stderr, "bench_check: %s", policy::RenderAll(diags).c_str());
    std::abort();
  }
  s->engine = MakeEngine(mode, backend);
  s->plan = s->engine->Plan(*pod, *s->cluster);
  if (mode == Mode::kJit && s->plan->NativePlugins() != s->plan->Plugins().size()) {
    std::fprintf(stderr, "bench_check: %zu of %zu plugins compiled\n", s->plan->NativePlugins(), s->plan->Plugins().size());
    std::abort();
  }
  return s;
}

// "The limit": the same decision for the training pod as a hand-written C++
// loop over the same columns, with the pod's side worked out by hand (what
// partial evaluation does): dictionary ids of the label values it needs, the
// taint masks it does not tolerate, its requests as constants.
struct Handwritten {
  const policy::rt::NodeTable& t;
  const policy::rt::LabelColumn* present;
  const policy::rt::LabelColumn* region;
  const policy::rt::LabelColumn* gpu_memory;
  const policy::rt::LabelColumn* gpu_memory_total;
  const policy::rt::ResourceColumn* gpu_memory_resource;
  uint32_t present_true = UINT32_MAX, east = UINT32_MAX, west = UINT32_MAX;
  std::vector<uint64_t> untolerated, prefer;  // taint masks by word
  const policy::rt::ResourceColumn *cpu, *memory, *gpu, *pods;

  explicit Handwritten(const policy::rt::NodeTable& table) : t(table) {
    present = t.Label("nvidia.com/gpu.present");
    region = t.Label("topology.kubernetes.io/region");
    gpu_memory = t.Label("nvidia.com/gpu.memory");
    gpu_memory_total = t.Label("nvidia.com/gpu-memory.total");
    gpu_memory_resource = t.Resource("nvidia.com/gpu-memory");
    auto id = [&](const policy::rt::LabelColumn* c, std::string_view v) {
      std::optional<uint32_t> s = t.pool().Lookup(v);
      auto it = s && c ? c->domain_of.find(*s) : decltype(c->domain_of.end()){};
      return s && c && it != c->domain_of.end() ? it->second : UINT32_MAX;
    };
    present_true = id(present, "true");
    east = id(region, "us-east-1");
    west = id(region, "us-west-2");
    untolerated.assign(t.TaintWords(), 0);
    prefer.assign(t.TaintWords(), 0);
    for (uint32_t i = 0; i < t.TaintDictionary().size(); ++i) {
      const policy::rt::TaintEntry& e = t.TaintDictionary()[i];
      std::string_view key = t.pool().Get(e.key), value = t.pool().Get(e.value);
      using policy::k8s::TaintEffect;
      if (e.effect != TaintEffect::kPreferNoSchedule && !(key == "nvidia.com/gpu" && e.effect == TaintEffect::kNoSchedule)) {
        untolerated[i / 64] |= uint64_t{1} << (i % 64);
      }
      if (e.effect == TaintEffect::kPreferNoSchedule && !(key == "spot" && value == "true")) {
        prefer[i / 64] |= uint64_t{1} << (i % 64);
      }
    }
    cpu = t.Resource("cpu");
    memory = t.Resource("memory");
    gpu = t.Resource("nvidia.com/gpu");
    pods = t.Resource("pods");
  }

  // GPU-memory fit's total (milli-units): the label's quantity, else allocatable; and what is free of it.
  int64_t GpuMemoryTotal(policy::rt::RowId r) const {
    uint32_t g = gpu_memory_total->domain[r];
    return gpu_memory_total->is_quantity[g] ? gpu_memory_total->quantity_milli[g] : gpu_memory_resource->allocatable_milli[r];
  }
  int64_t GpuMemoryFree(policy::rt::RowId r) const { return GpuMemoryTotal(r) - gpu_memory_resource->requested_milli[r]; }

  // Buffers kept between calls, as the engine's Decider keeps its own.
  policy::rt::Decision d;
  std::vector<int64_t> taint, affinity, least, balanced;

  const policy::rt::Decision& Decide() {
    constexpr int64_t kCpu = 8000, kMemory = 32LL << 30, kGpu = 1, kGpuMemory = 40LL << 30;
    std::span<const policy::rt::RowId> live = t.LiveRows();
    const uint8_t* unschedulable = t.Unschedulable().data();
    const uint32_t* pod_count = t.PodCount().data();
    size_t words = t.TaintWords();
    d.feasible.resize(live.size());
    size_t m = 0;
    for (policy::rt::RowId r : live) {  // the rows that pass, written branch-free
      const uint64_t* bits = t.TaintBits(r).data();
      bool tainted = false;
      for (size_t w = 0; w < words; ++w) tainted |= (bits[w] & untolerated[w]) != 0;
      bool ok = !unschedulable[r] && !tainted && present->domain[r] == present_true &&
                (region->domain[r] == east || region->domain[r] == west) &&
                pod_count[r] + 1 <= pods->allocatable[r] && cpu->allocatable[r] - cpu->requested[r] >= kCpu &&
                memory->allocatable[r] - memory->requested[r] >= kMemory && gpu->allocatable[r] - gpu->requested[r] >= kGpu &&
                gpu_memory_resource->allocatable[r] - gpu_memory_resource->requested[r] >= kGpuMemory &&
                GpuMemoryFree(r) >= kGpuMemory * 1000;  // GPU-memory fit
      d.feasible[m] = r;
      m += ok ? 1 : 0;
    }
    d.feasible.resize(m);
    d.score.assign(m, 0);
    d.selected.reset();
    if (m == 0) return d;
    taint.resize(m);
    affinity.resize(m);
    least.resize(m);
    balanced.resize(m);
    for (size_t j = 0; j < m; ++j) {
      policy::rt::RowId r = d.feasible[j];
      const uint64_t* bits = t.TaintBits(r).data();
      int64_t count = 0;
      for (size_t w = 0; w < words; ++w) count += __builtin_popcountll(bits[w] & prefer[w]);
      taint[j] = count;
      uint32_t g = gpu_memory ? gpu_memory->domain[r] : 0;
      affinity[j] = g != 0 && gpu_memory->is_int[g] && gpu_memory->int_value[g] > 40000 ? 50 : 0;
      // LeastAllocated over cpu (milli) and memory (bytes, as milli-units), non-zero requested.
      least[j] = policy::bench::LeastAllocated(t.NonZeroMilliCpu()[r] + kCpu, cpu->allocatable[r],
                                               t.NonZeroMemoryMilli()[r] + kMemory * 1000, memory->allocatable_milli[r]);
      // BalancedAllocation: |cpu share - memory share| in parts per million.
      balanced[j] = policy::bench::BalancedAllocation(cpu->requested[r] + kCpu, cpu->allocatable[r],
                                                      memory->requested_milli[r] + kMemory * 1000, memory->allocatable_milli[r]);
    }
    policy::rt::Normalize(policy::lang::Normalize::kReverse, taint);
    policy::rt::Normalize(policy::lang::Normalize::kMax, affinity);
    size_t best = 0;
    for (size_t j = 0; j < m; ++j) {
      // GPU-memory fit: what stays free after the pod, of the total.
      policy::rt::RowId r = d.feasible[j];
      int64_t total = GpuMemoryTotal(r);
      int64_t gpu_fit = total == 0 ? 100 : (GpuMemoryFree(r) - kGpuMemory * 1000) * 100 / total;
      d.score[j] = 3 * taint[j] + 2 * affinity[j] + least[j] + balanced[j] + gpu_fit;
      best = d.score[j] > d.score[best] ? j : best;
    }
    d.selected = best;
    return d;
  }
};

double Seconds(Setup& s) {
  auto start = std::chrono::steady_clock::now();
  const policy::rt::Decision& d = s.engine->Decide(*s.plan, *s.cluster);
  benchmark::DoNotOptimize(d.selected);
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

void BM_FilterScore_Handwritten(benchmark::State& state) {
  int nodes = static_cast<int>(state.range(0));
  static std::map<int, std::unique_ptr<Setup>> cache;
  auto& setup = cache[nodes];
  if (!setup) setup = Build(nodes, Mode::kJit);
  Handwritten hand(setup->table());
  if (hand.gpu_memory_total == nullptr || hand.gpu_memory_resource == nullptr) {
    state.SkipWithError("the generated cluster has no GPU memory");
    return;
  }
  // The same answer as the compiled policies, or the comparison means nothing.
  policy::rt::Decision want = setup->engine->Decide(*setup->plan, *setup->cluster);
  policy::rt::Decision got = hand.Decide();
  if (got.feasible.empty()) {
    state.SkipWithError("no feasible node: the comparison would measure nothing");
    return;
  }
  if (got.feasible != want.feasible || got.score != want.score || got.selected != want.selected) {
    state.SkipWithError("the hand-written loop and the policies disagree");
    return;
  }
  double jit = 0;
  // The JIT's mean over 2,000 decisions after 50 that warm the caches and
  // teach the Decider its filter order, as the loop below is timed.
  for (int i = 0; i < 50; ++i) Seconds(*setup);
  for (int i = 0; i < 2000; ++i) jit += Seconds(*setup);
  jit /= 2000;
  double total = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    const policy::rt::Decision& d = hand.Decide();
    benchmark::DoNotOptimize(d.selected);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  double per = total / static_cast<double>(state.iterations());
  state.counters["ns/node"] = per * 1e9 / nodes;
  state.counters["x_jit"] = jit / per;  // how many times the JIT's time this is faster
  state.counters["feasible"] = static_cast<double>(got.feasible.size());
}

// Compile latency of one pod template's kernels (the default node-level
// plugins plus GPU-memory fit, specialized and bound) at an optimization
// level, with the cache off; p50 and p99 over the iterations.
void BM_Compile(benchmark::State& state) {
  static std::unique_ptr<Setup> setup = Build(5000, Mode::kBound);
  policy::codegen::Jit jit(policy::codegen::JitOptions{static_cast<int>(state.range(0)), false});
  bool one_module = state.range(1) != 0;
  std::vector<policy::codegen::Jit::FunctionRef> functions;
  for (const policy::rt::Plugin& plugin : setup->plugins()) functions.push_back({plugin.program, plugin.function});
  std::vector<double> times;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    if (one_module) {
      benchmark::DoNotOptimize(jit.CompileAll(functions));
    } else {
      for (const policy::codegen::Jit::FunctionRef& f : functions) benchmark::DoNotOptimize(jit.Compile(*f.program, f.function));
    }
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  state.counters["p50_ms"] = times[times.size() / 2] * 1e3;
  state.counters["p99_ms"] = times[std::min(times.size() - 1, times.size() * 99 / 100)] * 1e3;
  state.counters["plugins"] = static_cast<double>(setup->plugins().size());
}

// The kernel cache's hit path: another pod of the same template.
void BM_CompileCacheHit(benchmark::State& state) {
  static std::unique_ptr<Setup> setup = Build(5000, Mode::kBound);
  policy::codegen::Jit jit;
  const policy::rt::Plugin& plugin = setup->plugins()[3];  // NodeAffinity
  if (!jit.Compile(*plugin.program, plugin.function)) return state.SkipWithError("NodeAffinity does not compile");
  for (auto _ : state) benchmark::DoNotOptimize(jit.Compile(*plugin.program, plugin.function));
}

// Tiering over a stream of 300 pods of one template on 5,000 nodes: each
// pod takes the kernels that are ready (compiling on a background thread)
// and interprets the rest. Counters: the first pod's latency (no waiting for
// LLVM), the last pod's (all native), the stream's mean per pod, and how many
// pods had a plugin still interpreted.
void BM_Tiering(benchmark::State& state) {
  static std::unique_ptr<Setup> setup = Build(5000, Mode::kBound);
  constexpr int kPods = 300;
  double first = 0, last = 0, total = 0;
  int interpreted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<policy::engine::Engine> engine = MakeEngine(Mode::kBound, policy::engine::Backend::kTiered);
    std::unique_ptr<policy::engine::PodPlan> plan = engine->Plan(setup->plan->Pod(), *setup->cluster);
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    interpreted = 0;
    for (int pod = 0; pod < kPods; ++pod) {
      auto pod_start = std::chrono::steady_clock::now();
      const policy::rt::Decision& d = engine->Decide(*plan, *setup->cluster);
      benchmark::DoNotOptimize(d.selected);
      interpreted += plan->NativePlugins() != plan->Plugins().size();
      double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - pod_start).count();
      if (pod == 0) first = took;
      last = took;
    }
    total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["first_pod_ms"] = first * 1e3;
  state.counters["last_pod_ms"] = last * 1e3;
  state.counters["mean_pod_ms"] = total / kPods * 1e3;
  state.counters["pods_interpreted"] = interpreted;
}

// The whole `policyc check` process on a generated snapshot: load (JSON),
// compile the default profile plus GPU-memory fit, specialize, filter,
// score, explain (JSON report); the engine is the benchmark's argument.
void BM_CheckProcess(benchmark::State& state, const char* engine) {
  int nodes = static_cast<int>(state.range(0));
  struct TempDir {  // the generated files, removed at exit
    std::string path = (std::filesystem::temp_directory_path() / fmt::format("policyc-bench-{}", getpid())).string();
    ~TempDir() { std::filesystem::remove_all(path); }
  };
  static TempDir temp;
  const std::string& dir = temp.path;
  std::string cluster = dir + fmt::format("/cluster-{}.json", nodes), pod = dir + "/pod.yaml";
  static std::map<int, bool> written;
  if (!written[nodes]) {
    std::filesystem::create_directories(dir);
    policy::bench::ClusterSpec spec;
    spec.nodes = nodes;
    spec.pods_per_node = 2;
    std::ofstream(cluster) << policy::bench::GenerateCluster(spec, policy::bench::Format::kJson);
    std::ofstream(pod) << kPod;
    written[nodes] = true;
  }
  std::string command = fmt::format("{} check --cluster {} --pod {} --policy {}/policies/gpu-memory-fit.policy --engine {} "
                                    "--output json > /dev/null",
                                    POLICYC_BINARY, cluster, pod, POLICYC_SOURCE_DIR, engine);
  for (auto _ : state) {
    int status = std::system(command.c_str());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {  // 0: schedulable
      state.SkipWithError(fmt::format("`{}` exited with {}", command, status).c_str());
      break;
    }
  }
  state.counters["nodes"] = nodes;
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
BENCHMARK(BM_Compile)->Name("BM_Compile/O0")->Args({0, 1})->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK(BM_Compile)->Name("BM_Compile/O0-module-per-plugin")->Args({0, 0})->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK(BM_Compile)->Name("BM_Compile/O1")->Args({1, 1})->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK(BM_Compile)->Name("BM_Compile/O2")->Args({2, 1})->Unit(benchmark::kMillisecond)->Iterations(40);
BENCHMARK(BM_CompileCacheHit)->Name("BM_Compile/cache-hit")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Tiering)->Name("BM_Tiering/300-pods/5000")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_CheckProcess, interp, "interp")->Name("BM_CheckProcess/interp")->Arg(5000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);
BENCHMARK_CAPTURE(BM_CheckProcess, jit, "jit")->Name("BM_CheckProcess/jit")->Arg(5000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);
BENCHMARK(BM_FilterScore_Handwritten)->Name("BM_FilterScore/handwritten")->Arg(5000)->Arg(50000)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

BENCHMARK_MAIN();
