#pragma once
/// Streams a cluster snapshot file into a NodeTable.
///
/// Objects are decoded and applied one at a time (cluster_reader.h), so
/// memory holds the table plus one object, never the whole document tree.
/// Any error refuses the snapshot: no table is returned.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "k8s/cluster_reader.h"
#include "support/diagnostic.h"
#include "runtime/columnar/node_table.h"
#include "runtime/columnar/snapshot_cache.h"

namespace policy::rt {

/// What is wrong with DRA CEL selectors, said as warnings where they are
/// written (`object`: the object's span): the check a load runs on every
/// DeviceClass, ResourceClaim and ResourceClaimTemplate it reads, when its
/// caller gives one (runtime/dra/selector_check.h: the loader itself
/// compiles no CEL).
using SelectorCheck = void (*)(const std::vector<k8s::CelSelector>& selectors, Span object, DiagnosticSink& diags);

/// What the load saw, beyond what the table holds.
struct LoadReport {
  k8s::ClusterReadStats read;
  size_t nodes = 0;
  size_t pods_bound = 0;
  size_t pods_not_bound = 0;     ///< no spec.nodeName (Pending): not part of the cluster state
  std::vector<k8s::Pod> pending;  ///< those pods, in input order (what `check --pod NS/NAME` picks from)
  size_t pods_finished = 0;      ///< Succeeded or Failed: kube-scheduler ignores them
  size_t pods_unknown_node = 0;  ///< bound to a node that is not in the snapshot
  size_t namespaces = 0;
  size_t selector_owners = 0;  ///< Services, ReplicationControllers, ReplicaSets, StatefulSets
  size_t claims = 0, volumes = 0, storage_classes = 0, csi_nodes = 0, priority_classes = 0;
  size_t budgets = 0;  ///< PodDisruptionBudgets
  size_t device_classes = 0, resource_slices = 0, resource_claims = 0, claim_templates = 0;  ///< DRA objects
  size_t pods_with_pod_affinity = 0;  ///< bound pods with (anti-)affinity terms (InterPodAffinity's symmetry)
};

/// Loads the objects of every source into one table (a snapshot split over
/// files: `kubectl cluster-info dump`'s nodes.json and pods.json, a folder
/// of manifests); an object twice, in one file or two, is an error. On
/// error returns null with diagnostics in `diags`.
std::unique_ptr<NodeTable> LoadCluster(std::span<const Source* const> sources, DiagnosticSink& diags,
                                       LoadReport* report = nullptr, k8s::InputFormat format = k8s::InputFormat::kAuto);
/// The same, with `objects` (Kubernetes objects as nodes of a document, such
/// as a test file's inline cluster: diagnostics point into that file) read
/// after the sources.
std::unique_ptr<NodeTable> LoadCluster(std::span<const Source* const> sources, std::span<const k8s::NodeRef> objects,
                                       DiagnosticSink& diags, LoadReport* report = nullptr,
                                       k8s::InputFormat format = k8s::InputFormat::kAuto, SelectorCheck check = nullptr);
/// One file of a snapshot: its path, and its text when the caller has read
/// it (standard input); the loader reads the others itself — or replays
/// their cache (snapshot_cache.h).
struct SnapshotFile {
  std::string path;
  std::shared_ptr<const Source> source;
};

/// Loads the files in order, each from its cache when `cache` allows and
/// one of the file as it is now exists; after a load without any
/// diagnostic, writes the cache of each file parsed. The sources read are
/// appended to `read` (objects' spans point into them: keep them alive).
std::unique_ptr<NodeTable> LoadClusterFiles(const std::vector<SnapshotFile>& files, const CacheOptions& cache,
                                            DiagnosticSink& diags, LoadReport* report,
                                            std::vector<std::shared_ptr<const Source>>& read, SelectorCheck check = nullptr);
/// The snapshot's Node objects and bound pods, whole (SnapshotObjectList):
/// from the objects cache when `cache` allows and has one of the files as
/// they are now, else read from the files (and that cache written). Only
/// errors are said (a load of the same files has said its warnings); false
/// after one. The sources read are appended to `read` (the objects' spans
/// point into them; objects from the cache have none). Without `pods_too`
/// a hit reads the nodes alone (a miss reads everything, to cache it).
bool LoadSnapshotObjects(const std::vector<SnapshotFile>& files, const CacheOptions& cache, SnapshotObjectList& out,
                         DiagnosticSink& diags, std::vector<std::shared_ptr<const Source>>& read, bool pods_too = true);
/// Loads `source`; on error returns null with diagnostics in `diags`.
std::unique_ptr<NodeTable> LoadCluster(const Source& source, DiagnosticSink& diags, LoadReport* report = nullptr,
                                       k8s::InputFormat format = k8s::InputFormat::kAuto);

}  // namespace policy::rt
