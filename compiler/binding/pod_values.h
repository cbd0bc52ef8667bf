#pragma once
/// The pod's values as policies see them, shared by partial evaluation
/// (compiler/passes) and the interpreter (runtime/interp).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/objects.h"

namespace policy::binding {

/// Resource name and amount in milli-units, in kube-scheduler's check order
/// (cpu, memory, ephemeral-storage, then by name).
using ResourceAmounts = std::vector<std::pair<std::string, int64_t>>;


/// `pod.requests`: PodRequests in milli-units.
ResourceAmounts PodRequestAmounts(const k8s::Pod& pod);
/// `pod.scoringRequests`: the same with the non-zero cpu and memory defaults.
ResourceAmounts PodScoringAmounts(const k8s::Pod& pod);

}  // namespace policy::binding
