#pragma once
/// The ways a score rule's raw values are normalized (`normalize` in the
/// language), shared by sema, the IR and the scheduling core.

#include <array>
#include <cstdint>
#include <string_view>

namespace policy::lang {

/// Score normalization, as kube-scheduler's plugins normalize.
enum class Normalize : uint8_t {
  kNone,     ///< scores are already 0..100
  kMax,      ///< score * 100 / max over feasible nodes (NodeAffinity)
  kReverse,  ///< 100 - score * 100 / max (TaintToleration)
  kMinMax,   ///< (score - min) * 100 / (max - min), in floating point as Go does (InterPodAffinity)
  kSpread,   ///< 100 * (max + min - score) / max; a negative score marks an ignored node: 0, left out of min and max (PodTopologySpread)
};

/// Names for `normalize`, by value: none, max, reverse, minmax, spread.
inline constexpr std::array<std::string_view, 5> kNormalizeNames = {"none", "max", "reverse", "minmax", "spread"};
inline std::string_view ToString(Normalize normalize) { return kNormalizeNames[static_cast<size_t>(normalize)]; }

}  // namespace policy::lang
