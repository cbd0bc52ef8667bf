#pragma once
/// The cluster state the engine decides against: the NodeTable (nodes,
/// bound pods, the topology index, namespaces, selector owners) and its
/// dictionaries as the compiler binds to them, changed one object at a
/// time. One writer; decisions read it between changes.

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "k8s/objects.h"
#include "support/diagnostic.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/columnar/node_table.h"
#include "runtime/sched/table_dictionary.h"
#include "runtime/engine/pod_template.h"

namespace policy::engine {

class Cluster {
 public:
  /// An empty cluster.
  Cluster();
  /// A cluster over a table built elsewhere (tests, generators).
  explicit Cluster(std::unique_ptr<rt::NodeTable> table);
  /// Loads a snapshot (`kubectl get ... -o yaml|json`); null with
  /// diagnostics when it is not valid (the diagnostics keep it alive).
  static std::unique_ptr<Cluster> Load(std::shared_ptr<const Source> snapshot, DiagnosticSink& diags);
  /// Loads a snapshot split over several files into one cluster (an object
  /// in two of them is an error).
  static std::unique_ptr<Cluster> Load(const std::vector<std::shared_ptr<const Source>>& files, DiagnosticSink& diags);
  /// The same, with Kubernetes objects given as document nodes (a test
  /// file's inline cluster) after the files; the caller keeps the
  /// document alive while diagnostics point into it.
  static std::unique_ptr<Cluster> Load(const std::vector<std::shared_ptr<const Source>>& files,
                                       std::span<const k8s::NodeRef> objects, DiagnosticSink& diags);
  /// Loads snapshot files by path (or text already read), each from its
  /// cache when `cache` allows (rt::LoadClusterFiles, snapshot_cache.h); the
  /// cluster keeps the files it read alive.
  static std::unique_ptr<Cluster> LoadFiles(const std::vector<rt::SnapshotFile>& files, const rt::CacheOptions& cache,
                                            DiagnosticSink& diags);

  // --- object events -----------------------------------------------------
  /// Adds a node; nullopt when one of that name exists.
  std::optional<rt::RowId> AddNode(const k8s::Node& node) { return table_->AddNode(node); }
  /// Replaces a node's labels, taints, allocatable and flags; false when
  /// there is no such node.
  bool UpdateNode(const k8s::Node& node) { return table_->UpdateNode(node); }
  /// Removes a node; its pods wait for a node of the same name.
  bool RemoveNode(std::string_view name) { return table_->RemoveNode(name); }
  /// Binds a pod to its spec.nodeName (what a bind or an informer's pod
  /// event adds).
  rt::BindResult BindPod(const k8s::Pod& pod) { return table_->BindPod(pod); }
  /// Unbinds `namespace/name`; false when no such pod was bound or waiting.
  bool UnbindPod(std::string_view namespace_name, std::string_view name) {
    return table_->UnbindPod(namespace_name, name);
  }
  /// Takes a bound pod out of every count until PutPodBack (trying the
  /// cluster without it); nothing else may change in between.
  bool SetPodAside(std::string_view key) { return table_->SetPodAside(key); }
  bool PutPodBack(std::string_view key) { return table_->PutPodBack(key); }
  /// Drops the pod sets asked for least recently past the table's budget
  /// (rt::NodeTable::TrimPodSets); only while no decision reads the cluster.
  void TrimPodSets() { table_->TrimPodSets(); }
  /// Adds or replaces a namespace and its labels (namespaceSelector).
  void SetNamespace(std::string_view name, k8s::StringMap labels) { table_->SetNamespaceLabels(name, std::move(labels)); }
  /// Removes a namespace; false when there is none of that name.
  bool RemoveNamespace(std::string_view name) { return table_->RemoveNamespace(name); }
  /// Adds or replaces a Service, ReplicationController, ReplicaSet or
  /// StatefulSet (by kind, namespace and name) whose selector default
  /// spreading reads.
  void SetSelectorOwner(k8s::SelectorOwner owner) {
    table_->RemoveSelectorOwner(owner.kind, owner.namespace_name, owner.name);
    table_->AddSelectorOwner(std::move(owner));
  }
  /// Removes one; false when there is none.
  bool RemoveSelectorOwner(std::string_view kind, std::string_view namespace_name, std::string_view name) {
    return table_->RemoveSelectorOwner(kind, namespace_name, name);
  }

