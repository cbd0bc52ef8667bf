#include "compiler/binding/pod_view.h"

#include <algorithm>

#include "k8s/node_match.h"
#include "k8s/selectors.h"

namespace policy::binding {
namespace {

using lang::FieldId;

PodRef Record(PodRecord kind, const void* ptr) {
  PodRef r{PodRef::Kind::kRecord};
  r.record = kind;
  r.ptr = ptr;
  return r;
}

template <typename T>
PodRef Records(const std::vector<T>& items, PodRecord kind) {
  PodRef r{PodRef::Kind::kRecordList};
  r.record = kind;
  for (const T& item : items) r.records.push_back(&item);
  return r;
}

PodRef Ptr(PodRef::Kind kind, const void* ptr) {
  PodRef r{kind};
  r.ptr = ptr;
  return r;
}

}  // namespace

PodView::PodView(const k8s::Pod& pod, ResourceReads* reads)
    : pod_(pod), reads_(reads), requests_(PodRequestAmounts(pod)), scoring_(PodScoringAmounts(pod)) {
  // getContainerPorts: the (regular) containers' ports with a hostPort.
  for (const k8s::Container& c : pod.containers) host_ports_.insert(host_ports_.end(), c.host_ports.begin(), c.host_ports.end());
  // normalizedImageName: a name without a tag is `:latest`.
  auto normalized = [](std::string name) {
    size_t colon = name.rfind(':'), slash = name.rfind('/');
    if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) name += ":latest";
    return name;
  };
  for (const k8s::Container& c : pod.init_containers) images_.push_back(normalized(c.image));
  for (const k8s::Container& c : pod.containers) images_.push_back(normalized(c.image));
  // Volumes no snapshot was consulted for (a compile without a cluster):
  // their claims are not found.
  if (pod.resolved_volumes.size() != pod.volumes.size()) {
    for (const k8s::Volume& v : pod.volumes) unresolved_.push_back(k8s::ResolvedVolume::Of(v));
  }
}

// Built on first use: only messages read them, and a view is made per decision.
const std::vector<k8s::SelectorRequirement>& PodView::NodeSelectorRequirements() const {
  if (!node_selector_) {
    node_selector_.emplace();
    for (const auto& [key, value] : pod_.node_selector) {
      k8s::SelectorRequirement r;
      r.key = key;
      r.values = {value};
      node_selector_->push_back(std::move(r));
    }
  }
  return *node_selector_;
}

const std::vector<k8s::SelectorRequirement>& PodView::RequiredExpressions() const {
  if (!required_expressions_) {
    required_expressions_.emplace();
    if (pod_.affinity.node_affinity && pod_.affinity.node_affinity->required) {
      for (const k8s::NodeSelectorTerm& term : *pod_.affinity.node_affinity->required) {
        required_expressions_->insert(required_expressions_->end(), term.match_expressions.begin(),
                                      term.match_expressions.end());
      }
    }
  }
  return *required_expressions_;
}

PodRef PodView::Root() const { return Record(PodRecord::kPod, &pod_); }

