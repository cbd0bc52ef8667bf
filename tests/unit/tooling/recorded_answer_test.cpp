// kube-scheduler's recorded PodScheduled message held against policyc's
// summary (runtime/tooling/recorded_answer.h): the postscripts kube adds,
// and the taints' wording before and after 1.34.2.

#include "runtime/tooling/recorded_answer.h"

#include <doctest/doctest.h>

using policy::tooling::Agreement;
using policy::tooling::CompareRecorded;
using policy::tooling::TaintsUnnamed;

TEST_CASE("the same summary with kube's preemption postscript agrees") {
  std::string summary = "0/3 nodes are available: 3 Insufficient cpu.";
  CHECK(CompareRecorded(summary, summary) == Agreement::kSame);
  CHECK(CompareRecorded(summary + " preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
                        summary) == Agreement::kSame);
  CHECK(CompareRecorded(summary + " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is "
                                  "not helpful for scheduling.",
                        summary) == Agreement::kSame);
  CHECK(CompareRecorded("0/3 nodes are available: 2 Insufficient cpu.", summary) == Agreement::kDiffers);
}

TEST_CASE("taints named one by one before 1.34.2 agree but for their wording") {
  std::string old = "0/5 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {gpu: yes}, "
                    "2 node(s) had untolerated taint {dedicated: db}.";
  std::string now = "0/5 nodes are available: 1 Insufficient memory, 3 node(s) had untolerated taint(s).";
  CHECK(TaintsUnnamed(old) == now);
  CHECK(TaintsUnnamed(now) == now);
  CHECK(CompareRecorded(old, now) == Agreement::kWording);
  // Counts that do not add up are a difference, not wording.
  CHECK(CompareRecorded(old, "0/5 nodes are available: 1 Insufficient memory, 2 node(s) had untolerated taint(s).") ==
        Agreement::kDiffers);
  // Not a FitError summary: as it was.
  CHECK(TaintsUnnamed("pod has unbound immediate PersistentVolumeClaims") ==
        "pod has unbound immediate PersistentVolumeClaims");
}
