// Which pods share a template (pod_template.h): what siblings may differ in
// and what makes them differ, asked through Engine::Template as the
// scheduler, serve and check ask.

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "runtime/engine/engine.h"

using namespace policy;

namespace {

// Two zones, a WaitForFirstConsumer class, a StatefulSet's three pods with
// a claim each (none bound), a claim two Deployment pods share, and the
// service-account token volume on every pod.
constexpr std::string_view kSnapshot = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n0, labels: {kubernetes.io/hostname: n0, topology.kubernetes.io/zone: a}}
  status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: b}}
  status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: gp3}
  provisioner: ebs.csi.aws.com
  volumeBindingMode: WaitForFirstConsumer
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data-db-0}
  spec: {accessModes: [ReadWriteOnce], storageClassName: gp3, resources: {requests: {storage: 10Gi}}}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data-db-1}
  spec: {accessModes: [ReadWriteOnce], storageClassName: gp3, resources: {requests: {storage: 10Gi}}}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data-db-2}
  spec: {accessModes: [ReadWriteOnce], storageClassName: gp3, resources: {requests: {storage: 20Gi}}}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: shared}
  spec: {accessModes: [ReadWriteMany], storageClassName: gp3, resources: {requests: {storage: 10Gi}}}
)";

std::string StatefulSetPod(int i) {
  return fmt::format(R"(
- apiVersion: v1
  kind: Pod
  metadata:
    name: db-{0}
    labels: {{app: db, statefulset.kubernetes.io/pod-name: db-{0}, apps.kubernetes.io/pod-index: '{0}'}}
    ownerReferences: [{{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u1, controller: true}}]
  spec:
    containers: [{{name: db, image: postgres, resources: {{requests: {{cpu: '1'}}}}}}]
    volumes:
    - {{name: data, persistentVolumeClaim: {{claimName: data-db-{0}}}}}
    - {{name: kube-api-access-{0}x, projected: {{sources: [{{serviceAccountToken: {{path: token}}}}]}}}}
)",
                     i);
}

std::string SharedClaimPod(int i) {
  return fmt::format(R"(
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-{0}
    labels: {{app: web}}
  spec:
    containers: [{{name: web, image: nginx}}]
    volumes: [{{name: files, persistentVolumeClaim: {{claimName: shared}}}}]
)",
                     i);
}

std::unique_ptr<engine::Cluster> Load(std::string extra = {}) {
  std::string text(kSnapshot);
  for (int i = 0; i < 3; ++i) text += StatefulSetPod(i);
  for (int i = 0; i < 2; ++i) text += SharedClaimPod(i);
  text += extra;
  DiagnosticSink diags;
  auto cluster = engine::Cluster::Load(std::make_shared<const Source>("snapshot.yaml", text), diags);
  REQUIRE_MESSAGE(cluster != nullptr, RenderAll(diags));
  return cluster;
}

std::unique_ptr<engine::Engine> MakeEngine(std::string policy = {}) {
  std::vector<std::shared_ptr<const Source>> policies;
  if (!policy.empty()) policies.push_back(std::make_shared<const Source>("p.policy", policy));
  DiagnosticSink diags;
  auto engine = engine::Engine::Create(rt::DefaultProfile(), policies, {}, diags);
  REQUIRE_MESSAGE(engine, RenderAll(diags));
  return engine;
}

const k8s::Pod& Pending(const engine::Cluster& cluster, std::string_view name) {
  for (const k8s::Pod& p : cluster.Report().pending) {
    if (p.name == name) return p;
  }
  FAIL("no pending pod " << name);
  static const k8s::Pod none;
  return none;
}

bool Same(const engine::Engine& e, const engine::Cluster& c, std::string_view a, std::string_view b) {
  engine::TemplatePod ta = e.Template(Pending(c, a), c), tb = e.Template(Pending(c, b), c);
  CHECK(ta.own_plan_because.empty());
  CHECK(tb.own_plan_because.empty());
  return engine::SameTemplate(ta.pod, tb.pod) && engine::TemplateHash(ta.pod) == engine::TemplateHash(tb.pod);
}

}  // namespace

