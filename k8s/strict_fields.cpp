#include "k8s/strict_fields.h"

#include <deque>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/suggest.h"

namespace policy::k8s {
namespace {

// The fields of the Kubernetes 1.34 API types policyc reads a pod from
// (1.31's and what came since: spec.resources, spec.hostnameOverride,
// a container's restartPolicyRules), all the way down: by the path of an
// object below the pod spec, list items as `[]` (`affinity.nodeAffinity`,
// `containers[].ports[]`). An object whose path is not here is free-form
// to this check (labels, annotations, a resource list, a volume source
// policyc never reads): its keys are not looked at.
using Fields = std::vector<std::string_view>;

const Fields kObjectFields = {"apiVersion", "kind", "metadata", "spec", "status"};
const Fields kMetadataFields = {
    "annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp", "finalizers",
    "generateName", "generation", "labels", "managedFields", "name", "namespace", "ownerReferences",
    "resourceVersion", "selfLink", "uid"};

const std::map<std::string_view, Fields>& PodSpecSchema() {
  static const Fields container = {
      "args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle", "livenessProbe", "name", "ports",
      "readinessProbe", "resizePolicy", "resources", "restartPolicy", "restartPolicyRules", "securityContext",
      "startupProbe", "stdin", "stdinOnce", "terminationMessagePath", "terminationMessagePolicy", "tty",
      "volumeDevices", "volumeMounts", "workingDir"};
  static const Fields probe = {"exec", "failureThreshold", "grpc", "httpGet", "initialDelaySeconds", "periodSeconds",
                               "successThreshold", "tcpSocket", "terminationGracePeriodSeconds", "timeoutSeconds"};
  static const Fields handler = {"exec", "httpGet", "sleep", "tcpSocket"};
  static const Fields http_get = {"host", "httpHeaders", "path", "port", "scheme"};
  static const Fields node_selector_term = {"matchExpressions", "matchFields"};
  static const Fields requirement = {"key", "operator", "values"};
  static const Fields label_selector = {"matchExpressions", "matchLabels"};
  static const Fields pod_affinity = {"preferredDuringSchedulingIgnoredDuringExecution",
                                      "requiredDuringSchedulingIgnoredDuringExecution"};
  static const Fields pod_affinity_term = {"labelSelector", "matchLabelKeys", "mismatchLabelKeys", "namespaceSelector",
                                           "namespaces", "topologyKey"};
  static const Fields key_to_path = {"key", "mode", "path"};
  static std::map<std::string_view, Fields> schema = [&] {
    std::map<std::string_view, Fields> m = {
        {"", {"activeDeadlineSeconds", "affinity", "automountServiceAccountToken", "containers", "dnsConfig",
              "dnsPolicy", "enableServiceLinks", "ephemeralContainers", "hostAliases", "hostIPC", "hostNetwork",
              "hostPID", "hostUsers", "hostname", "hostnameOverride", "imagePullSecrets", "initContainers", "nodeName",
              "nodeSelector", "os", "overhead", "preemptionPolicy", "priority", "priorityClassName", "readinessGates",
              "resourceClaims", "resources", "restartPolicy", "runtimeClassName", "schedulerName", "schedulingGates",
              "securityContext", "serviceAccount", "serviceAccountName", "setHostnameAsFQDN",
              "shareProcessNamespace", "subdomain", "terminationGracePeriodSeconds", "tolerations",
              "topologySpreadConstraints", "volumes"}},
        {"resources", {"claims", "limits", "requests"}},
        {"resources.claims[]", {"name", "request"}},
        {"affinity", {"nodeAffinity", "podAffinity", "podAntiAffinity"}},
        {"affinity.nodeAffinity", pod_affinity},
        {"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms"}},
        {"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]", node_selector_term},
        {"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[]",
         requirement},
        {"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchFields[]",
         requirement},
        {"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[]", {"preference", "weight"}},
        {"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference", node_selector_term},
        {"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference.matchExpressions[]",
         requirement},
        {"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference.matchFields[]",
         requirement},
        {"tolerations[]", {"effect", "key", "operator", "tolerationSeconds", "value"}},
        {"topologySpreadConstraints[]", {"labelSelector", "matchLabelKeys", "maxSkew", "minDomains", "nodeAffinityPolicy",
                                          "nodeTaintsPolicy", "topologyKey", "whenUnsatisfiable"}},
        {"topologySpreadConstraints[].labelSelector", label_selector},
        {"topologySpreadConstraints[].labelSelector.matchExpressions[]", requirement},
        {"resourceClaims[]", {"name", "resourceClaimName", "resourceClaimTemplateName"}},
        {"schedulingGates[]", {"name"}},
        {"readinessGates[]", {"conditionType"}},
        {"imagePullSecrets[]", {"name"}},
        {"hostAliases[]", {"hostnames", "ip"}},
        {"dnsConfig", {"nameservers", "options", "searches"}},
        {"dnsConfig.options[]", {"name", "value"}},
        {"os", {"name"}},
        {"securityContext", {"appArmorProfile", "fsGroup", "fsGroupChangePolicy", "runAsGroup", "runAsNonRoot",
                             "runAsUser", "seLinuxChangePolicy", "seLinuxOptions", "seccompProfile",
                             "supplementalGroups", "supplementalGroupsPolicy", "sysctls", "windowsOptions"}},
        {"securityContext.sysctls[]", {"name", "value"}},
        {"securityContext.seccompProfile", {"localhostProfile", "type"}},
        {"securityContext.appArmorProfile", {"localhostProfile", "type"}},
        {"securityContext.seLinuxOptions", {"level", "role", "type", "user"}},
        {"volumes[]", {"awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "configMap", "csi",
                       "downwardAPI", "emptyDir", "ephemeral", "fc", "flexVolume", "flocker", "gcePersistentDisk",
                       "gitRepo", "glusterfs", "hostPath", "image", "iscsi", "name", "nfs", "persistentVolumeClaim",
                       "photonPersistentDisk", "portworxVolume", "projected", "quobyte", "rbd", "scaleIO", "secret",
                       "storageos", "vsphereVolume"}},
        {"volumes[].persistentVolumeClaim", {"claimName", "readOnly"}},
        {"volumes[].emptyDir", {"medium", "sizeLimit"}},
        {"volumes[].hostPath", {"path", "type"}},
        {"volumes[].configMap", {"defaultMode", "items", "name", "optional"}},
        {"volumes[].configMap.items[]", key_to_path},
        {"volumes[].secret", {"defaultMode", "items", "optional", "secretName"}},
        {"volumes[].secret.items[]", key_to_path},
        {"volumes[].csi", {"driver", "fsType", "nodePublishSecretRef", "readOnly", "volumeAttributes"}},
        {"volumes[].ephemeral", {"volumeClaimTemplate"}},
        {"volumes[].ephemeral.volumeClaimTemplate", {"metadata", "spec"}},
        {"volumes[].ephemeral.volumeClaimTemplate.spec",
         {"accessModes", "dataSource", "dataSourceRef", "resources", "selector", "storageClassName",
          "volumeAttributesClassName", "volumeMode", "volumeName"}},
        {"volumes[].ephemeral.volumeClaimTemplate.spec.resources", {"limits", "requests"}},
        {"volumes[].projected", {"defaultMode", "sources"}},
        {"volumes[].projected.sources[]", {"clusterTrustBundle", "configMap", "downwardAPI", "podCertificate", "secret",
                                           "serviceAccountToken"}},
        {"volumes[].projected.sources[].serviceAccountToken", {"audience", "expirationSeconds", "path"}},
        {"volumes[].gcePersistentDisk", {"fsType", "partition", "pdName", "readOnly"}},
        {"volumes[].awsElasticBlockStore", {"fsType", "partition", "readOnly", "volumeID"}},
        {"volumes[].nfs", {"path", "readOnly", "server"}},
    };
    static std::deque<std::string> keys;  // the made paths' storage (a deque: views into it stay valid)
    for (std::string_view kind : {"podAffinity", "podAntiAffinity"}) {
      auto path = [&](std::string_view rest) -> std::string_view {
        return keys.emplace_back(fmt::format("affinity.{}{}", kind, rest));
      };
      m[path("")] = pod_affinity;
      m[path(".requiredDuringSchedulingIgnoredDuringExecution[]")] = pod_affinity_term;
      m[path(".preferredDuringSchedulingIgnoredDuringExecution[]")] = {"podAffinityTerm", "weight"};
      for (std::string_view term : {".requiredDuringSchedulingIgnoredDuringExecution[]",
                                    ".preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm"}) {
        if (!term.starts_with(".required")) m[path(term)] = pod_affinity_term;
        for (std::string_view selector : {".labelSelector", ".namespaceSelector"}) {
          m[path(fmt::format("{}{}", term, selector))] = label_selector;
          m[path(fmt::format("{}{}.matchExpressions[]", term, selector))] = requirement;
        }
      }
    }
    for (std::string_view list : {"containers[]", "initContainers[]", "ephemeralContainers[]"}) {
      auto path = [&](std::string_view rest) -> std::string_view {
        return keys.emplace_back(fmt::format("{}{}", list, rest));
      };
      Fields fields = container;
      if (list == "ephemeralContainers[]") fields.push_back("targetContainerName");
      m[path("")] = fields;
      m[path(".resources")] = {"claims", "limits", "requests"};
      m[path(".resources.claims[]")] = {"name", "request"};
      m[path(".ports[]")] = {"containerPort", "hostIP", "hostPort", "name", "protocol"};
      m[path(".env[]")] = {"name", "value", "valueFrom"};
      m[path(".env[].valueFrom")] = {"configMapKeyRef", "fieldRef", "fileKeyRef", "resourceFieldRef", "secretKeyRef"};
      m[path(".envFrom[]")] = {"configMapRef", "prefix", "secretRef"};
      m[path(".volumeMounts[]")] = {"mountPath", "mountPropagation", "name", "readOnly", "recursiveReadOnly", "subPath",
                                    "subPathExpr"};
      m[path(".volumeDevices[]")] = {"devicePath", "name"};
      m[path(".resizePolicy[]")] = {"resourceName", "restartPolicy"};
      m[path(".restartPolicyRules[]")] = {"action", "exitCodes"};
      m[path(".restartPolicyRules[].exitCodes")] = {"operator", "values"};
      m[path(".lifecycle")] = {"postStart", "preStop", "stopSignal"};
      for (std::string_view at : {".lifecycle.postStart", ".lifecycle.preStop"}) {
        m[path(at)] = handler;
        m[path(fmt::format("{}.httpGet", at))] = http_get;
        m[path(fmt::format("{}.sleep", at))] = {"seconds"};
      }
      for (std::string_view at : {".livenessProbe", ".readinessProbe", ".startupProbe"}) {
        m[path(at)] = probe;
        m[path(fmt::format("{}.httpGet", at))] = http_get;
        m[path(fmt::format("{}.httpGet.httpHeaders[]", at))] = {"name", "value"};
        m[path(fmt::format("{}.tcpSocket", at))] = {"host", "port"};
        m[path(fmt::format("{}.exec", at))] = {"command"};
        m[path(fmt::format("{}.grpc", at))] = {"port", "service"};
      }
      m[path(".securityContext")] = {"allowPrivilegeEscalation", "appArmorProfile", "capabilities", "privileged",
                                     "procMount", "readOnlyRootFilesystem", "runAsGroup", "runAsNonRoot", "runAsUser",
                                     "seLinuxOptions", "seccompProfile", "windowsOptions"};
      m[path(".securityContext.capabilities")] = {"add", "drop"};
      m[path(".securityContext.seccompProfile")] = {"localhostProfile", "type"};
    }
    return m;
  }();
  return schema;
}

void Check(NodeRef map, std::string_view path, const Fields& known, bool strict, DiagnosticSink& diags) {
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

// `object` at schema path `schema` (below the pod spec), shown as `shown`
// (`spec.affinity.`): its keys checked, then every object under a known
// key that the schema describes, however deep.
void CheckBelow(NodeRef object, const std::string& schema, const std::string& shown, bool strict, DiagnosticSink& diags,
                int depth = 0) {
  const auto& table = PodSpecSchema();
  auto known = table.find(schema);
  if (known == table.end() || !object.Valid() || !object.IsMapping() || depth > 16) return;
  Check(object, shown, known->second, strict, diags);
  for (uint32_t i = 0; i < object.Size(); ++i) {
    std::string_view name = object.KeyAt(i).Text();
    NodeRef value = object.ValueAt(i);
    std::string below = schema.empty() ? std::string(name) : fmt::format("{}.{}", schema, name);
    if (value.IsMapping()) {
      CheckBelow(value, below, fmt::format("{}{}.", shown, name), strict, diags, depth + 1);
    } else if (value.IsSequence() && table.contains(below + "[]")) {
      for (uint32_t k = 0; k < value.Size(); ++k) {
        CheckBelow(value.At(k), below + "[]", fmt::format("{}{}[{}].", shown, name, k), strict, diags, depth + 1);
      }
    }
  }
}

void CheckPodSpec(NodeRef spec, std::string_view path, bool strict, DiagnosticSink& diags) {
  CheckBelow(spec, "", std::string(path), strict, diags);
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
