// Throughput of the scheduling core (`policyc schedule`'s engine::Scheduler)
// on the queue issue 12 describes: a generated 5,000-node cluster with 20
// bound pods a node, and 10,000 Pending pods from 30 templates with
// Zipf-like sizes (Deployments, StatefulSets, Jobs; plain requests, node
// affinity, tolerations, GPUs with GPU memory, required hostname
// anti-affinity, preferred zone affinity, zone spread, priorities, one that
// fits nowhere). Every mode starts from the same freshly loaded cluster and
// compiles every template it meets inside the measured time.
//
//   BM_Schedule/per-pod/5000        every pod planned and decided from scratch (tiered kernels, O2; the baseline)
//   BM_Schedule/incremental/5000    templates share plans; decisions updated from the last one
//                                   (kernels at O0, `policyc schedule`'s default; -O1, -O2 the others)
//   BM_Schedule/incremental-interp/5000  the same with the interpreter alone (no kernels)
//   BM_Fill/<mode>/5000             --fill: copies of one 4-cpu pod until one does not fit
//   BM_Subset/handwritten/5000      a plain C++ loop for the node-level templates (the Jobs):
//                                   filters and the default scores, every node, every pod
//   BM_Subset/incremental/5000      the engine on the same pods; each must land where the
//                                   hand-written loop put it (else the benchmark fails)
//   BM_TemplateKernels/O0/5000      the time to have a new template's kernels (Engine::Plan with
//                                   the JIT at O0: specialization, shapes, compiling what is new),
//                                   for the 30 templates in queue order, in one engine
//
// Counters: pods_per_s, x_per_pod / x_handwritten (pods/s over the baseline
// measured in the same run), placed, incremental (decisions that took the
// incremental path), compile_s (time in Plan: specialization and kernels).
//
//   build/benchmarks/bench_schedule

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "benchmarks/cluster_gen.h"
#include "benchmarks/handwritten_scores.h"
#include "runtime/engine/scheduler.h"
#include "runtime/sched/normalize.h"

