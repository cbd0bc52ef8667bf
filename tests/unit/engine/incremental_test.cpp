// Incremental decisions against decisions from scratch: random clusters and
// random streams of pods (templates with requests, node affinity,
// tolerations, inter-pod affinity and anti-affinity, topology spread,
// priorities that preempt), scheduled both ways; every outcome must be the
// same, and every incremental decision is also checked against a full one
// as it is made (EngineOptions::verify_incremental aborts on a difference).

#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>

#include <fmt/format.h>

#include "runtime/dra/allocator.h"
#include "runtime/engine/scheduler.h"

using namespace policy;

namespace {

class Stream {
 public:
  explicit Stream(uint64_t seed) : rng_(seed) {}

  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Pick(1, 100) <= percent; }

  k8s::Node Node(int i) {
    k8s::Node n;
    n.name = fmt::format("n{:03}", i);
    n.labels = {{"kubernetes.io/hostname", n.name}, {"topology.kubernetes.io/zone", fmt::format("z{}", Pick(0, 2))}};
    if (Chance(70)) n.labels.emplace_back("tier", Chance(50) ? "a" : "b");
    if (Chance(15)) n.taints.push_back({"dedicated", "batch", k8s::TaintEffect::kNoSchedule});
    n.unschedulable = Chance(3);
    n.allocatable = {{"cpu", k8s::Quantity::FromUnits(Pick(2, 8))},
                     {"memory", k8s::Quantity::FromUnits(int64_t{Pick(4, 16)} << 30)},
                     {"pods", k8s::Quantity::FromUnits(Pick(4, 30))}};
    return n;
  }

  static k8s::PodAffinityTerm Term(const std::string& app, const std::string& key) {
    k8s::PodAffinityTerm t;
    t.label_selector = k8s::LabelSelector{{{"app", app}}, {}};
    t.topology_key = key;
    return t;
  }

  std::string App() { return std::vector<std::string>{"web", "db", "cache", "batch"}[Pick(0, 3)]; }
  std::string Key() { return Chance(50) ? "kubernetes.io/hostname" : "topology.kubernetes.io/zone"; }

  // A template: what its pods share.
  k8s::Pod Template(int t) {
    k8s::Pod p;
    p.name = fmt::format("t{}", t);
    p.namespace_name = "default";
    std::string app = App();
    p.labels = {{"app", app}};
    k8s::Container c;
    c.name = "app";
    c.requests = {{"cpu", k8s::Quantity::FromMilli(Pick(1, 12) * 100)},
                  {"memory", k8s::Quantity::FromUnits(int64_t{Pick(1, 4)} << 28)}};
    p.containers = {c};
    p.priority = std::vector<int32_t>{0, 0, 100, 1000}[Pick(0, 3)];
    if (Chance(25)) p.preemption_policy = "Never";
    if (Chance(30)) {
      k8s::SelectorRequirement r;
      r.key = "tier";
      r.op = Chance(70) ? k8s::SelectorOp::kIn : k8s::SelectorOp::kNotIn;
      r.values = {"a"};
      p.affinity.node_affinity.emplace();
      p.affinity.node_affinity->required = std::vector<k8s::NodeSelectorTerm>{{{r}, {}}};
    }
    if (Chance(30)) p.tolerations.push_back({"dedicated", k8s::TolerationOp::kEqual, "batch", std::nullopt, std::nullopt});
    if (Chance(35)) {  // required anti-affinity to its own kind
      p.affinity.pod_anti_affinity.emplace();
      p.affinity.pod_anti_affinity->required.push_back(Term(app, Key()));
    }
    if (Chance(25)) {
      p.affinity.pod_affinity.emplace();
      if (Chance(50)) {
        p.affinity.pod_affinity->required.push_back(Term(App(), "topology.kubernetes.io/zone"));
      } else {
        p.affinity.pod_affinity->preferred.push_back({Pick(1, 100), Term(App(), Key())});
      }
    }
    if (Chance(20)) {
      if (!p.affinity.pod_anti_affinity) p.affinity.pod_anti_affinity.emplace();
      p.affinity.pod_anti_affinity->preferred.push_back({Pick(1, 100), Term(App(), Key())});
    }
    if (Chance(40)) {
      k8s::TopologySpreadConstraint s;
      s.max_skew = Pick(1, 2);
      s.topology_key = Key();
      s.when_unsatisfiable = Chance(50) ? k8s::WhenUnsatisfiable::kDoNotSchedule : k8s::WhenUnsatisfiable::kScheduleAnyway;
      s.label_selector = k8s::LabelSelector{{{"app", app}}, {}};
      p.topology_spread.push_back(s);
    }
    return p;
  }

