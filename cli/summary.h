#pragma once
/// A summary of a loaded cluster for `policyc inspect`: counts, resources,
/// taints, label keys and topology domains, rendered as text or JSON.

#include <string>
#include <vector>

#include "runtime/columnar/cluster_loader.h"
#include "runtime/columnar/node_table.h"

namespace policy::cli {

struct ClusterSummary {
  struct Resource {
    std::string name;
    int64_t allocatable = 0;  ///< summed over live nodes (scheduler units)
    int64_t requested = 0;
    size_t nodes = 0;         ///< nodes that offer some of it
  };
  struct Count {
    std::string name;
    size_t nodes = 0;
    size_t values = 0;  ///< label keys only: distinct values
  };
  struct Domains {
    std::string key;
    std::vector<Count> values;  ///< value -> nodes, most nodes first
  };

  std::string file;
  size_t nodes = 0;
  size_t unschedulable = 0;
  rt::LoadReport report;
  std::vector<Resource> resources;
  std::vector<Count> taints;      ///< `key=value:Effect` -> nodes
  std::vector<Count> label_keys;  ///< most common first
  std::vector<Domains> topology;  ///< zone, region, instance type, GPU product
  size_t row_bytes = 0;
  size_t dictionary_bytes = 0;
};

ClusterSummary Summarize(const std::string& file, const rt::NodeTable& table, const rt::LoadReport& report);
std::string RenderText(const ClusterSummary& summary, size_t max_label_keys);
std::string RenderJson(const ClusterSummary& summary);


}  // namespace policy::cli
