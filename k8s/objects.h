#pragma once
/// Typed Kubernetes objects: the fields scheduling reads, nothing else.
///
/// Decoded from documents by decode.h with API defaulting applied and API
/// validation checked. Lists keep input order (labels too), since order is
/// visible in kube-scheduler's behaviour (taint order picks the reported
/// taint; term order is evaluation order).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/quantity.h"
#include "support/source.h"

namespace policy::k8s {

/// key -> value pairs in input order (labels, annotations, nodeSelector).
using StringMap = std::vector<std::pair<std::string, std::string>>;

/// Looks `key` up in a StringMap.
const std::string* Find(const StringMap& map, std::string_view key);

/// resource name -> quantity, in input order.
using ResourceList = std::vector<std::pair<std::string, Quantity>>;

const Quantity* Find(const ResourceList& list, std::string_view name);

enum class TaintEffect : uint8_t { kNoSchedule, kPreferNoSchedule, kNoExecute };
std::string_view ToString(TaintEffect effect);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};

struct Node {
  std::string name;
  StringMap labels;
  StringMap annotations;
  std::vector<Taint> taints;
  bool unschedulable = false;
  ResourceList allocatable;  ///< capacity when the node gives no allocatable
  ResourceList capacity;
  /// status.images: the names of each image present, with its size in bytes.
  std::vector<std::pair<std::vector<std::string>, int64_t>> images;
};

/// NodeSelectorRequirement and LabelSelectorRequirement operators.
enum class SelectorOp : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
std::string_view ToString(SelectorOp op);

struct SelectorRequirement {
  std::string key;
  SelectorOp op = SelectorOp::kIn;
  std::vector<std::string> values;
  Span span;  ///< the requirement in the pod's file
  /// Equal in meaning (spans aside).
  bool operator==(const SelectorRequirement& o) const { return key == o.key && op == o.op && values == o.values; }
};

struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;  ///< key is always `metadata.name`
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  /// requiredDuringSchedulingIgnoredDuringExecution; absent = no requirement.
  std::optional<std::vector<NodeSelectorTerm>> required;
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<SelectorRequirement> match_expressions;  ///< In/NotIn/Exists/DoesNotExist
  bool operator==(const LabelSelector&) const = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  ///< absent selects nothing
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;  ///< present and empty = all namespaces
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  Span span;
  /// Equal in meaning (spans aside).
  bool operator==(const PodAffinityTerm& o) const {
    return label_selector == o.label_selector && namespaces == o.namespaces &&
           namespace_selector == o.namespace_selector && topology_key == o.topology_key &&
           match_label_keys == o.match_label_keys && mismatch_label_keys == o.mismatch_label_keys;
  }
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool operator==(const PodAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  bool operator==(const Affinity&) const = default;
};

enum class TolerationOp : uint8_t { kEqual, kExists };

struct Toleration {
  std::string key;  ///< empty with Exists: tolerates every taint
  TolerationOp op = TolerationOp::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  ///< absent: every effect
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};

enum class WhenUnsatisfiable : uint8_t { kDoNotSchedule, kScheduleAnyway };
enum class InclusionPolicy : uint8_t { kHonor, kIgnore };

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  WhenUnsatisfiable when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  InclusionPolicy node_affinity_policy = InclusionPolicy::kHonor;
  InclusionPolicy node_taints_policy = InclusionPolicy::kIgnore;
  std::vector<std::string> match_label_keys;
  Span span;
  /// Equal in meaning (spans aside).
  bool operator==(const TopologySpreadConstraint& o) const {
    return max_skew == o.max_skew && topology_key == o.topology_key && when_unsatisfiable == o.when_unsatisfiable &&
           label_selector == o.label_selector && min_domains == o.min_domains &&
           node_affinity_policy == o.node_affinity_policy && node_taints_policy == o.node_taints_policy &&
           match_label_keys == o.match_label_keys;
  }
};

/// A container port that takes a port of the node (hostPort > 0), as
/// kube-scheduler's NodePorts reads it: protocol TCP and host IP 0.0.0.0
/// when unset.
struct HostPort {
  int32_t port = 0;
  std::string protocol = "TCP";
  std::string host_ip = "0.0.0.0";
  bool operator==(const HostPort&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  std::vector<HostPort> host_ports;  ///< ports[] with a hostPort
  ResourceList requests;  ///< defaulted: a limit without a request requests the limit
  ResourceList limits;
  bool restartable = false;  ///< init container with restartPolicy Always (a sidecar)
  /// In-place resize (status.containerStatuses[] or initContainerStatuses[]
  /// of the same name): whether the entry has `resources`, its
  /// `resources.requests` (what the kubelet actuated) and
  /// `allocatedResources` (what it admitted). Kubernetes 1.33+ counts a
  /// bound pod's container at the most of these and its spec.
  bool status_resources = false;
  ResourceList status_requests;
  ResourceList allocated;
  /// Equal, quantities in the same spelling too (messages print them).
  bool operator==(const Container& o) const;
};

/// metadata.ownerReferences entry with controller: true.
struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  bool operator==(const OwnerReference&) const = default;
};

