#include "runtime/tooling/snapshot_objects.h"

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "k8s/pod_reader.h"
#include "runtime/engine/cluster.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/columnar/node_table.h"
#include "runtime/sched/resolve_volumes.h"
#include "support/suggest.h"

namespace policy::tooling {
namespace {

class Reader final : public k8s::ObjectVisitor {
 public:
  Reader(SnapshotObjects& out, DiagnosticSink& diags, bool nodes) : out_(out), diags_(diags), nodes_(nodes) {}
  void Visit(k8s::NodeRef object, std::string_view default_kind) override {
    if (!object.IsMapping()) return;
    std::string_view kind = k8s::KindOf(object, default_kind);
    if (kind == "Pod" && !object.Get("spec").Get("nodeName").Text().empty()) {
      std::optional<k8s::Pod> pod = k8s::DecodePod(object, diags_);
      if (!pod || pod->phase == k8s::PodPhase::kSucceeded || pod->phase == k8s::PodPhase::kFailed) return;
      std::string key = pod->namespace_name + "/" + pod->name;
      out_.bound.emplace(std::move(key), std::move(*pod));
    } else if (kind == "Node" && nodes_) {
      if (auto node = k8s::DecodeNode(object, diags_)) out_.nodes.push_back(std::move(*node));
    }
  }

 private:
  SnapshotObjects& out_;
  DiagnosticSink& diags_;
  bool nodes_;
};

}  // namespace

bool ReadSnapshotObjects(const std::vector<std::shared_ptr<const Source>>& snapshot, SnapshotObjects& out,
                         DiagnosticSink& diags, bool nodes) {
  Reader reader(out, diags, nodes);
  for (const std::shared_ptr<const Source>& s : snapshot) k8s::ReadObjects(*s, reader, diags);
  return !diags.HasErrors();
}

void AddManifestObjects(k8s::Manifest& manifest, engine::Cluster& cluster) {
  for (k8s::SelectorOwner& o : manifest.owners) cluster.SetSelectorOwner(std::move(o));
  for (k8s::Namespace& ns : manifest.namespaces) cluster.SetNamespace(ns.name, std::move(ns.labels));
  for (k8s::PersistentVolumeClaim& c : manifest.claims) cluster.SetClaim(std::move(c));
  for (k8s::PersistentVolume& v : manifest.volumes) cluster.SetVolume(std::move(v));
  for (k8s::StorageClass& c : manifest.classes) cluster.SetStorageClass(std::move(c));
  for (k8s::PriorityClass& c : manifest.priority_classes) cluster.SetPriorityClass(std::move(c));
  for (k8s::DeviceClass& c : manifest.device_classes) cluster.SetDeviceClass(std::move(c));
  for (k8s::ResourceClaim& c : manifest.resource_claims) cluster.SetResourceClaim(std::move(c));
  for (k8s::ResourceClaimTemplate& t : manifest.claim_templates) cluster.SetClaimTemplate(std::move(t));
}

void CheckManifestSelectors(const k8s::Manifest& manifest, const Source& source, DiagnosticSink& diags) {
  Span file{&source, 0, 1};  // the objects keep no span of their own; each selector its line and column
  for (const k8s::DeviceClass& c : manifest.device_classes) rt::CheckCelSelectors(c.selectors, file, diags);
  for (const k8s::ResourceClaim& c : manifest.resource_claims) rt::CheckCelSelectors(c.spec, file, diags);
  for (const k8s::ResourceClaimTemplate& t : manifest.claim_templates) rt::CheckCelSelectors(t.spec, file, diags);
}

std::optional<std::string> UnknownNode(const rt::NodeTable& table, const std::vector<std::string>& names,
                                       const std::vector<std::string>& files) {
  for (const std::string& name : names) {
    if (table.FindNode(name)) continue;
    std::vector<std::string_view> known;
    for (rt::RowId row : table.LiveRows()) known.push_back(table.NodeName(row));
    std::string_view close = Closest(name, known);
    return fmt::format("no node named `{}` in {}{}", name, fmt::join(files, ", "),
                       close.empty() ? "" : fmt::format("; did you mean `{}`?", close));
  }
  return std::nullopt;
}

void ResolveBoundPriorities(SnapshotObjects& objects, const rt::NodeTable& table) {
  for (auto& [key, pod] : objects.bound) rt::ResolvePriority(pod, table);
}

}  // namespace policy::tooling
