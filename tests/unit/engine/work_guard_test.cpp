// Guards on the work a decision does, counted (never timed), on pods shaped
// as real ones (cluster_gen's realistic snapshot and Pending queue: bare
// pods owned by ReplicaSets, StatefulSet pods with claims, Jobs, every pod
// with its service-account token volume, ~80 label keys a node). A change
// that makes a decision's work grow with incidental volumes, label keys or
// rows nobody asked about fails here.

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "benchmarks/cluster_gen.h"
#include "runtime/engine/scheduler.h"
#include "runtime/interp/work_counters.h"

using namespace policy;

namespace {

std::unique_ptr<engine::Cluster> Realistic(int nodes, int pods_per_node, int pending) {
  bench::ClusterSpec spec;
  spec.nodes = nodes;
  spec.pods_per_node = pods_per_node;
  spec.realistic = true;
  spec.pending = pending;
  auto source = std::make_shared<const Source>("realistic.json", bench::GenerateCluster(spec, bench::Format::kJson));
  DiagnosticSink diags;
  auto cluster = engine::Cluster::Load(source, diags);
  REQUIRE_MESSAGE(cluster != nullptr, RenderAll(diags));
  return cluster;
}

std::unique_ptr<engine::Engine> DefaultEngine(engine::EngineOptions options = {}) {
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, options, diags);
  REQUIRE_MESSAGE(engine, RenderAll(diags));
  return engine;
}

struct Run {
  std::vector<std::optional<std::string>> nodes;  // by queue position
  engine::ScheduleStats stats;
};

// `verify`: every shared decision checked against the pod's own plan and
// every incremental one against a full one (a difference aborts).
Run Schedule(engine::Cluster& cluster, std::vector<k8s::Pod> queue, engine::ScheduleOptions options,
             bool verify = false) {
  engine::EngineOptions engine_options;
  engine_options.verify_incremental = verify;
  auto engine = DefaultEngine(engine_options);
  engine::Scheduler scheduler(*engine, cluster, options);
  Run run;
  run.nodes.resize(queue.size());
  for (const engine::Outcome* o : scheduler.Run(std::move(queue))) run.nodes[o->order] = o->node;
  run.stats = scheduler.Stats();
  return run;
}

