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

// A container's requests as the scheduler counts them: its spec, or with
// in-place resize status the most of spec, actuated and allocated (of the
// last two when the resize is infeasible); init containers read their
// status only when they are sidecars.
ResourceList Counted(const Pod& pod, const Container& c, bool init) {
  if (!c.status_resources || (init && !c.restartable)) return c.requests;
  ResourceList out;
  if (!pod.resize_infeasible) out = c.requests;
  Max(out, c.status_requests);
  Max(out, c.allocated);
  return out;
}

bool PodLevelRequestsSet(const Pod& pod) {
  return std::any_of(pod.pod_requests.begin(), pod.pod_requests.end(),
                     [](const auto& entry) { return IsPodLevelResource(entry.first); });
}

ResourceList Containers(const Pod& pod, const ResourceList* defaults, bool status) {
  ResourceList reqs;
  for (const Container& c : pod.containers) {
    Add(reqs, WithDefaults(status ? Counted(pod, c, false) : c.requests, defaults));
  }
  ResourceList sidecars;  // restartable init containers started so far
  ResourceList init_max;
  for (const Container& c : pod.init_containers) {
    ResourceList own = WithDefaults(status ? Counted(pod, c, true) : c.requests, defaults);
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
  return reqs;
}

ResourceList Requests(const Pod& pod, const ResourceList* defaults) {
  ResourceList reqs = Containers(pod, defaults, true);
  if (PodLevelRequestsSet(pod)) {
    for (const auto& [name, q] : pod.pod_requests) {
      if (IsPodLevelResource(name)) *Slot(reqs, name) = q;
    }
  }
  Add(reqs, pod.overhead);
  return reqs;
}

}  // namespace

bool IsPodLevelResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name.starts_with("hugepages-");
}

ResourceList AggregateContainerRequests(const Pod& pod) { return Containers(pod, nullptr, false); }

ResourceList PodRequests(const Pod& pod) { return Requests(pod, nullptr); }

NonZeroRequests PodNonZeroRequests(const Pod& pod) {
  // kube-scheduler's getNonMissingContainerRequests: with pod-level
  // requests, only a resource that neither they nor any container set gets
  // the default.
  bool pod_level = PodLevelRequestsSet(pod);
  ResourceList requested = pod_level ? PodRequests(pod) : ResourceList();
  ResourceList defaults;
  if (!pod_level || Find(requested, "cpu") == nullptr) {
    defaults.emplace_back("cpu", Quantity::FromMilli(kDefaultMilliCpuRequest));
  }
  if (!pod_level || Find(requested, "memory") == nullptr) {
    defaults.emplace_back("memory", Quantity::FromUnits(kDefaultMemoryRequest));
  }
  ResourceList reqs = Requests(pod, &defaults);
  NonZeroRequests out;
  if (const Quantity* cpu = Find(reqs, "cpu")) out.milli_cpu = cpu->MilliValue();
  if (const Quantity* mem = Find(reqs, "memory")) out.memory = mem->Value();
  return out;
}

}  // namespace policy::k8s