  /// Adds or replaces a storage object, PriorityClass or
  /// PodDisruptionBudget (by namespace and name); what the volume plugins,
  /// priorities and preemption read next comes from it.
  void SetClaim(k8s::PersistentVolumeClaim claim) {
    std::string key = rt::StorageObjects::ClaimKey(claim.namespace_name, claim.name);
    table_->MutableStorage().claims.insert_or_assign(std::move(key), std::move(claim));
  }
  void SetVolume(k8s::PersistentVolume volume) {
    std::string key = volume.name;
    table_->MutableStorage().volumes.insert_or_assign(std::move(key), std::move(volume));
  }
  void SetStorageClass(k8s::StorageClass sc) {
    std::string key = sc.name;
    table_->MutableStorage().classes.insert_or_assign(std::move(key), std::move(sc));
  }
  void SetCsiNode(k8s::CsiNode node) {
    std::string key = node.name;
    table_->MutableStorage().csi_nodes.insert_or_assign(std::move(key), std::move(node));
  }
  void SetPriorityClass(k8s::PriorityClass pc) {
    std::string key = pc.name;
    table_->MutableStorage().priority_classes.insert_or_assign(std::move(key), std::move(pc));
  }
  void SetBudget(k8s::PodDisruptionBudget budget) {
    std::string key = rt::StorageObjects::ClaimKey(budget.namespace_name, budget.name);
    table_->MutableStorage().budgets.insert_or_assign(std::move(key), std::move(budget));
  }
  /// Removes one; false when there is none of that name.
  bool RemoveClaim(std::string_view namespace_name, std::string_view name) {
    return table_->MutableStorage().claims.erase(rt::StorageObjects::ClaimKey(std::string(namespace_name), std::string(name))) > 0;
  }
  bool RemoveVolume(std::string_view name) { return table_->MutableStorage().volumes.erase(std::string(name)) > 0; }
  bool RemoveStorageClass(std::string_view name) { return table_->MutableStorage().classes.erase(std::string(name)) > 0; }
  bool RemoveCsiNode(std::string_view name) { return table_->MutableStorage().csi_nodes.erase(std::string(name)) > 0; }
  bool RemoveBudget(std::string_view namespace_name, std::string_view name) {
    return table_->MutableStorage().budgets.erase(rt::StorageObjects::ClaimKey(namespace_name, name)) > 0;
  }
  bool RemovePriorityClass(std::string_view name) {
    return table_->MutableStorage().priority_classes.erase(std::string(name)) > 0;
  }
  /// Dynamic Resource Allocation objects, as the storage objects above.
  void SetDeviceClass(k8s::DeviceClass dc) {
    std::string key = dc.name;
    table_->MutableStorage().device_classes.insert_or_assign(std::move(key), std::move(dc));
  }
  void SetResourceSlice(k8s::ResourceSlice slice) {
    std::string key = slice.name;
    rt::StorageObjects& storage = table_->MutableStorage();
    storage.resource_slices.insert_or_assign(std::move(key), std::move(slice));
    ++storage.slices_version;
  }
  void SetResourceClaim(k8s::ResourceClaim claim) { table_->SetResourceClaim(std::move(claim)); }
  void SetClaimTemplate(k8s::ResourceClaimTemplate t) {
    std::string key = rt::StorageObjects::ClaimKey(t.namespace_name, t.name);
    table_->MutableStorage().claim_templates.insert_or_assign(std::move(key), std::move(t));
  }
  bool RemoveDeviceClass(std::string_view name) { return table_->MutableStorage().device_classes.erase(std::string(name)) > 0; }
  bool RemoveResourceSlice(std::string_view name) {
    rt::StorageObjects& storage = table_->MutableStorage();
    ++storage.slices_version;
    return storage.resource_slices.erase(std::string(name)) > 0;
  }
  bool RemoveResourceClaim(std::string_view namespace_name, std::string_view name) {
    return table_->RemoveResourceClaim(namespace_name, name);
  }
  bool RemoveClaimTemplate(std::string_view namespace_name, std::string_view name) {
    return table_->MutableStorage().claim_templates.erase(rt::StorageObjects::ClaimKey(namespace_name, name)) > 0;
  }

  // --- reading -------------------------------------------------------------
  const rt::NodeTable& Table() const { return *table_; }
  /// The table's dictionaries, as `bind-table` binds programs to them.
  const rt::TableDictionary& Dictionary() const { return dictionary_; }
  /// What loading the snapshot saw (empty for a cluster built by events).
  const rt::LoadReport& Report() const { return report_; }
  /// The label keys of pods that the cluster's selectors read: bound pods'
  /// affinity terms' and the selector owners' (what a template pod keeps
  /// of its labels, pod_template.h). Brought up to date when asked, from
  /// the term groups added since (they are never removed) or, after a
  /// change beyond rows (a selector owner), from every one; readers may
  /// ask at once.
  std::shared_ptr<const LabelKeys> SelectorKeys() const;

 private:
  struct KeysRead;
  std::unique_ptr<rt::NodeTable> table_;
  rt::TableDictionary dictionary_;
  rt::LoadReport report_;
  std::vector<std::shared_ptr<const Source>> sources_;  // LoadFiles': what the objects' spans point into
  std::shared_ptr<KeysRead> keys_read_;                 // SelectorKeys' cache
};

}  // namespace policy::engine