bool HasClaim(const k8s::Pod& pod) {
  for (const k8s::Volume& v : pod.volumes) {
    if (k8s::ReadByVolumePlugins(v)) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("real pods share their template: token volumes and claims and labels of their own change neither plan nor path") {
  auto cluster = Realistic(60, 4, 400);
  std::vector<k8s::Pod> queue = cluster->Report().pending;
  REQUIRE(queue.size() >= 400);
  // What the queue holds: every pod has a volume, StatefulSet pods a claim
  // and a pod-name label of their own. Each workload is one template.
  std::set<std::string> workloads;
  std::map<std::string, size_t> pods_of;  // by workload
  size_t with_claims = 0;
  for (const k8s::Pod& p : queue) {
    REQUIRE_FALSE(p.volumes.empty());
    REQUIRE(p.controller.has_value());
    with_claims += HasClaim(p);
    workloads.insert(p.controller->kind + "/" + p.controller->name);
    ++pods_of[p.controller->kind + "/" + p.controller->name];
  }
  // A template's first pod is decided keeping nothing, its second in full
  // keeping the decision, the rest from what was kept.
  size_t full_decisions = 0;
  for (const auto& [workload, pods] : pods_of) full_decisions += std::min<size_t>(pods, 2);
  REQUIRE(with_claims > 0);

  Run incremental = Schedule(*Realistic(60, 4, 400), queue, {}, /*verify=*/true);
  const rt::IncrementalStats& d = incremental.stats.decisions;
  CHECK(incremental.stats.templates == workloads.size());
  CHECK(incremental.stats.plans == incremental.stats.templates);  // no pod planned on its own
  for (const auto& entry : d.full_because) {
    const std::string& why = entry.first;
    INFO("full because: " << why);
    CHECK((why == "the template's first pod" ||
           why == "the template's second pod (its first keeps nothing: most shapes are seen once)"));
  }
  CHECK(d.full == full_decisions);
  // And the same placements as deciding every pod from scratch.
  engine::ScheduleOptions per_pod;
  per_pod.incremental = false;
  Run full = Schedule(*cluster, queue, per_pod);
  CHECK(full.nodes == incremental.nodes);
  // Details name each pod's claim: the template's words are given the
  // pod's names (engine::NameClaims), and the pods still share.
  engine::ScheduleOptions with_details;
  with_details.details = true;
  Run detailed = Schedule(*Realistic(60, 4, 400), queue, with_details);
  CHECK(detailed.nodes == incremental.nodes);
  CHECK(detailed.stats.plans == detailed.stats.templates);
  CHECK(detailed.stats.decisions.full == full_decisions);
}

TEST_CASE("a Pending pod's words cost the rows that changed and details only when asked") {
  // A pod whose required affinity names a label no node has (the queue's
  // typo workload) stays Pending on every node; between its attempts other
  // pods bind, each touching one row.
  constexpr int kNodes = 150;
  auto cluster = Realistic(kNodes, 2, 600);
  std::vector<k8s::Pod> typo, placeable;
  for (const k8s::Pod& p : cluster->Report().pending) {
    bool misses = p.affinity.node_affinity && p.affinity.node_affinity->required &&
                  (*p.affinity.node_affinity->required)[0].match_expressions[0].key == "eks.amazonaws.com/nodegroupp";
    if (misses) typo.push_back(p);
    if (!misses && !HasClaim(p) && p.controller->kind == "Job" && placeable.size() < typo.size() + 20) placeable.push_back(p);
  }
  REQUIRE(typo.size() >= 5);
  std::vector<k8s::Pod> queue;  // typo pods and placeable ones in turn
  for (size_t i = 0; i < typo.size(); ++i) {
    queue.push_back(typo[i]);
    queue.push_back(placeable[i]);
  }
  size_t binds = typo.size();

  for (bool details : {false, true}) {
    CAPTURE(details);
    auto fresh = Realistic(kNodes, 2, 0);
    engine::ScheduleOptions options;
    options.retry = false;
    options.details = details;
    rt::Work().Reset();
    Run run = Schedule(*fresh, queue, options);
    for (size_t i = 0; i < queue.size(); i += 2) CHECK_FALSE(run.nodes[i].has_value());
    uint64_t rows = rt::Work().rows_explained, searches = rt::Work().label_key_searches;
    uint64_t rendered = rt::Work().details_rendered;
    // The first attempt explains every node; each later one only the rows
    // the binds since touched (one each), not every node again.
    CHECK(rows <= kNodes + binds);
    if (!details) {
      CHECK(rendered == 0);
      CHECK(searches == 0);
    } else {
      CHECK(rendered >= kNodes);  // every node's detail, once
      CHECK(rendered <= rows * 4);
      // The did-you-mean is looked for once an explanation, not once a row.
      CHECK(searches >= 1);
      CHECK(searches <= typo.size());
    }
  }

  // Grouped (schedule's records without --all-nodes): the reasons of every
  // node, but a detail only for each group's first node.
  auto fresh = Realistic(kNodes, 2, 0);
  engine::ScheduleOptions options;
  options.retry = false;
  options.groups = true;
  auto engine = DefaultEngine();
  engine::Scheduler scheduler(*engine, *fresh, options);
  rt::Work().Reset();
  std::vector<const engine::Outcome*> outcomes = scheduler.Run(queue);
  uint64_t rendered = rt::Work().details_rendered;
  size_t groups = 0, pending = 0;
  for (const engine::Outcome* o : outcomes) {
    if (o->node) continue;
    ++pending;
    REQUIRE(o->groups != nullptr);
    groups += o->groups->size();
    size_t nodes = 0;
    for (const rt::ReasonGroup& g : *o->groups) {
      CHECK(g.examples.size() <= engine::Engine::kExampleNodes);
      CHECK_FALSE(g.detail.empty());
      nodes = std::max(nodes, g.nodes);
    }
    CHECK(nodes == kNodes);  // the affinity typo: every node
  }
  CHECK(pending == typo.size());
  CHECK(rendered >= 1);
  CHECK(rendered <= groups * 4);  // a few details a group, not one a node
  CHECK(rendered < kNodes);
}

TEST_CASE("pod sets for selectors stay bounded however many shapes come by") {
  auto cluster = Realistic(20, 2, 0);
  auto engine = DefaultEngine();
  size_t shapes = rt::NodeTable::kMaxPodSets + 300;
  for (size_t i = 0; i < shapes; ++i) {
    k8s::Pod pod;
    pod.name = "shape-" + std::to_string(i);
    pod.namespace_name = "apps";
    std::string app = "new-app-" + std::to_string(i);
    pod.labels = {{"app", app}};
    k8s::PodAffinityTerm term;
    term.label_selector = k8s::LabelSelector{{{"app", app}}, {}};
    term.topology_key = "kubernetes.io/hostname";
    pod.affinity.pod_anti_affinity.emplace();
    pod.affinity.pod_anti_affinity->required.push_back(term);
    k8s::Container c;
    c.name = "main";
    c.requests = {{"cpu", k8s::Quantity::FromMilli(10)}};
    pod.containers = {c};
    auto plan = engine->Plan(pod, *cluster);
    const rt::Decision& d = engine->Decide(*plan, *cluster);
    REQUIRE(d.selected.has_value());
    // Every fifth is bound: binds are when sets past the budget go.
    if (i % 5 == 0) {
      pod.node_name = std::string(cluster->Table().NodeName(d.feasible[*d.selected]));
      pod.phase = k8s::PodPhase::kRunning;
      cluster->BindPod(pod);
    }
    CHECK(cluster->Table().PodSetsKept() <= rt::NodeTable::kMaxPodSets + 20);  // the sets of the few decisions since the last bind
  }
  CHECK(cluster->Table().PodSetsCounted() >= shapes);
}
