#include "runtime/columnar/cluster_loader.h"

#include <filesystem>
#include <unordered_map>

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"

namespace policy::rt {
namespace {

class TableBuilder final : public k8s::ClusterVisitor {
 public:
  TableBuilder(NodeTable& table, DiagnosticSink& diags, LoadReport& report, SelectorCheck check)
      : table_(table), diags_(diags), report_(report), check_(check) {}

  void OnNode(k8s::Node&& node, Span where) override {
    if (!table_.AddNode(node)) {
      Duplicate("node", node.name, where, node_spans_);
      return;
    }
    if (where.Valid()) node_spans_.emplace(node.name, where);  // a cached node has none
    ++report_.nodes;
  }

  void OnPod(k8s::Pod&& pod, Span where) override {
    switch (table_.BindPod(pod)) {
      case BindResult::kBound:
        ++report_.pods_bound;
        report_.pods_with_pod_affinity += pod.affinity.pod_affinity.has_value() || pod.affinity.pod_anti_affinity.has_value();
        break;
      case BindResult::kWaitingForNode:
        if (!first_waiting_.Valid()) first_waiting_ = where;
        break;
      case BindResult::kFinished: ++report_.pods_finished; return;
      case BindResult::kNotBound:
        ++report_.pods_not_bound;
        report_.pending.push_back(std::move(pod));
        return;
      case BindResult::kDuplicate:
        Duplicate("pod", pod.namespace_name + "/" + pod.name, where, pod_spans_);
        return;
    }
    if (where.Valid()) pod_spans_.emplace(pod.namespace_name + "/" + pod.name, where);  // a cached pod has none
  }

  void OnSelectorOwner(k8s::SelectorOwner&& owner, Span) override {
    table_.AddSelectorOwner(std::move(owner));
    ++report_.selector_owners;
  }

  void OnNamespace(k8s::Namespace&& ns, Span where) override {
    table_.SetNamespaceLabels(ns.name, std::move(ns.labels));
    ++report_.namespaces;
  }

  void OnClaim(k8s::PersistentVolumeClaim&& pvc, Span where) override {
    std::string key = StorageObjects::ClaimKey(pvc.namespace_name, pvc.name);
    Store(table_.MutableStorage().claims, key, std::move(pvc), "PersistentVolumeClaim", where, report_.claims);
  }
  void OnVolume(k8s::PersistentVolume&& pv, Span where) override {
    std::string key = pv.name;
    Store(table_.MutableStorage().volumes, key, std::move(pv), "PersistentVolume", where, report_.volumes);
  }
  void OnStorageClass(k8s::StorageClass&& sc, Span where) override {
    std::string key = sc.name;
    Store(table_.MutableStorage().classes, key, std::move(sc), "StorageClass", where, report_.storage_classes);
  }
  void OnCsiNode(k8s::CsiNode&& node, Span where) override {
    std::string key = node.name;
    Store(table_.MutableStorage().csi_nodes, key, std::move(node), "CSINode", where, report_.csi_nodes);
  }
  void OnPriorityClass(k8s::PriorityClass&& pc, Span where) override {
    std::string key = pc.name;
    Store(table_.MutableStorage().priority_classes, key, std::move(pc), "PriorityClass", where,
          report_.priority_classes);
  }
  void OnPodDisruptionBudget(k8s::PodDisruptionBudget&& pdb, Span where) override {
    std::string key = StorageObjects::ClaimKey(pdb.namespace_name, pdb.name);
    Store(table_.MutableStorage().budgets, key, std::move(pdb), "PodDisruptionBudget", where, report_.budgets);
  }

