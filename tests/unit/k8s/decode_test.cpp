#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "k8s/pod_reader.h"

using namespace policy;
using namespace policy::k8s;

namespace {

struct Result {
  std::optional<Pod> pod;
  std::string first_error;
  std::string codes;
};

Result ReadPodText(const std::string& text, const char* name = "pod.yaml") {
  Source source(name, text);
  DiagnosticSink diags;
  Result r;
  r.pod = ReadPod(source, diags, FieldValidation::kStrict);
  for (const Diagnostic& d : diags.Sorted()) {
    if (r.first_error.empty()) {
      LineCol at = d.primary.span.Valid() ? source.Locate(d.primary.span.begin) : LineCol{};
      r.first_error = fmt::format("{} {}:{} {}", CodeString(d.code), at.line, at.column, d.message);
    }
    r.codes += fmt::format("{} ", CodeString(d.code));
  }
  return r;
}

const char* kPodHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n";

}  // namespace

TEST_CASE("a full pod decodes with defaults") {
  Result r = ReadPodText(std::string(kPodHead) + R"(  nodeSelector: {disk: ssd}
  containers:
  - name: a
    resources:
      requests: {cpu: 500m}
      limits: {cpu: '1', memory: 1Gi, nvidia.com/gpu: 1}
  initContainers:
  - name: side
    restartPolicy: Always
  tolerations:
  - {key: gpu, operator: Exists, effect: NoSchedule}
  - {operator: Exists}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [a, b]}
          matchFields:
          - {key: metadata.name, operator: NotIn, values: [n1]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference: {matchExpressions: [{key: gen, operator: Gt, values: ['3']}]}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
        namespaceSelector: {}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}
  priority: 100
  overhead: {cpu: 10m}
)");
  REQUIRE_MESSAGE(r.pod.has_value(), r.first_error);
  const Pod& p = *r.pod;
  CHECK(p.namespace_name == "default");
  CHECK(p.node_selector.size() == 1);
  REQUIRE(p.containers.size() == 1);
  CHECK(Find(p.containers[0].requests, "cpu")->MilliValue() == 500);
  // A limit without a request requests the limit.
  CHECK(Find(p.containers[0].requests, "memory")->Value() == 1073741824);
  CHECK(Find(p.containers[0].requests, "nvidia.com/gpu")->Value() == 1);
  CHECK(p.init_containers[0].restartable);
  REQUIRE(p.tolerations.size() == 2);
  CHECK(p.tolerations[1].key.empty());
  CHECK_FALSE(p.tolerations[1].effect.has_value());
  REQUIRE(p.affinity.node_affinity->required->size() == 1);
  CHECK((*p.affinity.node_affinity->required)[0].match_fields[0].values[0] == "n1");
  CHECK(p.affinity.node_affinity->preferred[0].weight == 10);
  CHECK(p.affinity.pod_anti_affinity->required[0].namespace_selector.has_value());
  CHECK(p.topology_spread[0].when_unsatisfiable == WhenUnsatisfiable::kScheduleAnyway);
  CHECK(*p.priority == 100);
  CHECK(Find(p.overhead, "cpu")->MilliValue() == 10);
}

TEST_CASE("workloads give their template in their namespace") {
  Result r = ReadPodText(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: '2'}}}]
)");
  REQUIRE_MESSAGE(r.pod.has_value(), r.first_error);
  CHECK(r.pod->namespace_name == "shop");
  CHECK(r.pod->name == "web");
  CHECK(r.pod->template_of == "Deployment/web");
  Result cron = ReadPodText(R"(kind: CronJob
metadata: {name: nightly}
spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: c}]}}}}}
)");
  REQUIRE_MESSAGE(cron.pod.has_value(), cron.first_error);
  CHECK(cron.pod->template_of == "CronJob/nightly");
}

TEST_CASE("yaml 1.1 integers reach quantities as their values") {
  Result r = ReadPodText(std::string(kPodHead) +
                         "  containers: [{name: a, resources: {requests: {cpu: 010, memory: 0x10, x.io/y: 1_000}, limits: {x.io/y: 1000}}}]\n");
  REQUIRE_MESSAGE(r.pod.has_value(), r.first_error);
  CHECK(Find(r.pod->containers[0].requests, "cpu")->MilliValue() == 8000);
  CHECK(Find(r.pod->containers[0].requests, "memory")->Value() == 16);
  CHECK(Find(r.pod->containers[0].requests, "x.io/y")->Value() == 1000);
}

