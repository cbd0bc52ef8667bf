#include "k8s/objects.h"

#include <algorithm>

namespace policy::k8s {

const std::string* Find(const StringMap& map, std::string_view key) {
  for (const auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

ResolvedVolume ResolvedVolume::Of(const Volume& v) {
  ResolvedVolume r;
  r.name = v.name;
  r.kind = v.kind;
  r.claim = v.claim;
  r.disks = v.disks;
  r.read_only = v.read_only;
  return r;
}

const Quantity* Find(const ResourceList& list, std::string_view name) {
  for (const auto& [k, v] : list) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string_view ToString(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "NoSchedule";
}

std::string_view ToString(SelectorOp op) {
  switch (op) {
    case SelectorOp::kIn: return "In";
    case SelectorOp::kNotIn: return "NotIn";
    case SelectorOp::kExists: return "Exists";
    case SelectorOp::kDoesNotExist: return "DoesNotExist";
    case SelectorOp::kGt: return "Gt";
    case SelectorOp::kLt: return "Lt";
  }
  return "In";
}

bool Container::operator==(const Container& o) const {
  auto same = [](const ResourceList& a, const ResourceList& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
             return x.first == y.first && x.second == y.second && x.second.format() == y.second.format();
           });
  };
  return name == o.name && image == o.image && host_ports == o.host_ports && same(requests, o.requests) &&
         same(limits, o.limits) && restartable == o.restartable && status_resources == o.status_resources &&
         same(status_requests, o.status_requests) && same(allocated, o.allocated);
}

bool ReadByVolumePlugins(const Volume& v) { return v.kind != Volume::Kind::kOther || !v.disks.empty(); }

}  // namespace policy::k8s
