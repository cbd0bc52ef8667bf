// Storage objects (PersistentVolumeClaim, PersistentVolume, StorageClass,
// CSINode) and PriorityClass: the fields the volume plugins and the queue
// read, with the API's defaults.

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/decode_context.h"
#include "k8s/decode_object.h"
#include "k8s/decode_selectors.h"

namespace policy::k8s {
namespace {

// The storage quantity of a resource list field (capacity, requests).
Quantity Storage(DecodeContext& cx, NodeRef parent, std::string_view key) {
  ResourceList list;
  cx.Resources(parent, key, &list);
  const Quantity* q = Find(list, "storage");
  return q != nullptr ? *q : Quantity();
}

// The beta annotation wins over spec.storageClassName, as
// storagehelpers.GetPersistentVolume(Claim)Class reads it.
constexpr std::string_view kBetaClassAnnotation = "volume.beta.kubernetes.io/storage-class";

// What claims and volumes both carry: spec.accessModes and volumeMode, the
// beta class annotation over the class `spec` gave, status.phase.
template <typename Object>
void ReadVolumeCommon(DecodeContext& cx, NodeRef object, NodeRef spec, const Meta& m, Object& out) {
  if (spec.Valid()) {
    cx.StringList(spec, "accessModes", &out.access_modes);
    cx.String(spec, "volumeMode", &out.volume_mode);
  }
  if (const std::string* beta = Find(m.annotations, kBetaClassAnnotation)) out.storage_class = *beta;
  NodeRef status = cx.Mapping(object, "status");
  if (status.Valid()) cx.String(status, "phase", &out.phase);
}

}  // namespace

std::optional<PersistentVolumeClaim> DecodePersistentVolumeClaim(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<PersistentVolumeClaim>(object, diags, "PersistentVolumeClaim",
                                  [&](DecodeContext& cx, Meta& m, PersistentVolumeClaim& pvc) {
    if (!m.namespace_name.empty()) pvc.namespace_name = m.namespace_name;
    pvc.deleting = m.deleting;
    pvc.bind_completed = Find(m.annotations, "pv.kubernetes.io/bind-completed") != nullptr;
    if (const std::string* node = Find(m.annotations, "volume.kubernetes.io/selected-node")) pvc.selected_node = *node;
    NodeRef spec = cx.Mapping(object, "spec");
    if (spec.Valid()) {
      NodeRef cls = spec.Get("storageClassName");
      if (cls.Valid() && !cls.IsNull()) {
        std::string name;
        cx.String(spec, "storageClassName", &name);
        pvc.storage_class = name;
      }
      cx.String(spec, "volumeName", &pvc.volume_name);
      NodeRef resources = cx.Mapping(spec, "resources");
      if (resources.Valid()) pvc.request = Storage(cx, resources, "requests");
      NodeRef selector = cx.Mapping(spec, "selector");
      if (selector.Valid()) pvc.selector = DecodeLabelSelector(cx, selector);
    }
    ReadVolumeCommon(cx, object, spec, m, pvc);
  });
}

std::optional<PersistentVolume> DecodePersistentVolume(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<PersistentVolume>(object, diags, "PersistentVolume",
                                  [&](DecodeContext& cx, Meta& m, PersistentVolume& pv) {
    pv.labels = std::move(m.labels);
    pv.deleting = m.deleting;
    NodeRef spec = cx.Mapping(object, "spec");
    if (spec.Valid()) {
      cx.String(spec, "storageClassName", &pv.storage_class);
      pv.capacity = Storage(cx, spec, "capacity");
      NodeRef claim = cx.Mapping(spec, "claimRef");
      if (claim.Valid()) {
        cx.String(claim, "namespace", &pv.claim_namespace);
        cx.String(claim, "name", &pv.claim_name);
      }
      NodeRef csi = cx.Mapping(spec, "csi");
      if (csi.Valid()) {
        cx.String(csi, "driver", &pv.csi_driver);
        cx.String(csi, "volumeHandle", &pv.csi_handle);
      }
      NodeRef affinity = cx.Mapping(spec, "nodeAffinity");
      NodeRef required = affinity.Valid() ? cx.Mapping(affinity, "required") : NodeRef();
      NodeRef terms = required.Valid() ? cx.Sequence(required, "nodeSelectorTerms") : NodeRef();
      for (uint32_t i = 0; terms.Valid() && i < terms.Size(); ++i) {
        pv.node_affinity.push_back(DecodeNodeSelectorTerm(cx, terms.At(i)));
      }
    }
    ReadVolumeCommon(cx, object, spec, m, pv);
  });
}

std::optional<StorageClass> DecodeStorageClass(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<StorageClass>(object, diags, "StorageClass",
                                  [&](DecodeContext& cx, Meta& m, StorageClass& sc) {
    cx.String(object, "provisioner", &sc.provisioner);
    std::string mode;
    cx.String(object, "volumeBindingMode", &mode);
    if (mode == "WaitForFirstConsumer") {
      sc.wait_for_first_consumer = true;
    } else if (!mode.empty() && mode != "Immediate") {
      cx.BadEnum(object.Get("volumeBindingMode"), "volumeBindingMode", mode, {"Immediate", "WaitForFirstConsumer"});
    }
    // allowedTopologies: TopologySelectorTerms, each a list of {key, values}
    // that must all hold (a value of the node's label among the values).
    NodeRef topologies = cx.Sequence(object, "allowedTopologies");
    for (uint32_t i = 0; topologies.Valid() && i < topologies.Size(); ++i) {
      NodeRef term = topologies.At(i);
      if (!cx.ExpectMapping(term, "a topology selector term")) continue;
      NodeSelectorTerm out;
      NodeRef expressions = cx.Sequence(term, "matchLabelExpressions");
      for (uint32_t j = 0; expressions.Valid() && j < expressions.Size(); ++j) {
        NodeRef e = expressions.At(j);
        if (!cx.ExpectMapping(e, "a topology requirement")) continue;
        SelectorRequirement r;
        r.span = e.GetSpan();
        cx.String(e, "key", &r.key);
        cx.StringList(e, "values", &r.values);
        out.match_expressions.push_back(std::move(r));
      }
      sc.allowed_topologies.push_back(std::move(out));
    }
  });
}

std::optional<CsiNode> DecodeCsiNode(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<CsiNode>(object, diags, "CSINode",
                                  [&](DecodeContext& cx, Meta& m, CsiNode& node) {
    NodeRef spec = cx.Mapping(object, "spec");
    NodeRef drivers = spec.Valid() ? cx.Sequence(spec, "drivers") : NodeRef();
    for (uint32_t i = 0; drivers.Valid() && i < drivers.Size(); ++i) {
      NodeRef d = drivers.At(i);
      if (!cx.ExpectMapping(d, "a CSI driver")) continue;
      std::string name;
      cx.String(d, "name", &name);
      NodeRef allocatable = cx.Mapping(d, "allocatable");
      std::optional<int32_t> count;
      if (allocatable.Valid()) cx.Int32(allocatable, "count", &count);
      if (count) node.limits.emplace_back(std::move(name), *count);
    }
  });
}

std::optional<PriorityClass> DecodePriorityClass(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<PriorityClass>(object, diags, "PriorityClass",
                                  [&](DecodeContext& cx, Meta& m, PriorityClass& pc) {
    std::optional<int32_t> value;
    cx.Int32(object, "value", &value);
    pc.value = value.value_or(0);
    cx.Bool(object, "globalDefault", &pc.global_default);
    std::string policy;
    cx.String(object, "preemptionPolicy", &policy);
    if (policy == "Never" || policy == "PreemptLowerPriority") {
      pc.preemption_policy = policy;
    } else if (!policy.empty()) {
      cx.BadEnum(object.Get("preemptionPolicy"), "preemptionPolicy", policy, {"PreemptLowerPriority", "Never"});
    }
  });
}

std::optional<PodDisruptionBudget> DecodePodDisruptionBudget(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<PodDisruptionBudget>(object, diags, "PodDisruptionBudget",
                                  [&](DecodeContext& cx, Meta& m, PodDisruptionBudget& pdb) {
    if (!m.namespace_name.empty()) pdb.namespace_name = m.namespace_name;
    NodeRef spec = cx.Mapping(object, "spec");
    NodeRef selector = spec.Valid() ? cx.Mapping(spec, "selector") : NodeRef();
    if (selector.Valid()) pdb.selector = DecodeLabelSelector(cx, selector);
    NodeRef status = cx.Mapping(object, "status");
    std::optional<int32_t> allowed;
    if (status.Valid()) cx.Int32(status, "disruptionsAllowed", &allowed);
    pdb.disruptions_allowed = allowed.value_or(0);
  });
}

}  // namespace policy::k8s