 private:
  std::mt19937_64 rng_;
};

struct Run {
  std::unique_ptr<engine::Cluster> cluster;
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::Scheduler> scheduler;
};

// The same random cluster, engine and stream each time for one seed.
std::vector<std::string> Schedule(uint64_t seed, bool incremental, engine::Backend backend) {
  Stream s(seed);
  auto cluster = std::make_unique<engine::Cluster>();
  int nodes = s.Pick(8, 40) + (s.Chance(25) ? 100 : 0);  // past 100 nodes, sampling applies
  for (int i = 0; i < nodes; ++i) cluster->AddNode(s.Node(i));
  // Pods already bound, some carrying affinity terms (kube's existing-pod rules).
  int templates = s.Pick(2, 7);
  std::vector<k8s::Pod> shapes;
  for (int t = 0; t < templates; ++t) shapes.push_back(s.Template(t));
  for (int i = 0, n = s.Pick(0, nodes); i < n; ++i) {
    k8s::Pod p = s.Template(100 + i);
    p.name = fmt::format("bound-{}", i);
    p.priority = s.Pick(0, 1) * 50;
    p.node_name = fmt::format("n{:03}", s.Pick(0, nodes - 1));
    p.phase = k8s::PodPhase::kRunning;
    cluster->BindPod(p);
  }
  engine::EngineOptions options;
  options.backend = backend;
  options.verify_incremental = incremental;
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, options, diags);
  REQUIRE(engine);
  engine::ScheduleOptions schedule;
  schedule.incremental = incremental;
  if (s.Chance(30)) schedule.random_seed = seed;
  if (s.Chance(30)) schedule.percentage_of_nodes_to_score = s.Pick(0, 60);
  engine::Scheduler scheduler(*engine, *cluster, schedule);
  std::vector<k8s::Pod> queue;
  for (int i = 0, n = s.Pick(10, 60); i < n; ++i) {
    // Zipf-like: the first templates are the big ones.
    int t = std::min(templates - 1, static_cast<int>(s.Pick(0, templates * templates - 1) / templates));
    t = s.Chance(60) ? 0 : t;
    k8s::Pod p = shapes[static_cast<size_t>(t)];
    p.name = fmt::format("{}-{}", p.name, i);
    queue.push_back(std::move(p));
  }
  std::vector<std::string> lines;
  for (const engine::Outcome* o : scheduler.Run(std::move(queue))) {
    lines.push_back(fmt::format("{} -> {} score {} feasible {} attempts {} preempted [{}] {}", o->pod.name,
                                o->node.value_or("Pending"), o->score, o->feasible, o->attempts,
                                fmt::join(o->preempted, ","), o->node ? "" : o->Summary()));
  }
  if (incremental) {
    const engine::ScheduleStats& stats = scheduler.Stats();
    CHECK(stats.decisions.full + stats.decisions.incremental > 0);
  }
  return lines;
}

}  // namespace

// Schedules seeds [first, last] from scratch (interpreter) and
// incrementally (`backend`), checks the outcomes equal; how many pods.
static size_t SameOutcomes(uint64_t first, uint64_t last, engine::Backend backend) {
  size_t pods = 0;
  for (uint64_t seed = first; seed <= last; ++seed) {
    CAPTURE(seed);
    std::vector<std::string> full = Schedule(seed, false, engine::Backend::kInterp);
    std::vector<std::string> incremental = Schedule(seed, true, backend);
    REQUIRE(full.size() == incremental.size());
    for (size_t i = 0; i < full.size(); ++i) CHECK(incremental[i] == full[i]);
    pods += full.size();
  }
  return pods;
}

TEST_CASE("incremental decisions equal decisions from scratch on random streams") {
  CHECK(SameOutcomes(1, 24, engine::Backend::kInterp) > 500);
}

TEST_CASE("incremental decisions with native kernels equal decisions from scratch") {
  if (!engine::Engine::HasJit()) return;
  SameOutcomes(41, 42, engine::Backend::kJit);
}

