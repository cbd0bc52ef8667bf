// gen_cluster: writes a generated cluster snapshot to stdout, for scale tests
// of policyc itself:  gen_cluster --nodes 50000 --format json > c.json
// Shaped as real dumps, with a Pending queue:
//   gen_cluster --nodes 5000 --pods-per-node 20 --realistic true --pending 10000 > real.json

#include <cstdio>
#include <cstring>
#include <string>

#include "benchmarks/cluster_gen.h"

int main(int argc, char** argv) {
  policy::bench::ClusterSpec spec;
  policy::bench::Format format = policy::bench::Format::kJson;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    std::string value = argv[i + 1];
    if (flag == "--nodes") {
      spec.nodes = std::stoi(value);
    } else if (flag == "--pods-per-node") {
      spec.pods_per_node = std::stoi(value);
    } else if (flag == "--pending") {
      spec.pending = std::stoi(value);
    } else if (flag == "--realistic" && (value == "true" || value == "false")) {
      spec.realistic = value == "true";
    } else if (flag == "--seed") {
      spec.seed = static_cast<uint32_t>(std::stoul(value));
    } else if (flag == "--format" && (value == "json" || value == "yaml")) {
      format = value == "json" ? policy::bench::Format::kJson : policy::bench::Format::kYaml;
    } else {
      std::fprintf(stderr, "usage: gen_cluster [--nodes N] [--pods-per-node N] [--pending N] [--realistic true|false] [--seed N] "
                           "[--format json|yaml]\n");
      return 2;
    }
  }
  std::string text = policy::bench::GenerateCluster(spec, format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
