// Dynamic Resource Allocation at scale: 5,000 realistic GPU nodes (every
// label of a real cloud node and GPU Feature Discovery, taints, images),
// each publishing a ResourceSlice of 8 GPUs (product, architecture and
// index attributes, 80Gi of memory capacity), one incoming pod at a time
// through the whole default profile (1.34).
//
//   BM_Dra/extended/<engine>  the baseline, measured in the same run: the
//       pod asks `nvidia.com/gpu: 4` as an extended resource
//   BM_Dra/claim/<engine>     the same pod asking 4 GPUs through a
//       ResourceClaim: one request of count 4 whose CEL selector asks for
//       `memory >= 40Gi` on top of the DeviceClass's driver selector
//   BM_Dra/claim-busy/<engine>  the same claim with half of every node's
//       GPUs already allocated to other claims (the search must skip them)
//   BM_Dra/policy-cel/<engine>  the extended pod, labelled
//       `policyc.io/gpu-memory: 40Gi`, with policies/gpu-memory-fit-dra.policy
//       beside the profile: a policy looping over each node's 8 devices
//       with a `cel` selector (the loop interpreted, the selector decided
//       once per device)
//   BM_DraSelector/<how>      a new selector over all 40,000 devices:
//       evaluated, compiled (its shape's kernel cached), compiled-fresh
//       (the device columns built too, as after a ResourceSlice changes)
//   BM_CelCompile             parsing and checking one selector (no cache)
//
// <engine>: interp or jit. Counters: us/pod, x_extended (time over the
// extended-resource pod's with the same engine, measured in the same run).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "benchmarks/cluster_gen.h"
#include "compiler/cel/compile.h"
#include "compiler/codegen/jit.h"
#include "runtime/columnar/device_table.h"
#include "runtime/dra/selector_evaluator.h"
#include "runtime/sched/selector_kernels.h"
#include "k8s/pod_reader.h"
#include "runtime/engine/engine.h"

namespace {

using namespace policy;

constexpr int kNodes = 5000;
constexpr int kGpusPerNode = 8;

constexpr const char* kExtendedPod = R"(apiVersion: v1
kind: Pod
metadata: {name: train-ext, namespace: ml, uid: u-ext}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: main
    image: nvcr.io/nvidia/pytorch:25.08-py3
    resources: {requests: {cpu: '8', memory: 64Gi, nvidia.com/gpu: '4'}, limits: {nvidia.com/gpu: '4'}}
)";

constexpr const char* kClaimPod = R"(apiVersion: v1
kind: Pod
metadata: {name: train-dra, namespace: ml, uid: u-dra}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  resourceClaims: [{name: gpus, resourceClaimName: train-gpus}]
  containers:
  - name: main
    image: nvcr.io/nvidia/pytorch:25.08-py3
    resources: {requests: {cpu: '8', memory: 64Gi}, claims: [{name: gpus}]}
)";

constexpr const char* kSelector = R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)";

// The DRA objects: the class, the pod's claim, a slice of 8 GPUs per node,
// and (busy) claims holding GPUs 0-3 of every node.
std::string DraObjects(const rt::NodeTable& table, bool busy) {
  std::string out = "apiVersion: v1\nkind: List\nitems:\n";
  out += "- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu.nvidia.com}, "
         "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.nvidia.com\"'}}]}}\n";
  out += fmt::format(
      "- {{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {{name: train-gpus, namespace: ml}}, "
      "spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu.nvidia.com, count: 4, "
      "selectors: [{{cel: {{expression: '{}'}}}}]}}}}]}}}}}}\n",
      kSelector);
  for (rt::RowId row = 0; row < table.RowCount(); ++row) {
    std::string node(table.NodeName(row));
    std::string devices;
    for (int g = 0; g < kGpusPerNode; ++g) {
      devices += fmt::format(
          "{}{{name: gpu-{}, attributes: {{type: {{string: gpu}}, productName: {{string: NVIDIA H100 80GB HBM3}}, "
          "architecture: {{string: Hopper}}, index: {{int: {}}}}}, capacity: {{memory: {{value: 80Gi}}}}}}",
          g ? ", " : "", g, g);
    }
    out += fmt::format(
        "- {{apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {{name: {}-gpus}}, spec: {{driver: gpu.nvidia.com, "
        "nodeName: {}, pool: {{name: {}, generation: 1, resourceSliceCount: 1}}, devices: [{}]}}}}\n",
        node, node, node, devices);
    if (busy) {
      std::string results;
      for (int g = 0; g < 4; ++g) {
        results += fmt::format("{}{{request: gpu, driver: gpu.nvidia.com, pool: {}, device: gpu-{}}}", g ? ", " : "", node, g);
      }
      out += fmt::format(
          "- {{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {{name: held-{}, namespace: other}}, "
          "spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu.nvidia.com, count: 4}}}}]}}}}, "
          "status: {{allocation: {{devices: {{results: [{}]}}}}}}}}\n",
          node, results);
    }
  }
  return out;
}

