// Watch events applied to a Cluster (watch_event.h).

#include "runtime/engine/watch_event.h"

#include <fmt/format.h>

#include <variant>

#include "k8s/cluster_reader.h"
#include "k8s/decode.h"
#include "k8s/object_reader.h"

namespace policy::engine {
namespace {

// The one object an event carries, decoded.
using Object = std::variant<std::monostate, k8s::Node, k8s::Pod, k8s::Namespace, k8s::SelectorOwner,
                            k8s::PersistentVolumeClaim, k8s::PersistentVolume, k8s::StorageClass, k8s::CsiNode,
                            k8s::PriorityClass, k8s::PodDisruptionBudget, k8s::DeviceClass, k8s::ResourceSlice,
                            k8s::ResourceClaim, k8s::ResourceClaimTemplate>;

class Collect final : public k8s::ClusterVisitor {
 public:
  Object object;
  void OnNode(k8s::Node&& x, Span) override { object = std::move(x); }
  void OnPod(k8s::Pod&& x, Span) override { object = std::move(x); }
  void OnNamespace(k8s::Namespace&& x, Span) override { object = std::move(x); }
  void OnSelectorOwner(k8s::SelectorOwner&& x, Span) override { object = std::move(x); }
  void OnClaim(k8s::PersistentVolumeClaim&& x, Span) override { object = std::move(x); }
  void OnVolume(k8s::PersistentVolume&& x, Span) override { object = std::move(x); }
  void OnStorageClass(k8s::StorageClass&& x, Span) override { object = std::move(x); }
  void OnCsiNode(k8s::CsiNode&& x, Span) override { object = std::move(x); }
  void OnPriorityClass(k8s::PriorityClass&& x, Span) override { object = std::move(x); }
  void OnPodDisruptionBudget(k8s::PodDisruptionBudget&& x, Span) override { object = std::move(x); }
  void OnDeviceClass(k8s::DeviceClass&& x, Span) override { object = std::move(x); }
  void OnResourceSlice(k8s::ResourceSlice&& x, Span) override { object = std::move(x); }
  void OnResourceClaim(k8s::ResourceClaim&& x, Span) override { object = std::move(x); }
  void OnResourceClaimTemplate(k8s::ResourceClaimTemplate&& x, Span) override { object = std::move(x); }
};

// Reads the event's envelope and decodes its object.
class EventReader final : public k8s::ObjectVisitor {
 public:
  explicit EventReader(DiagnosticSink& diags) : diags_(diags) {}

  void Visit(k8s::NodeRef event, std::string_view) override {
    if (++events_ > 1) {
      diags_.Error(DiagCode::kWrongType, event.GetSpan(), "expected one watch event, found another after it");
      return;
    }
    if (!event.IsMapping()) {
      diags_.Error(DiagCode::kWrongType, event.GetSpan(),
                   fmt::format("expected a watch event ({{\"type\": ..., \"object\": {{...}}}}), found {}", event.Describe()));
      return;
    }
    k8s::NodeRef type = event.Get("type");
    if (!type.IsScalar()) {
      diags_.Error(DiagCode::kMissingField, event.GetSpan(), "a watch event needs `type` (ADDED, MODIFIED, DELETED or BOOKMARK)");
      return;
    }
    outcome.type = std::string(type.Text());
    if (outcome.type != "ADDED" && outcome.type != "MODIFIED" && outcome.type != "DELETED" && outcome.type != "BOOKMARK") {
      std::string why = outcome.type == "ERROR" ? " (an ERROR event ends the watch: list again)" : "";
      diags_.Error(DiagCode::kWrongType, type.GetSpan(),
                   fmt::format("expected a watch event type ADDED, MODIFIED, DELETED or BOOKMARK, found `{}`{}", outcome.type, why));
      return;
    }
    k8s::NodeRef object = event.Get("object");
    if (!object.IsMapping()) {
      diags_.Error(DiagCode::kMissingField, object.Valid() ? object.GetSpan() : event.GetSpan(),
                   "a watch event needs `object`, the Kubernetes object it is about");
      return;
    }
    outcome.kind = std::string(k8s::KindOf(object, ""));
    if (outcome.type == "BOOKMARK") return;
    k8s::ClusterReadStats stats;
    k8s::DispatchObject(object, "", collect, diags_, &stats);
  }

  EventOutcome outcome;
  Collect collect;
  int events() const { return events_; }

