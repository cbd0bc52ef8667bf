#include "runtime/engine/preemption.h"

#include <algorithm>
#include <climits>
#include <map>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "compiler/k8s/selectors.h"

namespace policy::engine {
namespace {

int64_t Priority(const k8s::Pod& pod) { return pod.priority.value_or(0); }

// util.MoreImportantPod: higher priority, then the earlier start.
bool MoreImportant(const k8s::Pod* a, const k8s::Pod* b) {
  if (Priority(*a) != Priority(*b)) return Priority(*a) > Priority(*b);
  if (a->start_time.empty() || b->start_time.empty()) return !a->start_time.empty() && b->start_time.empty();
  return a->start_time < b->start_time;
}

bool Fits(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const std::string& node) {
  std::unique_ptr<PodPlan> plan = engine.Plan(pod, cluster);
  const rt::Decision& d = engine.Decide(*plan, cluster, {});
  std::optional<rt::RowId> row = cluster.Table().FindNode(node);
  return row && std::binary_search(d.feasible.begin(), d.feasible.end(), *row);
}

struct Candidate {
  std::string node;
  size_t order = 0;
  std::vector<const k8s::Pod*> victims;
  int violations = 0;
};

}  // namespace

bool Unresolvable(const std::string& plugin, const std::string& reason) {
  if (plugin == "NodeUnschedulable" || plugin == "NodeName" || plugin == "TaintToleration" ||
      plugin == "NodeAffinity" || plugin == "VolumeBinding" || plugin == "VolumeZone") {
    return true;
  }
  if (plugin == "InterPodAffinity") return reason == "node(s) didn't match pod affinity rules";
  if (plugin == "PodTopologySpread") return reason.find("missing required label") != std::string::npos;
  return false;
}

Preemption Preempt(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const rt::Placement& placement,
                   const std::unordered_map<std::string, k8s::Pod>& bound,
                   const std::vector<k8s::PodDisruptionBudget>& pdbs) {
  Preemption out;
  // Only pods of lower priority can be victims: those, by node.
  std::unordered_map<std::string_view, std::vector<const k8s::Pod*>> by_node;
  for (const auto& [key, p] : bound) {
    if (Priority(p) < Priority(pod)) by_node[p.node_name].push_back(&p);
  }
  size_t not_helpful = 0, no_victims = 0;
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < placement.nodes.size(); ++i) {
    const rt::NodeResult& n = placement.nodes[i];
    bool unresolvable = false;
    for (size_t r = 0; r < n.first_failing_reasons && r < n.reasons.size(); ++r) {
      unresolvable = unresolvable || Unresolvable(n.reasons[r].plugin, n.reasons[r].reason);
    }
    if (unresolvable) {
      ++not_helpful;
      continue;
    }
    // Every pod of lower priority goes; does the pod fit then?
    std::vector<const k8s::Pod*> lower;
    if (auto on_node = by_node.find(n.name); on_node != by_node.end()) lower = on_node->second;
    std::sort(lower.begin(), lower.end(), MoreImportant);
    for (const k8s::Pod* p : lower) cluster.UnbindPod(p->namespace_name, p->name);
    if (lower.empty() || !Fits(engine, cluster, pod, n.name)) {
      for (const k8s::Pod* p : lower) cluster.BindPod(*p);
      ++no_victims;
      continue;
    }
    // filterPodsWithPDBViolation: a budget's allowance is used up pod by pod.
    std::vector<int32_t> allowed;
    for (const k8s::PodDisruptionBudget& b : pdbs) allowed.push_back(b.disruptions_allowed);
    std::vector<const k8s::Pod*> violating, other;
    for (const k8s::Pod* p : lower) {
      bool violates = false;
      for (size_t b = 0; b < pdbs.size() && !p->labels.empty(); ++b) {
        const k8s::PodDisruptionBudget& budget = pdbs[b];
        bool empty = !budget.selector || (budget.selector->match_labels.empty() && budget.selector->match_expressions.empty());
        if (budget.namespace_name != p->namespace_name || empty || !k8s::Matches(*budget.selector, p->labels)) continue;
        if (--allowed[b] < 0) violates = true;
      }
      (violates ? violating : other).push_back(p);
    }
    // Reprieve as many as fit back, the budget-protected first.
    Candidate c{n.name, i, {}, 0};
    for (int pass = 0; pass < 2; ++pass) {
      for (const k8s::Pod* p : pass == 0 ? violating : other) {
        cluster.BindPod(*p);
        if (Fits(engine, cluster, pod, n.name)) continue;
        cluster.UnbindPod(p->namespace_name, p->name);
        c.victims.push_back(p);
        c.violations += pass == 0 ? 1 : 0;
      }
    }
    for (const k8s::Pod* p : c.victims) cluster.BindPod(*p);
    std::sort(c.victims.begin(), c.victims.end(), MoreImportant);
    candidates.push_back(std::move(c));
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
  auto highest = [](const Candidate& c) { return c.victims.empty() ? INT64_MIN : Priority(*c.victims.front()); };
  auto sum = [](const Candidate& c) {
    int64_t s = 0;
    for (const k8s::Pod* p : c.victims) s += Priority(*p) + int64_t{INT32_MAX} + 1;
    return s;
  };
  // The earliest start among the victims of the highest priority.
  auto earliest = [&](const Candidate& c) {
    std::string t;
    for (const k8s::Pod* p : c.victims) {
      if (Priority(*p) == highest(c) && !p->start_time.empty() && (t.empty() || p->start_time < t)) t = p->start_time;
    }
    return t;
  };
  const Candidate* best = &candidates.front();
  for (const Candidate& c : candidates) {
    if (&c == best) continue;
    auto better = [&]() {
      if (c.violations != best->violations) return c.violations < best->violations;
      if (highest(c) != highest(*best)) return highest(c) < highest(*best);
      if (sum(c) != sum(*best)) return sum(c) < sum(*best);
      if (c.victims.size() != best->victims.size()) return c.victims.size() < best->victims.size();
      if (earliest(c) != earliest(*best)) return earliest(c) > earliest(*best);
      return false;  // the first candidate wins the rest
    };
    if (better()) best = &c;
  }
  out.node = best->node;
  out.victims = best->victims;
  return out;
}

}  // namespace policy::engine