struct World {
  std::unique_ptr<engine::Cluster> cluster;
  k8s::Pod extended, claim, labelled;
};

World& TheWorld(bool busy) {
  static World* worlds[2] = {nullptr, nullptr};
  World*& w = worlds[busy];
  if (w != nullptr) return *w;
  w = new World;
  bench::ClusterSpec spec;
  spec.nodes = kNodes;
  spec.gpu_fraction = 1.0;
  spec.realistic = true;
  auto nodes = std::make_shared<const Source>("c.json", bench::GenerateCluster(spec, bench::Format::kJson));
  DiagnosticSink diags;
  std::unique_ptr<engine::Cluster> plain = engine::Cluster::Load(nodes, diags);
  if (!plain) std::abort();
  auto dra = std::make_shared<const Source>("dra.yaml", DraObjects(plain->Table(), busy));
  w->cluster = engine::Cluster::Load({nodes, dra}, diags);
  if (!w->cluster) {
    fmt::print(stderr, "{}\n", RenderAll(diags));
    std::abort();
  }
  Source ext("ext.yaml", kExtendedPod), claim("claim.yaml", kClaimPod);
  w->extended = *k8s::ReadPod(ext, diags, k8s::FieldValidation::kStrict);
  w->claim = *k8s::ReadPod(claim, diags, k8s::FieldValidation::kStrict);
  w->labelled = w->extended;
  w->labelled.labels.emplace_back("policyc.io/gpu-memory", "40Gi");
  return *w;
}

// The default profile, with `policies` beside it.
std::unique_ptr<engine::Engine> DefaultEngine(bool jit, std::vector<std::shared_ptr<const Source>> policies = {}) {
  engine::EngineOptions options;
  options.backend = jit ? engine::Backend::kJit : engine::Backend::kInterp;
  DiagnosticSink diags;
  std::unique_ptr<engine::Engine> e = engine::Engine::Create(rt::DefaultProfile(), std::move(policies), options, diags);
  if (!e) {
    fmt::print(stderr, "{}\n", RenderAll(diags));
    std::abort();
  }
  return e;
}

double Seconds(const std::function<size_t()>& f) {
  auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(f());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One decision of `pod` (planned once), against the extended pod's in the same run.
void Decide(benchmark::State& state, bool claim, bool busy, bool jit) {
  World& w = TheWorld(busy);
  std::unique_ptr<engine::Engine> e = DefaultEngine(jit);
  std::unique_ptr<engine::PodPlan> ext = e->Plan(w.extended, *w.cluster);
  std::unique_ptr<engine::PodPlan> plan = e->Plan(claim ? w.claim : w.extended, *w.cluster);
  auto decide = [&](engine::PodPlan& p) { return [&] { return e->Decide(p, *w.cluster).feasible.size(); }; };
  size_t feasible = decide(*plan)();
  if (feasible == 0) return state.SkipWithError("the pod fits nowhere: the benchmark measures nothing");
  double baseline = 1e30;
  for (int i = 0; i < 5; ++i) baseline = std::min(baseline, Seconds(decide(*ext)));
  double total = 0;
  for (auto _ : state) total += Seconds(decide(*plan));
  double per = total / static_cast<double>(state.iterations());
  state.counters["us/pod"] = per * 1e6;
  state.counters["x_extended"] = per / baseline;
  state.counters["feasible"] = static_cast<double>(feasible);
}

// The labelled pod with GPU-memory fit's DRA form beside the profile,
// against the extended pod without it, in the same run.
void DecideWithCelPolicy(benchmark::State& state, bool jit) {
  World& w = TheWorld(false);
  std::ifstream in(std::string(POLICYC_SOURCE_DIR) + "/policies/gpu-memory-fit-dra.policy");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) return state.SkipWithError("policies/gpu-memory-fit-dra.policy is not readable");
  std::unique_ptr<engine::Engine> plain = DefaultEngine(jit);
  std::unique_ptr<engine::Engine> e = DefaultEngine(jit, {std::make_shared<const Source>("gpu-memory-fit-dra.policy", text)});
  std::unique_ptr<engine::PodPlan> ext = plain->Plan(w.extended, *w.cluster);
  std::unique_ptr<engine::PodPlan> plan = e->Plan(w.labelled, *w.cluster);
  auto run = [&] { return e->Decide(*plan, *w.cluster).feasible.size(); };
  size_t feasible = run();
  if (feasible == 0) return state.SkipWithError("the pod fits nowhere: the benchmark measures nothing");
  double baseline = 1e30;
  for (int i = 0; i < 5; ++i) baseline = std::min(baseline, Seconds([&] { return plain->Decide(*ext, *w.cluster).feasible.size(); }));
  double total = 0;
  for (auto _ : state) total += Seconds(run);
  double per = total / static_cast<double>(state.iterations());
  state.counters["us/pod"] = per * 1e6;
  state.counters["x_extended"] = per / baseline;
  state.counters["feasible"] = static_cast<double>(feasible);
}

