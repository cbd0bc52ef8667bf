// Pods and workload templates: spec, containers, resources, defaulting.

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/decode_context.h"
#include "k8s/decode_selectors.h"
#include "k8s/pod_resources.h"

namespace policy::k8s {
namespace {

bool IsStandardContainerResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" || name.starts_with("hugepages-");
}

void CheckResourceList(DecodeContext& cx, NodeRef map, const ResourceList& list, std::string_view what,
                       bool container) {
  for (uint32_t i = 0; i < map.Size() && i < list.size(); ++i) {
    const auto& [name, q] = list[i];
    NodeRef key = map.KeyAt(i);
    NodeRef value = map.Get(name);
    if (q.IsNegative()) {
      Diagnostic& d = cx.Error(DiagCode::kNegativeResource, value,
                               fmt::format("{} of `{}` must not be negative, found `{}`", what, name, value.Text()));
      d.help = "Kubernetes refuses negative requests, limits and overhead";
    }
    if (container && name.find('/') == std::string::npos && !IsStandardContainerResource(name)) {
      Diagnostic& d = cx.Error(DiagCode::kBadResourceName, key,
                               fmt::format("`{}` is not a resource a container can request", name),
                               "unknown resource");
      d.help = "standard resources are `cpu`, `memory`, `ephemeral-storage` and `hugepages-<size>`; "
               "extended resources are named `domain/name`, e.g. `nvidia.com/gpu`";
    }
  }
}

// Kubernetes' IsExtendedResourceName: a `domain/name` outside
// kubernetes.io and the `requests.` quota names.
bool IsExtendedResource(std::string_view name) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos || name.starts_with("requests.")) return false;
  std::string_view domain = name.substr(0, slash);
  return domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io");
}

// ValidateResourceRequirements for extended resources: whole numbers, never
// overcommitted (a request needs a limit, and the two are equal).
void CheckExtendedResources(DecodeContext& cx, const Container& c, NodeRef requests, NodeRef limits) {
  auto whole = [&](const ResourceList& list, NodeRef map, std::string_view what) {
    for (const auto& [name, q] : list) {
      if (!IsExtendedResource(name) || q.MilliValue() % 1000 == 0) continue;
      Diagnostic& d = cx.Error(DiagCode::kBadExtendedResource, map.Get(name),
                               fmt::format("{} of `{}` must be a whole number, found `{}`", what, name,
                                           map.Get(name).Text()),
                               "not an integer");
      d.help = "extended resources are counted in whole units (a GPU, a device)";
    }
  };
  whole(c.requests, requests, "the request");
  whole(c.limits, limits, "the limit");
  for (const auto& [name, request] : c.requests) {
    if (!IsExtendedResource(name)) continue;
    const Quantity* limit = Find(c.limits, name);
    if (limit == nullptr) {
      Diagnostic& d = cx.Error(DiagCode::kBadExtendedResource, requests.Get(name),
                               fmt::format("container `{}` requests `{}` without a limit", c.name, name),
                               "a limit must be set for this resource");
      d.help = fmt::format("extended resources cannot be overcommitted: set `limits: {{{}: {}}}`", name,
                           requests.Get(name).Text());
    } else if (request < *limit) {  // above it is request-over-limit
      Diagnostic& d = cx.Error(DiagCode::kBadExtendedResource, requests.Get(name),
                               fmt::format("the request of `{}` must equal its limit of {}, found {}", name,
                                           limit->ToString(), request.ToString()),
                               "differs from the limit");
      d.help = "extended resources cannot be overcommitted: request what you limit";
    }
  }
}

