#include "k8s/objects.h"

#include <algorithm>

namespace policy::k8s {

const std::string* Find(const StringMap& map, std::string_view key) {
  for (const auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

ResolvedVolume ResolvedVolume::Of(const Volume& v) {
  ResolvedVolume r;
  r.name = v.name;
  r.kind = v.kind;
  r.claim = v.claim;
  r.disks = v.disks;
  r.read_only = v.read_only;
  return r;
}

const Quantity* Find(const ResourceList& list, std::string_view name) {
  for (const auto& [k, v] : list) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string_view ToString(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "NoSchedule";
}

std::string_view ToString(SelectorOp op) {
  switch (op) {
    case SelectorOp::kIn: return "In";
    case SelectorOp::kNotIn: return "NotIn";
    case SelectorOp::kExists: return "Exists";
    case SelectorOp::kDoesNotExist: return "DoesNotExist";
    case SelectorOp::kGt: return "Gt";
    case SelectorOp::kLt: return "Lt";
  }
  return "In";
}

bool Container::operator==(const Container& o) const {
  auto same = [](const ResourceList& a, const ResourceList& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
             return x.first == y.first && x.second == y.second && x.second.format() == y.second.format();
           });
  };
  return name == o.name && image == o.image && host_ports == o.host_ports && same(requests, o.requests) &&
         same(limits, o.limits) && restartable == o.restartable && status_resources == o.status_resources &&
         same(status_requests, o.status_requests) && same(allocated, o.allocated);
}

bool ReadByVolumePlugins(const Volume& v) { return v.kind != Volume::Kind::kOther || !v.disks.empty(); }

namespace {

constexpr size_t kEntry = 32;  // what a string or an element costs beside its characters

size_t Bytes(const std::string& s) { return s.size() + kEntry; }
size_t Bytes(const StringMap& m) {
  size_t n = 0;
  for (const auto& [k, v] : m) n += Bytes(k) + Bytes(v);
  return n;
}
size_t Bytes(const std::vector<std::string>& v) {
  size_t n = 0;
  for (const std::string& s : v) n += Bytes(s);
  return n;
}
size_t Bytes(const std::vector<SelectorRequirement>& rs) {
  size_t n = 0;
  for (const SelectorRequirement& r : rs) n += Bytes(r.key) + Bytes(r.values);
  return n;
}
size_t Bytes(const LabelSelector& s) { return Bytes(s.match_labels) + Bytes(s.match_expressions); }
size_t Bytes(const PodAffinityTerm& t) {
  return Bytes(t.label_selector ? *t.label_selector : LabelSelector{}) + Bytes(t.namespaces) +
         Bytes(t.namespace_selector ? *t.namespace_selector : LabelSelector{}) + Bytes(t.topology_key) +
         Bytes(t.match_label_keys) + Bytes(t.mismatch_label_keys);
}
size_t Bytes(const std::optional<PodAffinity>& a) {
  size_t n = 0;
  if (!a) return n;
  for (const PodAffinityTerm& t : a->required) n += Bytes(t);
  for (const WeightedPodAffinityTerm& t : a->preferred) n += Bytes(t.term);
  return n;
}

}  // namespace

size_t ApproximateBytes(const Pod& pod) {
  size_t n = sizeof(Pod) + Bytes(pod.name) + Bytes(pod.namespace_name) + Bytes(pod.labels) + Bytes(pod.annotations) +
             Bytes(pod.node_selector) + Bytes(pod.scheduled_message) + Bytes(pod.scheduling_gates);
  if (const auto& na = pod.affinity.node_affinity) {
    for (const NodeSelectorTerm& t : na->required.value_or(std::vector<NodeSelectorTerm>{})) {
      n += Bytes(t.match_expressions) + Bytes(t.match_fields);
    }
    for (const PreferredSchedulingTerm& t : na->preferred) {
      n += Bytes(t.preference.match_expressions) + Bytes(t.preference.match_fields);
    }
  }
  n += Bytes(pod.affinity.pod_affinity) + Bytes(pod.affinity.pod_anti_affinity);
  for (const Toleration& t : pod.tolerations) n += Bytes(t.key) + Bytes(t.value);
  for (const TopologySpreadConstraint& c : pod.topology_spread) {
    n += Bytes(c.topology_key) + Bytes(c.match_label_keys) + Bytes(c.label_selector ? *c.label_selector : LabelSelector{});
  }
  for (const auto* list : {&pod.containers, &pod.init_containers}) {
    for (const Container& c : *list) n += sizeof(Container) + Bytes(c.name) + Bytes(c.image);
  }
  n += pod.volumes.size() * sizeof(Volume) + pod.resource_claims.size() * 2 * kEntry;
  return n;
}

}  // namespace policy::k8s
