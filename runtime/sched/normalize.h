#pragma once
/// kube-scheduler's NormalizeScore variants (helper.DefaultNormalizeScore,
/// InterPodAffinity's min-max, PodTopologySpread's), as the policy
/// language's `normalize` clause names them.

#include <cstdint>
#include <climits>
#include <span>

#include "compiler/lang/normalize.h"

namespace policy::rt {

/// Normalizes, in place, the raw scores of one score rule over the
/// feasible nodes.
void Normalize(lang::Normalize kind, std::span<int64_t> scores);

/// What Normalize reads of all the scores: `min` and `max` as that kind
/// takes them (PodTopologySpread's over the non-negative scores only; the
/// default kinds read the maximum alone, and `min` is then INT64_MIN).
struct Extremes {
  int64_t min = INT64_MIN, max = 0;
  bool operator==(const Extremes&) const = default;
};
/// The extremes of `raw[row]` over `rows` (not empty).
Extremes ExtremesOf(lang::Normalize kind, const int64_t* raw, std::span<const uint32_t> rows);
/// One score as Normalize leaves it, given the extremes of all of them:
/// Normalize(kind, scores)[k] == NormalizeOne(kind, scores[k], ExtremesOf(...)).
int64_t NormalizeOne(lang::Normalize kind, int64_t s, Extremes e);

}  // namespace policy::rt
