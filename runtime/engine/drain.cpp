// Cluster compression (drain.h): nodes tried one after another, each one's
// pods placed elsewhere by the scheduling core with preemption off.

#include "runtime/engine/drain.h"

#include <algorithm>
#include <deque>
#include <map>

#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/scheduler.h"

namespace policy::engine {
namespace {

std::string Key(const k8s::Pod& pod) { return pod.namespace_name + "/" + pod.name; }

// kube-scheduler's queue order: priority, then the earlier creation.
bool PlacedFirst(const k8s::Pod* a, const k8s::Pod* b) {
  if (a->priority.value_or(0) != b->priority.value_or(0)) return a->priority.value_or(0) > b->priority.value_or(0);
  return a->creation_timestamp < b->creation_timestamp;
}

double Requested(const rt::NodeTable& table, rt::RowId row) {
  double share = 0;
  for (const char* name : {"cpu", "memory"}) {
    const rt::ResourceColumn* c = table.Resource(name);
    if (c && c->allocatable[row] > 0) share += static_cast<double>(c->requested[row]) / static_cast<double>(c->allocatable[row]);
  }
  return share;
}

std::vector<Headroom> Measure(const rt::NodeTable& table) {
  std::vector<Headroom> out;
  const rt::StringPool& pool = table.pool();
  for (const rt::ResourceColumn& c : table.Resources()) {
    std::string name(pool.Get(c.name));
    if (name == "pods" || name.starts_with("attachable-volumes-")) continue;
    Headroom h{name};
    for (rt::RowId row : table.LiveRows()) {
      h.allocatable_before += c.allocatable[row];
      h.free_before += std::max<int64_t>(0, c.allocatable[row] - c.requested[row]);
    }
    if (h.allocatable_before > 0) out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

bool GoesWithNode(const k8s::Pod& pod) {
  if (pod.controller && (pod.controller->kind == "DaemonSet" || pod.controller->kind == "Node")) return true;
  return k8s::Find(pod.annotations, "kubernetes.io/config.mirror") != nullptr;
}

DrainPlan PlanDrain(Engine& engine, Cluster& cluster, const std::unordered_map<std::string, k8s::Pod>& bound,
                    const std::vector<k8s::Node>& nodes, const DrainOptions& options) {
  DrainPlan plan;
  const rt::NodeTable& table = cluster.Table();
  std::vector<Headroom> before = Measure(table);

  std::map<std::string, const k8s::Node*> node_of;
  for (const k8s::Node& n : nodes) node_of.emplace(n.name, &n);
  // Each node's pods as they are now (moves update it): the snapshot's,
  // and the copies of those moved, bound where they went.
  std::map<std::string, std::map<std::string, const k8s::Pod*>> pods_on;
  for (const auto& [key, pod] : bound) {
    if (table.FindNode(pod.node_name)) pods_on[pod.node_name].emplace(key, &pod);
  }
  std::deque<k8s::Pod> went;  // stable: pods_on points into it

  std::vector<std::string> order = options.nodes;
  if (order.empty()) {
    std::vector<std::pair<double, rt::RowId>> rows;
    for (rt::RowId row : table.LiveRows()) rows.emplace_back(Requested(table, row), row);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [share, row] : rows) order.emplace_back(table.NodeName(row));
  }

  ScheduleOptions schedule;
  schedule.preemption = false;
  schedule.retry = false;
  Scheduler scheduler(engine, cluster, schedule);
  for (const std::string& name : order) {
    if (plan.drained.size() >= options.max_drained) break;
    auto object = node_of.find(name);
    if (object == node_of.end() || !table.FindNode(name)) {
      plan.skipped.push_back(name);
      continue;
    }
    std::vector<const k8s::Pod*> movable;
    DrainedNode drained{name, {}, {}};
    for (const auto& [key, pod] : pods_on[name]) {
      if (GoesWithNode(*pod)) {
        drained.go_along.push_back(key);
      } else {
        movable.push_back(pod);
      }
    }
    std::sort(movable.begin(), movable.end(), PlacedFirst);
    // Without the node (its other pods wait for it), every movable pod placed.
    for (const k8s::Pod* p : movable) cluster.UnbindPod(p->namespace_name, p->name);
    cluster.RemoveNode(name);
    std::vector<k8s::Pod> placed;
    std::optional<PinnedNode> pinned;
    for (const k8s::Pod* p : movable) {
      k8s::Pod again = *p;
      again.node_name.clear();
      const Outcome& o = scheduler.Place(std::move(again), false);
      if (!o.node) {
        // No preemption here: the postscript is DynamicResources' PostFilter
        // alone, said only for a pod with claims (kube says `no new claims to
        // deallocate` for any pod; here it would only puzzle).
        std::string summary = p->resource_claims.empty() ? o.placement().summary : o.Summary();
        pinned = PinnedNode{name, Key(*p), std::move(summary), movable.size()};
        break;
      }
      k8s::Pod moved = *p;
      moved.node_name = *o.node;
      drained.moves.push_back({Key(*p), *o.node});
      placed.push_back(std::move(moved));
    }
    if (pinned) {  // as it was
      for (const k8s::Pod& p : placed) cluster.UnbindPod(p.namespace_name, p.name);
      cluster.AddNode(*object->second);
      for (const k8s::Pod* p : movable) cluster.BindPod(*p);
      plan.pinned.push_back(std::move(*pinned));
      continue;
    }
    for (k8s::Pod& p : placed) {
      const k8s::Pod& now = went.emplace_back(std::move(p));
      pods_on[now.node_name].insert_or_assign(Key(now), &now);
    }
    pods_on.erase(name);
    plan.drained.push_back(std::move(drained));
  }

  std::vector<Headroom> after = Measure(table);
  for (Headroom& h : before) {
    for (const Headroom& a : after) {
      if (a.resource != h.resource) continue;
      h.allocatable_after = a.allocatable_before;
      h.free_after = a.free_before;
    }
  }
  plan.headroom = std::move(before);
  return plan;
}

}  // namespace policy::engine