/// A Service, ReplicationController, ReplicaSet or StatefulSet of the
/// snapshot: what kube-scheduler's default spread selector is made of.
struct SelectorOwner {
  std::string kind;
  std::string name;
  std::string namespace_name = "default";
  std::optional<StringMap> match_labels;   ///< Service, ReplicationController: spec.selector (absent: none)
  std::optional<LabelSelector> selector;   ///< ReplicaSet, StatefulSet: spec.selector
};

/// `spec.resourceClaims[]`: a claim by name, or one made from a template.
struct PodResourceClaim {
  std::string name;
  std::string claim_name;     ///< resourceClaimName
  std::string template_name;  ///< resourceClaimTemplateName
  bool operator==(const PodResourceClaim&) const = default;
};

/// `status.resourceClaimStatuses[]`: the claim made for a template entry
/// (empty when none is needed).
struct PodResourceClaimStatus {
  std::string name;
  std::string claim_name;
  bool operator==(const PodResourceClaimStatus&) const = default;
};

/// A volume of spec.volumes as the volume plugins read it.
struct Volume {
  enum class Kind : uint8_t { kClaim, kEphemeral, kOther };
  std::string name;
  Kind kind = Kind::kOther;
  /// The claim's name: persistentVolumeClaim.claimName, or for a generic
  /// ephemeral volume the claim the controller makes (`POD-VOLUME`).
  std::string claim;
  /// VolumeRestrictions' disk identities of an inline gcePersistentDisk,
  /// awsElasticBlockStore, iscsi or rbd volume (one per Ceph monitor for
  /// rbd), with kube-scheduler's conflict rule folded into `read_only`
  /// (an EBS volume conflicts even read-only, so it is never read-only here).
  std::vector<std::string> disks;
  bool read_only = false;
  bool operator==(const Volume&) const = default;
};

/// Whether kube-scheduler's volume plugins read `v` (their PreFilters skip
/// a pod without one): a PersistentVolumeClaim, a generic ephemeral volume,
/// or an inline disk VolumeRestrictions checks. The rest — the projected
/// service-account token every pod carries, configMap, secret, emptyDir,
/// downwardAPI, hostPath and the like — change no plugin's answer.
bool ReadByVolumePlugins(const Volume& v);

/// A PersistentVolumeClaim of the snapshot.
struct PersistentVolumeClaim {
  std::string name;
  std::string namespace_name = "default";
  std::vector<std::string> access_modes;
  std::optional<std::string> storage_class;  ///< spec.storageClassName; absent: the beta annotation, else ""
  std::string volume_name;                   ///< spec.volumeName: bound (or pre-bound) to this PV
  std::string volume_mode = "Filesystem";
  Quantity request;                          ///< spec.resources.requests.storage
  std::optional<LabelSelector> selector;
  std::string phase;                         ///< status.phase (Pending, Bound, Lost)
  bool deleting = false;                     ///< metadata.deletionTimestamp is set
  bool bind_completed = false;               ///< annotation pv.kubernetes.io/bind-completed
  std::string selected_node;                 ///< annotation volume.kubernetes.io/selected-node
};

/// A PersistentVolume of the snapshot.
struct PersistentVolume {
  std::string name;
  StringMap labels;
  std::vector<std::string> access_modes;
  std::string storage_class;
  std::string volume_mode = "Filesystem";
  Quantity capacity;                          ///< spec.capacity.storage
  std::string claim_namespace, claim_name;    ///< spec.claimRef; empty when unclaimed
  std::string phase;                          ///< status.phase (Available, Bound, Released, Failed)
  bool deleting = false;
  /// spec.nodeAffinity.required's terms (ORed); empty: any node.
  std::vector<NodeSelectorTerm> node_affinity;
  std::string csi_driver, csi_handle;         ///< spec.csi
  bool operator==(const PersistentVolume&) const = default;
};

/// A StorageClass of the snapshot.
struct StorageClass {
  std::string name;
  std::string provisioner;
  bool wait_for_first_consumer = false;       ///< volumeBindingMode (Immediate when unset)
  /// allowedTopologies as node selector terms (In requirements); empty: everywhere.
  std::vector<NodeSelectorTerm> allowed_topologies;
};

/// A CSINode: per CSI driver on the node, how many volumes it may attach.
struct CsiNode {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> limits;  ///< driver -> allocatable.count (drivers that set one)
};

/// A PriorityClass of the snapshot.
struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy = "PreemptLowerPriority";
};

/// A pod volume once its claim, volume and class are looked up in the
/// snapshot (rt::ResolveVolumes): what the volume plugins decide from.
struct ResolvedVolume {
  /// The volume as it is, nothing looked up yet (its claim not found).
  static ResolvedVolume Of(const Volume& v);

