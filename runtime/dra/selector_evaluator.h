#pragma once
/// The reference way to decide a DRA CEL selector (compiler/cel/eval.h):
/// device by device, with kube's words for a selector that does not compile
/// and for each device it fails on. What the interpreter decides with, and
/// what native kernels (runtime/sched/selector_kernels.h) are checked
/// against.

#include <memory>
#include <string>
#include <vector>

#include "runtime/columnar/device_columns.h"

namespace policy::dra {

/// `expression` on every one of `devices`.
std::shared_ptr<rt::SelectorVerdicts> EvaluateSelector(const std::string& expression,
                                                       const std::vector<rt::DeviceRef>& devices);

/// EvaluateSelector as a decider (it keeps no memo); one for the process.
const rt::SelectorDecider& Evaluator();

}  // namespace policy::dra