std::optional<Container> DecodeContainer(DecodeContext& cx, NodeRef node, bool init) {
  if (!cx.ExpectMapping(node, "container")) return std::nullopt;
  Container c;
  cx.String(node, "name", &c.name);
  cx.String(node, "image", &c.image);
  NodeRef ports = cx.Sequence(node, "ports");
  for (uint32_t i = 0; ports.Valid() && i < ports.Size(); ++i) {
    NodeRef port = ports.At(i);
    if (!cx.ExpectMapping(port, "a container port")) continue;
    std::optional<int32_t> host_port;
    cx.Int32(port, "hostPort", &host_port);
    if (!host_port || *host_port <= 0) continue;  // no port of the node
    HostPort p;
    p.port = *host_port;
    std::string protocol, ip;
    cx.String(port, "protocol", &protocol);
    cx.String(port, "hostIP", &ip);
    if (!protocol.empty()) p.protocol = protocol;
    if (!ip.empty()) p.host_ip = ip;
    c.host_ports.push_back(std::move(p));
  }
  NodeRef resources = cx.Mapping(node, "resources");
  if (resources.Valid()) {
    NodeRef requests = cx.Resources(resources, "requests", &c.requests);
    NodeRef limits = cx.Resources(resources, "limits", &c.limits);
    if (requests.Valid()) CheckResourceList(cx, requests, c.requests, "the request", true);
    if (limits.Valid()) CheckResourceList(cx, limits, c.limits, "the limit", true);
    for (const auto& [name, request] : c.requests) {
      const Quantity* limit = Find(c.limits, name);
      if (limit != nullptr && request > *limit) {
        Diagnostic& d = cx.Error(DiagCode::kRequestOverLimit, requests.Get(name),
                                 fmt::format("container `{}` requests {} of `{}`, more than its limit of {}", c.name,
                                             request.ToString(), name, limit->ToString()),
                                 "request above the limit");
        d.secondary.push_back({limits.Get(name).GetSpan(), "the limit"});
      }
    }
    CheckExtendedResources(cx, c, requests, limits);
  }
  // API defaulting: a limit with no request requests the limit.
  for (const auto& [name, limit] : c.limits) {
    if (Find(c.requests, name) == nullptr) c.requests.emplace_back(name, limit);
  }
  if (init) {
    std::string restart;
    cx.String(node, "restartPolicy", &restart);
    if (restart == "Always") {
      c.restartable = true;
    } else if (!restart.empty()) {
      cx.BadEnum(node.Get("restartPolicy"), "init container restartPolicy", restart, {"Always"});
    }
  }
  return c;
}

// spec.resources (PodLevelResources): API defaulting (defaultPodRequests:
// with pod-level limits, a resource's request defaults to what the
// containers request of it, else to its limit) and validation
// (validatePodResources: cpu, memory and hugepages-* only; a request at
// most its limit; at least what the containers request).
void DecodePodLevelResources(DecodeContext& cx, NodeRef resources, Pod* pod) {
  NodeRef requests = cx.Resources(resources, "requests", &pod->pod_requests);
  NodeRef limits = cx.Resources(resources, "limits", &pod->pod_limits);
  for (auto [map, list, what] : {std::tuple{requests, &pod->pod_requests, "the pod-level request"},
                                 std::tuple{limits, &pod->pod_limits, "the pod-level limit"}}) {
    if (!map.Valid()) continue;
    CheckResourceList(cx, map, *list, what, false);
    for (uint32_t i = 0; i < map.Size() && i < list->size(); ++i) {
      if (IsPodLevelResource((*list)[i].first)) continue;
      Diagnostic& d = cx.Error(DiagCode::kBadResourceName, map.KeyAt(i),
                               fmt::format("`{}` is not a resource pod-level resources can set", (*list)[i].first),
                               "unsupported at the pod level");
      d.help = "spec.resources takes `cpu`, `memory` and `hugepages-<size>`; set other resources on the containers";
    }
  }
  ResourceList containers = AggregateContainerRequests(*pod);
  if (!pod->pod_limits.empty()) {
    for (const auto& [name, q] : containers) {
      if (IsPodLevelResource(name) && Find(pod->pod_requests, name) == nullptr) pod->pod_requests.emplace_back(name, q);
    }
    for (const auto& [name, q] : pod->pod_limits) {
      if (IsPodLevelResource(name) && Find(pod->pod_requests, name) == nullptr) pod->pod_requests.emplace_back(name, q);
    }
  }
  NodeRef at = requests.Valid() ? requests : resources;
  for (const auto& [name, request] : pod->pod_requests) {
    NodeRef here = requests.Valid() && requests.Get(name).Valid() ? requests.Get(name) : at;
    if (const Quantity* limit = Find(pod->pod_limits, name); limit != nullptr && request > *limit) {
      cx.Error(DiagCode::kRequestOverLimit, here,
               fmt::format("the pod requests {} of `{}`, more than its pod-level limit of {}", request.ToString(), name,
                           limit->ToString()),
               "request above the limit");
    }
    if (const Quantity* sum = Find(containers, name); sum != nullptr && *sum > request) {
      Diagnostic& d = cx.Error(DiagCode::kRequestOverLimit, here,
                               fmt::format("the pod-level request of `{}` ({}) is less than its containers request ({})",
                                           name, request.ToString(), sum->ToString()),
                               "below the containers' requests");
      d.help = "the API server refuses it: pod-level requests must cover every container's";
    }
  }
}

