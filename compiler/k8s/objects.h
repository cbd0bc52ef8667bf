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

#include "compiler/k8s/quantity.h"
#include "compiler/support/source.h"

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
};

struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;  ///< key is always `metadata.name`
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  /// requiredDuringSchedulingIgnoredDuringExecution; absent = no requirement.
  std::optional<std::vector<NodeSelectorTerm>> required;
  std::vector<PreferredSchedulingTerm> preferred;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<SelectorRequirement> match_expressions;  ///< In/NotIn/Exists/DoesNotExist
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  ///< absent selects nothing
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;  ///< present and empty = all namespaces
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  Span span;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
};

enum class TolerationOp : uint8_t { kEqual, kExists };

struct Toleration {
  std::string key;  ///< empty with Exists: tolerates every taint
  TolerationOp op = TolerationOp::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  ///< absent: every effect
  std::optional<int64_t> toleration_seconds;
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
};

/// metadata.ownerReferences entry with controller: true.
struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
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

enum class PodPhase : uint8_t { kPending, kRunning, kSucceeded, kFailed, kUnknown };

struct Pod {
  std::string name;
  std::string namespace_name = "default";
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
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string scheduler_name = "default-scheduler";
  bool host_network = false;  ///< spec.hostNetwork
  std::vector<std::string> scheduling_gates;  ///< spec.schedulingGates' names: kube-scheduler waits while any is left
  PodPhase phase = PodPhase::kPending;
  /// For a pod taken from a workload's template: `Deployment/web`; else empty.
  std::string template_of;
  /// For such a pod, the workload's spec.selector (what kube-scheduler's
  /// default spread selector takes from the pod's controller).
  std::optional<LabelSelector> template_selector;
  /// The controller among metadata.ownerReferences.
  std::optional<OwnerReference> controller;
};

struct Namespace {
  std::string name;
  StringMap labels;
};

}  // namespace policy::k8s