namespace {

using policy::k8s::Pod;
using policy::k8s::Quantity;

constexpr int kPods = 10000;
constexpr int kTemplates = 30;

std::shared_ptr<const policy::Source> Snapshot(int nodes, bool realistic = false) {
  static std::map<std::pair<int, bool>, std::shared_ptr<const policy::Source>> snapshots;
  auto& s = snapshots[{nodes, realistic}];
  if (!s) {
    policy::bench::ClusterSpec spec;
    spec.nodes = nodes;
    spec.pods_per_node = 20;
    spec.realistic = realistic;
    spec.pending = realistic ? kPods : 0;
    s = std::make_shared<const policy::Source>("c.json", policy::bench::GenerateCluster(spec, policy::bench::Format::kJson));
  }
  return s;
}

// The realistic queue: the snapshot's own Pending pods, decoded as a real
// dump's are (cluster_gen's EmitPendingQueue: bare pods of ReplicaSets,
// StatefulSets with claims, Jobs, each with its token volume).
// `subset`: the node-level ones (the Jobs but the one whose affinity names
// no label: its rules are node-level too, but it fits nowhere).
std::vector<Pod> RealisticQueue(const policy::engine::Cluster& cluster, bool subset) {
  std::vector<Pod> queue;
  for (const Pod& p : cluster.Report().pending) {
    bool job = p.controller && p.controller->kind == "Job";
    bool typo = p.affinity.node_affinity && p.affinity.node_affinity->required &&
                (*p.affinity.node_affinity->required)[0].match_expressions[0].key != "eks.amazonaws.com/nodegroup";
    if (!subset || (job && !typo)) queue.push_back(p);
  }
  return queue;
}

policy::k8s::PodAffinityTerm Term(const std::string& app, const std::string& key) {
  policy::k8s::PodAffinityTerm t;
  t.label_selector = policy::k8s::LabelSelector{{{"app", app}}, {}};
  t.topology_key = key;
  return t;
}

// Template `r` (0 the largest): its shape cycles through eight kinds; the
// values vary with r, so no two templates are equal.
struct Template {
  Pod pod;
  int size = 0;
  bool node_level = false;  ///< a Job with node-level rules only (the hand-written subset)
};

std::vector<Template> Templates() {
  double harmonic = 0;
  for (int r = 0; r < kTemplates; ++r) harmonic += 1.0 / (r + 1);
  std::vector<Template> out;
  for (int r = 0; r < kTemplates; ++r) {
    Template t;
    t.size = static_cast<int>(kPods / (r + 1) / harmonic + 0.5);
    Pod& p = t.pod;
    std::string app = fmt::format("app{}", r);
    p.namespace_name = "bench";
    p.labels = {{"app", app}};
    policy::k8s::Container c;
    c.name = "main";
    c.image = fmt::format("bench/{}:1", app);
    int64_t cpu_milli = 100 + 50 * (r % 7), memory_mi = 128 + 64 * (r % 5);
    c.requests = {{"cpu", Quantity::FromMilli(cpu_milli)}, {"memory", Quantity::FromUnits(memory_mi << 20)}};
    int kind = r % 8;
    std::string workload = kind == 1 || kind == 4 || kind == 6 ? "Job" : kind == 3 ? "StatefulSet" : "Deployment";
    p.template_of = workload + "/" + app;
    if (workload != "Job") p.template_selector = policy::k8s::LabelSelector{{{"app", app}}, {}};
    switch (kind) {
      case 0: break;  // plain requests
      case 1: t.node_level = true; break;
      case 2:  // one per node
        p.affinity.pod_anti_affinity.emplace();
        p.affinity.pod_anti_affinity->required.push_back(Term(app, "kubernetes.io/hostname"));
        break;
      case 3: {  // spread over zones
        policy::k8s::TopologySpreadConstraint s;
        s.max_skew = 1;
        s.topology_key = "topology.kubernetes.io/zone";
        s.label_selector = policy::k8s::LabelSelector{{{"app", app}}, {}};
        p.topology_spread.push_back(s);
        break;
      }
      case 4:  // GPUs with GPU memory
        t.node_level = true;
        c.requests.emplace_back("nvidia.com/gpu", Quantity::FromUnits(1));
        c.requests.emplace_back("nvidia.com/gpu-memory", Quantity::FromUnits(int64_t{8 + 4 * (r % 3)} << 30));
        c.limits = {c.requests.end() - 2, c.requests.end()};
        p.node_selector = {{"nvidia.com/gpu.present", "true"}};
        p.tolerations.push_back({"nvidia.com/gpu", policy::k8s::TolerationOp::kExists, "", std::nullopt, std::nullopt});
        break;
      case 5:  // near the largest Deployment's pods, by zone
        p.affinity.pod_affinity.emplace();
        p.affinity.pod_affinity->preferred.push_back({50, Term("app0", "topology.kubernetes.io/zone")});
        break;
      case 6: {  // some node groups only
        t.node_level = true;
        policy::k8s::SelectorRequirement req;
        req.key = "eks.amazonaws.com/nodegroup";
        req.values = {"general-0", "general-1"};
        p.affinity.node_affinity.emplace();
        p.affinity.node_affinity->required = std::vector<policy::k8s::NodeSelectorTerm>{{{req}, {}}};
        break;
      }
      case 7: p.priority = 1000; break;
    }
    if (r == kTemplates - 1) {  // fits nowhere
      c.requests[0].second = Quantity::FromUnits(300);
      t.node_level = false;
    }
    p.containers = {c};
    out.push_back(std::move(t));
  }
  return out;
}

// The queue: templates interleaved as a stream, `subset` keeps the
// node-level ones only.
std::vector<Pod> Queue(bool subset) {
  std::vector<Template> templates = Templates();
  std::vector<int> left;
  for (const Template& t : templates) left.push_back(t.size);
  std::vector<Pod> queue;
  for (bool more = true; more;) {
    more = false;
    for (size_t r = 0; r < templates.size(); ++r) {
      for (int k = 0; k < (r < 3 ? 4 : 1) && left[r] > 0; ++k, --left[r]) {  // the big ones arrive faster
        more = true;
        if (subset && !templates[r].node_level) continue;
        Pod p = templates[r].pod;
        p.name = fmt::format("{}-{}", p.labels[0].second, left[r]);
        queue.push_back(std::move(p));
      }
    }
  }
  return queue;
}

struct Result {
  double seconds = 0;
  std::vector<std::optional<std::string>> nodes;  // by queue position
  policy::engine::ScheduleStats stats;
  size_t kernels = 0;  // distinct kernels compiled for the run (after it, the queue drained)
  size_t plugins = 0;  // the profile's plugins
};

Result RunEngine(bool incremental, bool subset, policy::engine::Backend backend = policy::engine::Backend::kTiered,
                 int opt_level = 2, bool realistic = false) {
  policy::DiagnosticSink diags;
  auto cluster = policy::engine::Cluster::Load(Snapshot(5000, realistic), diags);
  policy::engine::EngineOptions options;
  options.backend = backend;
  options.jit_opt_level = opt_level;
  auto engine = policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, options, diags);
  if (!cluster || !engine) return {};
  policy::engine::ScheduleOptions schedule;
  schedule.incremental = incremental;
  policy::engine::Scheduler scheduler(*engine, *cluster, schedule);
  std::vector<Pod> queue = realistic ? RealisticQueue(*cluster, subset) : Queue(subset);
  size_t count = queue.size();
  auto start = std::chrono::steady_clock::now();
  std::vector<const policy::engine::Outcome*> out = scheduler.Run(std::move(queue));
  Result result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.nodes.resize(count);
  for (const auto* o : out) result.nodes[o->order] = o->node;
  result.stats = scheduler.Stats();
  engine->DrainCompilations();
  result.kernels = engine->CompiledKernels();
  result.plugins = engine->Plugins().size();
  return result;
}

