// Inter-pod constraints at scale: 5,000 generated nodes in six zones with
// 50,000 bound pods (97 apps), one incoming pod at a time.
//
//   BM_InterPod/<case>/recount   the baseline, measured in the same run:
//       kube-scheduler's PreFilter approach, a pass over every bound pod
//       building (topology key, value) -> count, then a lookup per node
//   BM_InterPod/<case>/index     the same answers from the NodeTable's
//       topology index (counts kept per row and per domain on every bind)
//   BM_InterPod/<case>/interp    the whole plugin's decision (stdlib
//       InterPodAffinity or PodTopologySpread, specialized and bound) in the
//       interpreter, per pod
//   BM_InterPod/<case>/jit       the same as native kernels
//   BM_BindUnbind/<sets>         binding and unbinding one pod with <sets>
//       registered pod sets and its own anti-affinity term group
//
// <case>: anti-affinity-hostname (required anti-affinity to its own app,
// kubernetes.io/hostname) and zone-spread (DoNotSchedule, maxSkew 1, zone).
// Counters: us/pod, ns/node, x_recount (time over the baseline's).

#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "benchmarks/cluster_gen.h"
#include "k8s/cluster_reader.h"
#include "k8s/pod_reader.h"
#include "k8s/selectors.h"
#include "runtime/engine/engine.h"
#include "runtime/interp/cluster_view.h"

namespace {

using namespace policy;

constexpr int kNodes = 5000;
constexpr int kPodsPerNode = 10;
constexpr std::string_view kHostname = "kubernetes.io/hostname";
constexpr std::string_view kZone = "topology.kubernetes.io/zone";

constexpr const char* kAntiPod = R"(apiVersion: v1
kind: Pod
metadata: {name: web-new, namespace: apps, labels: {app: app-5}}
spec:
  containers: [{name: c, resources: {requests: {cpu: 100m}}}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: app-5}}
        topologyKey: kubernetes.io/hostname
)";

constexpr const char* kSpreadPod = R"(apiVersion: v1
kind: Pod
metadata: {name: api-new, namespace: apps, labels: {app: app-7}}
spec:
  containers: [{name: c, resources: {requests: {cpu: 100m}}}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: app-7}}
)";

// Every bound pod with its node, for the recount baseline.
class PodList final : public k8s::ClusterVisitor {
 public:
  void OnNode(k8s::Node&& node, Span) override { nodes.push_back(std::move(node)); }
  void OnPod(k8s::Pod&& pod, Span) override { pods.push_back(std::move(pod)); }
  void OnNamespace(k8s::Namespace&&, Span) override {}
  std::vector<k8s::Node> nodes;
  std::vector<k8s::Pod> pods;
};

struct World {
  std::unique_ptr<engine::Cluster> cluster;
  const rt::NodeTable* table = nullptr;
  PodList list;
  std::map<std::string, const k8s::Node*> node_by_name;
  k8s::Pod anti, spread;
};

World& TheWorld() {
  static World* w = [] {
    auto* w = new World;
    bench::ClusterSpec spec;
    spec.nodes = kNodes;
    spec.pods_per_node = kPodsPerNode;
    auto source = std::make_shared<const Source>("c.json", bench::GenerateCluster(spec, bench::Format::kJson));
    DiagnosticSink diags;
    w->cluster = engine::Cluster::Load(source, diags);
    w->table = &w->cluster->Table();
    k8s::ReadCluster(*source, w->list, diags, nullptr);
    for (const k8s::Node& n : w->list.nodes) w->node_by_name[n.name] = &n;
    Source anti_source("anti.yaml", kAntiPod), spread_source("spread.yaml", kSpreadPod);
    w->anti = *k8s::ReadPod(anti_source, diags, k8s::FieldValidation::kStrict);
    w->spread = *k8s::ReadPod(spread_source, diags, k8s::FieldValidation::kStrict);
    return w;
  }();
  return *w;
}

