#pragma once
/// A placement as the JSON document of ../shared/spec/policyc-check.md:
/// what `policyc check --output json` prints and what the C ABI's
/// policyc_result_explain_json returns.

#include <functional>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "runtime/sched/explain.h"

namespace policy {
class JsonWriter;
}

namespace policy::host {

/// What Kubernetes does with the pod beyond the plugins' answer: notes for
/// a person (a pod naming its node, another scheduler), and whether
/// scheduling gates hold it back (then it is placed nowhere, whatever the
/// nodes would say).
struct PodNotes {
  std::vector<std::string> notes;
  bool gated = false;
  bool node_hint = true;  ///< end with how to see each node's detail (check's flags)
};

/// What really happens to `pod` beyond the plugins' answer, for a
/// scheduler named `scheduler_name`: scheduling gates, spec.nodeName,
/// another scheduler, a DaemonSet's pod.
PodNotes NotesFor(const k8s::Pod& pod, const std::string& scheduler_name);

/// The document for pod `pod` (namespace/name), with `notes` and `gated`
/// added when there are any.
/// `more` writes fields of the caller's after `nodes` (check's `suggestions`).
std::string PlacementJson(const std::string& pod, const rt::Placement& placement, const PodNotes& notes = {},
                          const std::function<void(JsonWriter&)>& more = {});

/// The document of ../shared/spec/policyc-check.md's "Many pods at once":
/// as PlacementJson, but `reasons` grouped (ReasonGroupsJson) where the
/// single pod's answer has every node (`nodes`). `more` writes fields
/// after `summary`.
std::string GroupedPlacementJson(const std::string& pod, const rt::Placement& placement,
                                 const std::vector<rt::ReasonGroup>& groups, const PodNotes& notes = {},
                                 const std::function<void(JsonWriter&)>& more = {});

/// `"reasons": [{"plugin", "reason", "nodes", "examples", "detail"}, ...]`
/// (../shared/spec/policyc-schedule.md), most nodes first.
void ReasonGroupsJson(const std::vector<rt::ReasonGroup>& groups, JsonWriter& w);

}  // namespace policy::host