double per_pod_rate = 0, handwritten_rate = 0;  // the baselines, pods/s

void Report(benchmark::State& state, const Result& r, double baseline, const char* over) {
  double rate = r.seconds > 0 ? static_cast<double>(r.nodes.size()) / r.seconds : 0;
  size_t placed = 0;
  for (const auto& n : r.nodes) placed += n ? 1 : 0;
  state.counters["pods_per_s"] = rate;
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["incremental"] = static_cast<double>(r.stats.decisions.incremental);
  state.counters["full"] = static_cast<double>(r.stats.decisions.full);
  state.counters["plans"] = static_cast<double>(r.stats.plans);
  state.counters["templates"] = static_cast<double>(r.stats.templates);
  // Kernels compiled, against templates x plugins: how many a template found
  // made already (equal functions after specialization share one).
  if (r.kernels > 0) state.counters["kernels"] = static_cast<double>(r.kernels);
  if (r.kernels > 0) state.counters["plugins"] = static_cast<double>(r.plugins);
  if (baseline > 0) state.counters[over] = rate / baseline;
}

void BM_Schedule(benchmark::State& state, bool incremental, policy::engine::Backend backend, int opt_level) {
  Result r;
  for (auto _ : state) r = RunEngine(incremental, false, backend, opt_level);
  if (r.nodes.empty()) return state.SkipWithError("setup failed");
  double rate = static_cast<double>(r.nodes.size()) / r.seconds;
  if (!incremental && opt_level == 2) per_pod_rate = rate;
  Report(state, r, per_pod_rate, "x_per_pod");
}

// The realistic queue (RealisticQueue), per-pod and incremental; the
// incremental run must place every pod where the per-pod run did.
void BM_Realistic(benchmark::State& state, bool incremental, int opt_level) {
  static Result per_pod;
  static double per_pod_realistic = 0;
  Result r;
  for (auto _ : state) r = RunEngine(incremental, false, policy::engine::Backend::kTiered, opt_level, true);
  if (r.nodes.empty()) return state.SkipWithError("setup failed");
  double rate = static_cast<double>(r.nodes.size()) / r.seconds;
  if (!incremental) {
    per_pod = r;
    per_pod_realistic = rate;
  } else if (!per_pod.nodes.empty() && per_pod.nodes != r.nodes) {
    return state.SkipWithError("the incremental run placed some pod elsewhere than the per-pod run");
  }
  Report(state, r, per_pod_realistic, "x_per_pod");
}

// The hand-written loop: the default profile's decision for a pod with only
// node-level rules (NodeUnschedulable, TaintToleration, NodeAffinity,
// NodeResourcesFit; scores TaintToleration x3, LeastAllocated,
// BalancedAllocation; the others score 0 for these pods), over the table's
// columns, every node for every pod, then the bind.
class Handwritten {
 public:
  explicit Handwritten(policy::engine::Cluster& cluster) : cluster_(cluster) {}