// An engine whose one plugin is `plugin`'s filter (weight 2, no score).
std::unique_ptr<engine::Engine> OnePlugin(std::string_view plugin, bool jit) {
  rt::Profile profile;
  profile.plugins = {{std::string(plugin), true, false, 2}};
  engine::EngineOptions options;
  options.backend = jit ? engine::Backend::kJit : engine::Backend::kInterp;
  DiagnosticSink diags;
  std::unique_ptr<engine::Engine> e = engine::Engine::Create(profile, {}, options, diags);
  if (!e) std::abort();
  return e;
}

std::string_view LabelOf(const k8s::Node& n, std::string_view key) {
  const std::string* v = k8s::Find(n.labels, key);
  return v ? std::string_view(*v) : std::string_view();
}

// --- the baseline: kube-scheduler's PreFilter pass over every bound pod -----

// Required anti-affinity by hostname: count matching pods per hostname value,
// then test each node.
int64_t RecountAnti(const World& w) {
  const k8s::PodAffinityTerm& term = w.anti.affinity.pod_anti_affinity->required[0];
  std::map<std::string_view, int64_t> counts;
  for (const k8s::Pod& p : w.list.pods) {
    if (p.namespace_name != w.anti.namespace_name || !k8s::Matches(term.label_selector, p.labels)) continue;
    auto node = w.node_by_name.find(p.node_name);
    if (node != w.node_by_name.end()) ++counts[LabelOf(*node->second, term.topology_key)];
  }
  int64_t feasible = 0;
  for (const k8s::Node& n : w.list.nodes) feasible += counts[LabelOf(n, term.topology_key)] == 0;
  return feasible;
}

// Zone spread: matching pods per zone over the nodes with the key, the
// minimum, then each node's skew.
int64_t RecountSpread(const World& w) {
  const k8s::TopologySpreadConstraint& c = w.spread.topology_spread[0];
  std::map<std::string_view, int64_t> counts;
  for (const k8s::Node& n : w.list.nodes) counts.emplace(LabelOf(n, c.topology_key), 0);
  for (const k8s::Pod& p : w.list.pods) {
    if (p.namespace_name != w.spread.namespace_name || !k8s::Matches(c.label_selector, p.labels)) continue;
    auto node = w.node_by_name.find(p.node_name);
    if (node != w.node_by_name.end()) ++counts[LabelOf(*node->second, c.topology_key)];
  }
  int64_t min = INT64_MAX;
  for (const auto& [zone, n] : counts) min = std::min(min, n);
  int64_t feasible = 0;
  for (const k8s::Node& n : w.list.nodes) feasible += counts[LabelOf(n, c.topology_key)] + 1 - min <= c.max_skew;
  return feasible;
}

// --- the index ------------------------------------------------------------

int64_t IndexAnti(const World& w) {
  rt::ClusterView view(w.anti, *w.table);
  const k8s::PodAffinityTerm* term = &w.anti.affinity.pod_anti_affinity->required[0];
  rt::DomainView counts = view.Domains({term}, kHostname);  // the pod's one lookup
  int64_t feasible = 0;
  for (rt::RowId row = 0; row < w.table->RowCount(); ++row) feasible += counts.At(row) == 0;
  return feasible;
}

int64_t IndexSpread(const World& w) {
  rt::ClusterView view(w.spread, *w.table);
  const k8s::TopologySpreadConstraint& c = w.spread.topology_spread[0];
  int64_t feasible = 0;
  for (rt::RowId row = 0; row < w.table->RowCount(); ++row) feasible += view.SpreadSkew(c, row) <= c.max_skew;
  return feasible;
}