  void OnDeviceClass(k8s::DeviceClass&& dc, Span where) override {
    CheckSelectors(dc.selectors, where);
    std::string key = dc.name;
    Store(table_.MutableStorage().device_classes, key, std::move(dc), "DeviceClass", where, report_.device_classes);
  }
  void OnResourceSlice(k8s::ResourceSlice&& rs, Span where) override {
    std::string key = rs.name;
    ++table_.MutableStorage().slices_version;
    Store(table_.MutableStorage().resource_slices, key, std::move(rs), "ResourceSlice", where, report_.resource_slices);
  }
  void OnResourceClaim(k8s::ResourceClaim&& rc, Span where) override {
    CheckSelectors(rc.spec, where);
    std::string key = StorageObjects::ClaimKey(rc.namespace_name, rc.name);
    Store(table_.MutableStorage().resource_claims, key, std::move(rc), "ResourceClaim", where, report_.resource_claims);
  }
  void OnResourceClaimTemplate(k8s::ResourceClaimTemplate&& t, Span where) override {
    CheckSelectors(t.spec, where);
    std::string key = StorageObjects::ClaimKey(t.namespace_name, t.name);
    Store(table_.MutableStorage().claim_templates, key, std::move(t), "ResourceClaimTemplate", where,
          report_.claim_templates);
  }

  void Finish() {
    // Pods still waiting name nodes that never came.
    report_.pods_unknown_node = table_.WaitingPodCount();
    report_.pods_bound = table_.BoundPodCount();
    if (report_.pods_unknown_node > 0) {
      Diagnostic& d = diags_.Warning(
          DiagCode::kIgnoredPod, first_waiting_,
          report_.pods_unknown_node == 1
              ? std::string("1 pod is bound to a node that is not in the snapshot; it is left out")
              : fmt::format("{} pods are bound to nodes that are not in the snapshot; they are left out",
                            report_.pods_unknown_node),
          "the first of them");
      d.help = "dump nodes and pods together: `kubectl get nodes,pods -A -o yaml`";
    }
  }

 private:
  void CheckSelectors(const std::vector<k8s::CelSelector>& selectors, Span where) {
    if (check_ != nullptr) check_(selectors, where, diags_);
  }
  void CheckSelectors(const k8s::DeviceClaimSpec& spec, Span where) {
    for (const k8s::DeviceRequest& r : spec.requests) {
      for (const k8s::DeviceSubRequest& sub : r.alternatives) CheckSelectors(sub.selectors, where);
    }
  }

  void Duplicate(std::string_view what, const std::string& name, Span where,
                 const std::unordered_map<std::string, Span>& spans, const std::string& span_key = {}) {
    Diagnostic& d = diags_.Error(DiagCode::kDuplicateObject, where, fmt::format("the {} `{}` appears twice", what, name),
                                 "second definition");
    auto first = spans.find(span_key.empty() ? name : span_key);
    if (first != spans.end()) {  // perhaps in another file
      diags_.AddSecondary(d, Span{first->second.source, first->second.begin, first->second.begin + 1}, "first here");
    }
    d.help = "a snapshot holds each object once; remove one of them";
  }

  template <typename T>
  void Store(std::unordered_map<std::string, T>& map, const std::string& key, T&& object, std::string_view kind,
             Span where, size_t& count) {
    std::string span_key = std::string(kind) + " " + key;
    if (!map.try_emplace(key, std::move(object)).second) {
      Duplicate(kind, key, where, storage_spans_, span_key);
      return;
    }
    storage_spans_.emplace(span_key, where);
    ++count;
  }

