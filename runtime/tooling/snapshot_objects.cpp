#include "runtime/tooling/snapshot_objects.h"

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "k8s/pod_reader.h"
#include "runtime/engine/cluster.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/columnar/node_table.h"
#include "runtime/dra/selector_check.h"
#include "runtime/sched/resolve_volumes.h"
#include "support/suggest.h"

namespace policy::tooling {

bool LoadSnapshotObjects(const std::vector<rt::SnapshotFile>& files, const rt::CacheOptions& cache,
                         SnapshotObjects& out, DiagnosticSink& diags, std::vector<std::shared_ptr<const Source>>& read) {
  rt::SnapshotObjectList list;
  if (!rt::LoadSnapshotObjects(files, cache, list, diags, read)) return false;
  for (k8s::Pod& pod : list.bound) {
    std::string key = pod.namespace_name + "/" + pod.name;
    out.bound.emplace(std::move(key), std::move(pod));
  }
  out.nodes = std::move(list.nodes);
  return true;
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
  for (const k8s::DeviceClass& c : manifest.device_classes) dra::CheckCelSelectors(c.selectors, file, diags);
  for (const k8s::ResourceClaim& c : manifest.resource_claims) dra::CheckCelSelectors(c.spec, file, diags);
  for (const k8s::ResourceClaimTemplate& t : manifest.claim_templates) dra::CheckCelSelectors(t.spec, file, diags);
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
