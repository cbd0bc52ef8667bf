// Fuzzes the snapshot cache's reader (runtime/columnar/snapshot_cache.h)
// past its checks: the input is a cache payload — a table's image and a
// load's report — read as a crafted or damaged cache file would be if it
// passed the checksum. It must end with a table or none — never crash, read
// past its bytes, or allocate more than its bytes describe — and a table it
// returns must answer queries (they index what the image gave).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/columnar/cluster_loader.h"
#include "runtime/columnar/snapshot_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  policy::rt::LoadReport report;
  std::vector<policy::rt::CachedWarning> warnings;
  std::unique_ptr<policy::rt::NodeTable> table =
      policy::rt::ReadPayload(std::string_view(reinterpret_cast<const char*>(data), size), report, warnings);
  if (!table) return 0;
  // Touch what the image indexes: every row's columns, taints and pods.
  int64_t sum = 0;
  for (policy::rt::RowId row : table->LiveRows()) {
    sum += static_cast<int64_t>(table->NodeName(row).size()) + table->PodCount()[row];
    for (const policy::rt::LabelColumn& c : table->Labels()) sum += c.value[c.domain[row]];
    for (const policy::rt::ResourceColumn& c : table->Resources()) sum += c.requested[row];
    for (uint32_t taint : table->Taints(row)) sum += table->TaintDictionary()[taint].key;
    sum += static_cast<int64_t>(table->PodsBoundTo(row).size() + table->UsedPorts(row).size());
    for (uint32_t g = 0; g < table->TermGroups().size(); ++g) sum += table->TermGroupInDomain(g, row);
  }
  for (const policy::k8s::Pod& pod : report.pending) sum += static_cast<int64_t>(pod.name.size());
  for (const policy::rt::CachedWarning& w : warnings) sum += static_cast<int64_t>(w.diagnostic.message.size() + w.files.size());
  // Unbinding every pod (the image's lists and indexes taken apart again).
  std::vector<std::string> keys;
  for (policy::rt::RowId row : table->LiveRows()) {
    for (const auto& pod : table->PodsBoundTo(row)) keys.emplace_back(pod.key);
  }
  for (const std::string& key : keys) {
    size_t slash = key.find('/');
    table->UnbindPod(key.substr(0, slash), key.substr(slash + 1));
  }
  return sum == 42 ? 0 : 0;  // `sum` read, so the reads are not dropped
}