  std::optional<std::string> Place(const Pod& pod) {
    const policy::rt::NodeTable& t = cluster_.Table();
    // The pod's side, worked out once (what partial evaluation does).
    std::vector<std::pair<const policy::rt::ResourceColumn*, int64_t>> need;
    int64_t cpu_req = 0, mem_req = 0;
    for (const auto& [name, q] : pod.containers[0].requests) {
      int64_t units = policy::k8s::SchedulerUnits(name, q);
      need.emplace_back(t.Resource(name), units);
      if (name == "cpu") cpu_req = units;
      if (name == "memory") mem_req = units;
    }
    std::vector<uint64_t> untolerated(t.TaintWords(), 0), prefer(t.TaintWords(), 0);
    for (uint32_t i = 0; i < t.TaintDictionary().size(); ++i) {
      const policy::rt::TaintEntry& e = t.TaintDictionary()[i];
      bool tolerated = false;
      for (const auto& tol : pod.tolerations) {
        tolerated = tolerated || (tol.key == t.pool().Get(e.key) && tol.op == policy::k8s::TolerationOp::kExists);
      }
      if (tolerated) continue;
      (e.effect == policy::k8s::TaintEffect::kPreferNoSchedule ? prefer : untolerated)[i / 64] |= uint64_t{1} << (i % 64);
    }
    // Node affinity and nodeSelector: one label's allowed dictionary ids.
    const policy::rt::LabelColumn* label = nullptr;
    std::vector<uint8_t> allowed;
    auto allow = [&](const std::string& key, const std::vector<std::string>& values) {
      label = t.Label(key);
      allowed.assign(label ? label->value.size() : 1, 0);
      for (const std::string& v : values) {
        std::optional<uint32_t> id = t.pool().Lookup(v);
        auto it = id && label ? label->domain_of.find(*id) : decltype(label->domain_of.end()){};
        if (label && id && it != label->domain_of.end()) allowed[it->second] = 1;
      }
    };
    if (!pod.node_selector.empty()) allow(pod.node_selector[0].first, {pod.node_selector[0].second});
    if (pod.affinity.node_affinity && pod.affinity.node_affinity->required) {
      const auto& r = (*pod.affinity.node_affinity->required)[0].match_expressions[0];
      allow(r.key, r.values);
    }
    const policy::rt::ResourceColumn* cpu = t.Resource("cpu");
    const policy::rt::ResourceColumn* memory = t.Resource("memory");
    const policy::rt::ResourceColumn* pods = t.Resource("pods");
    int64_t cpu_nonzero = cpu_req > 0 ? cpu_req : 100, memory_nonzero_milli = (mem_req > 0 ? mem_req : 200LL << 20) * 1000;
    size_t words = t.TaintWords();
    feasible_.clear();
    taint_.clear();
    rest_.clear();
    for (policy::rt::RowId r : t.LiveRows()) {
      if (t.Unschedulable()[r]) continue;
      const uint64_t* bits = t.TaintBits(r).data();
      bool tainted = false;
      for (size_t w = 0; w < words; ++w) tainted |= (bits[w] & untolerated[w]) != 0;
      if (tainted || (label != nullptr && !allowed[label->domain[r]]) || (label == nullptr && !allowed.empty())) continue;
      if (t.PodCount()[r] + 1 > pods->allocatable[r]) continue;
      bool fits = true;
      for (const auto& [column, units] : need) {
        fits = fits && (units == 0 || (column != nullptr && column->allocatable[r] - column->requested[r] >= units));
      }
      if (!fits) continue;
      feasible_.push_back(r);
      int64_t count = 0;
      for (size_t w = 0; w < words; ++w) count += __builtin_popcountll(bits[w] & prefer[w]);
      taint_.push_back(count);
      // LeastAllocated over cpu and memory (non-zero requests), BalancedAllocation.
      int64_t least_allocated =
          policy::bench::LeastAllocated(t.NonZeroMilliCpu()[r] + cpu_nonzero, cpu->allocatable[r],
                                        t.NonZeroMemoryMilli()[r] + memory_nonzero_milli, memory->allocatable_milli[r]);
      int64_t balanced = policy::bench::BalancedAllocation(cpu->requested[r] + cpu_req, cpu->allocatable[r],
                                                           memory->requested_milli[r] + mem_req * 1000,
                                                           memory->allocatable_milli[r]);
      rest_.push_back(least_allocated + balanced);
    }
    if (feasible_.empty()) return std::nullopt;
    policy::rt::Normalize(policy::lang::Normalize::kReverse, taint_);
    size_t best = 0;
    for (size_t j = 0; j < feasible_.size(); ++j) {
      if (3 * taint_[j] + rest_[j] > 3 * taint_[best] + rest_[best]) best = j;
    }
    Pod bound = pod;
    bound.node_name = std::string(t.NodeName(feasible_[best]));
    bound.phase = policy::k8s::PodPhase::kRunning;
    cluster_.BindPod(bound);
    return bound.node_name;
  }