  NodeTable& table_;
  DiagnosticSink& diags_;
  LoadReport& report_;
  SelectorCheck check_;
  std::unordered_map<std::string, Span> node_spans_;  // name -> where, for duplicate reports
  std::unordered_map<std::string, Span> pod_spans_;
  std::unordered_map<std::string, Span> storage_spans_;  // "KIND name" -> where
  Span first_waiting_;
};

}  // namespace

std::unique_ptr<NodeTable> LoadCluster(std::span<const Source* const> sources, DiagnosticSink& diags,
                                       LoadReport* report, k8s::InputFormat format) {
  return LoadCluster(sources, {}, diags, report, format);
}

std::unique_ptr<NodeTable> LoadCluster(std::span<const Source* const> sources, std::span<const k8s::NodeRef> objects,
                                       DiagnosticSink& diags, LoadReport* report, k8s::InputFormat format,
                                       SelectorCheck check) {
  LoadReport local;
  LoadReport& r = report != nullptr ? *report : local;
  auto table = std::make_unique<NodeTable>();
  TableBuilder builder(*table, diags, r, check);
  for (const Source* source : sources) {
    k8s::ClusterReadStats stats;
    if (!k8s::ReadCluster(*source, builder, diags, &stats, format)) return nullptr;
    r.read.Add(stats);
  }
  for (k8s::NodeRef object : objects) k8s::DispatchObject(object, "", builder, diags, &r.read);
  builder.Finish();
  if (diags.HasErrors()) return nullptr;
  return table;
}

namespace {

// Each of `paths` mapped (Source::FromFile); empty when one cannot be read.
std::vector<std::shared_ptr<const Source>> MapFiles(const std::vector<std::string>& paths) {
  std::vector<std::shared_ptr<const Source>> mapped;
  for (const std::string& path : paths) {
    std::string error;
    std::unique_ptr<Source> source = Source::FromFile(path, &error);
    if (!source) return {};
    mapped.emplace_back(std::move(source));
  }
  return mapped;
}

// The file as given (standard input), else read; null (said) when it cannot be.
std::shared_ptr<const Source> SourceOf(const SnapshotFile& file, DiagnosticSink& diags) {
  if (file.source) return file.source;
  std::string error;
  std::unique_ptr<Source> made = Source::FromFile(file.path, &error);
  if (!made) {
    diags.Report({DiagCode::kIoError, Severity::kError, fmt::format("cannot read `{}`: {}", file.path, error), {}, {}, {}, {}});
    return nullptr;
  }
  return std::shared_ptr<const Source>(std::move(made));
}

// The paths of `files` when they may be cached together: files read by the
// loader itself (not standard input), of `cache.min_bytes` or more in all;
// empty otherwise.
std::vector<std::string> CacheablePaths(const std::vector<SnapshotFile>& files, const CacheOptions& cache) {
  std::vector<std::string> paths;
  uint64_t bytes = 0;
  if (!cache.enabled) return {};
  for (const SnapshotFile& file : files) {
    std::error_code ec;
    if (file.source) return {};
    bytes += std::filesystem::file_size(file.path, ec);
    if (ec) return {};
    paths.push_back(file.path);
  }
  return bytes >= cache.min_bytes ? paths : std::vector<std::string>{};
}

// Collects the Node objects and bound, unfinished pods of a snapshot.
class ObjectCollector final : public k8s::ObjectVisitor {
 public:
  ObjectCollector(SnapshotObjectList& out, DiagnosticSink& diags) : out_(out), diags_(diags) {}
  void Visit(k8s::NodeRef object, std::string_view default_kind) override {
    if (!object.IsMapping()) return;
    std::string_view kind = k8s::KindOf(object, default_kind);
    if (kind == "Pod" && !object.Get("spec").Get("nodeName").Text().empty()) {
      std::optional<k8s::Pod> pod = k8s::DecodePod(object, diags_);
      if (!pod || pod->phase == k8s::PodPhase::kSucceeded || pod->phase == k8s::PodPhase::kFailed) return;
      out_.bound.push_back(std::move(*pod));
    } else if (kind == "Node") {
      if (std::optional<k8s::Node> node = k8s::DecodeNode(object, diags_)) out_.nodes.push_back(std::move(*node));
    }
  }