TEST_CASE("a StatefulSet's pods are one template: their own claims and pod-name labels left out") {
  auto cluster = Load();
  auto engine = MakeEngine();
  CHECK(Same(*engine, *cluster, "db-0", "db-1"));
  // The claim's state stays in: db-2's asks for more storage, which a
  // pre-provisioned volume may or may not hold.
  engine::TemplatePod t = engine->Template(Pending(*cluster, "db-0"), *cluster);
  REQUIRE(t.pod.volumes.size() == 1);  // the token volume is gone
  CHECK(t.pod.volumes[0].claim != "data-db-0");
  REQUIRE(t.pod.resolved_volumes.size() == 1);
  CHECK(t.pod.resolved_volumes[0].claim_found);
  CHECK(t.pod.resolved_volumes[0].delay_binding);
  CHECK(k8s::Find(t.pod.labels, "app") == nullptr);  // no selector reads even `app` here
  CHECK(k8s::Find(t.pod.labels, "statefulset.kubernetes.io/pod-name") == nullptr);
  // Pods of one claim no pod uses yet are one template too.
  CHECK(Same(*engine, *cluster, "web-0", "web-1"));
}

TEST_CASE("details of the template's words name each pod's own claim") {
  // vault-0 and vault-1 are one template; their claims' class provisions
  // only in a zone no node is in, so every node's detail names the claim.
  std::string extra = R"(
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: zone-c}
  provisioner: ebs.csi.aws.com
  volumeBindingMode: WaitForFirstConsumer
  allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [c]}]}]
)";
  for (int i = 0; i < 2; ++i) {
    extra += fmt::format(R"(
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {{name: data-vault-{0}}}
  spec: {{accessModes: [ReadWriteOnce], storageClassName: zone-c, resources: {{requests: {{storage: 1Gi}}}}}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: vault-{0}
    labels: {{app: vault}}
    ownerReferences: [{{apiVersion: apps/v1, kind: StatefulSet, name: vault, uid: u2, controller: true}}]
  spec:
    containers: [{{name: vault, image: vault}}]
    volumes: [{{name: data, persistentVolumeClaim: {{claimName: data-vault-{0}}}}}]
)",
                         i);
  }
  auto cluster = Load(extra);
  auto engine = MakeEngine();
  REQUIRE(Same(*engine, *cluster, "vault-0", "vault-1"));
  for (std::string name : {"vault-0", "vault-1"}) {
    CAPTURE(name);
    engine::TemplatePod t = engine->Template(Pending(*cluster, name), *cluster);
    REQUIRE(t.claims.size() == 1);
    CHECK(t.claims[0].second == "data-" + name);
    auto shared = engine->Plan(std::move(t), *cluster);
    rt::Placement words = engine->Explain(*shared, *cluster, engine->Decide(*shared, *cluster, {.plugin_scores = true}));
    engine::NameClaims(words, engine->Template(Pending(*cluster, name), *cluster).claims);
    auto own = engine->Plan(Pending(*cluster, name), *cluster);
    rt::Placement want = engine->Explain(*own, *cluster, engine->Decide(*own, *cluster, {.plugin_scores = true}));
    CHECK(words.summary == want.summary);
    REQUIRE(words.nodes.size() == want.nodes.size());
    size_t naming = 0;
    for (size_t n = 0; n < want.nodes.size(); ++n) {
      REQUIRE(words.nodes[n].reasons.size() == want.nodes[n].reasons.size());
      for (size_t r = 0; r < want.nodes[n].reasons.size(); ++r) {
        CHECK(words.nodes[n].reasons[r].reason == want.nodes[n].reasons[r].reason);
        CHECK(words.nodes[n].reasons[r].detail == want.nodes[n].reasons[r].detail);
        naming += want.nodes[n].reasons[r].detail.find("default/data-" + name) != std::string::npos;
      }
    }
    CHECK(naming == want.nodes.size());  // the test would not see a wrong name otherwise
  }
}

