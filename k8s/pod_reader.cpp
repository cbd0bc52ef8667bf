#include "k8s/pod_reader.h"

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "k8s/strict_fields.h"

namespace policy::k8s {
namespace {

class FirstPod final : public ObjectVisitor {
 public:
  FirstPod(DiagnosticSink& diags, FieldValidation validation) : diags_(diags), validation_(validation) {}

  void Visit(NodeRef object, std::string_view default_kind) override {
    ++count_;
    if (count_ == 2) {
      Diagnostic& d = diags_.Error(DiagCode::kNotAPod, object.GetSpan(), "the pod file holds more than one object",
                                   "a second object");
      d.help = "give one Pod or one workload per file";
    }
    if (count_ > 1) return;
    if (!object.IsMapping()) {
      diags_.Error(DiagCode::kWrongType, object.GetSpan(),
                   fmt::format("expected a Kubernetes object (a mapping), found {}", object.Describe()));
      return;
    }
    // Unknown fields first and whatever else is wrong: every problem at once.
    CheckUnknownFields(object, KindOf(object, default_kind), validation_, diags_);
    pod_ = DecodePodOrTemplate(object, default_kind, diags_);
  }

  size_t count() const { return count_; }
  std::optional<Pod>& pod() { return pod_; }

 private:
  DiagnosticSink& diags_;
  FieldValidation validation_;
  size_t count_ = 0;
  std::optional<Pod> pod_;
};

class ManifestReader final : public ObjectVisitor {
 public:
  ManifestReader(DiagnosticSink& diags, Manifest& out, FieldValidation validation)
      : diags_(diags), out_(out), validation_(validation) {}

  void Visit(NodeRef object, std::string_view default_kind) override {
    if (!object.IsMapping()) {
      diags_.Error(DiagCode::kWrongType, object.GetSpan(),
                   fmt::format("expected a Kubernetes object (a mapping), found {}", object.Describe()));
      return;
    }
    std::string_view kind = KindOf(object, default_kind);
    ++objects_;
    if (kind != "Pod" && !IsWorkloadKind(kind) && !other_at_.source) {
      other_at_ = (object.Get("kind").Valid() ? object.Get("kind") : object).GetSpan();
      other_kind_ = std::string(kind);
    }
    if (kind == "Pod" || IsWorkloadKind(kind)) {
      CheckUnknownFields(object, kind, validation_, diags_);
      if (std::optional<Pod> pod = DecodePodOrTemplate(object, default_kind, diags_)) out_.pods.push_back(std::move(*pod));
    }
    // A ReplicaSet, StatefulSet or ReplicationController is also a selector
    // owner: its pods spread by its selector.
    if (kind == "Service" || kind == "ReplicationController" || kind == "ReplicaSet" || kind == "StatefulSet") {
      if (auto owner = DecodeSelectorOwner(object, kind, diags_)) out_.owners.push_back(std::move(*owner));
    } else if (kind == "Namespace") {
      if (auto ns = DecodeNamespace(object, diags_)) out_.namespaces.push_back(std::move(*ns));
    } else if (kind == "PersistentVolumeClaim") {
      if (auto pvc = DecodePersistentVolumeClaim(object, diags_)) out_.claims.push_back(std::move(*pvc));
    } else if (kind == "PersistentVolume") {
      if (auto pv = DecodePersistentVolume(object, diags_)) out_.volumes.push_back(std::move(*pv));
    } else if (kind == "StorageClass") {
      if (auto sc = DecodeStorageClass(object, diags_)) out_.classes.push_back(std::move(*sc));
    } else if (kind == "PriorityClass") {
      if (auto pc = DecodePriorityClass(object, diags_)) out_.priority_classes.push_back(std::move(*pc));
    } else if (kind == "DeviceClass") {
      if (auto dc = DecodeDeviceClass(object, diags_)) out_.device_classes.push_back(std::move(*dc));
    } else if (kind == "ResourceClaim") {
      if (auto claim = DecodeResourceClaim(object, diags_)) out_.resource_claims.push_back(std::move(*claim));
    } else if (kind == "ResourceClaimTemplate") {
      if (auto t = DecodeResourceClaimTemplate(object, diags_)) out_.claim_templates.push_back(std::move(*t));
    } else if (kind != "Pod" && !IsWorkloadKind(kind)) {
      out_.skipped.emplace_back(kind.empty() ? "(no kind)" : kind);
    }
  }

  size_t objects() const { return objects_; }
  Span other_at() const { return other_at_; }
  const std::string& other_kind() const { return other_kind_; }

 private:
  DiagnosticSink& diags_;
  Manifest& out_;
  FieldValidation validation_;
  size_t objects_ = 0;
  Span other_at_;  // the first object that is no pod (its kind)
  std::string other_kind_;
};

}  // namespace

std::optional<Manifest> ReadManifest(const Source& source, DiagnosticSink& diags, FieldValidation validation) {
  size_t errors = diags.ErrorCount();
  Manifest manifest;
  ManifestReader visitor(diags, manifest, validation);
  if (!ReadObjects(source, visitor, diags)) return std::nullopt;
  if (diags.ErrorCount() != errors) return std::nullopt;
  if (visitor.objects() == 0) {
    Diagnostic& d = diags.Error(DiagCode::kNoObjects, Span{&source, 0, 0}, "the pod file holds no object");
    d.help = "give a Pod, or a workload such as a Deployment";
    return std::nullopt;
  }
  if (manifest.pods.empty()) {
    std::string_view kind = visitor.other_kind();
    Diagnostic& d = diags.Error(DiagCode::kNotAPod, visitor.other_at(),
                                visitor.objects() > 1 ? std::string("the pod file holds no Pod or workload")
                                : kind.empty()        ? std::string("the object has no `kind`; expected a Pod or a workload")
                                                      : fmt::format("a `{}` is not a pod", kind),
                                "expected a Pod or a workload");
    d.help = "give a Pod, or a Deployment, StatefulSet, ReplicaSet, DaemonSet, Job or CronJob (its pod template is "
             "used), with the Services and claims it brings if you like";
    return std::nullopt;
  }
  return manifest;
}

std::optional<Pod> ReadPod(const Source& source, DiagnosticSink& diags, FieldValidation validation) {
  size_t errors = diags.ErrorCount();
  FirstPod visitor(diags, validation);
  if (!ReadObjects(source, visitor, diags)) return std::nullopt;
  if (visitor.count() == 0) {
    Diagnostic& d = diags.Error(DiagCode::kNoObjects, Span{&source, 0, 0}, "the pod file holds no object");
    d.help = "give a Pod, or a workload such as a Deployment";
    return std::nullopt;
  }
  if (diags.ErrorCount() != errors) return std::nullopt;
  return std::move(visitor.pod());
}

}  // namespace policy::k8s
