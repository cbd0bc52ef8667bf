// libFuzzer: the bodies `policyc serve` reads (server/extender.h): the first
// byte picks the verb (filter, prioritize, preempt, bind), the rest is the
// body. Bind has no API here: it must still read the body and answer.
// Every answer must be JSON kube-scheduler can read: a 200 for filter (with
// `Error` when the body does not read), 200 or 400 for the others. The
// cluster has bound pods with UIDs and a budget (preempt's dry run sets
// them aside and puts them back); node objects sent may change it, so it
// is loaded again every 1,000 inputs (what it holds stays bounded).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "runtime/host/host.h"
#include "server/extender.h"

namespace {

const char kSnapshot[] = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"kubernetes.io/hostname": "a"}},
   "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]},
   "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"kubernetes.io/hostname": "b"}},
   "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default", "uid": "u1", "labels": {"app": "x"}},
   "spec": {"nodeName": "b", "priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
   "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "default", "uid": "u2"},
   "spec": {"nodeName": "b", "priorityClassName": "system-node-critical", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
   "status": {"phase": "Running"}},
  {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "x", "namespace": "default"},
   "spec": {"selector": {"matchLabels": {"app": "x"}}}, "status": {"disruptionsAllowed": 0}}]})";

struct World {
  policy::host::ClusterState state;
  std::unique_ptr<policy::host::Decisions> decisions;
  World() {
    policy::DiagnosticSink diags;
    if (!state.Load(std::make_shared<const policy::Source>("c.json", kSnapshot), diags)) __builtin_trap();
    auto engine = policy::engine::Engine::Create(policy::rt::DefaultProfile(), {}, {}, diags);
    if (!engine) __builtin_trap();
    decisions = std::make_unique<policy::host::Decisions>(std::move(engine));
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  static int runs = 0;
  if (++runs % 1000 == 0) {
    policy::DiagnosticSink diags;
    if (!world.state.Load(std::make_shared<const policy::Source>("c.json", kSnapshot), diags)) __builtin_trap();
  }
  if (size == 0) return 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  policy::server::Extender extender(*world.decisions, world.state);
  policy::server::Reply reply;
  switch (data[0] % 4) {
    case 0: reply = extender.Filter(body); break;
    case 1: reply = extender.Prioritize(body); break;
    case 2: reply = extender.Preempt(body); break;
    default: reply = extender.Bind(body); break;
  }
  bool always_200 = data[0] % 4 == 0 || data[0] % 4 == 3;  // filter and bind answer errors in the body
  if ((always_200 && reply.status != 200) || (reply.status != 200 && reply.status != 400)) __builtin_trap();
  if (reply.body.empty() || (reply.body[0] != '{' && reply.body[0] != '[')) __builtin_trap();
  return 0;
}
