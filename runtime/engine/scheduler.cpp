#include "runtime/engine/scheduler.h"

#include <algorithm>
#include <span>

#include "runtime/engine/preemption.h"

namespace policy::engine {
namespace {

std::string Key(const k8s::Pod& pod) { return pod.namespace_name + "/" + pod.name; }

}  // namespace

Scheduler::Scheduler(Engine& engine, Cluster& cluster, std::unordered_map<std::string, k8s::Pod> bound,
                     std::vector<k8s::PodDisruptionBudget> pdbs, ScheduleOptions options)
    : engine_(engine), cluster_(cluster), bound_(std::move(bound)), pdbs_(std::move(pdbs)), options_(options) {
  if (options_.random_seed) random_.emplace(*options_.random_seed);
}

// numFeasibleNodesToFind and the nodes findNodesThatPassFilters would have
// found: the first that many feasible ones from nextStartNodeIndex on,
// wrapping around; the start moves past the nodes looked at.
std::vector<rt::RowId> Scheduler::Sample(const rt::Decision& full) {
  std::span<const rt::RowId> live = cluster_.Table().LiveRows();
  const size_t all = live.size();
  constexpr size_t kMinNodes = 100;
  if (!options_.percentage_of_nodes_to_score || all < kMinNodes) return {};
  int64_t percentage = *options_.percentage_of_nodes_to_score;
  if (percentage == 0) percentage = std::max<int64_t>(5, 50 - static_cast<int64_t>(all) / 125);
  if (percentage >= 100) return {};
  size_t want = std::max(kMinNodes, all * static_cast<size_t>(percentage) / 100);
  if (full.feasible.size() <= want) {  // every node is looked at
    return {};
  }
  std::vector<rt::RowId> rows;
  size_t looked = 0;
  for (; looked < all && rows.size() < want; ++looked) {
    rt::RowId row = live[(next_start_ + looked) % all];
    if (std::binary_search(full.feasible.begin(), full.feasible.end(), row)) rows.push_back(row);
  }
  next_start_ = (next_start_ + looked) % all;
  std::sort(rows.begin(), rows.end());
  return rows;
}

void Scheduler::Cycle(Outcome& o, bool may_preempt) {
  ++o.attempts;
  std::unique_ptr<PodPlan> plan = engine_.Plan(o.pod, cluster_);
  const rt::Decision* decision = &engine_.Decide(*plan, cluster_, {});
  std::vector<rt::RowId> sampled = Sample(*decision);
  if (!sampled.empty()) decision = &engine_.Decide(*plan, cluster_, {.rows = sampled});
  const rt::Decision& d = *decision;
  o.feasible = d.feasible.size();
  if (!d.selected) {
    o.node.reset();
    o.placement = engine_.Explain(*plan, cluster_, d);
    o.postscript.clear();
    if (may_preempt && options_.preemption && o.pod.preemption_policy != "Never" && !d.rejected_by) Preempt(o);
    return;
  }
  size_t pick = *d.selected;
  if (random_) {  // uniformly among the best, as selectHost does
    std::vector<size_t> best;
    for (size_t k = 0; k < d.score.size(); ++k) {
      if (d.score[k] == d.score[*d.selected]) best.push_back(k);
    }
    pick = best[std::uniform_int_distribution<size_t>(0, best.size() - 1)(*random_)];
  }
  o.score = d.score[pick];
  o.node = std::string(cluster_.Table().NodeName(d.feasible[pick]));
  o.placement = {};
  Bind(o);
}

// DefaultPreemption: evict the victims, then bind where the pod now fits.
void Scheduler::Preempt(Outcome& o) {
  Preemption p = engine::Preempt(engine_, cluster_, o.pod, o.placement, bound_, pdbs_);
  if (!p.node) {
    o.postscript = p.postscript;
    return;
  }
  std::vector<std::string> victims;
  for (const k8s::Pod* v : p.victims) victims.push_back(Key(*v));
  for (const std::string& key : victims) {
    const k8s::Pod& v = bound_.at(key);
    cluster_.UnbindPod(v.namespace_name, v.name);
    bound_.erase(key);
    ++preempted_;
  }
  std::unique_ptr<PodPlan> plan = engine_.Plan(o.pod, cluster_);
  const rt::Decision& d = engine_.Decide(*plan, cluster_, {});
  rt::RowId row = *cluster_.Table().FindNode(*p.node);
  auto at = std::lower_bound(d.feasible.begin(), d.feasible.end(), row);
  o.score = at != d.feasible.end() && *at == row ? d.score[static_cast<size_t>(at - d.feasible.begin())] : 0;
  o.node = *p.node;
  o.preempted = std::move(victims);
  o.placement = {};
  Bind(o);
}

void Scheduler::Bind(const Outcome& o) {
  k8s::Pod bound = o.pod;
  bound.node_name = *o.node;
  bound.phase = k8s::PodPhase::kRunning;
  cluster_.BindPod(bound);
  bound_.insert_or_assign(Key(bound), std::move(bound));
}

const Outcome& Scheduler::Place(k8s::Pod pod, bool may_preempt) {
  Outcome& o = outcomes_.emplace_back();
  o.pod = std::move(pod);
  o.order = outcomes_.size() - 1;
  Cycle(o, may_preempt);
  return o;
}

std::vector<const Outcome*> Scheduler::Run(std::vector<k8s::Pod> queue) {
  std::vector<Outcome*> waiting;
  for (size_t i = 0; i < queue.size(); ++i) {
    Outcome& o = outcomes_.emplace_back();
    o.pod = std::move(queue[i]);
    o.order = i;
    waiting.push_back(&o);
  }
  // PrioritySort: higher priority first, then the earlier creationTimestamp,
  // then input order.
  std::stable_sort(waiting.begin(), waiting.end(), [](const Outcome* a, const Outcome* b) {
    int32_t pa = a->pod.priority.value_or(0), pb = b->pod.priority.value_or(0);
    if (pa != pb) return pa > pb;
    const std::string& ta = a->pod.creation_timestamp;
    const std::string& tb = b->pod.creation_timestamp;
    if (ta != tb) return ta.empty() || tb.empty() ? !ta.empty() : ta < tb;
    return a->order < b->order;
  });
  std::vector<const Outcome*> finished;
  while (!waiting.empty()) {
    std::vector<Outcome*> still;
    for (Outcome* o : waiting) {
      Cycle(*o, true);
      if (o->node) {
        finished.push_back(o);
      } else {
        still.push_back(o);
      }
    }
    bool placed = still.size() < waiting.size();
    waiting = std::move(still);
    if (!options_.retry || !placed) break;
  }
  for (Outcome* o : waiting) finished.push_back(o);  // their final attempts came last
  return finished;
}

}  // namespace policy::engine
