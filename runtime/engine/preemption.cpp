#include "runtime/engine/preemption.h"

#include <algorithm>
#include <climits>
#include <string_view>

#include <fmt/format.h>

#include "k8s/selectors.h"
#include "runtime/sched/profile.h"

namespace policy::engine {
namespace {

// util.MoreImportantPod: higher priority, then the earlier start.
bool MoreImportant(const Victim& a, const Victim& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.start_time.empty() || b.start_time.empty()) return !a.start_time.empty() && b.start_time.empty();
  return a.start_time < b.start_time;
}

struct Candidate {
  std::string node;
  NodeVictims v;
};

}  // namespace

bool FitsOn(Engine& engine, const Cluster& cluster, PodPlan& plan, rt::RowId row) {
  rt::RowId rows[] = {row};
  const rt::Decision& d = engine.Decide(plan, cluster, {.filters_only = true, .rows = rows});
  return std::binary_search(d.feasible.begin(), d.feasible.end(), row);
}

std::optional<NodeVictims> SelectVictimsOnNode(Engine& engine, Cluster& cluster, PodPlan& plan, rt::RowId row) {
  int32_t priority = plan.Pod().priority.value_or(0);
  std::vector<Victim> lower;
  for (const rt::NodeTable::PodOnRow& p : cluster.Table().PodsBoundTo(row)) {
    if (p.priority < priority) lower.push_back({std::string(p.key), std::string(p.uid), p.priority, std::string(p.start_time)});
  }
  if (lower.empty()) return std::nullopt;
  std::stable_sort(lower.begin(), lower.end(), MoreImportant);
  for (const Victim& v : lower) cluster.SetPodAside(v.key);
  if (!FitsOn(engine, cluster, plan, row)) {
    for (const Victim& v : lower) cluster.PutPodBack(v.key);
    return std::nullopt;
  }
  // filterPodsWithPDBViolation: a budget's allowance is used up pod by pod,
  // the more important first.
  std::vector<std::pair<const k8s::PodDisruptionBudget*, int32_t>> allowed;
  for (const auto& [key, budget] : cluster.Table().Storage().budgets) allowed.emplace_back(&budget, budget.disruptions_allowed);
  std::vector<const Victim*> violating, other;
  for (const Victim& v : lower) {
    k8s::StringMap labels = cluster.Table().PodLabels(v.key);
    std::string_view ns = std::string_view(v.key).substr(0, v.key.find('/'));
    bool violates = false;
    for (auto& [budget, left] : allowed) {
      const std::optional<k8s::LabelSelector>& s = budget->selector;
      bool empty = !s || (s->match_labels.empty() && s->match_expressions.empty());
      if (labels.empty() || budget->namespace_name != ns || empty || !k8s::Matches(*s, labels)) continue;
      if (--left < 0) violates = true;
    }
    (violates ? violating : other).push_back(&v);
  }
  // Reprieve as many as fit back, the budget-protected first.
  NodeVictims out;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Victim* v : pass == 0 ? violating : other) {
      cluster.PutPodBack(v->key);
      if (FitsOn(engine, cluster, plan, row)) continue;
      cluster.SetPodAside(v->key);
      out.victims.push_back(*v);
      out.violations += pass == 0 ? 1 : 0;
    }
  }
  for (const Victim& v : out.victims) cluster.PutPodBack(v.key);
  std::stable_sort(out.victims.begin(), out.victims.end(), MoreImportant);
  return out;
}

Preemption Preempt(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const rt::Placement& placement, bool evict) {
  Preemption out;
  std::unique_ptr<PodPlan> plan = evict ? engine.Plan(pod, cluster) : nullptr;
  size_t not_helpful = 0, no_victims = 0;
  std::vector<Candidate> candidates;
  for (const rt::NodeResult& n : placement.nodes) {
    bool unresolvable = false;
    for (size_t r = 0; r < n.first_failing_reasons && r < n.reasons.size(); ++r) {
      unresolvable = unresolvable || n.reasons[r].unresolvable;
    }
    if (unresolvable) {
      ++not_helpful;
      continue;
    }
    std::optional<NodeVictims> v = plan ? SelectVictimsOnNode(engine, cluster, *plan, n.row) : std::nullopt;
    if (!v) {
      ++no_victims;
      continue;
    }
    candidates.push_back({n.name, std::move(*v)});
  }
  if (candidates.empty()) {
    std::vector<std::string> parts;
    if (no_victims > 0) parts.push_back(fmt::format("{} No preemption victims found for incoming pod", no_victims));
    if (not_helpful > 0) parts.push_back(fmt::format("{} Preemption is not helpful for scheduling", not_helpful));
    std::sort(parts.begin(), parts.end());
    out.postscript = fmt::format("preemption: 0/{} nodes are available: {}.", placement.nodes.size(), fmt::join(parts, ", "));
    return out;
  }
  // pickOneNodeForPreemption, criterion by criterion.
  auto highest = [](const Candidate& c) { return c.v.victims.empty() ? INT64_MIN : int64_t{c.v.victims.front().priority}; };
  auto sum = [](const Candidate& c) {
    int64_t s = 0;
    for (const Victim& p : c.v.victims) s += int64_t{p.priority} + int64_t{INT32_MAX} + 1;
    return s;
  };
  // The earliest start among the victims of the highest priority.
  auto earliest = [&](const Candidate& c) {
    std::string t;
    for (const Victim& p : c.v.victims) {
      if (p.priority == highest(c) && !p.start_time.empty() && (t.empty() || p.start_time < t)) t = p.start_time;
    }
    return t;
  };
  const Candidate* best = &candidates.front();
  for (const Candidate& c : candidates) {
    if (&c == best) continue;
    auto better = [&]() {
      if (c.v.violations != best->v.violations) return c.v.violations < best->v.violations;
      if (highest(c) != highest(*best)) return highest(c) < highest(*best);
      if (sum(c) != sum(*best)) return sum(c) < sum(*best);
      if (c.v.victims.size() != best->v.victims.size()) return c.v.victims.size() < best->v.victims.size();
      if (earliest(c) != earliest(*best)) return earliest(c) > earliest(*best);
      return false;  // the first candidate wins the rest
    };
    if (better()) best = &c;
  }
  out.node = best->node;
  out.victims = best->v.victims;
  return out;
}

}  // namespace policy::engine
