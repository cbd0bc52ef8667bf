// Pods of one template (pod_template.h).

#include "runtime/engine/pod_template.h"

#include <functional>
#include <string>

namespace policy::engine {
namespace {

// `pod` as its template: what may differ between siblings made equal.
k8s::Pod TemplateOf(const k8s::Pod& pod, const k8s::Pod& like, bool incidental_volumes_ignored) {
  k8s::Pod c = pod;
  c.name = like.name;
  c.creation_timestamp = like.creation_timestamp;
  c.start_time = like.start_time;
  if (incidental_volumes_ignored) DropIncidentalVolumes(c);
  return c;
}

}  // namespace

void DropIncidentalVolumes(k8s::Pod& pod) {
  std::erase_if(pod.volumes, [](const k8s::Volume& v) { return !k8s::ReadByVolumePlugins(v); });
}

bool SameTemplate(const k8s::Pod& a, const k8s::Pod& b, bool incidental_volumes_ignored) {
  return TemplateOf(b, a, incidental_volumes_ignored) == TemplateOf(a, a, incidental_volumes_ignored);
}

size_t TemplateHash(const k8s::Pod& pod) {
  std::string text = pod.namespace_name + "/" + pod.template_of;
  for (const auto& [k, v] : pod.labels) text += "," + k + "=" + v;
  for (const k8s::Container& c : pod.containers) {
    text += ";" + c.name + "@" + c.image;
    for (const auto& [name, q] : c.requests) text += "," + name + "=" + q.ToString();
  }
  return std::hash<std::string>()(text);
}

}  // namespace policy::engine
