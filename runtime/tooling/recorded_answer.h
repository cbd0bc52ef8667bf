#pragma once
/// kube-scheduler's recorded answer for a Pending pod (its PodScheduled
/// condition's message in a dump) held against policyc's summary: kube
/// adds its preemption attempt after the summary (`... preemption: 0/N
/// nodes are available: ...`, led from 1.34 by DynamicResources'
/// PostFilter: `no new claims to deallocate, `), which the summary leaves
/// out; and TaintToleration's reasons are worded per taint before 1.34.2.

#include <string>
#include <string_view>

namespace policy::tooling {

enum class Agreement {
  kSame,     ///< the same summary
  kWording,  ///< the same but for how the untolerated taints are worded
  kDiffers,
};

/// Whether `recorded` (its postscript aside) says what `summary` says.
Agreement CompareRecorded(std::string_view recorded, std::string_view summary);

/// A FitError summary with TaintToleration's reasons as 1.34.2 and later
/// word them: before, each named its taint (`N node(s) had untolerated
/// taint {k: v}`); their counts are added into one `node(s) had
/// untolerated taint(s)` and the reasons sorted again as FitError sorts
/// them (the "COUNT REASON" strings). Anything else comes back as it was.
std::string TaintsUnnamed(std::string_view summary);

}  // namespace policy::tooling
