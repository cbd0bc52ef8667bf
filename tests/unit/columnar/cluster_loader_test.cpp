#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "runtime/columnar/cluster_loader.h"

using namespace policy;
using namespace policy::rt;

namespace {

struct Loaded {
  std::unique_ptr<NodeTable> table;
  LoadReport report;
  DiagnosticSink diags;
};

std::unique_ptr<Loaded> Load(const Source& source) {
  auto l = std::make_unique<Loaded>();
  l->table = LoadCluster(source, l->diags, &l->report);
  return l;
}

}  // namespace

TEST_CASE("every real kubectl dump in shared/fixtures loads") {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(POLICYC_SHARED_DIR "/fixtures/real")) {
    std::string path = entry.path().string();
    if (!path.ends_with(".json") && !path.ends_with(".yaml")) continue;
    CAPTURE(path);
    std::string error;
    auto source = Source::FromFile(path, &error);
    REQUIRE(source);
    auto l = Load(*source);
    CHECK_MESSAGE(l->table != nullptr, RenderAll(l->diags));
    CHECK_FALSE(l->diags.HasErrors());
    ++files;
  }
  CHECK(files >= 11);
}

TEST_CASE("what the real GPU node list holds") {
  std::string error;
  auto source = Source::FromFile(POLICYC_SHARED_DIR "/fixtures/real/nodelist-microk8s-doks-kurl-gpu-t4.json", &error);
  REQUIRE(source);
  auto l = Load(*source);
  REQUIRE(l->table);
  const NodeTable& t = *l->table;
  CHECK(t.NodeCount() == 7);
  const ResourceColumn* gpu = t.Resource("nvidia.com/gpu");
  REQUIRE(gpu != nullptr);
  int64_t total = 0;
  for (int64_t v : gpu->allocatable) total += v;
  CHECK(total == 1);
  const LabelColumn* product = t.Label("nvidia.com/gpu.product");
  REQUIRE(product != nullptr);
  CHECK(t.pool().Get(product->value[1]) == "Tesla-T4");
}

TEST_CASE("tainted EKS nodes keep their taint") {
  std::string error;
  auto source = Source::FromFile(POLICYC_SHARED_DIR "/fixtures/real/nodelist-eks-arm64-tainted-honeycomb.json", &error);
  REQUIRE(source);
  auto l = Load(*source);
  REQUIRE(l->table);
  REQUIRE(l->table->TaintDictionary().size() == 1);
  CHECK(l->table->pool().Get(l->table->TaintDictionary()[0].key) == "type");
  CHECK(l->table->Taints(0).size() == 1);
  CHECK(l->table->Taints(1).size() == 1);
}

TEST_CASE("pods count on their nodes - finished - pending and orphaned pods do not") {
  Source s("c.yaml", R"(apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: a}
  status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}
- kind: Pod
  metadata: {name: run, namespace: x}
  spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
  status: {phase: Running}
- kind: Pod
  metadata: {name: done}
  spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: '3'}}}]}
  status: {phase: Succeeded}
- kind: Pod
  metadata: {name: pending}
  spec: {containers: [{name: c}]}
- kind: Pod
  metadata: {name: orphan}
  spec: {nodeName: gone, containers: [{name: c}]}
- kind: Namespace
  metadata: {name: x, labels: {team: t}}
- kind: Service
  metadata: {name: svc}
)");
  auto l = Load(s);
  REQUIRE_MESSAGE(l->table, RenderAll(l->diags));
  const NodeTable& t = *l->table;
  // A node without allocatable offers its capacity.
  CHECK(t.Resource("cpu")->allocatable[0] == 4000);
  CHECK(t.Resource("cpu")->requested[0] == 500);
  CHECK(l->report.pods_bound == 1);
  CHECK(l->report.pods_finished == 1);
  CHECK(l->report.pods_not_bound == 1);
  CHECK(l->report.pods_unknown_node == 1);
  // A Service is read (default spreading selects pods by it), not skipped.
  CHECK(l->report.selector_owners == 1);
  CHECK(l->report.read.skipped_kinds.empty());
  CHECK(t.NamespaceLabels("x").size() == 1);
  CHECK(t.NamespaceLabels("nope").empty());
  REQUIRE(l->diags.All().size() == 1);
  CHECK(l->diags.All()[0].severity == Severity::kWarning);
}

TEST_CASE("duplicate nodes and bad objects refuse the snapshot") {
  Source dup("d.yaml", "kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: a}\n");
  auto l = Load(dup);
  CHECK(l->table == nullptr);
  CHECK(Render(l->diags.All()[0]).starts_with("error[K0213]: d.yaml:4:1: the node `a` appears twice"));
  Source bad("b.yaml", "kind: Node\nmetadata: {name: a}\nspec: {taints: [{key: k, effect: Sometimes}]}\n");
  auto lb = Load(bad);
  CHECK(lb->table == nullptr);
  CHECK(Render(lb->diags.All()[0]).starts_with("error[K0216]: b.yaml:3:34: unknown effect `Sometimes`"));
  Source nameless("n.json", R"({"kind":"NodeList","items":[{"metadata":{}}]})");
  auto ln = Load(nameless);
  CHECK(ln->table == nullptr);
  CHECK(Render(ln->diags.All()[0]).starts_with("error[K0201]: n.json:1:41: the node has no name"));
}