std::optional<PodRef> PodView::Load(FieldId field, const PodRef& record) const {
  if (record.kind == PodRef::Kind::kNone) return PodRef{};
  if (record.kind != PodRef::Kind::kRecord) return std::nullopt;
  const void* ptr = record.ptr;
  const auto* pod = static_cast<const k8s::Pod*>(ptr);
  const auto* aff = static_cast<const k8s::NodeAffinity*>(ptr);
  const auto* term = static_cast<const k8s::NodeSelectorTerm*>(ptr);
  const auto* req = static_cast<const k8s::SelectorRequirement*>(ptr);
  const auto* pref = static_cast<const k8s::PreferredSchedulingTerm*>(ptr);
  const auto* tol = static_cast<const k8s::Toleration*>(ptr);
  const auto* pod_aff = static_cast<const k8s::PodAffinity*>(ptr);
  const auto* pod_term = static_cast<const k8s::PodAffinityTerm*>(ptr);
  const auto* weighted = static_cast<const k8s::WeightedPodAffinityTerm*>(ptr);
  const auto* spread = static_cast<const k8s::TopologySpreadConstraint*>(ptr);
  const auto* port = static_cast<const k8s::HostPort*>(ptr);
  const auto* vol = static_cast<const k8s::ResolvedVolume*>(ptr);
  const auto* candidate = static_cast<const k8s::PersistentVolume*>(ptr);
  auto flag = [](bool b) { return PodRef{PodRef::Kind::kBool, b ? 1 : 0}; };
  auto policy_name = [](k8s::InclusionPolicy p) { return p == k8s::InclusionPolicy::kHonor ? "Honor" : "Ignore"; };
  static const std::vector<k8s::NodeSelectorTerm> kNoTerms;
  switch (field) {
    case FieldId::kPodName: return PodRef::Str(pod->name);
    case FieldId::kPodNamespace: return PodRef::Str(pod->namespace_name);
    case FieldId::kPodNodeName: return PodRef::Str(pod->node_name);
    case FieldId::kPodPriority: return PodRef::Int(pod->priority.value_or(0));
    case FieldId::kPodLabels: return Ptr(PodRef::Kind::kStringMap, &pod->labels);
    case FieldId::kPodNodeSelector: return Ptr(PodRef::Kind::kStringMap, &pod->node_selector);
    case FieldId::kPodNodeSelectorReqs: return Records(NodeSelectorRequirements(), PodRecord::kRequirement);
    case FieldId::kPodNodeAffinity:
      return Record(PodRecord::kNodeAffinity, pod->affinity.node_affinity ? &*pod->affinity.node_affinity : &no_affinity_);
    case FieldId::kPodTolerations: return Records(pod->tolerations, PodRecord::kToleration);
    case FieldId::kPodHostPorts: return Records(host_ports_, PodRecord::kPodPort);
    case FieldId::kPodImages: return Ptr(PodRef::Kind::kStringList, &images_);
    case FieldId::kPodVolumes:
      return Records(pod->resolved_volumes.size() == pod->volumes.size() ? pod->resolved_volumes : unresolved_,
                     PodRecord::kVolume);
    case FieldId::kVolumeName: return PodRef::Str(vol->name);
    case FieldId::kVolumeSource:
      return PodRef::Str(vol->kind == k8s::Volume::Kind::kClaim       ? "persistentVolumeClaim"
                         : vol->kind == k8s::Volume::Kind::kEphemeral ? "ephemeral"
                                                                      : "other");
    case FieldId::kVolumeClaim: return PodRef::Str(vol->claim);
    case FieldId::kVolumeClaimFound: return flag(vol->claim_found);
    case FieldId::kVolumeClaimLost: return flag(vol->claim_lost);
    case FieldId::kVolumeClaimDeleting: return flag(vol->claim_deleting);
    case FieldId::kVolumeBound: return flag(vol->bound);
    case FieldId::kVolumeDelayBinding: return flag(vol->delay_binding);
    case FieldId::kVolumeRwop: return flag(vol->read_write_once_pod);
    case FieldId::kVolumeInUse: return flag(vol->in_use);
    case FieldId::kVolumeVolumeName: return PodRef::Str(vol->volume_name);
    case FieldId::kVolumeSelectedNode: return PodRef::Str(vol->selected_node);
    case FieldId::kVolumePvFound: return flag(vol->pv_found);
    case FieldId::kVolumePvAffinity: return Records(vol->pv_affinity, PodRecord::kTerm);
    case FieldId::kVolumePvTopology: return Records(vol->pv_topology, PodRecord::kRequirement);
    case FieldId::kVolumeStorageClass: return PodRef::Str(vol->class_name);
    case FieldId::kVolumeClassFound: return flag(vol->class_found);
    case FieldId::kVolumeWaitForConsumer: return flag(vol->wait_for_first_consumer);
    case FieldId::kVolumeProvisionable: return flag(vol->provisionable);
    case FieldId::kVolumeAllowedTopologies: return Records(vol->allowed_topologies, PodRecord::kTerm);
    case FieldId::kVolumeCandidates: return Records(vol->candidates, PodRecord::kVolumeCandidate);
    case FieldId::kVolumeDisks: return Ptr(PodRef::Kind::kStringList, &vol->disks);
    case FieldId::kVolumeReadOnly: return flag(vol->read_only);
    case FieldId::kVolumeAttachDriver: return PodRef::Str(vol->attach_driver);
    case FieldId::kVolumeAttachId:
      return PodRef::Str(vol->attach_driver.empty() ? "" : vol->attach_driver + "/" + vol->attach_handle);
    case FieldId::kCandidateName: return PodRef::Str(candidate->name);
    case FieldId::kCandidateAffinity: return Records(candidate->node_affinity, PodRecord::kTerm);
    case FieldId::kPodPortPort: return PodRef::Int(port->port);
    case FieldId::kPodPortProtocol: return PodRef::Str(port->protocol);
    case FieldId::kPodPortHostIP: return PodRef::Str(port->host_ip);
    case FieldId::kPodRequests: return Ptr(PodRef::Kind::kResources, &requests_);
    case FieldId::kPodScoringRequests: return Ptr(PodRef::Kind::kResources, &scoring_);
    case FieldId::kPodPodAffinity:
      return Record(PodRecord::kPodAffinity, pod->affinity.pod_affinity ? &*pod->affinity.pod_affinity : &no_pod_affinity_);
    case FieldId::kPodPodAntiAffinity:
      return Record(PodRecord::kPodAffinity,
                    pod->affinity.pod_anti_affinity ? &*pod->affinity.pod_anti_affinity : &no_pod_affinity_);
    case FieldId::kPodSpread: return Records(pod->topology_spread, PodRecord::kSpreadConstraint);
    case FieldId::kPodSpreadDefaulted: return PodRef{PodRef::Kind::kBool, pod->spread_system_defaulted ? 1 : 0};
    case FieldId::kPodResourceClaimCount: return PodRef::Int(static_cast<int64_t>(pod->resource_claims.size()));
    case FieldId::kPodResourceClaimsProblem: return PodRef::Str(pod->resource_claims_problem);
    case FieldId::kPodAffinityRequired: return Records(pod_aff->required, PodRecord::kPodAffinityTerm);
    case FieldId::kPodAffinityPreferred: return Records(pod_aff->preferred, PodRecord::kWeightedPodAffinityTerm);
    case FieldId::kPodAffinityTermKey: return PodRef::Str(pod_term->topology_key);
    case FieldId::kPodAffinityTermSelector: return PodRef::Str(k8s::SelectorText(pod_term->label_selector));
    case FieldId::kSpreadSelector: return PodRef::Str(k8s::SelectorText(spread->label_selector));
    case FieldId::kWeightedTermWeight: return PodRef::Int(weighted->weight);
    case FieldId::kWeightedTermTerm: return Record(PodRecord::kPodAffinityTerm, &weighted->term);
    case FieldId::kSpreadKey: return PodRef::Str(spread->topology_key);
    case FieldId::kSpreadMaxSkew: return PodRef::Int(spread->max_skew);
    case FieldId::kSpreadWhen:
      return PodRef::Str(spread->when_unsatisfiable == k8s::WhenUnsatisfiable::kDoNotSchedule ? "DoNotSchedule"
                                                                                             : "ScheduleAnyway");
    case FieldId::kSpreadMinDomains: return PodRef::Int(spread->min_domains.value_or(1));
    case FieldId::kSpreadAffinityPolicy: return PodRef::Str(policy_name(spread->node_affinity_policy));
    case FieldId::kSpreadTaintsPolicy: return PodRef::Str(policy_name(spread->node_taints_policy));
    case FieldId::kAffinityRequired: return Records(aff->required ? *aff->required : kNoTerms, PodRecord::kTerm);
    case FieldId::kAffinityPreferred: return Records(aff->preferred, PodRecord::kPreferredTerm);
    case FieldId::kAffinityRequiredExprs: return Records(RequiredExpressions(), PodRecord::kRequirement);
    case FieldId::kTermExpressions: return Records(term->match_expressions, PodRecord::kRequirement);
    case FieldId::kTermFields: return Records(term->match_fields, PodRecord::kRequirement);
    case FieldId::kTermParses: return flag(k8s::TermParses(*term));
    case FieldId::kRequirementKey: return PodRef::Str(req->key);
    case FieldId::kRequirementOperator: return PodRef::Str(std::string(k8s::ToString(req->op)));
    case FieldId::kRequirementText: return PodRef::Str(k8s::RequirementText(*req));
    case FieldId::kRequirementValues: return Ptr(PodRef::Kind::kStringList, &req->values);
    case FieldId::kPreferredWeight: return PodRef::Int(pref->weight);
    case FieldId::kPreferredTerm: return Record(PodRecord::kTerm, &pref->preference);
    case FieldId::kTolerationKey: return PodRef::Str(tol->key);
    case FieldId::kTolerationOperator: return PodRef::Str(tol->op == k8s::TolerationOp::kExists ? "Exists" : "Equal");
    case FieldId::kTolerationValue: return PodRef::Str(tol->value);
    case FieldId::kTolerationEffect: return PodRef::Str(tol->effect ? std::string(k8s::ToString(*tol->effect)) : "");
    default: return std::nullopt;  // node-side fields
  }
}

