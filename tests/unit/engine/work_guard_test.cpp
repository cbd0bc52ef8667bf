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

std::unique_ptr<engine::Engine> DefaultEngine() {
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), {}, {}, diags);
  REQUIRE_MESSAGE(engine, RenderAll(diags));
  return engine;
}

struct Run {
  std::vector<std::optional<std::string>> nodes;  // by queue position
  engine::ScheduleStats stats;
};

Run Schedule(engine::Cluster& cluster, std::vector<k8s::Pod> queue, engine::ScheduleOptions options) {
  auto engine = DefaultEngine();
  engine::Scheduler scheduler(*engine, cluster, {}, {}, options);
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

TEST_CASE("real pods share their template: the token volume changes neither plan nor path") {
  auto cluster = Realistic(60, 4, 400);
  std::vector<k8s::Pod> queue = cluster->Report().pending;
  REQUIRE(queue.size() >= 400);
  // What the queue holds: every pod has a volume; the workloads whose pods
  // the plugins may treat alike (no claim) are the templates to expect.
  std::set<std::string> shared_workloads;
  size_t with_claims = 0;
  for (const k8s::Pod& p : queue) {
    REQUIRE_FALSE(p.volumes.empty());
    REQUIRE(p.controller.has_value());
    if (HasClaim(p)) {
      ++with_claims;
    } else {
      shared_workloads.insert(p.controller->kind + "/" + p.controller->name);
    }
  }
  REQUIRE(with_claims > 0);

  Run incremental = Schedule(*Realistic(60, 4, 400), queue, {});
  const rt::IncrementalStats& d = incremental.stats.decisions;
  CHECK(incremental.stats.templates == shared_workloads.size());
  // A plan of its own only for the pods with claims, one per attempt; every
  // other full decision is a template's first (or a kept one dropped).
  size_t own = incremental.stats.plans - incremental.stats.templates;
  std::string claim_reason(DefaultEngine()->OwnPlanBecause(*std::find_if(queue.begin(), queue.end(), HasClaim)));
  CHECK(claim_reason.find("PersistentVolumeClaim") != std::string::npos);
  for (const auto& entry : d.full_because) {
    const std::string& why = entry.first;
    INFO("full because: " << why);
    CHECK((why == "the template's first pod" || why == claim_reason));
  }
  CHECK(d.full_because.count(claim_reason) == 1);
  CHECK(d.full_because.at(claim_reason) == own);
  CHECK(d.full == shared_workloads.size() + own);
  CHECK(own >= with_claims);  // each claim pod at least once, more when retried
  // And the same placements as deciding every pod from scratch.
  engine::ScheduleOptions per_pod;
  per_pod.incremental = false;
  Run full = Schedule(*cluster, queue, per_pod);
  CHECK(full.nodes == incremental.nodes);
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
