#pragma once
/// Rendering `policyc check` results: the text form (the JSON contract is
/// runtime/host/placement_json.h).

#include <map>
#include <string>
#include <vector>

#include "runtime/host/placement_json.h"
#include "runtime/sched/explain.h"

namespace policy {
class JsonWriter;
}
namespace policy::engine {
struct Suggestion;
}

namespace policy::cli {

/// PodNotes and the JSON document live with the host API, which returns it too.
using host::PlacementJson;
using host::PodNotes;

/// For a person in front of a Pending pod: the summary, every reason with the
/// nodes it applies to, the ranking, `suggestions` (SuggestionsText), and
/// per-node detail for `nodes` (or all).
/// `weights`: each score plugin's weight, so that a node's parts are shown
/// as score × weight, adding up to its total (none: scores alone).
std::string PlacementText(const std::string& pod, const rt::Placement& placement, const std::vector<std::string>& nodes,
                          bool all_nodes, const PodNotes& notes = {}, const std::string& suggestions = {},
                          const std::map<std::string, int64_t>& weights = {});

/// The "what would make it fit" section (for a pod that `fits`
/// somewhere: "what would open more nodes").
std::string SuggestionsText(const std::vector<engine::Suggestion>& suggestions, bool fits);

/// The `suggestions` array of the JSON document (docs/suggestions.md).
void SuggestionsJson(const std::vector<engine::Suggestion>& suggestions, JsonWriter& w);

}  // namespace policy::cli
