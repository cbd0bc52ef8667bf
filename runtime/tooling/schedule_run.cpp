#include "runtime/tooling/schedule_run.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "runtime/columnar/node_table.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/scheduler.h"
#include "runtime/host/placement_json.h"
#include "runtime/sched/resolve_volumes.h"
#include "support/json_writer.h"

namespace policy::tooling {
namespace {

std::string Key(const k8s::Pod& pod) { return pod.namespace_name + "/" + pod.name; }

}  // namespace

void PinToNode(k8s::Pod& pod, const std::string& node) {
  k8s::SelectorRequirement pin;
  pin.key = "metadata.name";
  pin.values = {node};
  if (!pod.affinity.node_affinity) pod.affinity.node_affinity.emplace();
  std::optional<std::vector<k8s::NodeSelectorTerm>>& required = pod.affinity.node_affinity->required;
  if (!required || required->empty()) required = std::vector<k8s::NodeSelectorTerm>{{}};
  for (k8s::NodeSelectorTerm& term : *required) term.match_fields = {pin};
}

void ExpandWorkload(k8s::Pod pod, const rt::NodeTable& table, std::vector<k8s::Pod>& queue) {
  if (pod.template_of.empty()) {
    queue.push_back(std::move(pod));
    return;
  }
  std::string name = pod.name;
  if (pod.template_of.starts_with("DaemonSet/")) {
    for (rt::RowId row : table.LiveRows()) {
      k8s::Pod copy = pod;
      std::string node(table.NodeName(row));
      copy.name = name + "-" + node;
      PinToNode(copy, node);
      queue.push_back(std::move(copy));
    }
    return;
  }
  for (int32_t i = 0; i < pod.template_replicas; ++i) {
    k8s::Pod copy = pod;
    copy.name = fmt::format("{}-{}", name, i);
    queue.push_back(std::move(copy));
  }
}

std::optional<std::string> ResolveQueuePriorities(std::vector<k8s::Pod>& queue, const rt::NodeTable& table) {
  for (const k8s::Pod& pod : queue) {
    if (!pod.priority_class_name.empty() && !pod.priority &&
        !table.Storage().priority_classes.contains(pod.priority_class_name) &&
        pod.priority_class_name != "system-node-critical" && pod.priority_class_name != "system-cluster-critical") {
      return fmt::format("pod {} names the PriorityClass `{}`, which the snapshot does not have", Key(pod),
                         pod.priority_class_name);
    }
  }
  for (k8s::Pod& pod : queue) rt::ResolvePriority(pod, table);
  return std::nullopt;
}

std::vector<const engine::Outcome*> FillUntilPending(engine::Scheduler& scheduler, const k8s::Pod& pod) {
  std::vector<const engine::Outcome*> copies;
  for (size_t i = 0;; ++i) {
    k8s::Pod copy = pod;
    copy.name = fmt::format("{}-fill-{}", pod.name, i);
    const engine::Outcome& o = scheduler.Place(std::move(copy), false);
    copies.push_back(&o);
    if (!o.node) return copies;
  }
}

std::string OutcomeRecord(const engine::Outcome& e) {
  JsonWriter w(JsonWriter::Style::kLine);
  w.BeginObject();
  w.Key("pod").String(Key(e.pod));
  if (e.node) {
    w.Key("node").String(*e.node);
  } else {
    w.Key("node").Null();
  }
  w.Key("attempts").Int(e.attempts);
  if (e.node) w.Key("score").Int(e.score);
  w.Key("feasible").Int(static_cast<int64_t>(e.feasible));
  w.Key("preempted").BeginArray();
  for (const std::string& v : e.preempted) w.String(v);
  w.EndArray();
  if (!e.node) {
    w.Key("summary").String(e.Summary());
    if (e.placement().error) w.Key("error").String(*e.placement().error);  // as check's
    if (e.groups) {
      host::ReasonGroupsJson(*e.groups, w);
      w.EndObject();
      return w.Take();
    }
    w.Key("reasons").BeginArray();  // every node's (--all-nodes)
    for (const rt::NodeResult& n : e.placement().nodes) {
      for (const rt::NodeReason& r : n.reasons) {
        w.BeginObject();
        w.Key("node").String(n.name);
        w.Key("plugin").String(r.plugin);
        w.Key("reason").String(r.reason);
        w.Key("detail").String(r.detail);
        w.EndObject();
      }
    }
    w.EndArray();
  }
  w.EndObject();
  return w.Take();
}

RunResult ResultOf(const std::vector<const engine::Outcome*>& finished,
                   const std::unordered_set<const engine::Outcome*>& fills, const std::string& fill_source,
                   const engine::Scheduler& scheduler, const engine::Cluster& cluster) {
  RunResult result;
  for (const engine::Outcome* e : finished) {
    bool fill = fills.contains(e);
    if (fill && !e->node) continue;  // the copy that did not fit
    ScheduledPod pod{e->pod.namespace_name, e->pod.name, fill ? fill_source : "", e->pod.template_of, e->node,
                     e->pod.uid, {}, {}};
    for (const k8s::PodResourceClaimStatus& st : e->pod.resource_claim_statuses) {
      pod.claim_statuses.emplace_back(st.name, st.claim_name);
    }
    for (const k8s::PodResourceClaim& c : e->pod.resource_claims) {
      if (!c.template_name.empty()) pod.claim_templates.emplace_back(c.name, c.template_name);
    }
    result.pods.push_back(std::move(pod));
    for (const std::string& victim : e->preempted) result.evicted.push_back(victim);
  }
  for (const engine::AssumedClaim& c : scheduler.AssumedClaims()) {
    result.claims.push_back({c.namespace_name, c.claim, c.volume, c.selected_node});
  }
  for (const auto& [key, claim] : cluster.Table().Storage().resource_claims) result.resource_claims.push_back(claim);
  std::sort(result.resource_claims.begin(), result.resource_claims.end(), [](const auto& a, const auto& b) {
    return std::tie(a.namespace_name, a.name) < std::tie(b.namespace_name, b.name);
  });
  return result;
}

}  // namespace policy::tooling