void DecodeContainers(DecodeContext& cx, NodeRef spec, std::string_view key, bool init, std::vector<Container>* out) {
  NodeRef list = cx.Sequence(spec, key);
  if (!list.Valid()) return;
  for (uint32_t i = 0; i < list.Size(); ++i) {
    if (auto c = DecodeContainer(cx, list.At(i), init)) out->push_back(std::move(*c));
  }
}

// spec.volumes: claims (persistentVolumeClaim, generic ephemeral) and the
// inline disks VolumeRestrictions compares (isVolumeConflict).
void DecodeVolumes(DecodeContext& cx, NodeRef list, const std::string& pod_name, std::vector<Volume>* out) {
  for (uint32_t i = 0; i < list.Size(); ++i) {
    NodeRef v = list.At(i);
    if (!cx.ExpectMapping(v, "a volume")) continue;
    Volume volume;
    cx.String(v, "name", &volume.name);
    auto read_only = [&](NodeRef source) {
      bool ro = false;
      cx.Bool(source, "readOnly", &ro);
      return ro;
    };
    if (NodeRef pvc = cx.Mapping(v, "persistentVolumeClaim"); pvc.Valid()) {
      volume.kind = Volume::Kind::kClaim;
      cx.String(pvc, "claimName", &volume.claim);
      volume.read_only = read_only(pvc);
    } else if (NodeRef eph = cx.Mapping(v, "ephemeral"); eph.Valid()) {
      volume.kind = Volume::Kind::kEphemeral;
      volume.claim = pod_name + "-" + volume.name;  // ephemeral.VolumeClaimName
    } else if (NodeRef gce = cx.Mapping(v, "gcePersistentDisk"); gce.Valid()) {
      std::string pd;
      cx.String(gce, "pdName", &pd);
      volume.disks.push_back("gcePersistentDisk " + pd);
      volume.read_only = read_only(gce);
    } else if (NodeRef ebs = cx.Mapping(v, "awsElasticBlockStore"); ebs.Valid()) {
      std::string id;
      cx.String(ebs, "volumeID", &id);
      volume.disks.push_back("awsElasticBlockStore " + id);  // conflicts even read-only
    } else if (NodeRef iscsi = cx.Mapping(v, "iscsi"); iscsi.Valid()) {
      std::string iqn;
      cx.String(iscsi, "iqn", &iqn);
      volume.disks.push_back("iscsi " + iqn);
      volume.read_only = read_only(iscsi);
    } else if (NodeRef rbd = cx.Mapping(v, "rbd"); rbd.Valid()) {
      std::vector<std::string> monitors;
      std::string pool = "rbd", image;
      cx.StringList(rbd, "monitors", &monitors);
      cx.String(rbd, "pool", &pool);
      cx.String(rbd, "image", &image);
      for (const std::string& m : monitors) volume.disks.push_back(fmt::format("rbd {} {}/{}", m, pool, image));
      volume.read_only = read_only(rbd);
    }
    out->push_back(std::move(volume));
  }
}

