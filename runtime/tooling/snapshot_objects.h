#pragma once
/// What the snapshot holds beyond the cluster state the engine loads, read
/// whole for the commands that move pods: every bound pod (to evict,
/// restore or place again) and the nodes as objects (to cordon and
/// uncordon) — from the objects cache when there is one (docs/cache.md).

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/objects.h"
#include "k8s/pod_reader.h"
#include "support/diagnostic.h"

namespace policy::engine {
class Cluster;
}
namespace policy::rt {
class NodeTable;
struct SnapshotFile;
struct CacheOptions;
}

namespace policy::tooling {

struct SnapshotObjects {
  std::unordered_map<std::string, k8s::Pod> bound;  ///< pods bound to a node (not finished), by namespace/name
  std::vector<k8s::Node> nodes;                     ///< in input order
};

/// Reads them (rt::LoadSnapshotObjects: the objects cache when `cache`
/// allows, else the files, appended to `read`); false after errors (in
/// `diags`).
bool LoadSnapshotObjects(const std::vector<rt::SnapshotFile>& files, const rt::CacheOptions& cache,
                         SnapshotObjects& out, DiagnosticSink& diags, std::vector<std::shared_ptr<const Source>>& read);

/// Adds the objects a manifest brings (Services, Namespaces, claims,
/// volumes, StorageClasses, PriorityClasses) to the cluster, in place of the
/// snapshot's of the same name, as applying the manifest would.
void AddManifestObjects(k8s::Manifest& manifest, engine::Cluster& cluster);
/// What is wrong with the CEL selectors of the DRA objects a manifest brings
/// (dra::CheckCelSelectors), said in `source`, the manifest's file.
void CheckManifestSelectors(const k8s::Manifest& manifest, const Source& source, DiagnosticSink& diags);

/// Each bound pod's priority as admission gave it (spec.priority, else its
/// PriorityClass's in `table`, else the global default): what preemption
/// compares.
void ResolveBoundPriorities(SnapshotObjects& objects, const rt::NodeTable& table);

/// The first of `names` that is no node of `table`, said for a person: "no
/// node named `X` in FILES; did you mean `Y`?"; nullopt when each is one.
std::optional<std::string> UnknownNode(const rt::NodeTable& table, const std::vector<std::string>& names,
                                       const std::vector<std::string>& files);

}  // namespace policy::tooling
