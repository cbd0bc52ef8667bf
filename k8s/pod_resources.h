#pragma once
/// What a pod asks of a node, computed as kube-scheduler does
/// (k8s.io/component-helpers resource.PodRequests):
///
///   containers = max(sum(containers) + sum(sidecars), max over init
///                containers of (that init container + the sidecars started
///                before it))
///   requests   = containers, with spec.resources.requests' cpu, memory and
///                hugepages-* in place of theirs (pod-level resources)
///                + overhead
///
/// where sidecars are init containers with restartPolicy Always. A
/// container whose status has `resources` (in-place resize) counts at the
/// most of its spec, its status' resources.requests and its
/// allocatedResources; when the pod's PodResizePending condition says
/// Infeasible, at the most of the last two (init containers: sidecars
/// only). Pod-level resources (beta and on from 1.34) and resize status
/// (on from 1.33) are read wherever a pod has them: a cluster of 1.31
/// writes neither (its API has no spec.resources, and its kubelet writes
/// allocatedResources only under an alpha gate), so its pods are counted as
/// 1.31 counts them.

#include <cstdint>
#include <string_view>

#include "k8s/objects.h"

namespace policy::k8s {

/// Effective pod requests per resource (exact quantities).
ResourceList PodRequests(const Pod& pod);

/// The containers' part alone, from their specs (no status, no pod-level
/// resources, no overhead): what pod-level requests must cover and default
/// to.
ResourceList AggregateContainerRequests(const Pod& pod);

/// cpu, memory and hugepages-*: what spec.resources may set.
bool IsPodLevelResource(std::string_view name);

/// The same with kube-scheduler's non-zero defaults applied to every
/// container that requests no cpu (100m) or memory (200Mi) — unless the
/// pod sets that resource at the pod level or another container requests
/// it while pod-level requests are set: what the scoring plugins count.
struct NonZeroRequests {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
};
NonZeroRequests PodNonZeroRequests(const Pod& pod);

inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

}  // namespace policy::k8s