 private:
  SnapshotObjectList& out_;
  DiagnosticSink& diags_;
};

}  // namespace

bool LoadSnapshotObjects(const std::vector<SnapshotFile>& files, const CacheOptions& cache, SnapshotObjectList& out,
                         DiagnosticSink& diags, std::vector<std::shared_ptr<const Source>>& read, bool pods_too) {
  std::vector<std::string> paths = CacheablePaths(files, cache);
  if (!paths.empty() && ReadObjectCache(cache, paths, out, pods_too)) return true;
  SnapshotObjectList objects;
  DiagnosticSink said;  // warnings: the load of the same files says them
  ObjectCollector collect(objects, said);
  size_t first = read.size();
  for (const SnapshotFile& file : files) {
    std::shared_ptr<const Source> source = SourceOf(file, diags);
    if (!source) return false;
    read.push_back(source);
    k8s::ReadObjects(*source, collect, said);
  }
  if (said.HasErrors()) {
    for (const Diagnostic& d : said.All()) {
      if (d.severity == Severity::kError) diags.Report(d);
    }
    read.resize(first);
    return false;
  }
  if (!paths.empty()) WriteObjectCache(cache, paths, objects);
  out = std::move(objects);
  return true;
}

std::unique_ptr<NodeTable> LoadClusterFiles(const std::vector<SnapshotFile>& files, const CacheOptions& cache,
                                            DiagnosticSink& diags, LoadReport* report,
                                            std::vector<std::shared_ptr<const Source>>& read, SelectorCheck check) {
  LoadReport local;
  LoadReport& r = report != nullptr ? *report : local;
  std::vector<std::string> paths = CacheablePaths(files, cache);
  bool cacheable = !paths.empty();
  if (cacheable) {
    std::vector<CachedWarning> warnings;
    if (std::unique_ptr<NodeTable> table = ReadCache(cache, paths, r, warnings)) {
      if (warnings.empty()) return table;
      // The load's warnings, said again into the files as they are (mapped:
      // a line is read only to show it).
      std::vector<std::shared_ptr<const Source>> mapped = MapFiles(paths);
      bool whole = !mapped.empty();
      for (CachedWarning& w : warnings) {
        Diagnostic& d = w.diagnostic;
        std::vector<Label*> labels = {&d.primary};
        for (Label& l : d.secondary) labels.push_back(&l);
        whole = whole && labels.size() == w.files.size();
        for (size_t i = 0; whole && i < labels.size(); ++i) {
          if (w.files[i] < 0) continue;
          auto file = static_cast<size_t>(w.files[i]);
          whole = file < mapped.size() && labels[i]->span.end <= mapped[file]->Size();
          if (whole) labels[i]->span.source = mapped[file].get();
        }
      }
      if (whole) {
        read.insert(read.end(), mapped.begin(), mapped.end());
        for (CachedWarning& w : warnings) diags.Report(std::move(w.diagnostic));
        return table;
      }
      // Not the files the cache was written from after all: parse them.
      r = LoadReport{};
    }
  }

  auto table = std::make_unique<NodeTable>();
  TableBuilder builder(*table, diags, r, check);
  size_t before = diags.All().size();
  for (const SnapshotFile& file : files) {
    std::shared_ptr<const Source> source = SourceOf(file, diags);
    if (!source) return nullptr;
    read.push_back(source);
    k8s::ClusterReadStats stats;
    if (!k8s::ReadCluster(*source, builder, diags, &stats)) return nullptr;
    r.read.Add(stats);
  }
  builder.Finish();
  if (diags.HasErrors()) return nullptr;
  // A load with warnings only is cached with them: a cached load then says
  // the same (WriteCache refuses one pointing outside the files).
  if (cacheable) {
    std::vector<Diagnostic> warnings(diags.All().begin() + static_cast<std::ptrdiff_t>(before), diags.All().end());
    std::vector<const Source*> sources;
    for (size_t i = read.size() - files.size(); i < read.size(); ++i) sources.push_back(read[i].get());
    WriteCache(cache, paths, *table, r, warnings, sources);
  }
  return table;
}

std::unique_ptr<NodeTable> LoadCluster(const Source& source, DiagnosticSink& diags, LoadReport* report,
                                       k8s::InputFormat format) {
  const Source* one[] = {&source};
  return LoadCluster(one, diags, report, format);
}

}  // namespace policy::rt