 private:
  DiagnosticSink& diags_;
  int events_ = 0;
};

// Applies a decoded object: `deleted` removes it, else it replaces what the
// cluster has of it. Whether anything changed.
bool Apply(Cluster& cluster, Object& object, bool deleted) {
  if (auto* node = std::get_if<k8s::Node>(&object)) {
    if (deleted) return cluster.RemoveNode(node->name);
    if (cluster.UpdateNode(*node)) return true;
    return cluster.AddNode(*node).has_value();
  }
  if (auto* pod = std::get_if<k8s::Pod>(&object)) {
    bool had = cluster.UnbindPod(pod->namespace_name, pod->name);
    if (deleted) return had;
    rt::BindResult bound = cluster.BindPod(*pod);
    return had || bound == rt::BindResult::kBound || bound == rt::BindResult::kWaitingForNode;
  }
  if (auto* ns = std::get_if<k8s::Namespace>(&object)) {
    if (deleted) return cluster.RemoveNamespace(ns->name);
    cluster.SetNamespace(ns->name, std::move(ns->labels));
    return true;
  }
  if (auto* owner = std::get_if<k8s::SelectorOwner>(&object)) {
    if (deleted) return cluster.RemoveSelectorOwner(owner->kind, owner->namespace_name, owner->name);
    cluster.SetSelectorOwner(std::move(*owner));
    return true;
  }
  if (auto* claim = std::get_if<k8s::PersistentVolumeClaim>(&object)) {
    if (deleted) return cluster.RemoveClaim(claim->namespace_name, claim->name);
    cluster.SetClaim(std::move(*claim));
    return true;
  }
  if (auto* volume = std::get_if<k8s::PersistentVolume>(&object)) {
    if (deleted) return cluster.RemoveVolume(volume->name);
    cluster.SetVolume(std::move(*volume));
    return true;
  }
  if (auto* sc = std::get_if<k8s::StorageClass>(&object)) {
    if (deleted) return cluster.RemoveStorageClass(sc->name);
    cluster.SetStorageClass(std::move(*sc));
    return true;
  }
  if (auto* csi = std::get_if<k8s::CsiNode>(&object)) {
    if (deleted) return cluster.RemoveCsiNode(csi->name);
    cluster.SetCsiNode(std::move(*csi));
    return true;
  }
  if (auto* pc = std::get_if<k8s::PriorityClass>(&object)) {
    if (deleted) return cluster.RemovePriorityClass(pc->name);
    cluster.SetPriorityClass(std::move(*pc));
    return true;
  }
  if (auto* pdb = std::get_if<k8s::PodDisruptionBudget>(&object)) {
    if (deleted) return cluster.RemoveBudget(pdb->namespace_name, pdb->name);
    cluster.SetBudget(std::move(*pdb));
    return true;
  }
  if (auto* dc = std::get_if<k8s::DeviceClass>(&object)) {
    if (deleted) return cluster.RemoveDeviceClass(dc->name);
    cluster.SetDeviceClass(std::move(*dc));
    return true;
  }
  if (auto* slice = std::get_if<k8s::ResourceSlice>(&object)) {
    if (deleted) return cluster.RemoveResourceSlice(slice->name);
    cluster.SetResourceSlice(std::move(*slice));
    return true;
  }
  if (auto* rc = std::get_if<k8s::ResourceClaim>(&object)) {
    if (deleted) return cluster.RemoveResourceClaim(rc->namespace_name, rc->name);
    cluster.SetResourceClaim(std::move(*rc));
    return true;
  }
  if (auto* t = std::get_if<k8s::ResourceClaimTemplate>(&object)) {
    if (deleted) return cluster.RemoveClaimTemplate(t->namespace_name, t->name);
    cluster.SetClaimTemplate(std::move(*t));
    return true;
  }
  return false;  // a kind the cluster does not hold
}

}  // namespace

std::optional<EventOutcome> ApplyWatchEvent(Cluster& cluster, const Source& source, DiagnosticSink& diags) {
  size_t errors = diags.ErrorCount();
  EventReader reader(diags);
  bool read = k8s::ReadObjects(source, reader, diags);
  if (read && reader.events() == 0) diags.Error(DiagCode::kMissingField, Span{&source, 0, 0}, "expected a watch event, found nothing");
  if (!read || diags.ErrorCount() != errors) return std::nullopt;
  EventOutcome outcome = reader.outcome;
  if (auto* node = std::get_if<k8s::Node>(&reader.collect.object)) outcome.node = *node;
  if (auto* pod = std::get_if<k8s::Pod>(&reader.collect.object)) outcome.pod = pod->namespace_name + "/" + pod->name;
  if (outcome.type != "BOOKMARK") outcome.changed = Apply(cluster, reader.collect.object, outcome.type == "DELETED");
  return outcome;
}

}  // namespace policy::engine
