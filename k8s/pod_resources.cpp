#include "k8s/pod_resources.h"

#include <algorithm>

namespace policy::k8s {
namespace {

Quantity* Slot(ResourceList& list, std::string_view name) {
  for (auto& [k, v] : list) {
    if (k == name) return &v;
  }
  list.emplace_back(std::string(name), Quantity());
  return &list.back().second;
}

// As kube's addResourceList: the first quantity is copied (its format kept), later ones added.
void Add(ResourceList& into, const ResourceList& add) {
  for (const auto& added : add) {
    auto have = std::find_if(into.begin(), into.end(), [&](const auto& entry) { return entry.first == added.first; });
    if (have != into.end()) {
      have->second += added.second;
    } else {
      into.push_back(added);
    }
  }
}

void Max(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    Quantity* slot = Slot(into, name);
    if (q > *slot) *slot = q;
  }
}

// A container's requests, with `defaults` filling cpu/memory it leaves out.
ResourceList WithDefaults(const ResourceList& requests, const ResourceList* defaults) {
  ResourceList out = requests;
  if (defaults == nullptr) return out;
  for (const auto& [name, q] : *defaults) {
    if (Find(out, name) == nullptr) out.emplace_back(name, q);
  }
  return out;
}

ResourceList Requests(const Pod& pod, const ResourceList* defaults) {
  ResourceList reqs;
  for (const Container& c : pod.containers) Add(reqs, WithDefaults(c.requests, defaults));
  ResourceList sidecars;  // restartable init containers started so far
  ResourceList init_max;
  for (const Container& c : pod.init_containers) {
    ResourceList own = WithDefaults(c.requests, defaults);
    ResourceList peak;
    if (c.restartable) {
      Add(reqs, own);
      Add(sidecars, own);
      peak = sidecars;
    } else {
      peak = own;
      Add(peak, sidecars);
    }
    Max(init_max, peak);
  }
  Max(reqs, init_max);
  Add(reqs, pod.overhead);
  return reqs;
}

}  // namespace

ResourceList PodRequests(const Pod& pod) { return Requests(pod, nullptr); }

NonZeroRequests PodNonZeroRequests(const Pod& pod) {
  const ResourceList defaults = {{"cpu", Quantity::FromMilli(kDefaultMilliCpuRequest)},
                                 {"memory", Quantity::FromUnits(kDefaultMemoryRequest)}};
  ResourceList reqs = Requests(pod, &defaults);
  NonZeroRequests out;
  if (const Quantity* cpu = Find(reqs, "cpu")) out.milli_cpu = cpu->MilliValue();
  if (const Quantity* mem = Find(reqs, "memory")) out.memory = mem->Value();
  return out;
}

}  // namespace policy::k8s
