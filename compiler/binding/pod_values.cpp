#include "compiler/binding/pod_values.h"

#include <algorithm>
#include <limits>

#include "k8s/pod_resources.h"
#include "k8s/quantity.h"

namespace policy::binding {
namespace {

int Rank(std::string_view name) { return name == "cpu" ? 0 : name == "memory" ? 1 : name == "ephemeral-storage" ? 2 : 3; }

}  // namespace

ResourceAmounts PodRequestAmounts(const k8s::Pod& pod) {
  ResourceAmounts out;
  for (const auto& [name, q] : k8s::PodRequests(pod)) {
    out.emplace_back(name, k8s::SchedulerUnitsToMilli(name, k8s::SchedulerUnits(name, q)));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return Rank(a.first) != Rank(b.first) ? Rank(a.first) < Rank(b.first) : a.first < b.first;
  });
  return out;
}

ResourceAmounts PodScoringAmounts(const k8s::Pod& pod) {
  ResourceAmounts out = PodRequestAmounts(pod);
  k8s::NonZeroRequests nz = k8s::PodNonZeroRequests(pod);
  bool has_cpu = false, has_memory = false;
  for (auto& [name, amount] : out) {
    if (name == "cpu") amount = nz.milli_cpu, has_cpu = true;
    if (name == "memory") amount = k8s::SchedulerUnitsToMilli("memory", nz.memory), has_memory = true;
  }
  if (!has_cpu) out.emplace_back("cpu", nz.milli_cpu);
  if (!has_memory) out.emplace_back("memory", k8s::SchedulerUnitsToMilli("memory", nz.memory));
  return out;
}

}  // namespace policy::binding
