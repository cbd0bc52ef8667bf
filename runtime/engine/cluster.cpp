#include "runtime/engine/cluster.h"

namespace policy::engine {

Cluster::Cluster() : Cluster(std::make_unique<rt::NodeTable>()) {}

Cluster::Cluster(std::unique_ptr<rt::NodeTable> table) : table_(std::move(table)), dictionary_(*table_) {}

std::unique_ptr<Cluster> Cluster::Load(std::shared_ptr<const Source> snapshot, DiagnosticSink& diags) {
  return Load(std::vector<std::shared_ptr<const Source>>{std::move(snapshot)}, diags);
}

std::unique_ptr<Cluster> Cluster::Load(const std::vector<std::shared_ptr<const Source>>& files, DiagnosticSink& diags) {
  return Load(files, {}, diags);
}

std::unique_ptr<Cluster> Cluster::Load(const std::vector<std::shared_ptr<const Source>>& files,
                                       std::span<const k8s::NodeRef> objects, DiagnosticSink& diags) {
  std::vector<const Source*> sources;
  for (const std::shared_ptr<const Source>& f : files) sources.push_back(f.get());
  rt::LoadReport report;
  std::unique_ptr<rt::NodeTable> table = rt::LoadCluster(sources, objects, diags, &report);
  if (!table) return nullptr;
  std::unique_ptr<Cluster> cluster(new Cluster(std::move(table)));
  cluster->report_ = report;
  return cluster;
}

std::unique_ptr<Cluster> Cluster::LoadFiles(const std::vector<rt::SnapshotFile>& files, const rt::CacheOptions& cache,
                                            DiagnosticSink& diags) {
  rt::LoadReport report;
  std::vector<std::shared_ptr<const Source>> read;
  std::unique_ptr<rt::NodeTable> table = rt::LoadClusterFiles(files, cache, diags, &report, read);
  if (!table) return nullptr;
  std::unique_ptr<Cluster> cluster(new Cluster(std::move(table)));
  cluster->report_ = std::move(report);
  cluster->sources_ = std::move(read);
  return cluster;
}

}  // namespace policy::engine
