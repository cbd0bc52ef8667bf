#pragma once
/// Rendering `policyc check` results: the JSON contract and the text form.

#include <string>
#include <vector>

#include "runtime/sched/explain.h"

namespace policy::cli {

/// What Kubernetes does with the pod beyond the plugins' answer: notes for
/// a person (a pod naming its node, another scheduler), and whether
/// scheduling gates hold it back (then it is placed nowhere, whatever the
/// nodes would say).
struct PodNotes {
  std::vector<std::string> notes;
  bool gated = false;
  bool node_hint = true;  ///< end with how to see each node's detail (check's flags)
};

/// The JSON document of ../shared/spec/policyc-check.md (with `notes` and
/// `gated` added when there are any).
std::string PlacementJson(const std::string& pod, const rt::Placement& placement, const PodNotes& notes = {});

/// For a person in front of a Pending pod: the summary, every reason with the
/// nodes it applies to, the ranking, and per-node detail for `nodes` (or all).
std::string PlacementText(const std::string& pod, const rt::Placement& placement, const std::vector<std::string>& nodes,
                          bool all_nodes, const PodNotes& notes = {});

}  // namespace policy::cli
