// Edits of a pod that check's suggestions try (pod_edits.h).

#include "runtime/engine/pod_edits.h"

#include <algorithm>

#include <fmt/format.h>

#include "k8s/node_match.h"
#include "k8s/pod_resources.h"
#include "k8s/quantity.h"
#include "k8s/selectors.h"

namespace policy::engine {
namespace {

int64_t UnitsIn(const k8s::ResourceList& list, std::string_view name) {
  const k8s::Quantity* q = k8s::Find(list, name);
  return q ? k8s::SchedulerUnits(name, *q) : 0;
}

void SetUnits(k8s::ResourceList& list, std::string_view name, int64_t units) {
  for (auto& [n, q] : list) {
    if (n == name) {
      q = QuantityOf(name, units);
      return;
    }
  }
  if (units > 0) list.emplace_back(std::string(name), QuantityOf(name, units));
}

}  // namespace

std::string TaintText(const k8s::Taint& t) {
  return t.value.empty() ? fmt::format("{}:{}", t.key, k8s::ToString(t.effect))
                         : fmt::format("{}={}:{}", t.key, t.value, k8s::ToString(t.effect));
}

k8s::Quantity QuantityOf(std::string_view name, int64_t units) {
  return name == "cpu" ? k8s::Quantity::FromMilli(units) : k8s::Quantity::FromUnits(units);
}

int64_t RequestUnits(const k8s::Pod& pod, std::string_view name) {
  k8s::ResourceList requests = k8s::PodRequests(pod);
  const k8s::Quantity* q = k8s::Find(requests, name);
  return q ? k8s::SchedulerUnits(name, *q) : 0;
}

// Lowers the pod's effective request of `name` to `target` units (or less):
// the app containers' requests first, then every init container's capped.
// False when it cannot (the overhead alone asks more).
bool LowerRequest(k8s::Pod& pod, std::string_view name, int64_t target) {
  if (UnitsIn(pod.overhead, name) > target) return false;
  // Set at the pod level (spec.resources.requests), the pod-level request
  // is what counts: it is lowered, and the containers cut to fit in it.
  if (k8s::IsPodLevelResource(name) && k8s::Find(pod.pod_requests, name) != nullptr) {
    std::erase_if(pod.pod_requests, [&](const auto& entry) { return entry.first == name; });
    bool ok = RequestUnits(pod, name) <= target || LowerRequest(pod, name, target);  // the containers within it
    SetUnits(pod.pod_requests, name, target - UnitsIn(pod.overhead, name));
    return ok && RequestUnits(pod, name) <= target;
  }
  int64_t excess = RequestUnits(pod, name) - target;
  for (auto it = pod.containers.rbegin(); it != pod.containers.rend() && excess > 0; ++it) {
    int64_t have = UnitsIn(it->requests, name);
    int64_t cut = std::min(have, excess);
    if (cut > 0) SetUnits(it->requests, name, have - cut);
    excess -= cut;
  }
  int64_t cap = target - UnitsIn(pod.overhead, name);
  for (k8s::Container& c : pod.init_containers) {
    if (UnitsIn(c.requests, name) > cap) SetUnits(c.requests, name, cap);
  }
  // Sidecars count in both sums; cut them last.
  for (k8s::Container& c : pod.init_containers) {
    int64_t over = RequestUnits(pod, name) - target;
    if (over <= 0) break;
    if (!c.restartable) continue;
    int64_t have = UnitsIn(c.requests, name);
    SetUnits(c.requests, name, have - std::min(have, over));
  }
  return RequestUnits(pod, name) <= target;
}

Edit TolerateEdit(const k8s::Taint& taint) {
  Edit e;
  bool cordon = taint.key == kUnschedulableTaint;
  e.change = {"tolerate", cordon ? fmt::format("tolerate `{}` (the nodes are cordoned; uncordoning them is the usual fix)",
                                               TaintText(taint))
                                 : fmt::format("tolerate the taint `{}`", TaintText(taint)),
              {{"key", taint.key}, {"value", taint.value}, {"effect", std::string(k8s::ToString(taint.effect))}}};
  k8s::Toleration t;
  t.key = taint.key;
  t.op = taint.value.empty() ? k8s::TolerationOp::kExists : k8s::TolerationOp::kEqual;
  t.value = taint.value;
  t.effect = taint.effect;
  e.apply = [t](k8s::Pod& p) {
    p.tolerations.push_back(t);
    return true;
  };
  e.remedy = rt::PodRemedy::kTolerate;
  e.group = "tolerate " + TaintText(taint);
  return e;
}

// `name` and `target` rounded down to a whole MiB for bytes (a value people write).
Edit LowerEdit(const k8s::Pod& pod, const std::string& name, int64_t target) {
  if (k8s::BytesResource(name) && target >= (int64_t{1} << 20)) target &= ~((int64_t{1} << 20) - 1);
  Edit e;
  e.change = {"lower-request", fmt::format("lower the pod's {} request from {} to {}", name,
                                           k8s::WrittenAmount(name, RequestUnits(pod, name)), k8s::WrittenAmount(name, target)),
              {{"resource", name}, {"from", k8s::WrittenAmount(name, RequestUnits(pod, name))}, {"to", k8s::WrittenAmount(name, target)}}};
  e.apply = [name, target](k8s::Pod& p) { return LowerRequest(p, name, target); };
  e.remedy = rt::PodRemedy::kLowerRequests;
  e.group = "lower " + name;
  return e;
}

void NodeAffinityEdits(const k8s::Pod& pod, std::vector<Edit>& edits) {
  for (const auto& [key, value] : pod.node_selector) {
    Edit e;
    e.change = {"drop-node-selector", fmt::format("drop `{}: {}` from the pod's nodeSelector", key, value), {{"key", key}}};
    std::string k = key;
    e.apply = [k](k8s::Pod& p) {
      std::erase_if(p.node_selector, [&](const auto& kv) { return kv.first == k; });
      return true;
    };
    e.remedy = rt::PodRemedy::kNodeAffinity;
    e.group = "nodeSelector " + key;
    edits.push_back(std::move(e));
  }
  const std::optional<k8s::NodeAffinity>& affinity = pod.affinity.node_affinity;
  if (!affinity || !affinity->required) return;
  const std::vector<k8s::NodeSelectorTerm>& terms = *affinity->required;
  for (size_t t = 0; t < terms.size(); ++t) {
    size_t requirements = terms[t].match_expressions.size() + terms[t].match_fields.size();
    if (requirements < 2) continue;  // an empty term matches nothing: dropping its last requirement relaxes nothing
    for (int fields = 0; fields < 2; ++fields) {
      const auto& list = fields ? terms[t].match_fields : terms[t].match_expressions;
      for (size_t i = 0; i < list.size(); ++i) {
        Edit e;
        std::string text = k8s::RequirementText(list[i]);
        e.change = {"drop-node-affinity-requirement",
                    terms.size() == 1
                        ? fmt::format("drop `{}` from the pod's required node affinity", text)
                        : fmt::format("drop `{}` from term {} of the pod's required node affinity", text, t + 1),
                    {{"term", static_cast<int64_t>(t)}, {"requirement", text}}};
        e.apply = [t, fields, i](k8s::Pod& p) {
          k8s::NodeSelectorTerm& term = (*p.affinity.node_affinity->required)[t];
          auto& l = fields ? term.match_fields : term.match_expressions;
          l.erase(l.begin() + static_cast<ptrdiff_t>(i));
          return true;
        };
        e.remedy = rt::PodRemedy::kNodeAffinity;
        e.group = "node affinity " + text;
        edits.push_back(std::move(e));
      }
    }
  }
  Edit e;
  e.change = {"drop-node-affinity", terms.size() == 1 && !terms[0].match_expressions.empty() &&
                                            terms[0].match_expressions.size() + terms[0].match_fields.size() == 1
                                        ? fmt::format("drop the pod's required node affinity (`{}`)",
                                                      k8s::RequirementText(terms[0].match_expressions[0]))
                                        : std::string("drop the pod's required node affinity"),
              {}};
  e.apply = [](k8s::Pod& p) {
    p.affinity.node_affinity->required.reset();
    return true;
  };
  e.remedy = rt::PodRemedy::kNodeAffinity;
  e.group = "node affinity";
  edits.push_back(std::move(e));
}

void PodAffinityEdits(const k8s::Pod& pod, std::vector<Edit>& edits) {
  for (int anti = 0; anti < 2; ++anti) {
    const std::optional<k8s::PodAffinity>& affinity = anti ? pod.affinity.pod_anti_affinity : pod.affinity.pod_affinity;
    if (!affinity) continue;
    for (size_t i = 0; i < affinity->required.size(); ++i) {
      const k8s::PodAffinityTerm& term = affinity->required[i];
      Edit e;
      e.change = {anti ? "drop-pod-anti-affinity-term" : "drop-pod-affinity-term",
                  fmt::format("drop the required pod {}affinity term on `{}` selecting `{}`", anti ? "anti-" : "",
                              term.topology_key, k8s::SelectorText(term.label_selector)),
                  {{"term", static_cast<int64_t>(i)}}};
      e.apply = [anti, i](k8s::Pod& p) {
        auto& terms = (anti ? p.affinity.pod_anti_affinity : p.affinity.pod_affinity)->required;
        terms.erase(terms.begin() + static_cast<ptrdiff_t>(i));
        return true;
      };
      e.remedy = rt::PodRemedy::kPodAffinity;
      e.group = fmt::format("pod {}affinity {}", anti ? "anti-" : "", i);
      edits.push_back(std::move(e));
    }
  }
}

void HostPortEdits(const k8s::Pod& pod, std::vector<Edit>& edits) {
  for (size_t c = 0; c < pod.containers.size(); ++c) {
    for (size_t i = 0; i < pod.containers[c].host_ports.size(); ++i) {
      const k8s::HostPort& port = pod.containers[c].host_ports[i];
      Edit e;
      e.change = {"drop-host-port",
                  fmt::format("drop hostPort {}/{} of container `{}`", port.port, port.protocol, pod.containers[c].name),
                  {{"container", pod.containers[c].name}, {"hostPort", int64_t{port.port}}, {"protocol", port.protocol}}};
      e.apply = [c, i](k8s::Pod& p) {
        auto& ports = p.containers[c].host_ports;
        ports.erase(ports.begin() + static_cast<ptrdiff_t>(i));
        return true;
      };
      e.remedy = rt::PodRemedy::kHostPorts;
      e.group = fmt::format("host port {}/{}", c, i);
      edits.push_back(std::move(e));
    }
  }
}

}  // namespace policy::engine