  std::string name;
  Volume::Kind kind = Volume::Kind::kOther;
  std::string claim;
  bool claim_found = false;
  bool claim_lost = false, claim_deleting = false;
  bool bound = false;          ///< spec.volumeName set and bind-completed: a bound claim
  bool delay_binding = false;  ///< unbound, and its class binds WaitForFirstConsumer
  bool read_write_once_pod = false;
  bool in_use = false;         ///< a pod bound to a node uses the claim
  std::string volume_name;
  std::string selected_node;
  bool pv_found = false;
  std::vector<NodeSelectorTerm> pv_affinity;     ///< the bound PV's node affinity; empty: any node
  std::vector<SelectorRequirement> pv_topology;  ///< the bound PV's zone/region labels (VolumeZone), In over the `__`-split values
  std::string class_name;      ///< the claim's class ("" when it names none)
  bool class_found = false;
  bool wait_for_first_consumer = false;
  bool provisionable = false;  ///< the class names a provisioner other than kubernetes.io/no-provisioner
  std::vector<NodeSelectorTerm> allowed_topologies;
  /// The available PVs that match the unbound claim (class, size, access and
  /// volume modes, selector), smallest first: their names and node affinities.
  std::vector<PersistentVolume> candidates;
  std::string attach_driver, attach_handle;  ///< NodeVolumeLimits' CSI driver and volume handle; empty: not counted
  std::vector<std::string> disks;  ///< Volume::disks
  bool read_only = false;
  bool operator==(const ResolvedVolume&) const = default;
};

enum class PodPhase : uint8_t { kPending, kRunning, kSucceeded, kFailed, kUnknown };

struct Pod {
  std::string name;
  std::string namespace_name = "default";
  std::string uid;  ///< metadata.uid: how an extender's preemption names victims
  StringMap labels;
  StringMap annotations;
  std::string node_name;  ///< spec.nodeName: bound when non-empty
  StringMap node_selector;
  Affinity affinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread;
  /// True when topology_spread holds kube-scheduler's system default
  /// constraints (set on the scheduling side, never by the API).
  bool spread_system_defaulted = false;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  /// spec.resources (pod-level resources, Kubernetes 1.32+, on from 1.34):
  /// requests after API defaulting (from the containers' or the limits),
  /// and limits, as written.
  ResourceList pod_requests;
  ResourceList pod_limits;
  /// status.conditions has PodResizePending with reason Infeasible: the
  /// resize will not happen, and the spec no longer counts.
  bool resize_infeasible = false;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string preemption_policy = "PreemptLowerPriority";  ///< spec.preemptionPolicy
  std::string creation_timestamp;  ///< metadata.creationTimestamp as written (RFC 3339; sorts as text)
  std::string start_time;          ///< status.startTime as written
  bool terminating = false;        ///< metadata.deletionTimestamp is set (PodTopologySpread does not count it)
  /// The message of status.conditions' PodScheduled condition when it is
  /// False: what kube-scheduler last said about a Pending pod. Read by no
  /// plugin (templates ignore it, as they ignore names and times).
  std::string scheduled_message;
  /// For a pod taken from a workload's template: how many pods the workload
  /// stands for (spec.replicas; a Job's spec.parallelism; 1 when unset; 0
  /// for a DaemonSet, whose pods are one per node).
  int32_t template_replicas = 1;
  std::string scheduler_name = "default-scheduler";
  bool host_network = false;  ///< spec.hostNetwork
  std::vector<std::string> scheduling_gates;  ///< spec.schedulingGates' names: kube-scheduler waits while any is left
  std::vector<Volume> volumes;  ///< spec.volumes
  std::vector<PodResourceClaim> resource_claims;                ///< spec.resourceClaims
  std::vector<PodResourceClaimStatus> resource_claim_statuses;  ///< status.resourceClaimStatuses
  /// Why the DynamicResources PreFilter refuses the claims (set on the
  /// scheduling side, never by the API; see dra::ResolvePodClaims).
  std::string resource_claims_problem;
  /// The volumes with the snapshot's claims, PVs and classes looked up (set
  /// on the scheduling side, never by the API; see ResolvedVolume).
  std::vector<ResolvedVolume> resolved_volumes;
  PodPhase phase = PodPhase::kPending;
  /// For a pod taken from a workload's template: `Deployment/web`; else empty.
  std::string template_of;
  /// For such a pod, the workload's spec.selector (what kube-scheduler's
  /// default spread selector takes from the pod's controller).
  std::optional<LabelSelector> template_selector;
  /// The controller among metadata.ownerReferences.
  std::optional<OwnerReference> controller;
  bool operator==(const Pod&) const = default;
};

/// About how many bytes `pod` holds (its strings and entries): what a cache
/// of pods or of what is made from them charges it, so that its bound is in
/// bytes, not only a count.
size_t ApproximateBytes(const Pod& pod);

/// A PodDisruptionBudget: which pods it guards and how many of them may go now.
struct PodDisruptionBudget {
  std::string name;
  std::string namespace_name = "default";
  std::optional<LabelSelector> selector;  ///< absent selects nothing
  int32_t disruptions_allowed = 0;        ///< status.disruptionsAllowed
};

struct Namespace {
  std::string name;
  StringMap labels;
};

}  // namespace policy::k8s
