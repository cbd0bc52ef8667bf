#include "runtime/engine/cluster.h"

#include <mutex>

#include "runtime/dra/selector_check.h"

namespace policy::engine {
namespace {

// What a load says of DRA CEL selectors (the loader compiles no CEL).
void CheckSelectors(const std::vector<k8s::CelSelector>& selectors, Span object, DiagnosticSink& diags) {
  dra::CheckCelSelectors(selectors, object, diags);
}

}  // namespace

struct Cluster::KeysRead {
  std::mutex mutex;
  std::shared_ptr<const LabelKeys> keys;
  uint64_t whole_epoch = UINT64_MAX;  // the table's WholeEpoch they were counted at
  size_t groups = 0;                  // the term groups counted
};

Cluster::Cluster() : Cluster(std::make_unique<rt::NodeTable>()) {}

Cluster::Cluster(std::unique_ptr<rt::NodeTable> table)
    : table_(std::move(table)), dictionary_(*table_), keys_read_(std::make_shared<KeysRead>()) {}

std::shared_ptr<const LabelKeys> Cluster::SelectorKeys() const {
  const rt::NodeTable& table = *table_;
  KeysRead& cache = *keys_read_;
  std::lock_guard lock(cache.mutex);
  const std::vector<rt::TermGroup>& groups = table.TermGroups();
  if (cache.keys && cache.whole_epoch == table.WholeEpoch() && cache.groups == groups.size()) return cache.keys;
  auto keys = std::make_shared<LabelKeys>();
  size_t from = 0;
  if (cache.keys && cache.whole_epoch == table.WholeEpoch() && cache.groups < groups.size()) {
    *keys = *cache.keys;  // only groups were added
    from = cache.groups;
  } else {
    for (const k8s::SelectorOwner& owner : table.SelectorOwners()) {
      if (owner.match_labels) {
        for (const auto& [key, value] : *owner.match_labels) keys->insert(key);
      }
      if (owner.selector) AddKeysRead(*owner.selector, *keys);
    }
  }
  for (size_t g = from; g < groups.size(); ++g) AddKeysRead(groups[g].term, *keys);
  cache.keys = std::move(keys);
  cache.whole_epoch = table.WholeEpoch();
  cache.groups = groups.size();
  return cache.keys;
}

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
  std::unique_ptr<rt::NodeTable> table = rt::LoadCluster(sources, objects, diags, &report, k8s::InputFormat::kAuto, &CheckSelectors);
  if (!table) return nullptr;
  std::unique_ptr<Cluster> cluster(new Cluster(std::move(table)));
  cluster->report_ = report;
  return cluster;
}

std::unique_ptr<Cluster> Cluster::LoadFiles(const std::vector<rt::SnapshotFile>& files, const rt::CacheOptions& cache,
                                            DiagnosticSink& diags) {
  rt::LoadReport report;
  std::vector<std::shared_ptr<const Source>> read;
  std::unique_ptr<rt::NodeTable> table = rt::LoadClusterFiles(files, cache, diags, &report, read, &CheckSelectors);
  if (!table) return nullptr;
  std::unique_ptr<Cluster> cluster(new Cluster(std::move(table)));
  cluster->report_ = std::move(report);
  cluster->sources_ = std::move(read);
  return cluster;
}

}  // namespace policy::engine
