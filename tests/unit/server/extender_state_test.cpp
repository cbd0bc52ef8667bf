// What the extender keeps between calls (the rejected nodes' words for a
// template, the rows of the last list of names) follows every change of the
// cluster: after each event the answer is what a fresh server says.

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "runtime/host/host.h"
#include "server/extender.h"

namespace {

const char kSnapshot[] = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"kubernetes.io/hostname": "a"}},
   "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"kubernetes.io/hostname": "b"}},
   "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}]})";

const char kFilter[] = R"({"Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}, "NodeNames": ["a", "b", "c"]})";

struct Server {
  policy::host::ClusterState state;
  std::unique_ptr<policy::host::Decisions> decisions;
  explicit Server(std::string snapshot = kSnapshot) {
    policy::DiagnosticSink diags;
    REQUIRE(state.Load(std::make_shared<const policy::Source>("c.json", std::move(snapshot)), diags));
    decisions = std::make_unique<policy::host::Decisions>(
        policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags));
    REQUIRE(decisions != nullptr);
  }
  std::string Filter() { return policy::server::Extender(*decisions, state).Filter(kFilter).body; }
  void Apply(const std::string& event) {
    policy::DiagnosticSink diags;
    REQUIRE(state.Apply(policy::Source("event", event), diags).has_value());
  }
};

}  // namespace

TEST_CASE("the rejected nodes' words follow each change of the cluster") {
  Server kept;
  std::string first = kept.Filter();
  CHECK(first.find(R"("a": "Insufficient cpu")") != std::string::npos);
  CHECK(first.find(R"("NodeNames": ["b"])") != std::string::npos);
  CHECK(kept.Filter() == first);  // the same table: the same words

  // Node a becomes unschedulable too: its words change.
  kept.Apply(R"({"type": "MODIFIED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a",
    "labels": {"kubernetes.io/hostname": "a"}}, "spec": {"unschedulable": true},
    "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}}})");
  std::string second = kept.Filter();
  CHECK(second.find("unschedulable") != std::string::npos);
  // A pod fills node b: b is rejected now, with words of its own.
  kept.Apply(R"({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
    "spec": {"nodeName": "b", "containers": [{"name": "c", "resources": {"requests": {"cpu": "7"}}}]},
    "status": {"phase": "Running"}}})");
  std::string third = kept.Filter();
  CHECK(third.find(R"("b": "Insufficient cpu")") != std::string::npos);
  CHECK(third.find(R"("NodeNames": [])") != std::string::npos);

  // A fresh server on the same state answers the same.
  Server fresh(R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"kubernetes.io/hostname": "a"}},
     "spec": {"unschedulable": true}, "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"kubernetes.io/hostname": "b"}},
     "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
     "spec": {"nodeName": "b", "containers": [{"name": "c", "resources": {"requests": {"cpu": "7"}}}]},
     "status": {"phase": "Running"}}]})");
  CHECK(fresh.Filter() == third);
}

TEST_CASE("the same list of names resolves again when nodes come and go") {
  Server kept;
  CHECK(kept.Filter().find(R"("c": "node(s) not found in policyc's cluster state")") != std::string::npos);
  kept.Apply(R"({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c",
    "labels": {"kubernetes.io/hostname": "c"}}, "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}})");
  std::string joined = kept.Filter();
  CHECK(joined.find(R"("NodeNames": ["b", "c"])") != std::string::npos);
  kept.Apply(R"({"type": "DELETED", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}}})");
  std::string left = kept.Filter();
  CHECK(left.find(R"("NodeNames": ["c"])") != std::string::npos);
  CHECK(left.find(R"("b": "node(s) not found in policyc's cluster state")") != std::string::npos);
}
