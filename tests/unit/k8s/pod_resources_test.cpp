#include <doctest/doctest.h>

#include "k8s/pod_resources.h"

using namespace policy::k8s;

namespace {

Container C(const char* cpu, const char* memory, bool sidecar = false) {
  Container c;
  if (cpu) c.requests.emplace_back("cpu", *Quantity::Parse(cpu));
  if (memory) c.requests.emplace_back("memory", *Quantity::Parse(memory));
  c.restartable = sidecar;
  return c;
}

int64_t Milli(const ResourceList& list, const char* name) {
  const Quantity* q = Find(list, name);
  return q ? q->MilliValue() : -1;
}

}  // namespace

TEST_CASE("containers add up - init containers take the max") {
  Pod pod;
  pod.containers = {C("100m", "1Gi"), C("200m", nullptr)};
  pod.init_containers = {C("500m", nullptr), C("50m", "2Gi")};
  ResourceList r = PodRequests(pod);
  CHECK(Milli(r, "cpu") == 500);
  CHECK(Find(r, "memory")->Value() == 2LL << 30);
}

TEST_CASE("sidecars run beside the app and beside later init containers") {
  // Kubernetes' own example (KEP-753): sidecar 1 cpu, init 2 cpu after it, app 3 cpu.
  Pod pod;
  pod.init_containers = {C("1", nullptr, true), C("2", nullptr)};
  pod.containers = {C("3", nullptr)};
  CHECK(Milli(PodRequests(pod), "cpu") == 4000);  // max(3 + 1, 2 + 1)
  // An init container larger than app + sidecars wins.
  pod.init_containers = {C("1", nullptr, true), C("5", nullptr)};
  CHECK(Milli(PodRequests(pod), "cpu") == 6000);  // max(3 + 1, 5 + 1)
  // A sidecar after the init container does not run beside it.
  pod.init_containers = {C("5", nullptr), C("1", nullptr, true)};
  CHECK(Milli(PodRequests(pod), "cpu") == 5000);  // max(3 + 1, 5)
}

TEST_CASE("overhead is added last") {
  Pod pod;
  pod.containers = {C("1", "1Gi")};
  pod.overhead = {{"cpu", *Quantity::Parse("250m")}};
  CHECK(Milli(PodRequests(pod), "cpu") == 1250);
}

TEST_CASE("non-zero requests default cpu and memory per container") {
  Pod pod;
  pod.containers = {C(nullptr, nullptr), C("1", nullptr)};
  NonZeroRequests nz = PodNonZeroRequests(pod);
  CHECK(nz.milli_cpu == 1100);
  CHECK(nz.memory == 2 * kDefaultMemoryRequest);
  CHECK(Find(PodRequests(pod), "memory") == nullptr);
  Pod empty;
  CHECK(PodNonZeroRequests(empty).milli_cpu == 0);
}

TEST_CASE("explicit zero requests stay zero even for scoring") {
  Pod pod;
  pod.containers = {C("0", "0")};
  NonZeroRequests nz = PodNonZeroRequests(pod);
  CHECK(nz.milli_cpu == 0);
  CHECK(nz.memory == 0);
}

TEST_CASE("a summed request keeps the first quantity's format as kube's addResourceList does") {
  // kube copies the first container's quantity and adds the rest to it, so
  // two 512Mi containers print as 1Gi, not as 1073741824.
  Pod pod;
  pod.containers = {C("250m", "512Mi"), C("250m", "512Mi")};
  ResourceList r = PodRequests(pod);
  CHECK(Find(r, "memory")->ToString() == "1Gi");
  CHECK(Find(r, "cpu")->ToString() == "500m");
}

TEST_CASE("pod-level requests replace the containers' cpu and memory - overhead still added") {
  Pod pod;
  pod.containers = {C("500m", "256Mi"), C("500m", nullptr)};
  pod.containers[0].requests.emplace_back("nvidia.com/gpu", *Quantity::Parse("1"));
  pod.pod_requests = {{"cpu", *Quantity::Parse("3")}};
  pod.overhead = {{"cpu", *Quantity::Parse("250m")}};
  ResourceList r = PodRequests(pod);
  CHECK(Milli(r, "cpu") == 3250);                      // pod level + overhead
  CHECK(Find(r, "memory")->Value() == 256LL << 20);   // not set at the pod level: the containers'
  CHECK(Milli(r, "nvidia.com/gpu") == 1000);           // not a pod-level resource
  CHECK(Milli(AggregateContainerRequests(pod), "cpu") == 1000);
  // Only cpu, memory and hugepages-* count at the pod level.
  CHECK(IsPodLevelResource("hugepages-2Mi"));
  CHECK_FALSE(IsPodLevelResource("ephemeral-storage"));
  Pod other;
  other.containers = {C("500m", nullptr)};
  other.pod_requests = {{"ephemeral-storage", *Quantity::Parse("1Gi")}};
  CHECK(Milli(PodRequests(other), "cpu") == 500);
}

TEST_CASE("non-zero requests with pod-level resources default only what nothing sets") {
  Pod pod;
  pod.containers = {C(nullptr, nullptr), C(nullptr, nullptr)};
  pod.pod_requests = {{"cpu", *Quantity::Parse("2")}};
  NonZeroRequests nz = PodNonZeroRequests(pod);
  CHECK(nz.milli_cpu == 2000);                          // the pod level, not 2 x 100m
  CHECK(nz.memory == 2 * kDefaultMemoryRequest);        // nothing sets memory: each container's default
  // A container requesting memory while pod-level requests are set: the
  // other container gets no default for it.
  pod.containers[0] = C(nullptr, "64Mi");
  CHECK(PodNonZeroRequests(pod).memory == 64LL << 20);
}

TEST_CASE("in-place resize: a container counts at the most of spec and actuated and allocated") {
  Pod pod;
  pod.containers = {C("1", "128Mi")};
  Container& c = pod.containers[0];
  // Without `resources` in its status the spec alone counts.
  c.allocated = {{"cpu", *Quantity::Parse("2")}};
  CHECK(Milli(PodRequests(pod), "cpu") == 1000);
  c.status_resources = true;
  CHECK(Milli(PodRequests(pod), "cpu") == 2000);
  c.status_requests = {{"cpu", *Quantity::Parse("3")}};
  CHECK(Milli(PodRequests(pod), "cpu") == 3000);
  // An infeasible resize: the spec no longer counts.
  c.requests = {{"cpu", *Quantity::Parse("8")}};
  CHECK(Milli(PodRequests(pod), "cpu") == 8000);
  pod.resize_infeasible = true;
  CHECK(Milli(PodRequests(pod), "cpu") == 3000);
  // Init containers read their status only as sidecars.
  Pod init;
  init.init_containers = {C("1", nullptr)};
  init.init_containers[0].status_resources = true;
  init.init_containers[0].status_requests = {{"cpu", *Quantity::Parse("4")}};
  CHECK(Milli(PodRequests(init), "cpu") == 1000);
  init.init_containers[0].restartable = true;
  CHECK(Milli(PodRequests(init), "cpu") == 4000);
}