// Every validation Kubernetes' API server applies where placement depends on
// it: the code and where it points.
TEST_CASE("invalid pods are refused at the offending field") {
  struct Row {
    const char* spec;
    const char* expected;  // "CODE line:col" prefix of the first error
  } rows[] = {
      {"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: a, operator: Inn, values: [x]}]}]}}}\n",
       "K0203 5:137"},
      {"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: a, operator: In, values: []}]}]}}}\n",
       "K0204 5:149"},
      {"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: a, operator: Exists, values: [x]}]}]}}}\n",
       "K0204 5:153"},
      {"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: a, operator: Lt, values: ['1', '2']}]}]}}}\n",
       "K0204 5:149"},
      {"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchFields: [{key: spec.unschedulable, operator: In, values: ['false']}]}]}}}\n",
       "K0207 5:119"},
      {"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}\n",
       "K0201 5:97"},
      {"  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {}}]}}\n",
       "K0212 5:88"},
      {"  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}}]}}\n",
       "K0211 5:77"},
      {"  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: z, "
       "labelSelector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}}]}}\n",
       "K0203 5:148"},
      {"  tolerations: [{key: a, operator: Equals}]\n", "K0206 5:36"},
      {"  tolerations: [{key: a, operator: Exists, value: x}]\n", "K0206 5:51"},
      {"  tolerations: [{key: a, effect: NoScheduled}]\n", "K0216 5:34"},
      {"  tolerations: [{value: x}]\n", "K0206 5:17"},
      {"  tolerations: [{key: a, effect: NoSchedule, tolerationSeconds: 5}]\n", "K0206 5:65"},
      {"  containers: [{name: a, resources: {requests: {cpu: 2 cores}}}]\n", "K0202 5:54"},
      {"  containers: [{name: a, resources: {requests: {memory: -1Gi}}}]\n", "K0208 5:57"},
      {"  containers: [{name: a, resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}}]\n", "K0214 5:54"},
      {"  containers: [{name: a, resources: {requests: {gpu: '1'}}}]\n", "K0215 5:49"},
      {"  containers: [{name: a, resources: {requests: {cpu: true}}}]\n", "K0200 5:54"},
      {"  containers: {name: a}\n", "K0200 5:15"},
      {"  nodeSelector: {disk: 1}\n", "K0200 5:24"},
      {"  topologySpreadConstraints: [{maxSkew: 0, topologyKey: z, whenUnsatisfiable: DoNotSchedule}]\n",
       "K0209 5:41"},
      {"  topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: Never}]\n", "K0209 5:79"},
      {"  topologySpreadConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: ScheduleAnyway, "
       "minDomains: 2}]\n",
       "K0209 5:107"},
      {"  topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}]\n", "K0209 5:31"},
      {"  priority: 1.5\n", "K0200 5:13"},
      {"  containers: [{name: a, resources: {requests: {nvidia.com/gpu: 500m}, limits: {nvidia.com/gpu: 500m}}}]\n", "K0219 5:65"},
      {"  containers: [{name: a, resources: {requests: {nvidia.com/gpu: 1}}}]\n", "K0219 5:65"},
      {"  containers: [{name: a, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}}]\n", "K0219 5:65"},
      {"  nodeSelector: {disk: ssd}\n", "K0201 5:3"},
  };
  for (const Row& r : rows) {
    INFO(std::string(r.spec));
    Result result = ReadPodText(std::string(kPodHead) + r.spec);
    CHECK_FALSE(result.pod.has_value());
    CHECK_MESSAGE(result.first_error.starts_with(r.expected), result.first_error);
  }
}

TEST_CASE("Gt with a value that is not an integer loads - with a warning - as Kubernetes accepts it") {
  Source source("pod.yaml", std::string(kPodHead) +
                                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Gt, values: ['1.5']}]}]}}}\n"
                                "  containers: [{name: c}]\n");
  DiagnosticSink diags;
  std::optional<Pod> pod = ReadPod(source, diags, FieldValidation::kStrict);
  REQUIRE(pod.has_value());
  REQUIRE(diags.All().size() == 1);
  CHECK(diags.All()[0].severity == Severity::kWarning);
  CHECK(diags.All()[0].code == DiagCode::kNeverMatches);
  CHECK(source.Locate(diags.All()[0].primary.span.begin).column == 150);
}

TEST_CASE("objects without names - non-pods and empty files are refused") {
  CHECK(ReadPodText("kind: Pod\nspec: {}\n").first_error.starts_with("K0201 1:1"));
  CHECK(ReadPodText("kind: Pod\nmetadata: {labels: {a: b}}\n").first_error.starts_with("K0201 2:11"));
  CHECK(ReadPodText("kind: Service\nmetadata: {name: s}\n").first_error.starts_with("K0210 1:7 a `Service` is not a pod"));
  CHECK(ReadPodText("metadata: {name: s}\n").first_error.starts_with("K0210"));
  CHECK(ReadPodText("# nothing\n").first_error.starts_with("K0217"));
  CHECK(ReadPodText("kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\nkind: Pod\nmetadata: {name: b}\n")
            .first_error.starts_with("K0210 5:1 the pod file holds more than one object"));
  CHECK(ReadPodText("kind: Deployment\nmetadata: {name: d}\nspec: {}\n").first_error.starts_with("K0201"));
}

