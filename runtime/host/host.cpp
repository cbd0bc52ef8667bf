// The hosts' shared core (host.h).

#include "runtime/host/host.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <span>

#include "compiler/k8s/object_reader.h"
#include "runtime/engine/pod_template.h"
#include "runtime/engine/preemption.h"

namespace policy::host {
namespace {

// Never reused: a kept plan is for one epoch of one cluster.
std::atomic<uint64_t> next_epoch{1};

constexpr size_t kKeptPlans = 256;

}  // namespace

// --- ClusterState -----------------------------------------------------------

ClusterState::ClusterState() : cluster_(std::make_unique<engine::Cluster>()), epoch_(next_epoch++) {}

template <typename F>
auto ClusterState::Write(F&& change) {
  {
    std::unique_lock lock(mutex_);
    ++writers_waiting_;
    changed_.wait(lock, [&] { return readers_ == 0 && !writing_; });
    --writers_waiting_;
    writing_ = true;
  }
  struct Done {
    ClusterState* s;
    ~Done() {
      std::lock_guard lock(s->mutex_);
      s->writing_ = false;
      s->changed_.notify_all();
    }
  } done{this};
  return change();
}

bool ClusterState::Load(std::shared_ptr<const Source> snapshot, DiagnosticSink& diags) {
  return Load(std::vector<std::shared_ptr<const Source>>{std::move(snapshot)}, diags);
}

bool ClusterState::Load(const std::vector<std::shared_ptr<const Source>>& files, DiagnosticSink& diags) {
  std::unique_ptr<engine::Cluster> loaded = engine::Cluster::Load(files, diags);
  if (!loaded) return false;
  Write([&] {
    cluster_ = std::move(loaded);
    epoch_ = next_epoch++;
    return 0;
  });
  return true;
}

std::optional<engine::EventOutcome> ClusterState::Apply(const Source& event, DiagnosticSink& diags) {
  return Write([&] {
    std::optional<engine::EventOutcome> done = engine::ApplyWatchEvent(*cluster_, event, diags);
    // Nodes and pods reach plans through the table's dictionaries; other
    // objects are read when a pod is planned (a Service's selector makes
    // default spread constraints, a PriorityClass a priority): plan again.
    if (done && done->changed && done->kind != "Node" && done->kind != "Pod") epoch_ = next_epoch++;
    return done;
  });
}

bool ClusterState::Assume(k8s::Pod pod, const std::string& node) {
  pod.node_name = node;
  pod.phase = k8s::PodPhase::kRunning;
  return Write([&] {
    if (!cluster_->Table().FindNode(node)) return false;
    cluster_->UnbindPod(pod.namespace_name, pod.name);
    cluster_->BindPod(pod);
    return true;
  });
}

bool ClusterState::Forget(const std::string& namespace_name, const std::string& name) {
  return Write([&] { return cluster_->UnbindPod(namespace_name.empty() ? "default" : namespace_name, name); });
}

size_t ClusterState::NodeCount() { return Read().cluster().Table().NodeCount(); }
size_t ClusterState::PodCount() { return Read().cluster().Table().BoundPodCount(); }

ClusterState::View ClusterState::Read() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !writing_ && writers_waiting_ == 0; });
  ++readers_;
  return View(this);
}

ClusterState::View::~View() {
  if (state_ == nullptr) return;
  std::lock_guard lock(state_->mutex_);
  --state_->readers_;
  state_->changed_.notify_all();
}

// --- Decisions ---------------------------------------------------------------

// A plan kept for the pods of one template at one cluster epoch; one
// decision at a time uses it.
struct Decisions::KeptPlan {
  k8s::Pod pod;  // the template
  uint64_t epoch = 0;
  std::mutex use;
  std::unique_ptr<engine::PodPlan> plan;
  uint64_t used = 0;
};

Decisions::Decisions(std::unique_ptr<engine::Engine> engine) : engine_(std::move(engine)) {
  for (const engine::PluginSpec& p : engine_->Plugins()) max_score_ += p.score ? p.weight * 100 : 0;
}

Decisions::~Decisions() = default;

std::shared_ptr<Decisions::KeptPlan> Decisions::PlanFor(const k8s::Pod& pod, uint64_t epoch) {
  std::lock_guard lock(plans_mutex_);
  size_t hash = engine::TemplateHash(pod);
  std::shared_ptr<KeptPlan> found;
  auto [begin, end] = plans_.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    if (it->second->epoch == epoch && engine::SameTemplate(it->second->pod, pod)) found = it->second;
  }
  if (!found) {
    found = std::make_shared<KeptPlan>();
    found->pod = pod;
    found->epoch = epoch;
    plans_.emplace(hash, found);
  }
  found->used = ++uses_;
  while (plans_.size() > kKeptPlans) {  // the least recently used one nobody is deciding with
    auto oldest = plans_.end();
    for (auto it = plans_.begin(); it != plans_.end(); ++it) {
      if (it->second.use_count() == 1 && (oldest == plans_.end() || it->second->used < oldest->second->used)) oldest = it;
    }
    if (oldest == plans_.end()) break;
    plans_.erase(oldest);
  }
  return found;
}

