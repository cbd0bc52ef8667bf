#include "k8s/strict_fields.h"

#include <vector>

#include <fmt/format.h>

#include "support/suggest.h"

namespace policy::k8s {
namespace {

// The fields of the Kubernetes 1.34 API types policyc reads a pod from
// (1.31's and what came since: spec.resources, spec.hostnameOverride,
// a container's restartPolicyRules).
const std::vector<std::string_view> kObjectFields = {"apiVersion", "kind", "metadata", "spec", "status"};
const std::vector<std::string_view> kMetadataFields = {
    "annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp", "finalizers",
    "generateName", "generation", "labels", "managedFields", "name", "namespace", "ownerReferences",
    "resourceVersion", "selfLink", "uid"};
const std::vector<std::string_view> kPodSpecFields = {
    "activeDeadlineSeconds", "affinity", "automountServiceAccountToken", "containers", "dnsConfig", "dnsPolicy",
    "enableServiceLinks", "ephemeralContainers", "hostAliases", "hostIPC", "hostNetwork", "hostPID", "hostUsers",
    "hostname", "hostnameOverride", "imagePullSecrets", "initContainers", "nodeName", "nodeSelector", "os", "overhead",
    "preemptionPolicy", "priority", "priorityClassName", "readinessGates", "resourceClaims", "resources", "restartPolicy",
    "runtimeClassName", "schedulerName", "schedulingGates", "securityContext", "serviceAccount",
    "serviceAccountName", "setHostnameAsFQDN", "shareProcessNamespace", "subdomain", "terminationGracePeriodSeconds",
    "tolerations", "topologySpreadConstraints", "volumes"};
const std::vector<std::string_view> kContainerFields = {
    "args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle", "livenessProbe", "name", "ports",
    "readinessProbe", "resizePolicy", "resources", "restartPolicy", "restartPolicyRules", "securityContext", "startupProbe", "stdin",
    "stdinOnce", "terminationMessagePath", "terminationMessagePolicy", "tty", "volumeDevices", "volumeMounts",
    "workingDir"};
const std::vector<std::string_view> kResourcesFields = {"claims", "limits", "requests"};

void Check(NodeRef map, std::string_view path, const std::vector<std::string_view>& known, bool strict,
           DiagnosticSink& diags) {
  if (!map.Valid() || !map.IsMapping()) return;
  for (uint32_t i = 0; i < map.Size(); ++i) {
    NodeRef key = map.KeyAt(i);
    std::string_view name = key.Text();
    bool found = false;
    for (std::string_view k : known) found |= k == name;
    if (found) continue;
    Diagnostic& d =
        strict ? diags.Error(DiagCode::kStrictUnknownField, key.GetSpan(), fmt::format("unknown field `{}{}`", path, name),
                             "not a field of the Kubernetes API")
               : diags.Warning(DiagCode::kUnknownApiField, key.GetSpan(),
                               fmt::format("unknown field `{}{}`; policyc reads on without it", path, name),
                               "not a field of the Kubernetes API");
    std::string_view close = Closest(name, known);
    d.help = close.empty() ? std::string("the API server refuses unknown fields, as kubectl's --validate=strict does")
                           : fmt::format("did you mean `{}`?", close);
  }
}

void CheckPodSpec(NodeRef spec, std::string_view path, bool strict, DiagnosticSink& diags) {
  if (!spec.Valid() || !spec.IsMapping()) return;
  Check(spec, path, kPodSpecFields, strict, diags);
  Check(spec.Get("resources"), std::string(path) + "resources.", kResourcesFields, strict, diags);
  for (std::string_view list : {"containers", "initContainers"}) {
    NodeRef containers = spec.Get(list);
    for (uint32_t i = 0; containers.Valid() && containers.IsSequence() && i < containers.Size(); ++i) {
      std::string prefix = fmt::format("{}{}[{}].", path, list, i);
      Check(containers.At(i), prefix, kContainerFields, strict, diags);
      if (containers.At(i).IsMapping()) {
        Check(containers.At(i).Get("resources"), prefix + "resources.", kResourcesFields, strict, diags);
      }
    }
  }
}

}  // namespace

std::optional<FieldValidation> ParseFieldValidation(std::string_view value) {
  if (value == "strict" || value == "true") return FieldValidation::kStrict;
  if (value == "warn") return FieldValidation::kWarn;
  if (value == "ignore" || value == "false") return FieldValidation::kIgnore;
  return std::nullopt;
}

void CheckUnknownFields(NodeRef object, std::string_view kind, FieldValidation validation, DiagnosticSink& diags) {
  if (validation == FieldValidation::kIgnore || !object.IsMapping()) return;
  bool strict = validation == FieldValidation::kStrict;
  Check(object, "", kObjectFields, strict, diags);
  Check(object.Get("metadata"), "metadata.", kMetadataFields, strict, diags);
  if (kind == "Pod") {
    CheckPodSpec(object.Get("spec"), "spec.", strict, diags);
    return;
  }
  // A workload: its pod template (the workload's own spec fields vary by kind).
  NodeRef spec = object.Get("spec");
  std::string path = "spec.template.";
  if (kind == "CronJob" && spec.Valid() && spec.IsMapping()) {
    spec = spec.Get("jobTemplate").Valid() && spec.Get("jobTemplate").IsMapping() ? spec.Get("jobTemplate").Get("spec") : NodeRef();
    path = "spec.jobTemplate.spec.template.";
  }
  NodeRef pod_template = spec.Valid() && spec.IsMapping() ? spec.Get("template") : NodeRef();
  if (!pod_template.Valid() || !pod_template.IsMapping()) return;
  Check(pod_template.Get("metadata"), path + "metadata.", kMetadataFields, strict, diags);
  CheckPodSpec(pod_template.Get("spec"), path + "spec.", strict, diags);
}

}  // namespace policy::k8s