// spec.resourceClaims: each names a claim or a template, not both (API
// validation), under a name unique in the pod.
void DecodeResourceClaims(DecodeContext& cx, NodeRef list, std::vector<PodResourceClaim>* out) {
  for (uint32_t i = 0; i < list.Size(); ++i) {
    NodeRef entry = list.At(i);
    if (!cx.ExpectMapping(entry, "a pod resource claim")) continue;
    PodResourceClaim claim;
    cx.String(entry, "name", &claim.name);
    cx.String(entry, "resourceClaimName", &claim.claim_name);
    cx.String(entry, "resourceClaimTemplateName", &claim.template_name);
    if (claim.name.empty()) {
      cx.Error(DiagCode::kMissingField, entry, "a pod resource claim has no name").help = "set `name`";
    } else if (claim.claim_name.empty() == claim.template_name.empty()) {
      cx.Error(DiagCode::kBadDra, entry,
               fmt::format("pod resource claim `{}` must name exactly one of resourceClaimName and "
                           "resourceClaimTemplateName",
                           claim.name));
    }
    for (const PodResourceClaim& earlier : *out) {
      if (earlier.name == claim.name && !claim.name.empty()) {
        cx.Error(DiagCode::kBadDra, entry.Get("name"), fmt::format("duplicate pod resource claim `{}`", claim.name));
      }
    }
    out->push_back(std::move(claim));
  }
}

PodPhase ParsePhase(std::string_view s) {
  if (s == "Running") return PodPhase::kRunning;
  if (s == "Succeeded") return PodPhase::kSucceeded;
  if (s == "Failed") return PodPhase::kFailed;
  if (s == "Unknown") return PodPhase::kUnknown;
  return PodPhase::kPending;
}

// metadata + spec of a pod or a pod template.
void DecodePodBody(DecodeContext& cx, NodeRef metadata, NodeRef spec, Pod* pod) {
  if (metadata.Valid()) {
    cx.String(metadata, "name", &pod->name);
    std::string ns;
    cx.String(metadata, "namespace", &ns);
    if (!ns.empty()) pod->namespace_name = ns;
    cx.StringMapField(metadata, "labels", &pod->labels);
    cx.StringMapField(metadata, "annotations", &pod->annotations);
    cx.String(metadata, "creationTimestamp", &pod->creation_timestamp);
    cx.String(metadata, "uid", &pod->uid);
    NodeRef deletion = metadata.Get("deletionTimestamp");
    pod->terminating = deletion.Valid() && !deletion.IsNull();
    NodeRef owners = cx.Sequence(metadata, "ownerReferences");
    for (uint32_t i = 0; owners.Valid() && i < owners.Size(); ++i) {
      NodeRef owner = owners.At(i);
      if (!cx.ExpectMapping(owner, "an owner reference")) continue;
      if (owner.Get("controller").Text() != "true") continue;
      OwnerReference ref;
      cx.String(owner, "apiVersion", &ref.api_version);
      cx.String(owner, "kind", &ref.kind);
      cx.String(owner, "name", &ref.name);
      pod->controller = std::move(ref);
    }
  }
  if (!spec.Valid()) return;
  cx.String(spec, "nodeName", &pod->node_name);
  cx.StringMapField(spec, "nodeSelector", &pod->node_selector);
  NodeRef affinity = cx.Mapping(spec, "affinity");
  if (affinity.Valid()) DecodeAffinity(cx, affinity, &pod->affinity);
  NodeRef tolerations = cx.Sequence(spec, "tolerations");
  if (tolerations.Valid()) DecodeTolerations(cx, tolerations, &pod->tolerations);
  NodeRef spread = cx.Sequence(spec, "topologySpreadConstraints");
  if (spread.Valid()) DecodeSpread(cx, spread, &pod->topology_spread);
  DecodeContainers(cx, spec, "containers", false, &pod->containers);
  DecodeContainers(cx, spec, "initContainers", true, &pod->init_containers);
  NodeRef volumes = cx.Sequence(spec, "volumes");
  if (volumes.Valid()) DecodeVolumes(cx, volumes, pod->name, &pod->volumes);
  NodeRef claims = cx.Sequence(spec, "resourceClaims");
  if (claims.Valid()) DecodeResourceClaims(cx, claims, &pod->resource_claims);
  NodeRef overhead = cx.Resources(spec, "overhead", &pod->overhead);
  if (overhead.Valid()) CheckResourceList(cx, overhead, pod->overhead, "the overhead", false);
  NodeRef pod_resources = cx.Mapping(spec, "resources");
  if (pod_resources.Valid()) DecodePodLevelResources(cx, pod_resources, pod);
  cx.Int32(spec, "priority", &pod->priority);
  cx.String(spec, "priorityClassName", &pod->priority_class_name);
  std::string preemption;
  cx.String(spec, "preemptionPolicy", &preemption);
  if (preemption == "Never" || preemption == "PreemptLowerPriority") {
    pod->preemption_policy = preemption;
  } else if (!preemption.empty()) {
    cx.BadEnum(spec.Get("preemptionPolicy"), "preemptionPolicy", preemption, {"PreemptLowerPriority", "Never"});
  }
  NodeRef gates = cx.Sequence(spec, "schedulingGates");
  for (uint32_t i = 0; gates.Valid() && i < gates.Size(); ++i) {
    if (!cx.ExpectMapping(gates.At(i), "a scheduling gate")) continue;
    std::string name;
    cx.String(gates.At(i), "name", &name);
    if (!name.empty()) pod->scheduling_gates.push_back(std::move(name));
  }
  NodeRef host_network = spec.Get("hostNetwork");
  if (host_network.Valid() && host_network.IsScalar()) pod->host_network = host_network.Text() == "true";
  std::string scheduler;
  cx.String(spec, "schedulerName", &scheduler);
  if (!scheduler.empty()) pod->scheduler_name = scheduler;
}