TEST_CASE("pods of one template after the first take the incremental path and evaluate few rows") {
  auto cluster = std::make_unique<engine::Cluster>();
  for (int i = 0; i < 60; ++i) {
    k8s::Node n;
    n.name = fmt::format("n{}", i);
    n.labels = {{"kubernetes.io/hostname", n.name}, {"topology.kubernetes.io/zone", fmt::format("z{}", i % 3)}};
    n.allocatable = {{"cpu", k8s::Quantity::FromUnits(4)}, {"pods", k8s::Quantity::FromUnits(110)}};
    cluster->AddNode(n);
  }
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
  REQUIRE(engine);
  engine::Scheduler scheduler(*engine, *cluster, {});
  k8s::Pod shape;
  shape.labels = {{"app", "web"}};
  k8s::Container c;
  c.name = "web";
  c.requests = {{"cpu", k8s::Quantity::FromMilli(500)}};
  shape.containers = {c};
  shape.affinity.pod_anti_affinity.emplace();
  shape.affinity.pod_anti_affinity->required.push_back(Stream::Term("web", "kubernetes.io/hostname"));
  std::vector<k8s::Pod> queue;
  for (int i = 0; i < 30; ++i) {
    k8s::Pod p = shape;
    p.name = fmt::format("web-{}", i);
    queue.push_back(std::move(p));
  }
  size_t placed = 0;
  for (const engine::Outcome* o : scheduler.Run(std::move(queue))) placed += o->node ? 1 : 0;
  CHECK(placed == 30);
  const engine::ScheduleStats& stats = scheduler.Stats();
  CHECK(stats.templates == 1);
  // The first pod keeps nothing (most shapes are seen once), the second
  // keeps its full decision, the other 28 are brought up to date.
  CHECK(stats.decisions.full == 2);
  CHECK(stats.decisions.full_because.at("the template's first pod") == 1);
  CHECK(stats.decisions.full_because.at("the template's second pod (its first keeps nothing: most shapes are seen once)") == 1);
  CHECK(stats.decisions.incremental == 28);
  // A bind changes one row for every plugin here (the hostname domain is the
  // node); a full pass would read 60 rows per plugin per pod.
  CHECK(stats.decisions.rows_evaluated < 28 * 60);
  CHECK(stats.decisions.plugins_on_every_row == 0);
}

constexpr const char* kTwoGpus = "[{name: gpu-0, attributes: {memory: {int: 8}}}, {name: gpu-1, attributes: {memory: {int: 8}}}]";

// 40 nodes with two devices each (n0's as given); 30 pods of a Job, each
// with the ResourceClaim its ResourceClaimTemplate made for it.
std::unique_ptr<engine::Cluster> DraCluster(int nodes = 40, int pods = 30, const std::string& class_selector = R"('device.driver == "gpu.example.com"')",
                                            const std::string& n0_devices = kTwoGpus) {
  std::string text = R"(apiVersion: v1
kind: List
items:
- {apiVersion: resource.k8s.io/v1, kind: ResourceClaimTemplate, metadata: {name: one-gpu, namespace: default}, spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}}
)";
  text += fmt::format(R"(- {{apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {{name: gpu}}, spec: {{selectors: [{{cel: {{expression: {}}}}}]}}}}
)",
                      class_selector);
  for (int i = 0; i < nodes; ++i) {
    text += fmt::format(R"(- {{apiVersion: v1, kind: Node, metadata: {{name: n{0}, labels: {{kubernetes.io/hostname: n{0}}}}}, status: {{allocatable: {{cpu: '8', pods: '110'}}}}}}
- {{apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {{name: n{0}-gpus}}, spec: {{driver: gpu.example.com, nodeName: n{0}, pool: {{name: n{0}, generation: 1, resourceSliceCount: 1}}, devices: {1}}}}}
)",
                        i, i == 0 ? n0_devices : kTwoGpus);
  }
  for (int i = 0; i < pods; ++i) {
    text += fmt::format(R"(- {{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {{name: train-{0}-gpu, namespace: default, ownerReferences: [{{apiVersion: v1, kind: Pod, name: train-{0}, uid: u{0}, controller: true}}]}}, spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu}}}}]}}}}}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: train-{0}, namespace: default, uid: u{0}, ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: train, uid: job, controller: true}}]}}
  spec:
    containers: [{{name: t, image: trainer, resources: {{requests: {{cpu: '1'}}, claims: [{{name: gpu}}]}}}}]
    resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  status: {{phase: Pending, resourceClaimStatuses: [{{name: gpu, resourceClaimName: train-{0}-gpu}}]}}
)",
                        i);
  }
  DiagnosticSink diags;
  auto cluster = engine::Cluster::Load(std::make_shared<const Source>("dra.yaml", text), diags);
  REQUIRE_MESSAGE(cluster != nullptr, RenderAll(diags));
  return cluster;
}

