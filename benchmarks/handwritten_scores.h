#pragma once
/// The default profile's resource scores for one node, as the benchmarks'
/// hand-written baselines compute them (what stdlib/node_resources_fit and
/// balanced_allocation say in the language), so that each baseline picks
/// the node the engine picks.

#include <cstdint>

namespace policy::bench {

/// NodeResourcesFit's LeastAllocated over cpu and memory: `used` is the
/// node's non-zero requests with the pod's, `cap` its allocatable.
inline int64_t LeastAllocated(int64_t cpu_used, int64_t cpu_cap, int64_t memory_used, int64_t memory_cap) {
  auto least = [](int64_t used, int64_t cap) { return cap == 0 || used > cap ? 0 : (cap - used) * 100 / cap; };
  int64_t weights = (cpu_cap > 0) + (memory_cap > 0);
  return weights == 0 ? 0 : (least(cpu_used, cpu_cap) + least(memory_used, memory_cap)) / weights;
}

/// NodeResourcesBalancedAllocation over cpu and memory: requested (the
/// pod's included) over allocatable, in parts per million.
inline int64_t BalancedAllocation(int64_t cpu_requested, int64_t cpu_alloc, int64_t memory_requested, int64_t memory_alloc) {
  if (cpu_alloc == 0 || memory_alloc == 0) return 100;
  auto share = [](__int128 used, __int128 cap) {
    __int128 q = used * 1000000 / cap;
    return static_cast<int64_t>(q < 1000000 ? q : 1000000);
  };
  int64_t c = share(cpu_requested, cpu_alloc), m = share(memory_requested, memory_alloc);
  return (2000000 - (c > m ? c - m : m - c)) * 100 / 2000000;
}

}  // namespace policy::bench