Answer Decisions::Decide(k8s::Pod pod, const ClusterState::View& view, const std::vector<std::string>* candidates,
                         Detail detail) {
  const engine::Cluster& cluster = view.cluster();
  const rt::NodeTable& table = cluster.Table();
  Answer answer;
  answer.pod = pod.namespace_name + "/" + pod.name;
  std::vector<rt::RowId> rows;
  if (candidates != nullptr) {
    for (const std::string& name : *candidates) {
      if (std::optional<rt::RowId> row = table.FindNode(name)) {
        rows.push_back(*row);
      } else {
        answer.failed.push_back({name, "node(s) not found in policyc's cluster state", true});
      }
    }
    std::sort(rows.begin(), rows.end());  // the decision reads them in table order
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  std::shared_ptr<KeptPlan> kept;
  std::unique_ptr<engine::PodPlan> own;
  std::unique_lock<std::mutex> using_kept;
  engine::PodPlan* plan = nullptr;
  if (engine_->SharesPlans() && pod.volumes.empty()) {
    kept = PlanFor(pod, view.epoch());
    using_kept = std::unique_lock(kept->use);
    if (!kept->plan) kept->plan = engine_->Plan(std::move(pod), cluster);
    plan = kept->plan.get();
  } else {
    own = engine_->Plan(std::move(pod), cluster);
    plan = own.get();
  }
  answer.notes = NotesFor(plan->Pod(), engine_->Profile().scheduler_name);
  rt::Placement& placement = answer.placement;
  std::vector<const rt::NodeResult*> feasible;
  if (candidates != nullptr && rows.empty()) {  // no node to decide among
    placement.summary = "no nodes available to schedule pods";
  } else if (detail == Detail::kVerdicts) {
    // Totals from the decision; words for the rejected rows alone.
    rt::Decider decider;  // this call's own: decisions run at once on many threads
    const rt::Decision& d =
        engine_->Decide(*plan, cluster, decider, {.threads = 1, .plugin_scores = false, .verify_kernels = false, .rows = rows});
    std::vector<rt::RowId> rejected;
    std::span<const rt::RowId> decided = candidates != nullptr ? std::span<const rt::RowId>(rows) : table.LiveRows();
    std::set_difference(decided.begin(), decided.end(), d.feasible.begin(), d.feasible.end(), std::back_inserter(rejected));
    for (size_t i = 0; i < d.feasible.size(); ++i) {
      rt::NodeResult n;
      n.row = d.feasible[i];
      n.name = std::string(table.NodeName(d.feasible[i]));
      n.feasible = true;
      n.score = d.score[i];
      placement.nodes.push_back(std::move(n));
    }
    if (d.selected) placement.selected = *d.selected;
    placement.feasible = d.feasible.size();
    if (!rejected.empty()) {
      rt::Placement words = engine_->Explain(*plan, cluster, d, rejected);
      for (rt::NodeResult& n : words.nodes) placement.nodes.push_back(std::move(n));
    }
  } else {
    rt::Decider decider;
    const rt::Decision& d =
        engine_->Decide(*plan, cluster, decider, {.threads = 1, .plugin_scores = true, .verify_kernels = false, .rows = rows});
    placement = engine_->Explain(*plan, cluster, d, rows);
  }
  if (answer.notes.gated) placement.summary = "Scheduling is blocked due to non-empty scheduling gates";
  for (const rt::NodeResult& n : placement.nodes) {
    if (n.feasible) {
      feasible.push_back(&n);
      continue;
    }
    Answer::Failed failed{n.name, "", false};
    for (const rt::NodeReason& r : n.reasons) {
      if (failed.reason.find(r.reason) == std::string::npos) failed.reason += (failed.reason.empty() ? "" : ", ") + r.reason;
      failed.unresolvable = failed.unresolvable || engine::Unresolvable(r.plugin, r.reason);
    }
    answer.failed.push_back(std::move(failed));
  }
  std::stable_sort(feasible.begin(), feasible.end(), [](const auto* a, const auto* b) { return a->score > b->score; });
  for (const rt::NodeResult* n : feasible) answer.feasible.emplace_back(n->name, n->score);
  if (placement.selected && !answer.notes.gated) answer.selected = placement.nodes[*placement.selected].name;
  answer.summary = placement.summary;
  return answer;
}

}  // namespace policy::host