// The tolerations the DaemonSet controller gives its pods
// (daemonset_util.go AddOrUpdateDaemonPodTolerations): they run on nodes
// that are not ready, unreachable, under pressure or cordoned, and, with the
// host's network, where the network is not ready yet. Added unless the
// template has an identical one.
void AddDaemonSetTolerations(Pod& pod) {
  struct Added {
    const char* key;
    TaintEffect effect;
  };
  std::vector<Added> added = {{"node.kubernetes.io/not-ready", TaintEffect::kNoExecute},
                              {"node.kubernetes.io/unreachable", TaintEffect::kNoExecute},
                              {"node.kubernetes.io/disk-pressure", TaintEffect::kNoSchedule},
                              {"node.kubernetes.io/memory-pressure", TaintEffect::kNoSchedule},
                              {"node.kubernetes.io/pid-pressure", TaintEffect::kNoSchedule},
                              {"node.kubernetes.io/unschedulable", TaintEffect::kNoSchedule}};
  if (pod.host_network) added.push_back({"node.kubernetes.io/network-unavailable", TaintEffect::kNoSchedule});
  for (const Added& a : added) {
    bool present = false;
    for (const Toleration& t : pod.tolerations) {
      present |= t.key == a.key && t.op == TolerationOp::kExists && t.effect == a.effect && !t.toleration_seconds;
    }
    if (!present) pod.tolerations.push_back({a.key, TolerationOp::kExists, "", a.effect, std::nullopt});
  }
}

// The API server's `spec.containers: Required value`, after every other
// problem of the pod (those say more).
void RequireContainers(DecodeContext& cx, NodeRef spec, NodeRef object, const Pod& pod) {
  if (!pod.containers.empty() || !cx.Clean()) return;
  NodeRef at = spec.Valid() && spec.Get("containers").Valid() ? spec.Get("containers") : spec.Valid() ? spec : object;
  Diagnostic& d = cx.Error(DiagCode::kMissingField, at, "the pod has no containers");
  d.help = "a pod runs at least one container: set `spec.containers`";
}

// The pod template of a workload: spec.template, or for a CronJob
// spec.jobTemplate.spec.template.
NodeRef TemplateOf(DecodeContext& cx, NodeRef object, std::string_view kind) {
  NodeRef spec = cx.Mapping(object, "spec");
  if (spec.Valid() && kind == "CronJob") {
    NodeRef job = cx.Mapping(spec, "jobTemplate");
    spec = job.Valid() ? cx.Mapping(job, "spec") : NodeRef();
  }
  return spec.Valid() ? cx.Mapping(spec, "template") : NodeRef();
}