double Seconds(const std::function<int64_t()>& f) {
  auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(f());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Report(benchmark::State& state, double total, double baseline) {
  double per = total / static_cast<double>(state.iterations());
  state.counters["us/pod"] = per * 1e6;
  state.counters["ns/node"] = per * 1e9 / kNodes;
  state.counters["x_recount"] = per / baseline;
}

void Run(benchmark::State& state, const std::function<int64_t()>& f, const std::function<int64_t()>& recount) {
  double baseline = 1e30;
  for (int i = 0; i < 3; ++i) baseline = std::min(baseline, Seconds(recount));
  double total = 0;
  for (auto _ : state) total += Seconds(f);
  Report(state, total, baseline);
}

// `f` (the recount itself, or the index's answer, which must agree with it)
// against the recount.
void Counted(benchmark::State& state, int64_t (*f)(const World&), int64_t (*recount)(const World&)) {
  World& w = TheWorld();
  if (f(w) != recount(w)) state.SkipWithError("the index and the recount disagree");
  Run(state, [&] { return f(w); }, [&] { return recount(w); });
}
void BM_AntiRecount(benchmark::State& state) { Counted(state, RecountAnti, RecountAnti); }
void BM_AntiIndex(benchmark::State& state) { Counted(state, IndexAnti, RecountAnti); }
void BM_SpreadRecount(benchmark::State& state) { Counted(state, RecountSpread, RecountSpread); }
void BM_SpreadIndex(benchmark::State& state) { Counted(state, IndexSpread, RecountSpread); }

// The whole plugin's filter, the decision alone (engine::Engine::Decide),
// in the interpreter or as native kernels (`jit`).
void Decide(benchmark::State& state, std::string_view plugin, const k8s::Pod& pod,
            const std::function<int64_t()>& recount, bool jit) {
  World& w = TheWorld();
  std::unique_ptr<engine::Engine> e = OnePlugin(plugin, jit);
  std::unique_ptr<engine::PodPlan> plan = e->Plan(pod, *w.cluster);
  if (jit && plan->NativePlugins() != 1) return state.SkipWithError("the plugin does not compile");
  auto feasible = [&] { return static_cast<int64_t>(e->Decide(*plan, *w.cluster).feasible.size()); };
  if (feasible() != recount()) return state.SkipWithError("the plugin and the recount disagree");
  Run(state, feasible, recount);
}
void BM_AntiInterp(benchmark::State& state) {
  Decide(state, "InterPodAffinity", TheWorld().anti, [] { return RecountAnti(TheWorld()); }, false);
}
void BM_AntiJit(benchmark::State& state) {
  Decide(state, "InterPodAffinity", TheWorld().anti, [] { return RecountAnti(TheWorld()); }, true);
}
void BM_SpreadInterp(benchmark::State& state) {
  Decide(state, "PodTopologySpread", TheWorld().spread, [] { return RecountSpread(TheWorld()); }, false);
}
void BM_SpreadJit(benchmark::State& state) {
  Decide(state, "PodTopologySpread", TheWorld().spread, [] { return RecountSpread(TheWorld()); }, true);
}

// Bind and unbind one pod (app-5, with its own anti-affinity term) with
// `range(0)` extra pod sets registered.
void BM_BindUnbind(benchmark::State& state) {
  World& w = TheWorld();
  for (int i = 0; i < state.range(0); ++i) {
    rt::PodSelector s;
    s.clauses.push_back({k8s::LabelSelector{{{"app", "app-" + std::to_string(i % 97)}}, {}}, false, {"apps", std::to_string(i)}});
    w.table->PodSet(s);
  }
  k8s::Pod pod = w.anti;
  pod.node_name = w.list.nodes[17].name;
  pod.phase = k8s::PodPhase::kRunning;
  for (auto _ : state) {
    w.cluster->BindPod(pod);
    w.cluster->UnbindPod(pod.namespace_name, pod.name);
  }
  state.counters["ns/op"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2,
                                               benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_AntiRecount)->Name("BM_InterPod/anti-affinity-hostname/recount")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_AntiIndex)->Name("BM_InterPod/anti-affinity-hostname/index")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_AntiInterp)->Name("BM_InterPod/anti-affinity-hostname/interp")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_AntiJit)->Name("BM_InterPod/anti-affinity-hostname/jit")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_SpreadRecount)->Name("BM_InterPod/zone-spread/recount")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_SpreadIndex)->Name("BM_InterPod/zone-spread/index")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_SpreadInterp)->Name("BM_InterPod/zone-spread/interp")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_SpreadJit)->Name("BM_InterPod/zone-spread/jit")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_BindUnbind)->Name("BM_BindUnbind")->Arg(0)->Arg(10)->Arg(100)->Unit(benchmark::kNanosecond);

BENCHMARK_MAIN();
