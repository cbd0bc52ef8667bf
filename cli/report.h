#pragma once
/// Rendering `policyc check` results: the JSON contract and the text form.

#include <string>
#include <vector>

#include "runtime/sched/explain.h"

namespace policy::cli {

/// The JSON document of ../shared/spec/policyc-check.md.
std::string PlacementJson(const std::string& pod, const rt::Placement& placement);

/// For a person in front of a Pending pod: the summary, every reason with the
/// nodes it applies to, the ranking, and per-node detail for `nodes` (or all).
std::string PlacementText(const std::string& pod, const rt::Placement& placement, const std::vector<std::string>& nodes,
                          bool all_nodes);

}  // namespace policy::cli