// The cluster's pending pods scheduled in order, a line each: where each
// went, its score, and kube's summary when it went nowhere.
std::vector<std::string> ScheduleAll(engine::Cluster& cluster, bool incremental, engine::ScheduleStats* stats) {
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
  REQUIRE(engine);
  engine::ScheduleOptions options;
  options.incremental = incremental;
  engine::Scheduler scheduler(*engine, cluster, options);
  std::vector<std::string> lines;
  for (const engine::Outcome* o : scheduler.Run(cluster.Report().pending)) {
    lines.push_back(fmt::format("{} -> {} score {} {}", o->pod.name, o->node.value_or("Pending"), o->score,
                                o->node ? "" : o->Summary()));
  }
  *stats = scheduler.Stats();
  return lines;
}

TEST_CASE("pods with a claim of their own search only the nodes whose devices a bind took") {
  auto run = [](bool incremental, uint64_t* searches) {
    auto cluster = DraCluster();
    uint64_t before = dra::NodeSearches();
    engine::ScheduleStats stats;
    std::vector<std::string> lines = ScheduleAll(*cluster, incremental, &stats);
    *searches = dra::NodeSearches() - before;
    if (incremental) {
      CHECK(stats.templates == 1);
      CHECK(stats.decisions.full == 2);
      CHECK(stats.decisions.incremental == 28);
    }
    return lines;
  };
  uint64_t full_searches = 0, incremental_searches = 0;
  std::vector<std::string> full = run(false, &full_searches);
  std::vector<std::string> incremental = run(true, &incremental_searches);
  REQUIRE(full.size() == 30);
  CHECK(incremental == full);
  for (const std::string& line : full) CHECK(line.find("Pending") == std::string::npos);
  // From scratch every pod searches all 40 nodes. Incrementally the first
  // two pods do; each later one searches the node the last bind took a
  // device on, and each bind checks its node once.
  CHECK(full_searches >= 30 * 40);
  CHECK(incremental_searches <= 2 * 40 + 28 * 1 + 30);
}

TEST_CASE("a node whose device a selector fails on ends the attempt once a bind makes the search reach it") {
  // n0's third device lacks the attribute the class reads: the search errs
  // there once its first two are taken, and kube ends every later attempt
  // with that error (DynamicResources' Filter returns Error). Until then
  // decisions are incremental.
  auto run = [](bool incremental) {
    auto cluster = DraCluster(4, 10, R"('device.attributes["gpu.example.com"].memory >= 1')",
                              "[{name: gpu-0, attributes: {memory: {int: 8}}}, {name: gpu-1, attributes: {memory: {int: 8}}}, "
                              "{name: bad-2}]");
    engine::ScheduleStats stats;
    std::vector<std::string> lines = ScheduleAll(*cluster, incremental, &stats);
    if (incremental) CHECK(stats.decisions.incremental > 0);
    return lines;
  };
  std::vector<std::string> full = run(false), incremental = run(true);
  CHECK(incremental == full);
  size_t errors = 0;
  for (const std::string& line : full) errors += line.find("running \"DynamicResources\" filter plugin") != std::string::npos;
  CHECK(errors > 0);
  CHECK(errors < full.size());
}

