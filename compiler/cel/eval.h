#pragma once
/// The reference evaluator of a checked CEL device selector over one device:
/// CEL's semantics (errors absorbed by `&&`, `||` and the macros as the
/// language definition says), Kubernetes' CEL library (quantity, semver,
/// regex, strings) and the DRA variables, as k8s.io/dynamic-resource-
/// allocation/cel evaluates a DeviceClass or request selector.

#include <string>

#include "compiler/cel/ast.h"
#include "compiler/cel/value.h"

namespace policy::cel {

/// Whether the device matches; `error` is set instead when evaluation
/// failed (kube's allocator then fails the whole attempt) or the result
/// was not a bool.
struct Outcome {
  bool matches = false;
  std::string error;
};

Outcome Evaluate(const Expr& expr, const DeviceInput& device);

/// The value of any subexpression (for explanations); errors are values.
Value EvaluateValue(const Expr& expr, const DeviceInput& device);

}  // namespace policy::cel