// A new selector answered on every device of the cluster (5,000 nodes x 8),
// on device columns already built (each iteration asks another constant, so
// nothing is answered from the columns' cache): evaluated device by device,
// or compiled to a native kernel (its shape's kernel cached after the first,
// as for every selector of a shape). `fresh`: new columns in every
// iteration, built for the compiled kind (the device NodeTable), as after a
// ResourceSlice changed.
std::string RichSelector(int64_t i) {
  return fmt::format(R"(device.attributes["gpu.nvidia.com"].architecture == "Hopper" && )"
                     R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{}Mi")) >= 0)",
                     1024 + i % 100000);
}

void SelectorOverDevices(benchmark::State& state, bool compile, bool fresh) {
  World& w = TheWorld(false);
  std::shared_ptr<const rt::DeviceTable> table = w.cluster->Table().Devices();
  std::vector<rt::DeviceColumns::Ref> refs;
  for (const rt::DeviceTable::Device& d : table->Devices()) refs.push_back({d.slice->driver, d.device});
  rt::DeviceSelectors selectors;
  if (compile) selectors.decider = std::make_shared<rt::KernelSelectorDecider>(std::make_shared<codegen::Jit>(), false);
  auto columns = std::make_unique<rt::DeviceColumns>(refs, 0, selectors);
  columns->Selector(RichSelector(0), dra::Evaluator());  // builds the columns, compiles the shape
  size_t matching = 0;
  int64_t i = 1;
  for (auto _ : state) {
    if (fresh) columns = std::make_unique<rt::DeviceColumns>(refs, 0, selectors);
    std::shared_ptr<const rt::SelectorVerdicts> v = columns->Selector(RichSelector(i++), dra::Evaluator());
    if (v->compiled != compile) return state.SkipWithError("the selector was not decided as asked");
    matching = static_cast<size_t>(std::count(v->match.begin(), v->match.end(), 1));
  }
  state.counters["devices"] = static_cast<double>(refs.size());
  state.counters["matching"] = static_cast<double>(matching);
}

void BM_CelCompile(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(cel::CompileUncached(kSelector));
}

}  // namespace

BENCHMARK_CAPTURE(Decide, extended_interp, false, false, false)->Name("BM_Dra/extended/interp")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(Decide, claim_interp, true, false, false)->Name("BM_Dra/claim/interp")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(Decide, busy_interp, true, true, false)->Name("BM_Dra/claim-busy/interp")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(Decide, extended_jit, false, false, true)->Name("BM_Dra/extended/jit")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(Decide, claim_jit, true, false, true)->Name("BM_Dra/claim/jit")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(Decide, busy_jit, true, true, true)->Name("BM_Dra/claim-busy/jit")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(DecideWithCelPolicy, interp, false)->Name("BM_Dra/policy-cel/interp")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(DecideWithCelPolicy, jit, true)->Name("BM_Dra/policy-cel/jit")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(SelectorOverDevices, evaluate, false, false)->Name("BM_DraSelector/evaluate")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(SelectorOverDevices, compiled, true, false)->Name("BM_DraSelector/compiled")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(SelectorOverDevices, compiled_fresh, true, true)->Name("BM_DraSelector/compiled-fresh")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CelCompile)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
