#include "runtime/sched/default_spread.h"

#include "k8s/selectors.h"

namespace policy::rt {

void ApplyDefaultSpread(k8s::Pod& pod, const NodeTable& table, const std::vector<k8s::TopologySpreadConstraint>* list) {
  if (!pod.topology_spread.empty() || (list != nullptr && list->empty())) return;
  // Services of the pod's namespace whose selector selects it: their label
  // maps merged (GetPodServices; a Service without a selector selects nothing).
  k8s::LabelSelector selector;
  auto merge = [&](const k8s::StringMap& labels) {
    for (const auto& [key, value] : labels) {
      if (!k8s::Find(selector.match_labels, key)) selector.match_labels.emplace_back(key, value);
    }
  };
  for (const k8s::SelectorOwner& owner : table.SelectorOwners()) {
    if (owner.kind != "Service" || owner.namespace_name != pod.namespace_name || !owner.match_labels) continue;
    if (k8s::Matches(k8s::LabelSelector{*owner.match_labels, {}}, pod.labels)) merge(*owner.match_labels);
  }
  // The controller's selector: a ReplicationController's label map, a
  // ReplicaSet's or StatefulSet's requirements.
  auto add = [&](const k8s::LabelSelector& s) {
    merge(s.match_labels);
    selector.match_expressions.insert(selector.match_expressions.end(), s.match_expressions.begin(),
                                      s.match_expressions.end());
  };
  if (pod.template_selector) {  // the workload itself (a Deployment stands in for its ReplicaSet)
    if (!pod.template_of.starts_with("DaemonSet/")) add(*pod.template_selector);
  } else if (pod.controller) {
    const k8s::OwnerReference& ref = *pod.controller;
    bool known = (ref.kind == "ReplicationController" && ref.api_version == "v1") ||
                 ((ref.kind == "ReplicaSet" || ref.kind == "StatefulSet") && ref.api_version == "apps/v1");
    for (const k8s::SelectorOwner& owner : table.SelectorOwners()) {
      if (!known || owner.kind != ref.kind || owner.name != ref.name || owner.namespace_name != pod.namespace_name) continue;
      if (owner.match_labels) add(k8s::LabelSelector{*owner.match_labels, {}});
      if (owner.selector) add(*owner.selector);
    }
  }
  if (selector.match_labels.empty() && selector.match_expressions.empty()) return;  // selects nothing: no defaults
  if (list != nullptr) {
    for (k8s::TopologySpreadConstraint c : *list) {
      c.label_selector = selector;
      pod.topology_spread.push_back(std::move(c));
    }
    return;
  }
  for (auto [key, skew] : {std::pair<const char*, int32_t>{"kubernetes.io/hostname", 3}, {"topology.kubernetes.io/zone", 5}}) {
    k8s::TopologySpreadConstraint c;
    c.max_skew = skew;
    c.topology_key = key;
    c.when_unsatisfiable = k8s::WhenUnsatisfiable::kScheduleAnyway;
    c.label_selector = selector;
    pod.topology_spread.push_back(std::move(c));
  }
  pod.spread_system_defaulted = true;
}

}  // namespace policy::rt
