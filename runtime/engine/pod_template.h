#pragma once
/// Pods of one template: pods every plugin answers alike, so they may share
/// one PodPlan and the decision it keeps (a Deployment's replicas, a
/// ReplicaSet's bare pods, a Job's pods, a StatefulSet's pods). Besides
/// their name and timestamps, siblings differ in parts no plugin reads;
/// TemplateOf makes those equal:
/// * the volumes no volume plugin reads (k8s::ReadByVolumePlugins: the
///   service-account token's volume is named per pod);
/// * the name of a claim of the pod's own that no pod uses yet, unbound (a
///   StatefulSet's volumeClaimTemplates, a generic ephemeral volume's
///   claim) or bound to a volume of its own (a database replica's PVC and
///   its PV), and that volume's name and handle: the volume plugins read
///   the claim's state and class and the volume's affinity, zone and
///   driver, which stay in the template, but never the names outside a
///   detail, and NameClaims gives a detail of the template's the pod's own
///   names back;
/// * the labels no selector reads: no affinity term or spread constraint
///   of the pod's own, no bound pod's affinity term and no selector owner
///   (Service, ReplicaSet, StatefulSet, ReplicationController: default
///   spreading) names the key (a StatefulSet pod's
///   statefulset.kubernetes.io/pod-name, an Indexed Job's completion index).
/// A template pod has its volumes resolved against the cluster, so its
/// claims' state (bound, waiting for a consumer, used by a pod) is part of
/// what siblings must share.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "k8s/objects.h"

namespace policy::rt {
class NodeTable;
struct Placement;
struct ReasonGroup;
}

namespace policy::engine {

/// Label keys that some selector reads.
using LabelKeys = std::unordered_set<std::string>;
/// Adds the keys `selector` reads.
void AddKeysRead(const k8s::LabelSelector& selector, LabelKeys& keys);
/// Adds the keys a bound pod's affinity term reads of the pods placed
/// after it (its selector, matchLabelKeys and mismatchLabelKeys).
void AddKeysRead(const k8s::PodAffinityTerm& term, LabelKeys& keys);

/// What a template may leave out.
struct TemplateRules {
  bool keep_volumes = false;  ///< a policy outside the stdlib reads pod.volumes: every volume as it is
  /// A policy outside the stdlib reads the pod's labels: every label as it
  /// is. Otherwise `keys_read` holds the keys the cluster's selectors read.
  bool keep_labels = false;
  const LabelKeys* keys_read = nullptr;
};

/// Claims a template pod names otherwise than the pod did: (the name in the
/// template, the pod's own name).
using ClaimNames = std::vector<std::pair<std::string, std::string>>;

/// A pod as the pods of its template share it.
struct TemplatePod {
  k8s::Pod pod;  ///< resolved volumes (k8s::Pod::resolved_volumes); the parts no plugin reads made equal
  /// Why the pod may not share its template's plan (the words
  /// IncrementalStats::full_because counts); empty when it may.
  std::string_view own_plan_because;
  ClaimNames claims;  ///< the pod's fresh claims, renamed
};

/// `pod` as its template against `table`.
TemplatePod TemplateOf(const k8s::Pod& pod, const rt::NodeTable& table, const TemplateRules& rules);
/// Gives the words of a template pod's plan the names `claims` renamed
/// (the pod's own claims' names, where a detail prints them).
void NameClaims(rt::Placement& words, const ClaimNames& claims);
/// The same for grouped reasons (Engine::Grouped).
void NameClaims(std::vector<rt::ReasonGroup>& groups, const ClaimNames& claims);
/// Leaves out of `pod` the volumes no plugin reads (k8s::ReadByVolumePlugins).
void DropIncidentalVolumes(k8s::Pod& pod);
/// Whether template pods `a` and `b` (TemplateOf's) are of one template:
/// equal but for their names and timestamps.
bool SameTemplate(const k8s::Pod& a, const k8s::Pod& b);
/// Equal for template pods of one template (a hash for buckets of them).
size_t TemplateHash(const k8s::Pod& pod);
/// Why template pod `pod` is not of `sibling`'s template though they share
/// a TemplateHash (of one controller, alike in labels, requests and
/// volumes' names): the part that differs, in the words of
/// IncrementalStats::full_because.
std::string_view TemplateDifference(const k8s::Pod& pod, const k8s::Pod& sibling);

}  // namespace policy::engine
