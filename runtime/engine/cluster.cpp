#include "runtime/engine/cluster.h"

namespace policy::engine {

Cluster::Cluster() : Cluster(std::make_unique<rt::NodeTable>()) {}

Cluster::Cluster(std::unique_ptr<rt::NodeTable> table) : table_(std::move(table)), dictionary_(*table_) {}

std::unique_ptr<Cluster> Cluster::Load(std::shared_ptr<const Source> snapshot, DiagnosticSink& diags) {
  rt::LoadReport report;
  std::unique_ptr<rt::NodeTable> table = rt::LoadCluster(*snapshot, diags, &report);
  if (!table) return nullptr;
  std::unique_ptr<Cluster> cluster(new Cluster(std::move(table)));
  cluster->report_ = report;
  return cluster;
}

}  // namespace policy::engine