// In-place resize: a container status's resources.requests and
// allocatedResources, kept on the container of its name (statuses of
// containers the spec lacks are dropped, as the scheduler's lookup by name
// never finds them).
void DecodeContainerStatuses(DecodeContext& cx, NodeRef status, std::string_view key, std::vector<Container>& containers) {
  NodeRef statuses = cx.Sequence(status, key);
  for (uint32_t i = 0; statuses.Valid() && i < statuses.Size(); ++i) {
    NodeRef entry = statuses.At(i);
    if (!cx.ExpectMapping(entry, "a container status")) continue;
    std::string name;
    cx.String(entry, "name", &name);
    auto c = std::find_if(containers.begin(), containers.end(), [&](const Container& x) { return x.name == name; });
    if (c == containers.end()) continue;
    cx.Resources(entry, "allocatedResources", &c->allocated);
    NodeRef resources = cx.Mapping(entry, "resources");
    if (!resources.Valid()) continue;
    c->status_resources = true;
    cx.Resources(resources, "requests", &c->status_requests);
  }
}

}  // namespace

bool IsWorkloadKind(std::string_view kind) {
  return kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet" || kind == "DaemonSet" ||
         kind == "Job" || kind == "CronJob" || kind == "ReplicationController";
}

std::optional<Pod> DecodePod(NodeRef object, DiagnosticSink& diags) {
  DecodeContext cx(diags);
  Pod pod;
  NodeRef metadata = cx.Mapping(object, "metadata");
  DecodePodBody(cx, metadata, cx.Mapping(object, "spec"), &pod);
  NodeRef status = cx.Mapping(object, "status");
  if (status.Valid()) {
    std::string phase;
    cx.String(status, "phase", &phase);
    pod.phase = ParsePhase(phase);
    cx.String(status, "startTime", &pod.start_time);
    NodeRef claim_statuses = cx.Sequence(status, "resourceClaimStatuses");
    for (uint32_t i = 0; claim_statuses.Valid() && i < claim_statuses.Size(); ++i) {
      NodeRef entry = claim_statuses.At(i);
      if (!cx.ExpectMapping(entry, "a resource claim status")) continue;
      PodResourceClaimStatus claim_status;
      cx.String(entry, "name", &claim_status.name);
      cx.String(entry, "resourceClaimName", &claim_status.claim_name);
      pod.resource_claim_statuses.push_back(std::move(claim_status));
    }
    NodeRef conditions = status.Get("conditions");
    for (uint32_t i = 0; conditions.Valid() && conditions.IsSequence() && i < conditions.Size(); ++i) {
      NodeRef c = conditions.At(i);
      if (!c.IsMapping()) continue;
      if (c.Get("type").Text() == "PodResizePending") pod.resize_infeasible = c.Get("reason").Text() == "Infeasible";
      if (c.Get("type").Text() != "PodScheduled" || c.Get("status").Text() != "False") continue;
      if (NodeRef message = c.Get("message"); message.IsScalar()) pod.scheduled_message = std::string(message.Text());
    }
    DecodeContainerStatuses(cx, status, "containerStatuses", pod.containers);
    DecodeContainerStatuses(cx, status, "initContainerStatuses", pod.init_containers);
  }
  if (pod.name.empty() && cx.Clean()) {
    Diagnostic& d = cx.Error(DiagCode::kMissingField, metadata.Valid() ? metadata : object, "the pod has no name");
    d.help = "set `metadata.name`";
  }
  RequireContainers(cx, cx.Mapping(object, "spec"), object, pod);
  if (!cx.Clean()) return std::nullopt;
  return pod;
}

