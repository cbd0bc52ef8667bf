#pragma once
/// kube-scheduler's NormalizeScore variants (helper.DefaultNormalizeScore,
/// InterPodAffinity's min-max, PodTopologySpread's), as the policy
/// language's `normalize` clause names them.

#include <cstdint>
#include <span>

#include "compiler/sema/normalize.h"

namespace policy::rt {

/// Normalizes, in place, the raw scores of one score rule over the
/// feasible nodes.
void Normalize(sema::Normalize kind, std::span<int64_t> scores);

}  // namespace policy::rt
