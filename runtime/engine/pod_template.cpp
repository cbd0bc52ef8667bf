// Pods of one template (pod_template.h).

#include "runtime/engine/pod_template.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runtime/columnar/node_table.h"
#include "runtime/sched/explain.h"
#include "runtime/sched/resolve_claims.h"
#include "runtime/sched/resolve_volumes.h"

namespace policy::engine {
namespace {

// A claim of the pod's own that nothing else names yet: found, not lost or
// being deleted, used by no bound pod, and either not bound or pre-bound to
// a volume (a StatefulSet's volumeClaimTemplates, a generic ephemeral
// volume's claim), or bound to a volume of its own (a PersistentVolume
// binds one claim, and no bound pod uses this one, so no node attaches the
// volume yet). Its name and its volume's reach no plugin's answer (no node
// attaches either yet; the volume plugins read the claim's state, class,
// and the volume's affinity, zone and driver, which stay in the template),
// and only details print them.
bool OwnFreshClaim(const k8s::ResolvedVolume& r) {
  if (r.kind == k8s::Volume::Kind::kOther || !r.claim_found || r.claim_lost || r.claim_deleting || r.in_use) {
    return false;
  }
  return r.bound ? r.pv_found && !r.volume_name.empty() : r.volume_name.empty();
}

// Names such claims (and their volumes) after the first pod volume that
// names them, in the pod's volumes and their resolution alike (two volumes
// of one claim stay one claim). The new names are not DNS names, so no real
// claim or volume has one, and NameClaims finds them in words unmistaken.
ClaimNames NameFreshClaims(k8s::Pod& pod) {
  ClaimNames renamed;
  auto rename = [&](std::string& name, std::string_view what) {
    auto it = std::find_if(renamed.begin(), renamed.end(), [&](const auto& p) { return p.second == name; });
    if (it == renamed.end()) {
      it = renamed.emplace(renamed.end(), fmt::format("(the template pod's {} {})", what, renamed.size()), name);
    }
    name = it->first;
  };
  for (size_t i = 0; i < pod.resolved_volumes.size(); ++i) {
    k8s::ResolvedVolume& r = pod.resolved_volumes[i];
    if (!OwnFreshClaim(r)) continue;
    rename(r.claim, "claim");
    pod.volumes[i].claim = r.claim;
    if (r.bound) {  // attached by its volume's CSI handle
      if (!r.attach_handle.empty()) rename(r.attach_handle, "volume handle");
      rename(r.volume_name, "volume");
    } else if (!r.attach_handle.empty()) {  // by a handle of the claim's own (AttachedVolumeOf)
      r.attach_handle = r.claim;
    }
  }
  return renamed;
}

// Names the pod's own ResourceClaims made from a ResourceClaimTemplate
// (POD-ENTRY, by the resourceclaim controller) that nothing holds yet:
// controlled by the pod, not allocated, reserved for nobody, not being
// deleted, and still as their template makes them. Siblings' such claims
// differ by name alone; the template names them alike (PodPlan::Adopt gives
// the plan the deciding pod's own names back, which the allocator looks up).
void NameFreshResourceClaims(k8s::Pod& pod, const rt::NodeTable& table, ClaimNames& renamed) {
  const rt::StorageObjects& storage = table.Storage();
  for (const k8s::PodResourceClaim& entry : pod.resource_claims) {
    if (entry.template_name.empty() || pod.uid.empty()) continue;
    auto status = std::find_if(pod.resource_claim_statuses.begin(), pod.resource_claim_statuses.end(),
                               [&](const k8s::PodResourceClaimStatus& s) { return s.name == entry.name; });
    if (status == pod.resource_claim_statuses.end() || status->claim_name.empty()) continue;
    const k8s::ResourceClaim* claim = rt::StorageObjects::Get(
        storage.resource_claims, rt::StorageObjects::ClaimKey(pod.namespace_name, status->claim_name));
    const k8s::ResourceClaimTemplate* made_from = rt::StorageObjects::Get(
        storage.claim_templates, rt::StorageObjects::ClaimKey(pod.namespace_name, entry.template_name));
    if (claim == nullptr || made_from == nullptr || claim->deleting || claim->allocation ||
        !claim->reserved_for.empty() || claim->controller_uid != pod.uid || !(claim->spec == made_from->spec)) {
      continue;
    }
    std::string name = fmt::format("(the template pod's claim {})", renamed.size());
    renamed.emplace_back(name, status->claim_name);
    status->claim_name = std::move(name);
  }
}

void Rename(std::string& text, const ClaimNames& claims) {
  for (const auto& [in_template, own] : claims) {
    for (size_t at = text.find(in_template); at != std::string::npos; at = text.find(in_template, at + own.size())) {
      text.replace(at, in_template.size(), own);
    }
  }
}

// The keys the pod's own terms and constraints read of its labels.
LabelKeys OwnKeysRead(const k8s::Pod& pod) {
  LabelKeys keys;
  for (const std::optional<k8s::PodAffinity>* a : {&pod.affinity.pod_affinity, &pod.affinity.pod_anti_affinity}) {
    if (!*a) continue;
    for (const k8s::PodAffinityTerm& t : (*a)->required) AddKeysRead(t, keys);
    for (const k8s::WeightedPodAffinityTerm& t : (*a)->preferred) AddKeysRead(t.term, keys);
  }
  for (const k8s::TopologySpreadConstraint& c : pod.topology_spread) {
    if (c.label_selector) AddKeysRead(*c.label_selector, keys);
    keys.insert(c.match_label_keys.begin(), c.match_label_keys.end());
  }
  if (pod.template_selector) AddKeysRead(*pod.template_selector, keys);
  return keys;
}

}  // namespace

void AddKeysRead(const k8s::LabelSelector& selector, LabelKeys& keys) {
  for (const auto& [key, value] : selector.match_labels) keys.insert(key);
  for (const k8s::SelectorRequirement& r : selector.match_expressions) keys.insert(r.key);
}

void AddKeysRead(const k8s::PodAffinityTerm& term, LabelKeys& keys) {
  if (term.label_selector) AddKeysRead(*term.label_selector, keys);
  keys.insert(term.match_label_keys.begin(), term.match_label_keys.end());
  keys.insert(term.mismatch_label_keys.begin(), term.mismatch_label_keys.end());
}

TemplatePod TemplateOf(const k8s::Pod& pod, const rt::NodeTable& table, const TemplateRules& rules) {
  TemplatePod t{pod, {}};
  k8s::Pod& c = t.pod;
  if (!rules.keep_volumes) DropIncidentalVolumes(c);
  rt::ResolveVolumes(c, table);
  rt::ResolveClaims(c, table);
  if (!rules.keep_volumes) t.claims = NameFreshClaims(c);
  if (!c.resource_claims.empty()) NameFreshResourceClaims(c, table, t.claims);
  if (!rules.keep_labels && rules.keys_read != nullptr && !c.labels.empty()) {
    LabelKeys own = OwnKeysRead(c);
    std::erase_if(c.labels, [&](const auto& label) {
      return !rules.keys_read->contains(label.first) && !own.contains(label.first);
    });
  }
  return t;
}

void NameClaims(rt::Placement& words, const ClaimNames& claims) {
  if (claims.empty()) return;
  Rename(words.summary, claims);
  for (rt::NodeResult& node : words.nodes) {
    for (rt::NodeReason& r : node.reasons) {
      Rename(r.reason, claims);
      Rename(r.detail, claims);
    }
  }
}

void NameClaims(std::vector<rt::ReasonGroup>& groups, const ClaimNames& claims) {
  for (rt::ReasonGroup& g : groups) {
    Rename(g.reason, claims);
    Rename(g.detail, claims);
  }
}

void DropIncidentalVolumes(k8s::Pod& pod) {
  std::erase_if(pod.volumes, [](const k8s::Volume& v) { return !k8s::ReadByVolumePlugins(v); });
}

bool SameTemplate(const k8s::Pod& a, const k8s::Pod& b) {
  if (a.name == b.name && a.uid == b.uid && a.creation_timestamp == b.creation_timestamp && a.start_time == b.start_time &&
      a.scheduled_message == b.scheduled_message) {
    return a == b;
  }
  k8s::Pod like = b;
  like.name = a.name;
  like.uid = a.uid;
  like.creation_timestamp = a.creation_timestamp;
  like.start_time = a.start_time;
  like.scheduled_message = a.scheduled_message;
  return like == a;
}

size_t TemplateHash(const k8s::Pod& pod) {
  std::string text = pod.namespace_name + "/" + pod.template_of;
  for (const auto& [k, v] : pod.labels) text += "," + k + "=" + v;
  for (const k8s::Container& c : pod.containers) {
    text += ";" + c.name + "@" + c.image;
    for (const auto& [name, q] : c.requests) text += "," + name + "=" + q.ToString();
  }
  for (const k8s::Volume& v : pod.volumes) text += "|" + v.name + ":" + v.claim;
  return std::hash<std::string>()(text);
}

std::string_view TemplateDifference(const k8s::Pod& pod, const k8s::Pod& sibling) {
  if (pod.resolved_volumes != sibling.resolved_volumes) {
    return "its volumes differ from its siblings' (a claim's state, class or size, a volume's node affinity, zone or "
           "driver, the volumes it may bind)";
  }
  if (pod.resource_claim_statuses != sibling.resource_claim_statuses ||
      pod.resource_claims_problem != sibling.resource_claims_problem) {
    return "its ResourceClaims differ from its siblings' (allocated, reserved, shared, or not as their template makes them)";
  }
  if (pod.labels != sibling.labels) return "its labels that selectors read differ from its siblings'";
  return "it differs from its siblings in a field plugins read";
}

}  // namespace policy::engine