std::optional<PodRef> PodView::Index(const PodRef& object, const PodRef& key) const {
  switch (object.kind) {
    case PodRef::Kind::kStringMap: {
      if (key.kind == PodRef::Kind::kNone) return PodRef{};
      if (key.kind != PodRef::Kind::kString) return std::nullopt;
      const std::string* found = k8s::Find(*static_cast<const k8s::StringMap*>(object.ptr), key.s);
      return found ? PodRef::Str(*found) : PodRef{};
    }
    case PodRef::Kind::kResources: {
      if (key.kind != PodRef::Kind::kString) return std::nullopt;
      if (ResourceReads::Of* of = ReadsOf(object)) of->names.push_back(key.s);
      for (const auto& [name, amount] : *static_cast<const ResourceAmounts*>(object.ptr)) {
        if (name == key.s) return PodRef::Int(amount);
      }
      return PodRef::Int(0);
    }
    case PodRef::Kind::kRecordList:
      if (key.kind != PodRef::Kind::kInt) return std::nullopt;
      if (key.i < 0 || static_cast<size_t>(key.i) >= object.records.size()) return PodRef{};
      return Record(object.record, object.records[static_cast<size_t>(key.i)]);
    case PodRef::Kind::kStringList: {
      if (key.kind != PodRef::Kind::kInt) return std::nullopt;
      const auto& list = *static_cast<const std::vector<std::string>*>(object.ptr);
      if (key.i < 0 || static_cast<size_t>(key.i) >= list.size()) return PodRef{};
      return PodRef::Str(list[static_cast<size_t>(key.i)]);
    }
    default: return std::nullopt;
  }
}