TEST_CASE("every problem in a file is reported - not only the first") {
  Result r = ReadPodText(std::string(kPodHead) +
                         "  tolerations: [{key: a, operator: Equals}]\n"
                         "  containers: [{name: a, resources: {requests: {cpu: 2 cores, memory: -1}}}]\n");
  CHECK(r.codes == "K0206 K0202 K0208 ");
}

TEST_CASE("unknown pod fields are refused - warned about or let be as --validate says") {
  // A misspelled nodeSelector and request beside a real error (a bad
  // quantity): strict refuses with every problem at once, as kubectl does.
  std::string text = std::string(kPodHead) +
                     "  nodeSelecter: {disk: ssd}\n"
                     "  containers: [{name: c, resources: {requets: {cpu: '1'}, limits: {cpu: 'x'}}}]\n";
  Source source("pod.yaml", text);
  {
    DiagnosticSink diags;
    CHECK_FALSE(ReadPod(source, diags, FieldValidation::kStrict).has_value());
    std::string codes;
    for (const Diagnostic& d : diags.Sorted()) codes += std::string(CodeString(d.code)) + " ";
    CHECK(codes == "K0220 K0220 K0202 ");
    CHECK(diags.Sorted()[0].help == "did you mean `nodeSelector`?");
  }
  {
    DiagnosticSink diags;
    CHECK_FALSE(ReadPod(source, diags, FieldValidation::kWarn).has_value());  // the quantity is still an error
    std::string codes;
    for (const Diagnostic& d : diags.Sorted()) codes += std::string(CodeString(d.code)) + " ";
    CHECK(codes == "W0303 W0303 K0202 ");
  }
  Source clean("pod.yaml", std::string(kPodHead) + "  nodeSelecter: {disk: ssd}\n  containers: [{name: c}]\n");
  {
    DiagnosticSink diags;
    CHECK(ReadPod(clean, diags, FieldValidation::kWarn).has_value());
    CHECK(diags.All().size() == 1);
  }
  {
    DiagnosticSink diags;
    CHECK(ReadPod(clean, diags, FieldValidation::kIgnore).has_value());
    CHECK(diags.All().empty());
  }
  CHECK(ParseFieldValidation("strict") == FieldValidation::kStrict);
  CHECK(ParseFieldValidation("true") == FieldValidation::kStrict);
  CHECK(ParseFieldValidation("false") == FieldValidation::kIgnore);
  CHECK_FALSE(ParseFieldValidation("lenient").has_value());
}

TEST_CASE("pod-level resources and in-place resize status decode - with the API's defaulting and validation") {
  Result r = ReadPodText(std::string(kPodHead) + R"(  resources:
    limits: {cpu: '2', memory: 1Gi}
  containers:
  - name: a
    resources: {requests: {cpu: 500m}}
  - name: b
status:
  conditions:
  - {type: PodResizePending, status: 'True', reason: Infeasible}
  containerStatuses:
  - name: a
    allocatedResources: {cpu: 500m}
    resources: {requests: {cpu: 750m}}
  - name: b
    allocatedResources: {cpu: 100m}
  - name: gone
    resources: {requests: {cpu: '9'}}
)");
  REQUIRE(r.pod);
  // defaultPodRequests: cpu from what the containers request, memory from the limit.
  REQUIRE(Find(r.pod->pod_requests, "cpu") != nullptr);
  CHECK(Find(r.pod->pod_requests, "cpu")->MilliValue() == 500);
  CHECK(Find(r.pod->pod_requests, "memory")->Value() == 1LL << 30);
  CHECK(r.pod->resize_infeasible);
  CHECK(r.pod->containers[0].status_resources);
  CHECK(Find(r.pod->containers[0].status_requests, "cpu")->MilliValue() == 750);
  CHECK(Find(r.pod->containers[0].allocated, "cpu")->MilliValue() == 500);
  CHECK_FALSE(r.pod->containers[1].status_resources);  // allocatedResources alone: no `resources`
  // Refused as the API server refuses them.
  Result below = ReadPodText(std::string(kPodHead) + "  resources: {requests: {cpu: 100m}}\n  containers:\n"
                                                     "  - {name: a, resources: {requests: {cpu: '1'}}}\n");
  CHECK_FALSE(below.pod);
  CHECK(below.first_error.find("less than its containers request") != std::string::npos);
  Result unsupported = ReadPodText(std::string(kPodHead) + "  resources: {requests: {ephemeral-storage: 1Gi}}\n"
                                                           "  containers: [{name: a}]\n");
  CHECK_FALSE(unsupported.pod);
  CHECK(unsupported.first_error.find("not a resource pod-level resources can set") != std::string::npos);
  Result misspelt = ReadPodText(std::string(kPodHead) + "  resources: {requets: {cpu: 1}}\n  containers: [{name: a}]\n");
  CHECK_FALSE(misspelt.pod);
  CHECK(misspelt.first_error.find("spec.resources.requets") != std::string::npos);
}