 private:
  policy::engine::Cluster& cluster_;
  std::vector<policy::rt::RowId> feasible_;
  std::vector<int64_t> taint_, rest_;
};

void BM_Subset_Handwritten(benchmark::State& state, bool realistic) {
  policy::DiagnosticSink diags;
  Result r;
  for (auto _ : state) {
    state.PauseTiming();
    auto cluster = policy::engine::Cluster::Load(Snapshot(5000, realistic), diags);
    std::vector<Pod> queue = realistic ? RealisticQueue(*cluster, true) : Queue(true);
    state.ResumeTiming();
    Handwritten hand(*cluster);
    auto start = std::chrono::steady_clock::now();
    r.nodes.clear();
    for (const Pod& p : queue) r.nodes.push_back(hand.Place(p));  // one priority: queue order is input order
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  handwritten_rate = static_cast<double>(r.nodes.size()) / r.seconds;
  Report(state, r, handwritten_rate, "x_handwritten");
  static Result engine_result;
  engine_result = RunEngine(true, true, policy::engine::Backend::kTiered, 0, realistic);
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    if (engine_result.nodes.size() != r.nodes.size() || engine_result.nodes[i] != r.nodes[i]) {
      std::string why = fmt::format("pod {} went to {} by hand but {} by the engine", i, r.nodes[i].value_or("-"),
                                    i < engine_result.nodes.size() ? engine_result.nodes[i].value_or("-") : "-");
      return state.SkipWithError(why.c_str());
    }
  }
}

// --fill: copies of one pod (4 cpu, 8Gi, a Deployment's, so default
// spreading applies) until one does not fit, each a full cycle with its bind.
void BM_Fill(benchmark::State& state, bool incremental) {
  static double per_pod_fill = 0;
  policy::DiagnosticSink diags;
  size_t copies = 0;
  double seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto cluster = policy::engine::Cluster::Load(Snapshot(5000), diags);
    policy::engine::EngineOptions options;
    options.backend = policy::engine::Backend::kTiered;
    options.jit_opt_level = incremental ? 0 : 2;  // each mode as `policyc schedule` would run it
    auto engine = policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, options, diags);
    if (!cluster || !engine) return state.SkipWithError("setup failed");
    policy::engine::ScheduleOptions schedule;
    schedule.incremental = incremental;
    policy::engine::Scheduler scheduler(*engine, *cluster, schedule);
    Pod pod = Templates()[0].pod;
    pod.containers[0].requests = {{"cpu", Quantity::FromUnits(4)}, {"memory", Quantity::FromUnits(int64_t{8} << 30)}};
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    for (copies = 0;; ++copies) {
      Pod copy = pod;
      copy.name = fmt::format("fill-{}", copies);
      if (!scheduler.Place(std::move(copy), false).node) break;
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["copies"] = static_cast<double>(copies);
  state.counters["fill_s"] = seconds;
  if (!incremental) per_pod_fill = seconds;
  if (per_pod_fill > 0) state.counters["x_per_pod"] = per_pod_fill / seconds;
}

