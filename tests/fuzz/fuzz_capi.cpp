// libFuzzer: the C ABI's entry points that read a host's bytes, through
// include/policyc.h. The first byte picks one: an engine configuration, a
// snapshot, a watch event, a pod to decide (and explain), or a pod to
// assume. Whatever it was given, the cluster must still answer a decision
// afterwards; a status other than OK must come with a message.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "policyc.h"

namespace {

const char kSnapshot[] = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"kubernetes.io/hostname": "a", "topology.kubernetes.io/zone": "z1"}},
   "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]},
   "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"}}},
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"kubernetes.io/hostname": "b", "topology.kubernetes.io/zone": "z2"}},
   "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}},
   "spec": {"nodeName": "b", "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}]})";

const char kPod[] = R"({"kind": "Pod", "metadata": {"name": "q"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})";

void Expect(bool ok) {
  if (!ok) __builtin_trap();
}

void Checked(policyc_status s) { Expect(s == POLICYC_OK || std::strlen(policyc_last_error()) > 0); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static policyc_engine* engine = [] {
    policyc_engine* e = nullptr;
    Expect(policyc_engine_new(POLICYC_ABI_VERSION, nullptr, 0, &e) == POLICYC_OK);
    return e;
  }();
  if (size == 0) return 0;
  const char* text = reinterpret_cast<const char*>(data) + 1;
  size_t n = size - 1;
  policyc_cluster* cluster = nullptr;
  Expect(policyc_cluster_new(&cluster) == POLICYC_OK);
  Expect(policyc_cluster_load(cluster, kSnapshot, sizeof(kSnapshot) - 1) == POLICYC_OK);
  switch (data[0] % 5) {
    case 0: {
      policyc_engine* e = nullptr;
      policyc_status s = policyc_engine_new(POLICYC_ABI_VERSION, text, n, &e);
      Checked(s);
      Expect((s == POLICYC_OK) == (e != nullptr));
      policyc_engine_free(e);
      break;
    }
    case 1: Checked(policyc_cluster_load(cluster, text, n)); break;
    case 2: Checked(policyc_cluster_apply(cluster, text, n)); break;
    case 3: {
      policyc_view* view = nullptr;
      Expect(policyc_cluster_view(cluster, &view) == POLICYC_OK);
      policyc_result* r = nullptr;
      policyc_status s = policyc_decide(engine, view, text, n, nullptr, &r);
      Checked(s);
      if (s == POLICYC_OK) {
        const char* json = nullptr;
        size_t len = 0;
        Expect(policyc_result_explain_json(r, &json, &len) == POLICYC_OK && len > 0);
      }
      policyc_result_free(r);
      policyc_view_free(view);
      break;
    }
    default: Checked(policyc_cluster_assume(cluster, text, n, "a")); break;
  }
  policyc_view* view = nullptr;  // the cluster still answers
  Expect(policyc_cluster_view(cluster, &view) == POLICYC_OK);
  policyc_result* r = nullptr;
  Expect(policyc_decide(engine, view, kPod, sizeof(kPod) - 1, nullptr, &r) == POLICYC_OK);
  policyc_result_free(r);
  policyc_view_free(view);
  policyc_cluster_free(cluster);
  return 0;
}