TEST_CASE("kept decisions past the memory bound are dropped and decided in full - with the same outcomes") {
  auto run = [](bool incremental, size_t limit, engine::ScheduleStats* stats) {
    auto cluster = std::make_unique<engine::Cluster>();
    for (int i = 0; i < 40; ++i) {
      k8s::Node n;
      n.name = fmt::format("n{}", i);
      n.labels = {{"kubernetes.io/hostname", n.name}, {"topology.kubernetes.io/zone", fmt::format("z{}", i % 3)}};
      n.allocatable = {{"cpu", k8s::Quantity::FromUnits(2 + i % 5)}, {"pods", k8s::Quantity::FromUnits(110)}};
      cluster->AddNode(n);
    }
    DiagnosticSink diags;
    auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
    REQUIRE(engine);
    engine::ScheduleOptions options;
    options.incremental = incremental;
    options.kept_bytes_limit = limit;
    engine::Scheduler scheduler(*engine, *cluster, options);
    std::vector<k8s::Pod> queue;
    for (int i = 0; i < 60; ++i) {  // three templates, taking turns
      k8s::Pod p;
      p.name = fmt::format("p{}", i);
      std::string app = fmt::format("app{}", i % 3);
      p.labels = {{"app", app}};
      k8s::Container c;
      c.name = "main";
      c.requests = {{"cpu", k8s::Quantity::FromMilli(300 + 200 * (i % 3))}};
      p.containers = {c};
      if (i % 3 == 1) {
        p.affinity.pod_anti_affinity.emplace();
        p.affinity.pod_anti_affinity->required.push_back(Stream::Term(app, "kubernetes.io/hostname"));
      }
      queue.push_back(std::move(p));
    }
    std::vector<std::string> lines;
    for (const engine::Outcome* o : scheduler.Run(std::move(queue))) {
      lines.push_back(fmt::format("{} {} {} {}", o->pod.name, o->node.value_or("-"), o->score, o->feasible));
    }
    if (stats != nullptr) *stats = scheduler.Stats();
    return lines;
  };
  engine::ScheduleStats bounded, unbounded;
  std::vector<std::string> full = run(false, SIZE_MAX, nullptr);
  CHECK(run(true, 1, &bounded) == full);  // every switch of template drops the others
  CHECK(run(true, SIZE_MAX, &unbounded) == full);
  CHECK(bounded.decisions.full_because["its kept decision was dropped to bound memory"] > 0);
  // Full decisions for each template's first two pods alone (the first
  // keeps nothing). Four templates: app0's first pod came before any
  // selector read `app`, so its template left the label out and has that
  // pod alone; once app1's anti-affinity term is bound, app0's pods keep
  // it, and are of a new one (pod_template.h).
  CHECK(unbounded.templates == 4);
  CHECK(unbounded.decisions.full_because["the template's first pod"] == 4);
  CHECK(unbounded.decisions.full_because["the template's second pod (its first keeps nothing: most shapes are seen once)"] == 3);
  CHECK(unbounded.decisions.full == 7);
}

TEST_CASE("templates past max_templates are dropped and planned again - with the same outcomes") {
  // Twelve shapes (cpu requests) taking turns, 96 pods; eight templates kept
  // at most: shapes come back after their plans were dropped.
  auto run = [](bool incremental, size_t max_templates, engine::ScheduleStats* stats, size_t* kept) {
    auto cluster = std::make_unique<engine::Cluster>();
    for (int i = 0; i < 30; ++i) {
      k8s::Node n;
      n.name = fmt::format("n{}", i);
      n.labels = {{"kubernetes.io/hostname", n.name}};
      n.allocatable = {{"cpu", k8s::Quantity::FromUnits(3 + i % 4)}, {"pods", k8s::Quantity::FromUnits(110)}};
      cluster->AddNode(n);
    }
    DiagnosticSink diags;
    auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
    REQUIRE(engine);
    engine::ScheduleOptions options;
    options.incremental = incremental;
    options.max_templates = max_templates;
    engine::Scheduler scheduler(*engine, *cluster, options);
    std::vector<k8s::Pod> queue;
    for (int i = 0; i < 96; ++i) {
      k8s::Pod p;
      p.name = fmt::format("p{}", i);
      k8s::Container c;
      c.name = "main";
      c.requests = {{"cpu", k8s::Quantity::FromMilli(100 + 50 * (i % 12))}};
      p.containers = {c};
      queue.push_back(std::move(p));
    }
    std::vector<std::string> lines;
    for (const engine::Outcome* o : scheduler.Run(std::move(queue))) {
      lines.push_back(fmt::format("{} {} {} {}", o->pod.name, o->node.value_or("-"), o->score, o->feasible));
    }
    if (stats != nullptr) *stats = scheduler.Stats();
    if (kept != nullptr) *kept = scheduler.KeptTemplates();
    return lines;
  };
  engine::ScheduleStats bounded, unbounded;
  size_t kept_bounded = 0, kept_unbounded = 0;
  std::vector<std::string> full = run(false, 4096, nullptr, nullptr);
  CHECK(run(true, 8, &bounded, &kept_bounded) == full);
  CHECK(run(true, 4096, &unbounded, &kept_unbounded) == full);
  CHECK(kept_unbounded == 12);
  CHECK(unbounded.templates == 12);
  CHECK(kept_bounded <= 8);
  CHECK(bounded.templates > 12);  // dropped shapes were planned again
}