std::optional<Pod> DecodeWorkloadTemplate(NodeRef object, std::string_view kind, DiagnosticSink& diags) {
  DecodeContext cx(diags);
  NodeRef metadata = cx.Mapping(object, "metadata");
  std::string workload_name, workload_ns;
  if (metadata.Valid()) {
    cx.String(metadata, "name", &workload_name);
    cx.String(metadata, "namespace", &workload_ns);
  }
  NodeRef pod_template = TemplateOf(cx, object, kind);
  if (!pod_template.Valid()) {
    if (cx.Clean()) {
      cx.Error(DiagCode::kMissingField, object, fmt::format("the {} has no pod template", kind))
          .help = kind == "CronJob" ? "set `spec.jobTemplate.spec.template`" : "set `spec.template`";
    }
    return std::nullopt;
  }
  Pod pod;
  DecodePodBody(cx, cx.Mapping(pod_template, "metadata"), cx.Mapping(pod_template, "spec"), &pod);
  // The template's pods live in the workload's namespace.
  pod.namespace_name = workload_ns.empty() ? "default" : workload_ns;
  if (pod.name.empty()) pod.name = workload_name;
  pod.template_of = fmt::format("{}/{}", kind, workload_name);
  if (kind == "DaemonSet") AddDaemonSetTolerations(pod);
  NodeRef spec = cx.Mapping(object, "spec");
  if (spec.Valid()) {
    std::optional<int32_t> count;
    cx.Int32(spec, kind == "Job" ? "parallelism" : "replicas", &count);
    pod.template_replicas = kind == "DaemonSet" ? 0 : kind == "CronJob" ? 1 : count.value_or(1);
  }
  NodeRef selector = spec.Valid() ? spec.Get("selector") : NodeRef();
  if (selector.Valid() && !selector.IsNull() && kind != "CronJob" && kind != "Job") {
    if (kind == "ReplicationController") {  // a label map
      StringMap labels;
      cx.StringMapField(spec, "selector", &labels);
      pod.template_selector = LabelSelector{labels, {}};
    } else if (cx.ExpectMapping(selector, "a label selector")) {
      pod.template_selector = DecodeLabelSelector(cx, selector);
    }
  }
  if (workload_name.empty() && cx.Clean()) {
    cx.Error(DiagCode::kMissingField, metadata.Valid() ? metadata : object, fmt::format("the {} has no name", kind))
        .help = "set `metadata.name`";
  }
  RequireContainers(cx, cx.Mapping(pod_template, "spec"), pod_template, pod);
  if (!cx.Clean()) return std::nullopt;
  return pod;
}

std::optional<Pod> DecodePodOrTemplate(NodeRef object, std::string_view default_kind, DiagnosticSink& diags) {
  std::string_view kind = KindOf(object, default_kind);
  if (kind == "Pod") return DecodePod(object, diags);
  if (IsWorkloadKind(kind)) return DecodeWorkloadTemplate(object, kind, diags);
  NodeRef at = object.Get("kind").Valid() ? object.Get("kind") : object;
  Diagnostic& d = diags.Error(DiagCode::kNotAPod, at.GetSpan(),
                              kind.empty() ? std::string("the object has no `kind`; expected a Pod or a workload")
                                           : fmt::format("a `{}` is not a pod", kind),
                              "expected a Pod or a workload");
  d.help = "give a Pod, or a Deployment, StatefulSet, ReplicaSet, DaemonSet, Job or CronJob (its pod template is used)";
  return std::nullopt;
}

std::optional<SelectorOwner> DecodeSelectorOwner(NodeRef object, std::string_view kind, DiagnosticSink& diags) {
  DecodeContext cx(diags);
  SelectorOwner owner;
  owner.kind = std::string(kind);
  NodeRef metadata = cx.Mapping(object, "metadata");
  if (metadata.Valid()) {
    cx.String(metadata, "name", &owner.name);
    std::string ns;
    cx.String(metadata, "namespace", &ns);
    if (!ns.empty()) owner.namespace_name = ns;
  }
  NodeRef spec = cx.Mapping(object, "spec");
  NodeRef selector = spec.Valid() ? spec.Get("selector") : NodeRef();
  if (selector.Valid() && !selector.IsNull()) {
    if (kind == "Service" || kind == "ReplicationController") {
      StringMap labels;
      cx.StringMapField(spec, "selector", &labels);
      owner.match_labels = std::move(labels);
    } else if (cx.ExpectMapping(selector, "a label selector")) {
      owner.selector = DecodeLabelSelector(cx, selector);
    }
  }
  if (!cx.Clean()) return std::nullopt;
  return owner;
}

std::optional<std::vector<TopologySpreadConstraint>> DecodeSpreadConstraints(NodeRef list, DiagnosticSink& diags) {
  DecodeContext cx(diags);
  std::vector<TopologySpreadConstraint> out;
  if (!list.IsSequence()) {
    cx.Error(DiagCode::kWrongType, list, fmt::format("expected a list of topology spread constraints, found {}", list.Describe()));
    return std::nullopt;
  }
  DecodeSpread(cx, list, &out);
  if (!cx.Clean()) return std::nullopt;
  return out;
}

}  // namespace policy::k8s