std::optional<int64_t> PodView::Size(const PodRef& c) const {
  switch (c.kind) {
    case PodRef::Kind::kRecordList: return static_cast<int64_t>(c.records.size());
    case PodRef::Kind::kStringList: return static_cast<int64_t>(static_cast<const std::vector<std::string>*>(c.ptr)->size());
    case PodRef::Kind::kStringMap: return static_cast<int64_t>(static_cast<const k8s::StringMap*>(c.ptr)->size());
    case PodRef::Kind::kResources:
      ReadWhole(c);
      return static_cast<int64_t>(static_cast<const ResourceAmounts*>(c.ptr)->size());
    default: return std::nullopt;
  }
}

ResourceReads::Of* PodView::ReadsOf(const PodRef& resources) const {
  if (reads_ == nullptr || resources.kind != PodRef::Kind::kResources) return nullptr;
  if (resources.ptr == &requests_) return &reads_->requests;
  if (resources.ptr == &scoring_) return &reads_->scoring;
  return nullptr;
}

void PodView::ReadWhole(const PodRef& collection) const {
  if (ResourceReads::Of* of = ReadsOf(collection)) of->whole = true;
}

bool SameResourceReads(FieldId field, const ResourceReads& reads, const k8s::Pod& a, const k8s::Pod& b) {
  const ResourceReads::Of& of = field == FieldId::kPodRequests ? reads.requests : reads.scoring;
  if (of.whole || (field != FieldId::kPodRequests && field != FieldId::kPodScoringRequests)) {
    return SamePodField(field, a, b);
  }
  ResourceAmounts in_a = field == FieldId::kPodRequests ? PodRequestAmounts(a) : PodScoringAmounts(a);
  ResourceAmounts in_b = field == FieldId::kPodRequests ? PodRequestAmounts(b) : PodScoringAmounts(b);
  auto amount = [](const ResourceAmounts& amounts, const std::string& name) {
    for (const auto& [n, v] : amounts) {
      if (n == name) return v;
    }
    return int64_t{0};
  };
  return std::all_of(of.names.begin(), of.names.end(),
                     [&](const std::string& name) { return amount(in_a, name) == amount(in_b, name); });
}

