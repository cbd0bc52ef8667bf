#include <doctest/doctest.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/sched/resolve_volumes.h"

using namespace policy;
using namespace policy::rt;

namespace {

// The source outlives the diagnostics that point into it.
std::unique_ptr<NodeTable> Load(const char* yaml, DiagnosticSink& diags) {
  static std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::make_unique<Source>("cluster.yaml", yaml));
  return LoadCluster(*sources.back(), diags);
}

// A pod with the given volumes section (YAML, indented under spec).
k8s::Pod PodWith(const char* volumes) {
  std::string text = std::string("kind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: c}]\n") + volumes;
  Source source("pod.yaml", text);
  DiagnosticSink diags;
  std::optional<k8s::Pod> pod;
  struct Take final : k8s::ObjectVisitor {
    std::optional<k8s::Pod>* out;
    DiagnosticSink* diags;
    void Visit(k8s::NodeRef object, std::string_view) override { *out = k8s::DecodePod(object, *diags); }
  } take;
  take.out = &pod;
  take.diags = &diags;
  k8s::ReadObjects(source, take, diags);
  REQUIRE_MESSAGE(pod, RenderAll(diags));
  return *pod;
}

const char* kCluster = R"(
- kind: Node
  metadata: {name: n1}
  status: {allocatable: {attachable-volumes-csi-ebs.csi.aws.com: '39', attachable-volumes-csi-other: '3'}}
- kind: CSINode
  metadata: {name: n1}
  spec: {drivers: [{name: ebs.csi.aws.com, allocatable: {count: 2}}, {name: no-count}]}
- kind: StorageClass
  metadata: {name: local}
  provisioner: kubernetes.io/no-provisioner
  volumeBindingMode: WaitForFirstConsumer
- kind: PersistentVolume
  metadata: {name: big, labels: {tier: fast}}
  spec: {capacity: {storage: 100Gi}, accessModes: [ReadWriteOnce], storageClassName: local}
  status: {phase: Available}
- kind: PersistentVolume
  metadata: {name: small, labels: {tier: fast}}
  spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], storageClassName: local}
  status: {phase: Available}
- kind: PersistentVolume
  metadata: {name: rox-only}
  spec: {capacity: {storage: 10Gi}, accessModes: [ReadOnlyMany], storageClassName: local}
  status: {phase: Available}
- kind: PersistentVolume
  metadata: {name: slow, labels: {tier: slow}}
  spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], storageClassName: local}
  status: {phase: Available}
- kind: PersistentVolume
  metadata: {name: zonal, labels: {topology.kubernetes.io/zone: 'a__b'}}
  spec: {capacity: {storage: 1Gi}, csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}}
  status: {phase: Bound}
- kind: PersistentVolumeClaim
  metadata: {name: wants-fast, namespace: ns}
  spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 5Gi}}, selector: {matchLabels: {tier: fast}}}
- kind: PersistentVolumeClaim
  metadata: {name: bound, namespace: ns, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}
  spec: {volumeName: zonal, storageClassName: ''}
- kind: Pod
  metadata: {name: user, namespace: ns}
  spec:
    nodeName: n1
    containers: [{name: c}]
    volumes:
    - {name: a, persistentVolumeClaim: {claimName: bound}}
    - {name: b, persistentVolumeClaim: {claimName: bound}}
    - {name: d, awsElasticBlockStore: {volumeID: vol-9, readOnly: true}}
)";

}  // namespace

TEST_CASE("storage objects load and give a node its volume limits and attachments and disks and claims in use") {
  DiagnosticSink diags;
  auto table = Load(kCluster, diags);
  REQUIRE_MESSAGE(table, RenderAll(diags));
  CHECK(table->Storage().volumes.size() == 5);
  CHECK(table->Storage().claims.size() == 2);
  // The CSINode's count overrides allocatable; a driver without a count keeps allocatable's.
  auto limits = table->VolumeLimits(0);
  REQUIRE(limits.size() == 2);
  CHECK(limits[0] == std::pair<std::string, int64_t>("ebs.csi.aws.com", 2));
  CHECK(limits[1] == std::pair<std::string, int64_t>("other", 3));
  // One volume used twice by the pod is attached once.
  auto attached = table->AttachedVolumes(0);
  REQUIRE(attached.size() == 1);
  CHECK(attached[0] == std::pair<std::string, std::string>("ebs.csi.aws.com", "vol-1"));
  // An EBS disk conflicts even read-only: never read-only here.
  auto disks = table->Disks(0);
  REQUIRE(disks.size() == 1);
  CHECK(*disks[0].first == "awsElasticBlockStore vol-9");
  CHECK_FALSE(disks[0].second);
  CHECK(table->ClaimInUse("ns", "bound"));
  CHECK_FALSE(table->ClaimInUse("ns", "wants-fast"));
  CHECK(table->UnbindPod("ns", "user"));
  CHECK_FALSE(table->ClaimInUse("ns", "bound"));
  CHECK(table->AttachedVolumes(0).empty());
}

TEST_CASE("an unbound claim's candidates match class and size and access modes and selector and come smallest first") {
  DiagnosticSink diags;
  auto table = Load(kCluster, diags);
  REQUIRE(table);
  k8s::Pod pod = PodWith("  volumes:\n  - {name: v, persistentVolumeClaim: {claimName: wants-fast}}\n"
                         "  - {name: w, persistentVolumeClaim: {claimName: bound}}\n"
                         "  - {name: x, persistentVolumeClaim: {claimName: nope}}\n");
  ResolveVolumes(pod, *table);
  REQUIRE(pod.resolved_volumes.size() == 3);
  const k8s::ResolvedVolume& v = pod.resolved_volumes[0];
  CHECK(v.claim_found);
  CHECK(v.delay_binding);
  CHECK_FALSE(v.provisionable);
  REQUIRE(v.candidates.size() == 2);  // not rox-only (modes), not slow (selector)
  CHECK(v.candidates[0].name == "small");
  CHECK(v.candidates[1].name == "big");
  const k8s::ResolvedVolume& w = pod.resolved_volumes[1];
  CHECK(w.bound);
  CHECK(w.pv_found);
  CHECK(w.in_use);
  REQUIRE(w.pv_topology.size() == 1);
  CHECK(w.pv_topology[0].key == "topology.kubernetes.io/zone");
  CHECK(w.pv_topology[0].values == std::vector<std::string>{"a", "b"});
  CHECK(w.attach_driver == "ebs.csi.aws.com");
  CHECK_FALSE(pod.resolved_volumes[2].claim_found);
}

TEST_CASE("a claim named twice in the snapshot is an error naming both") {
  DiagnosticSink diags;
  auto table = Load(R"(
- kind: PersistentVolumeClaim
  metadata: {name: c, namespace: ns}
- kind: PersistentVolumeClaim
  metadata: {name: c, namespace: ns}
)", diags);
  CHECK_FALSE(table);
  CHECK(RenderAll(diags).find("the PersistentVolumeClaim `ns/c` appears twice") != std::string::npos);
}
