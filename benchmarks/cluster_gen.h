#pragma once
/// Generates realistic cluster snapshots for benchmarks and scale tests:
/// nodes as bulky as `kubectl get nodes -o json|yaml` prints them (labels of
/// real clouds, NVIDIA GPU Feature Discovery labels on GPU nodes, taints,
/// conditions, images, nodeInfo), deterministic for a given seed.

#include <cstdint>
#include <string>
#include <vector>

namespace policy::bench {

enum class Format { kJson, kYaml };

struct ClusterSpec {
  int nodes = 5000;
  int pods_per_node = 0;     ///< bound pods per node (kube-system and app pods)
  double gpu_fraction = 0.2; ///< share of nodes with GPUs and GFD labels
  uint32_t seed = 1;
  /// Shaped as the real dumps of ../shared/fixtures/real/ are: every node
  /// with ~80 label keys (cloud, NFD and, on GPU nodes, GFD), every pod
  /// with its projected service-account token volume, app pods owned by
  /// ReplicaSets (pod-template-hash) and DaemonSets, the ReplicaSets and
  /// StatefulSets themselves, a StorageClass and the StatefulSets' claims.
  bool realistic = false;
  /// Pending pods (spec.nodeName unset) after the nodes, as a real queue
  /// holds them (realistic shapes; see RealisticQueue in the .cpp).
  int pending = 0;
};

/// A `v1/List` of the nodes (and pods) in `format`.
std::string GenerateCluster(const ClusterSpec& spec, Format format);

/// The Pending pods GenerateCluster writes for `spec.pending`, in the same
/// order, each as one JSON object (what an extender is sent of a pod).
std::vector<std::string> PendingPodsJson(const ClusterSpec& spec);

}  // namespace policy::bench