bool SamePodField(FieldId field, const k8s::Pod& a, const k8s::Pod& b) {
  auto images = [](const k8s::Pod& p) {
    std::vector<std::string_view> out;
    for (const k8s::Container& c : p.init_containers) out.push_back(c.image);
    for (const k8s::Container& c : p.containers) out.push_back(c.image);
    return out;
  };
  auto host_ports = [](const k8s::Pod& p) {
    std::vector<k8s::HostPort> out;
    for (const k8s::Container& c : p.containers) out.insert(out.end(), c.host_ports.begin(), c.host_ports.end());
    return out;
  };
  switch (field) {
    case FieldId::kPodName: return a.name == b.name;
    case FieldId::kPodNamespace: return a.namespace_name == b.namespace_name;
    case FieldId::kPodLabels: return a.labels == b.labels;
    case FieldId::kPodNodeName: return a.node_name == b.node_name;
    case FieldId::kPodNodeSelector:
    case FieldId::kPodNodeSelectorReqs: return a.node_selector == b.node_selector;
    case FieldId::kPodNodeAffinity: return a.affinity.node_affinity == b.affinity.node_affinity;
    case FieldId::kPodTolerations: return a.tolerations == b.tolerations;
    case FieldId::kPodRequests: return PodRequestAmounts(a) == PodRequestAmounts(b);
    case FieldId::kPodScoringRequests: return PodScoringAmounts(a) == PodScoringAmounts(b);
    case FieldId::kPodPriority: return a.priority.value_or(0) == b.priority.value_or(0);
    case FieldId::kPodPodAffinity: return a.affinity.pod_affinity == b.affinity.pod_affinity;
    case FieldId::kPodPodAntiAffinity: return a.affinity.pod_anti_affinity == b.affinity.pod_anti_affinity;
    case FieldId::kPodSpread: return a.topology_spread == b.topology_spread;
    case FieldId::kPodImages: return images(a) == images(b);
    case FieldId::kPodHostPorts: return host_ports(a) == host_ports(b);
    case FieldId::kPodVolumes: return a.volumes == b.volumes && a.resolved_volumes == b.resolved_volumes;
    case FieldId::kPodSpreadDefaulted: return a.spread_system_defaulted == b.spread_system_defaulted;
    case FieldId::kPodResourceClaimCount: return a.resource_claims.size() == b.resource_claims.size();
    case FieldId::kPodResourceClaimsProblem: return a.resource_claims_problem == b.resource_claims_problem;
    default: return false;
  }
}

}  // namespace policy::binding
