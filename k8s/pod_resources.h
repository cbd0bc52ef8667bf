#pragma once
/// What a pod asks of a node, computed as kube-scheduler 1.31 does
/// (k8s.io/component-helpers resource.PodRequests):
///
///   requests = max(sum(containers) + sum(sidecars), max over init containers
///              of (that init container + the sidecars started before it))
///              + overhead
///
/// where sidecars are init containers with restartPolicy Always.

#include <cstdint>

#include "k8s/objects.h"

namespace policy::k8s {

/// Effective pod requests per resource (exact quantities).
ResourceList PodRequests(const Pod& pod);

/// The same with kube-scheduler's non-zero defaults applied to every
/// container that requests no cpu (100m) or memory (200Mi): what the
/// scoring plugins count.
struct NonZeroRequests {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
};
NonZeroRequests PodNonZeroRequests(const Pod& pod);

inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

}  // namespace policy::k8s
