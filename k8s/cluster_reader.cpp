#include "k8s/cluster_reader.h"

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"

namespace policy::k8s {
namespace {

class Dispatcher final : public ObjectVisitor {
 public:
  Dispatcher(ClusterVisitor& visitor, DiagnosticSink& diags, ClusterReadStats* stats)
      : visitor_(visitor), diags_(diags), stats_(stats) {}

  void Visit(NodeRef object, std::string_view default_kind) override {
    DispatchObject(object, default_kind, visitor_, diags_, stats_);
  }

 private:
  ClusterVisitor& visitor_;
  DiagnosticSink& diags_;
  ClusterReadStats* stats_;
};

}  // namespace

void DispatchObject(NodeRef object, std::string_view default_kind, ClusterVisitor& visitor, DiagnosticSink& diags,
                    ClusterReadStats* stats) {
  ++stats->objects;
  if (!object.IsMapping()) {
    diags.Error(DiagCode::kWrongType, object.GetSpan(),
                fmt::format("expected a Kubernetes object (a mapping), found {}", object.Describe()));
    return;
  }
  std::string_view kind = KindOf(object, default_kind);
  Span where = object.GetSpan();
  if (kind == "Node") {
    if (auto node = DecodeNode(object, diags)) visitor.OnNode(std::move(*node), where);
  } else if (kind == "Pod") {
    if (auto pod = DecodePod(object, diags)) visitor.OnPod(std::move(*pod), where);
  } else if (kind == "Namespace") {
    if (auto ns = DecodeNamespace(object, diags)) visitor.OnNamespace(std::move(*ns), where);
  } else if (kind == "Service" || kind == "ReplicationController" || kind == "ReplicaSet" || kind == "StatefulSet") {
    if (auto owner = DecodeSelectorOwner(object, kind, diags)) visitor.OnSelectorOwner(std::move(*owner), where);
  } else if (kind == "PersistentVolumeClaim") {
    if (auto pvc = DecodePersistentVolumeClaim(object, diags)) visitor.OnClaim(std::move(*pvc), where);
  } else if (kind == "PersistentVolume") {
    if (auto pv = DecodePersistentVolume(object, diags)) visitor.OnVolume(std::move(*pv), where);
  } else if (kind == "StorageClass") {
    if (auto sc = DecodeStorageClass(object, diags)) visitor.OnStorageClass(std::move(*sc), where);
  } else if (kind == "CSINode") {
    if (auto node = DecodeCsiNode(object, diags)) visitor.OnCsiNode(std::move(*node), where);
  } else if (kind == "PriorityClass") {
    if (auto pc = DecodePriorityClass(object, diags)) visitor.OnPriorityClass(std::move(*pc), where);
  } else if (kind == "PodDisruptionBudget") {
    if (auto pdb = DecodePodDisruptionBudget(object, diags)) visitor.OnPodDisruptionBudget(std::move(*pdb), where);
  } else if (kind == "DeviceClass") {
    if (auto dc = DecodeDeviceClass(object, diags)) visitor.OnDeviceClass(std::move(*dc), where);
  } else if (kind == "ResourceSlice") {
    if (auto rs = DecodeResourceSlice(object, diags)) visitor.OnResourceSlice(std::move(*rs), where);
  } else if (kind == "ResourceClaim") {
    if (auto rc = DecodeResourceClaim(object, diags)) visitor.OnResourceClaim(std::move(*rc), where);
  } else if (kind == "ResourceClaimTemplate") {
    if (auto t = DecodeResourceClaimTemplate(object, diags)) visitor.OnResourceClaimTemplate(std::move(*t), where);
  } else {
    ++stats->skipped_kinds[kind.empty() ? std::string("(no kind)") : std::string(kind)];
  }
}

bool ReadCluster(const Source& source, ClusterVisitor& visitor, DiagnosticSink& diags, ClusterReadStats* stats,
                 InputFormat format) {
  ClusterReadStats local;
  Dispatcher dispatcher(visitor, diags, stats != nullptr ? stats : &local);
  size_t errors = diags.ErrorCount();
  bool syntax_ok = ReadObjects(source, dispatcher, diags, format);
  // A file with nothing in it (a kubectl that failed, a redirect gone
  // wrong) is not an empty cluster: `kind: List` with `items: []` is.
  std::string_view text = source.Text();
  bool blank = true;
  for (size_t i = 0; i < text.size() && blank;) {
    size_t end = text.find('\n', i);
    std::string_view line = text.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
    size_t at = line.find_first_not_of(" \t\r");
    blank = at == std::string_view::npos || line[at] == '#' || line.substr(at) == "---" || line.substr(at) == "...";
    i = end == std::string_view::npos ? text.size() : end + 1;
  }
  if (syntax_ok && blank) {
    diags.Error(DiagCode::kNoObjects, Span{&source, 0, 0}, "the snapshot file holds no Kubernetes object")
        .help = "dump the cluster with `kubectl get nodes,pods -A -o yaml > cluster.yaml`; an empty file is what a "
                "failed kubectl leaves";
  }
  return syntax_ok && diags.ErrorCount() == errors;
}

}  // namespace policy::k8s