TEST_CASE("a label some selector reads stays: a bound pod's term or a Service or the pod's own terms") {
  SUBCASE("a bound pod's anti-affinity names the pod-name label") {
    auto cluster = Load(R"(
- apiVersion: v1
  kind: Pod
  metadata: {name: backup}
  spec:
    nodeName: n0
    containers: [{name: b, image: busybox}]
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector: {matchLabels: {statefulset.kubernetes.io/pod-name: db-0}}
          topologyKey: kubernetes.io/hostname
)");
    auto engine = MakeEngine();
    CHECK_FALSE(Same(*engine, *cluster, "db-0", "db-1"));
    engine::TemplatePod t = engine->Template(Pending(*cluster, "db-1"), *cluster);
    CHECK(k8s::Find(t.pod.labels, "statefulset.kubernetes.io/pod-name") != nullptr);
    CHECK(k8s::Find(t.pod.labels, "app") == nullptr);
  }
  SUBCASE("a Service selects by it (default spreading)") {
    auto cluster = Load(R"(
- apiVersion: v1
  kind: Service
  metadata: {name: db-0}
  spec: {selector: {statefulset.kubernetes.io/pod-name: db-0}}
)");
    auto engine = MakeEngine();
    CHECK_FALSE(Same(*engine, *cluster, "db-0", "db-1"));
  }
  SUBCASE("the pod's own spread constraint reads app alone") {
    std::string pods;
    for (int i = 0; i < 2; ++i) {
      pods += fmt::format(R"(
- apiVersion: v1
  kind: Pod
  metadata:
    name: api-{0}
    labels: {{app: api, statefulset.kubernetes.io/pod-name: api-{0}}}
  spec:
    containers: [{{name: api, image: api}}]
    topologySpreadConstraints:
    - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: api}}}}}}
)",
                          i);
    }
    auto cluster = Load(pods);
    auto engine = MakeEngine();
    CHECK(Same(*engine, *cluster, "api-0", "api-1"));
    engine::TemplatePod t = engine->Template(Pending(*cluster, "api-0"), *cluster);
    CHECK(k8s::Find(t.pod.labels, "app") != nullptr);
    CHECK(k8s::Find(t.pod.labels, "statefulset.kubernetes.io/pod-name") == nullptr);
  }
  SUBCASE("a selector owner added after the first look") {
    auto cluster = Load();
    auto engine = MakeEngine();
    CHECK(Same(*engine, *cluster, "db-0", "db-1"));
    k8s::SelectorOwner service;
    service.kind = "Service";
    service.name = "db-1";
    service.match_labels = k8s::StringMap{{"apps.kubernetes.io/pod-index", "1"}};
    cluster->SetSelectorOwner(service);
    CHECK_FALSE(Same(*engine, *cluster, "db-0", "db-1"));
  }
}

TEST_CASE("a claim some pod uses keeps its name: what nodes attach is then the claim's own") {
  // Bound pods already use data-db-1 and shared: their nodes count the
  // claims' volumes, so neither is a pod's own any more.
  auto cluster = Load(R"(
- apiVersion: v1
  kind: Pod
  metadata: {name: restore}
  spec:
    nodeName: n1
    containers: [{name: r, image: busybox}]
    volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-1}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: web-old}
  spec:
    nodeName: n0
    containers: [{name: web, image: nginx}]
    volumes: [{name: files, persistentVolumeClaim: {claimName: shared}}]
)");
  auto engine = MakeEngine();
  CHECK_FALSE(Same(*engine, *cluster, "db-0", "db-1"));
  engine::TemplatePod t = engine->Template(Pending(*cluster, "db-1"), *cluster);
  CHECK(t.pod.volumes[0].claim == "data-db-1");
  CHECK(t.pod.resolved_volumes[0].in_use);
  // Pods of one claim in use are one template, with its name; details may
  // name it.
  CHECK(Same(*engine, *cluster, "web-0", "web-1"));
  engine::TemplatePod web = engine->Template(Pending(*cluster, "web-0"), *cluster);
  CHECK(web.pod.volumes[0].claim == "shared");
  CHECK(web.own_plan_because.empty());
}