// Per template (its first pod in queue order), the time Engine::Plan takes
// with the JIT: specialization, the shapes, compiling the kernels no
// earlier template made. Counters: p50_ms, p99_ms and max_ms over the 30;
// served (templates whose every kernel existed already); kernels.
void BM_TemplateKernels(benchmark::State& state) {
  std::vector<double> ms;
  size_t served = 0, kernels = 0;
  for (auto _ : state) {
    policy::DiagnosticSink diags;
    auto cluster = policy::engine::Cluster::Load(Snapshot(5000), diags);
    policy::engine::EngineOptions options;
    options.backend = policy::engine::Backend::kJit;
    options.jit_opt_level = static_cast<int>(state.range(0));
    auto engine = policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, options, diags);
    if (!cluster || !engine) return state.SkipWithError("setup failed");
    std::vector<Template> templates = Templates();
    std::vector<bool> seen(templates.size(), false);
    for (const Pod& pod : Queue(false)) {  // the templates in the order the queue meets them
      size_t t = 0;
      while (t < templates.size() && pod.labels[0].second != templates[t].pod.labels[0].second) ++t;
      if (t == templates.size() || seen[t]) continue;
      seen[t] = true;
      size_t before = engine->CompiledKernels();
      auto start = std::chrono::steady_clock::now();
      std::unique_ptr<policy::engine::PodPlan> plan = engine->Plan(pod, *cluster);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      served += engine->CompiledKernels() == before ? 1 : 0;
      benchmark::DoNotOptimize(plan);
    }
    kernels = engine->CompiledKernels();
  }
  std::sort(ms.begin(), ms.end());
  state.counters["templates"] = static_cast<double>(ms.size());
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  state.counters["max_ms"] = ms.back();
  state.counters["served"] = static_cast<double>(served);
  state.counters["kernels"] = static_cast<double>(kernels);
}

void BM_Subset_Incremental(benchmark::State& state, bool realistic) {
  Result r;
  for (auto _ : state) r = RunEngine(true, true, policy::engine::Backend::kTiered, 0, realistic);
  if (r.nodes.empty()) return state.SkipWithError("setup failed");
  Report(state, r, handwritten_rate, "x_handwritten");
}

}  // namespace

using policy::engine::Backend;
BENCHMARK_CAPTURE(BM_Schedule, per-pod, false, Backend::kTiered, 2)->Name("BM_Schedule/per-pod/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Schedule, per-pod-O0, false, Backend::kTiered, 0)->Name("BM_Schedule/per-pod-O0/5000")->Iterations(1)->Unit(benchmark::kSecond);
// `policyc schedule`'s default: kernels at O0, which arrive three times as
// soon; an incremental decision runs them on few rows, where O2's faster
// code matters less than having it (the O1 and O2 rows measure that).
BENCHMARK_CAPTURE(BM_Schedule, incremental, true, Backend::kTiered, 0)->Name("BM_Schedule/incremental/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Schedule, incremental-O1, true, Backend::kTiered, 1)->Name("BM_Schedule/incremental-O1/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Schedule, incremental-O2, true, Backend::kTiered, 2)->Name("BM_Schedule/incremental-O2/5000")->Iterations(1)->Unit(benchmark::kSecond);
// The same without kernels: incremental decisions evaluate few rows, where
// the interpreter costs little and compiling would cost more.
BENCHMARK_CAPTURE(BM_Schedule, incremental-interp, true, Backend::kInterp, 2)->Name("BM_Schedule/incremental-interp/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Fill, per-pod, false)->Name("BM_Fill/per-pod/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Fill, incremental, true)->Name("BM_Fill/incremental/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Subset_Handwritten, generated, false)->Name("BM_Subset/handwritten/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Subset_Incremental, generated, false)->Name("BM_Subset/incremental/5000")->Iterations(1)->Unit(benchmark::kSecond);
// Pods as they really are (cluster_gen's realistic snapshot and queue).
BENCHMARK_CAPTURE(BM_Realistic, per-pod, false, 2)->Name("BM_Realistic/per-pod/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Realistic, incremental, true, 0)->Name("BM_Realistic/incremental/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Subset_Handwritten, realistic, true)->Name("BM_RealisticSubset/handwritten/5000")->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Subset_Incremental, realistic, true)->Name("BM_RealisticSubset/incremental/5000")->Iterations(1)->Unit(benchmark::kSecond);

BENCHMARK(BM_TemplateKernels)->Name("BM_TemplateKernels/O0/5000")->Arg(0)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateKernels)->Name("BM_TemplateKernels/O2/5000")->Arg(2)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
