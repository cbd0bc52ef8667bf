// Fuzzes the snapshot cache's reader (runtime/columnar/snapshot_cache.h)
// past its checks: the input is a cache payload, decoded object by object
// and replayed into a table, as a crafted or damaged cache file would be if
// it passed the checksum. It must end loaded, missed or damaged — never
// crash, read past its bytes, or allocate more than its bytes describe.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/columnar/cluster_loader.h"
#include "runtime/columnar/snapshot_cache.h"

namespace {

// A table fed as the loader feeds it.
class Table final : public policy::k8s::ClusterVisitor {
 public:
  void OnNode(policy::k8s::Node&& v, policy::Span) override { table.AddNode(v); }
  void OnPod(policy::k8s::Pod&& v, policy::Span) override { table.BindPod(v); }
  void OnNamespace(policy::k8s::Namespace&& v, policy::Span) override { table.SetNamespaceLabels(v.name, v.labels); }
  void OnSelectorOwner(policy::k8s::SelectorOwner&& v, policy::Span) override { table.AddSelectorOwner(std::move(v)); }
  policy::rt::NodeTable table;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Table table;
  policy::k8s::ClusterReadStats stats;
  policy::rt::ReplayPayload(std::string_view(reinterpret_cast<const char*>(data), size), table, stats);
  return 0;
}
