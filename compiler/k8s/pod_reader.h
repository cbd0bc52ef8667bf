#pragma once
/// Reads the pod to place from a file: one Pod, or one workload whose pod
/// template is the pod (policyc check --pod).

#include <optional>

#include "compiler/k8s/objects.h"
#include "compiler/support/diagnostic.h"

namespace policy::k8s {

/// The pod in `source`; nullopt with diagnostics when the file is invalid,
/// holds no object, more than one, or an object that is not a pod.
std::optional<Pod> ReadPod(const Source& source, DiagnosticSink& diags);

}  // namespace policy::k8s