TEST_CASE("a policy that reads the pod's labels or volumes keeps them all") {
  auto cluster = Load();
  SUBCASE("labels") {
    auto engine = MakeEngine("policy Ordinal \"x\"\n  filter pod.labels[\"apps.kubernetes.io/pod-index\"] != \"1\"\n    reason \"r\"\n");
    CHECK_FALSE(Same(*engine, *cluster, "db-0", "db-1"));
  }
  SUBCASE("volumes") {
    auto engine = MakeEngine("policy Vols \"x\"\n  filter len(pod.volumes) < 5\n    reason \"r\"\n");
    CHECK_FALSE(Same(*engine, *cluster, "db-0", "db-1"));
    CHECK(engine->Template(Pending(*cluster, "db-0"), *cluster).pod.volumes.size() == 2);
  }
}

namespace {

// A pod with a claim bound to a volume of its own (a database replica's PVC
// and its PV, or scheduler_perf's in-tree and CSI workloads); `affinity`
// pins the volume to node n0 when set.
std::string BoundClaimPod(int i, bool affinity = false) {
  std::string pin = affinity ? ", nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: "
                               "kubernetes.io/hostname, operator: In, values: [n0]}]}]}}"
                             : "";
  return fmt::format(R"(
- apiVersion: v1
  kind: PersistentVolume
  metadata: {{name: pv-pg-{0}}}
  spec: {{accessModes: [ReadWriteOnce], capacity: {{storage: 10Gi}}, storageClassName: '', csi: {{driver: ebs.csi.aws.com, volumeHandle: vol-pg-{0}}}, claimRef: {{namespace: default, name: data-pg-{0}}}{1}}}
  status: {{phase: Bound}}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {{name: data-pg-{0}, annotations: {{pv.kubernetes.io/bind-completed: 'yes'}}}}
  spec: {{accessModes: [ReadWriteOnce], storageClassName: '', volumeName: pv-pg-{0}, resources: {{requests: {{storage: 10Gi}}}}}}
  status: {{phase: Bound}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: pg-{0}
    ownerReferences: [{{apiVersion: apps/v1, kind: StatefulSet, name: pg, uid: u3, controller: true}}]
  spec:
    containers: [{{name: pg, image: postgres}}]
    volumes: [{{name: data, persistentVolumeClaim: {{claimName: data-pg-{0}}}}}]
)",
                     i, pin);
}

// What a plan of the pod's template decides, against a plan of its own.
void DecidesAsItsOwn(engine::Engine& e, engine::Cluster& c, std::string_view name) {
  CAPTURE(name);
  const k8s::Pod& pod = Pending(c, name);
  auto shared = e.Plan(e.Template(pod, c), c);
  shared->Adopt(pod);
  const rt::Decision from_template = e.Decide(*shared, c, {});
  auto own = e.Plan(pod, c);
  const rt::Decision& want = e.Decide(*own, c, {});
  CHECK(from_template.feasible == want.feasible);
  CHECK(from_template.score == want.score);
  CHECK(from_template.selected == want.selected);
}

}  // namespace

TEST_CASE("pods whose claims are bound to volumes of their own are one template") {
  // n0 may attach one EBS volume and a bound pod attaches one there already:
  // the template's volume counts as a new one, as each pod's own does.
  std::string extra = BoundClaimPod(0) + BoundClaimPod(1) + BoundClaimPod(2, true) + R"(
- apiVersion: storage.k8s.io/v1
  kind: CSINode
  metadata: {name: n0}
  spec: {drivers: [{name: ebs.csi.aws.com, nodeID: n0, allocatable: {count: 1}}]}
- apiVersion: v1
  kind: PersistentVolume
  metadata: {name: pv-old}
  spec: {accessModes: [ReadWriteOnce], capacity: {storage: 1Gi}, storageClassName: '', csi: {driver: ebs.csi.aws.com, volumeHandle: vol-old}, claimRef: {namespace: default, name: old}}
  status: {phase: Bound}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: old, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}
  spec: {accessModes: [ReadWriteOnce], storageClassName: '', volumeName: pv-old, resources: {requests: {storage: 1Gi}}}
  status: {phase: Bound}
