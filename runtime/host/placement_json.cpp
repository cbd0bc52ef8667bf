// A placement as check's JSON document (placement_json.h).

#include "runtime/host/placement_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/json_writer.h"

namespace policy::host {

PodNotes NotesFor(const k8s::Pod& pod, const std::string& scheduler_name) {
  PodNotes n;
  if (!pod.scheduling_gates.empty()) {  // the SchedulingGates plugin (PreEnqueue)
    n.gated = true;
    n.notes.push_back(fmt::format("the pod has scheduling gates ({}): kube-scheduler does not try it until they are "
                                  "removed; the nodes' answers say where it could go then",
                                  fmt::join(pod.scheduling_gates, ", ")));
  }
  if (!pod.node_name.empty()) {
    n.notes.push_back(fmt::format("`spec.nodeName` is `{}`: kube-scheduler never sees this pod; the kubelet on that "
                                  "node admits or rejects it, and no other node is tried",
                                  pod.node_name));
  }
  if (pod.scheduler_name != scheduler_name) {
    n.notes.push_back(fmt::format("`schedulerName` is `{}`: `{}` does not schedule this pod; give the other "
                                  "scheduler's KubeSchedulerConfiguration with --profile",
                                  pod.scheduler_name, scheduler_name));
  }
  if (pod.template_of.starts_with("DaemonSet/")) {
    n.notes.push_back("a DaemonSet runs one pod per node that its node affinity and the tolerations its controller "
                      "adds allow: each feasible node below gets one, the selected one has no special role");
  }
  return n;
}


namespace {

// The fields every document starts with: pod, schedulable, gated, notes,
// selected, summary, error.
void Head(JsonWriter& w, const std::string& pod, const rt::Placement& p, const PodNotes& notes) {
  w.Key("pod").String(pod);
  w.Key("schedulable").Bool(p.feasible > 0 && !notes.gated);
  if (notes.gated) w.Key("gated").Bool(true);
  if (!notes.notes.empty()) {
    w.Key("notes").BeginArray();
    for (const std::string& n : notes.notes) w.String(n);
    w.EndArray();
  }
  w.Key("selected");
  if (p.selected && !notes.gated) {
    w.String(p.nodes[*p.selected].name);
  } else {
    w.Null();
  }
  w.Key("summary").String(p.summary);
  // kube-scheduler's Error status ended the attempt (the reason of its
  // PodScheduled condition is SchedulerError, not Unschedulable).
  if (p.error) w.Key("error").String(*p.error);
}

}  // namespace

void ReasonGroupsJson(const std::vector<rt::ReasonGroup>& groups, JsonWriter& w) {
  w.Key("reasons").BeginArray();
  for (const rt::ReasonGroup& g : groups) {
    w.BeginObject().Key("plugin").String(g.plugin).Key("reason").String(g.reason);
    w.Key("nodes").Int(static_cast<int64_t>(g.nodes));
    w.Key("examples").BeginArray();
    for (const std::string& name : g.examples) w.String(name);
    w.EndArray();
    if (!g.detail.empty()) w.Key("detail").String(g.detail);
    w.EndObject();
  }
  w.EndArray();
}

std::string GroupedPlacementJson(const std::string& pod, const rt::Placement& p,
                                 const std::vector<rt::ReasonGroup>& groups, const PodNotes& notes,
                                 const std::function<void(JsonWriter&)>& more) {
  JsonWriter w;
  w.BeginObject();
  Head(w, pod, p, notes);
  if (more) more(w);
  ReasonGroupsJson(groups, w);
  w.EndObject();
  return w.Take();
}

std::string PlacementJson(const std::string& pod, const rt::Placement& p, const PodNotes& notes,
                          const std::function<void(JsonWriter&)>& more) {
  JsonWriter w;
  w.BeginObject();
  Head(w, pod, p, notes);
  w.Key("nodes").BeginArray();
  for (const rt::NodeResult& node : p.nodes) {
    w.BeginObject();
    w.Key("name").String(node.name);
    w.Key("feasible").Bool(node.feasible);
    if (node.feasible) {
      w.Key("score").Int(node.score);
      w.Key("scores").BeginObject();
      for (const auto& [plugin, score] : node.scores) w.Key(plugin).Int(score);
      w.EndObject();
    } else {
      w.Key("reasons").BeginArray();
      for (const rt::NodeReason& r : node.reasons) {
        w.BeginObject().Key("plugin").String(r.plugin).Key("reason").String(r.reason);
        if (!r.detail.empty()) w.Key("detail").String(r.detail);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  if (more) more(w);
  w.EndObject();
  return w.Take();
}

}  // namespace policy::host
