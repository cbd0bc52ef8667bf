#pragma once
/// Edits of a pod that `check`'s suggestions try (suggest.h): each a
/// Change for the reader, how to apply it to a copy of the pod, and its
/// kind of remedy (the built-ins it may make pass are those whose rows say
/// so: rt::InTreePlugin::RelievedBy). Made from the pod alone; which of
/// them a rejection calls for, and whether one opens a node, is for the
/// suggester.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/objects.h"
#include "k8s/quantity.h"
#include "runtime/engine/suggest.h"
#include "runtime/sched/profile.h"

namespace policy::engine {

/// The cordon's taint (NodeUnschedulable reads it, `kubectl cordon` sets it).
inline constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";

/// One edit of the pod.
struct Edit {
  Change change;
  std::function<bool(k8s::Pod&)> apply;     // false: cannot be applied to this pod
  rt::PodRemedy remedy = rt::PodRemedy::kNone;  // its kind: the built-ins it may make pass are those its rows say
  std::string group;                        // what it edits, for combinations ("lower cpu")
};

/// `key=value:Effect`, or `key:Effect` without a value.
std::string TaintText(const k8s::Taint& t);
/// `units` of resource `name` (cpu in millicores) as a Quantity.
k8s::Quantity QuantityOf(std::string_view name, int64_t units);
/// The pod's effective request of `name`, in kube-scheduler's units.
int64_t RequestUnits(const k8s::Pod& pod, std::string_view name);
/// Lowers the pod's effective request of `name` to `target` units (or
/// less); false when it cannot (the overhead alone asks more).
bool LowerRequest(k8s::Pod& pod, std::string_view name, int64_t target);

/// Tolerate `taint` (the cordon's: worded as such).
Edit TolerateEdit(const k8s::Taint& taint);
/// Lower the pod's request of `name` to `target` (bytes rounded down to a MiB).
Edit LowerEdit(const k8s::Pod& pod, const std::string& name, int64_t target);
/// Drop each nodeSelector entry, each requirement of a required node
/// affinity term of two or more, and the required node affinity.
void NodeAffinityEdits(const k8s::Pod& pod, std::vector<Edit>& edits);
/// Drop each required pod (anti-)affinity term.
void PodAffinityEdits(const k8s::Pod& pod, std::vector<Edit>& edits);
/// Drop each host port.
void HostPortEdits(const k8s::Pod& pod, std::vector<Edit>& edits);

}  // namespace policy::engine