- apiVersion: v1
  kind: Pod
  metadata: {name: old}
  spec:
    nodeName: n0
    containers: [{name: o, image: busybox}]
    volumes: [{name: data, persistentVolumeClaim: {claimName: old}}]
)";
  auto cluster = Load(extra);
  auto engine = MakeEngine();
  CHECK(Same(*engine, *cluster, "pg-0", "pg-1"));
  engine::TemplatePod t = engine->Template(Pending(*cluster, "pg-1"), *cluster);
  REQUIRE(t.pod.resolved_volumes.size() == 1);
  const k8s::ResolvedVolume& r = t.pod.resolved_volumes[0];
  CHECK(r.bound);
  CHECK(r.claim != "data-pg-1");
  CHECK(r.volume_name != "pv-pg-1");
  CHECK(r.attach_driver == "ebs.csi.aws.com");
  CHECK(r.attach_handle != "vol-pg-1");
  // Each own name comes back for the words: the claim, its volume's handle
  // and its volume.
  CHECK(t.claims.size() == 3);
  CHECK(std::any_of(t.claims.begin(), t.claims.end(), [](const auto& p) { return p.second == "pv-pg-1"; }));
  // What a volume contributes per node stays: pg-2's volume lives on n0.
  CHECK_FALSE(Same(*engine, *cluster, "pg-0", "pg-2"));
  for (std::string_view name : {"pg-0", "pg-1", "pg-2"}) DecidesAsItsOwn(*engine, *cluster, name);
  auto own = engine->Plan(Pending(*cluster, "pg-1"), *cluster);
  const rt::Decision& d = engine->Decide(*own, *cluster, {});
  REQUIRE(d.feasible.size() == 1);  // n0 attaches its one volume already
  CHECK(cluster->Table().NodeName(d.feasible[0]) == "n1");
}

TEST_CASE("pods whose ResourceClaims one ResourceClaimTemplate made are one template") {
  std::string extra = R"(
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
  spec: {selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: n1-gpus}
  spec:
    driver: gpu.example.com
    pool: {name: n1, generation: 1, resourceSliceCount: 1}
    nodeName: n1
    devices: [{name: gpu-0}, {name: gpu-1}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: one-gpu}
  spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
)";
  for (int i = 0; i < 3; ++i) {
    // train-2's claim is allocated already (to gpu-0 on n1).
    std::string allocation = i == 2 ? R"(
  status:
    allocation:
      devices: {results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]}
      nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]})"
                                    : "";
    extra += fmt::format(R"(
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata:
    name: train-{0}-gpu
    ownerReferences: [{{apiVersion: v1, kind: Pod, name: train-{0}, uid: u-train-{0}, controller: true}}]
  spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu.example.com}}}}]}}}}{1}
- apiVersion: v1
  kind: Pod
  metadata:
    name: train-{0}
    uid: u-train-{0}
    ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: train, uid: u4, controller: true}}]
  spec:
    containers: [{{name: t, image: trainer, resources: {{claims: [{{name: gpu}}]}}}}]
    resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  status:
    resourceClaimStatuses: [{{name: gpu, resourceClaimName: train-{0}-gpu}}]
)",
                         i, allocation);
  }
  auto cluster = Load(extra);
  auto engine = MakeEngine();
  CHECK(Same(*engine, *cluster, "train-0", "train-1"));
  engine::TemplatePod t = engine->Template(Pending(*cluster, "train-1"), *cluster);
  REQUIRE(t.claims.size() == 1);
  CHECK(t.claims[0].second == "train-1-gpu");
  CHECK(t.pod.resource_claim_statuses[0].claim_name != "train-1-gpu");
  CHECK(t.pod.resource_claims_problem.empty());
  // An allocated claim holds a device: its state is no sibling's.
  CHECK_FALSE(Same(*engine, *cluster, "train-0", "train-2"));
  CHECK(engine->Template(Pending(*cluster, "train-2"), *cluster).claims.empty());
  // The template's plan, given the deciding pod's names back, decides as
  // the pod's own: only n1 has a free device.
  for (std::string_view name : {"train-0", "train-1", "train-2"}) DecidesAsItsOwn(*engine, *cluster, name);
  auto shared = engine->Plan(engine->Template(Pending(*cluster, "train-1"), *cluster), *cluster);
  shared->Adopt(Pending(*cluster, "train-1"));
  const rt::Decision& d = engine->Decide(*shared, *cluster, {});
  REQUIRE(d.feasible.size() == 1);
  CHECK(cluster->Table().NodeName(d.feasible[0]) == "n1");
}
