// Pods of one template (pod_template.h).

#include "runtime/engine/pod_template.h"

#include <functional>
#include <string>

namespace policy::engine {

bool SameTemplate(const k8s::Pod& a, const k8s::Pod& b) {
  if (!a.volumes.empty() || !b.volumes.empty()) return false;
  k8s::Pod c = b;
  c.name = a.name;
  c.creation_timestamp = a.creation_timestamp;
  c.start_time = a.start_time;
  return c == a;
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
