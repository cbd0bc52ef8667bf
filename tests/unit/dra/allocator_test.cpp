// The structured allocator against facts of kube's shared allocator tests
// (k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
// allocator_testing.go; each case names the one it restates) and the
// DynamicResources PreFilter's claim lookup.

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include <fmt/format.h>

#include "runtime/columnar/cluster_loader.h"
#include "runtime/dra/allocator.h"

using namespace policy;

namespace {

struct World {
  std::unique_ptr<Source> source;
  std::unique_ptr<rt::NodeTable> table;
  k8s::Pod pod;
};

constexpr const char* kNodes = R"(
- {apiVersion: v1, kind: Node, metadata: {name: node-1, labels: {region: r1}}, status: {allocatable: {cpu: "8", pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-2, labels: {region: r2}}, status: {allocatable: {cpu: "8", pods: "110"}}}
- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: class-a}, spec: {selectors: [{cel: {expression: 'device.driver == "driver-a"'}}]}}
- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: class-b}, spec: {selectors: [{cel: {expression: 'device.driver == "driver-b"'}}]}}
)";

// A device line: name, memory, numa.
std::string Device(const char* name, const char* memory = "1Gi", int numa = 0) {
  return fmt::format("{{name: {}, attributes: {{numa: {{int: {}}}}}, capacity: {{memory: {{value: {}}}}}}}", name, numa, memory);
}

std::string Slice(const char* name, const char* node, const char* pool, const char* driver, const std::string& devices,
                  int generation = 1, int count = 1) {
  return fmt::format(
      "- {{apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {{name: {}}}, spec: {{driver: {}, nodeName: {}, "
      "pool: {{name: {}, generation: {}, resourceSliceCount: {}}}, devices: [{}]}}}}\n",
      name, driver, node, pool, generation, count, devices);
}

// A claim named claim-0 owned by nothing, with `devices` as its spec.devices (flow YAML).
std::string Claim(const std::string& devices, const char* name = "claim-0", const std::string& status = "{}") {
  return fmt::format(
      "- {{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {{name: {}, namespace: default}}, spec: {{devices: {}}}, "
      "status: {}}}\n",
      name, devices, status);
}

World Make(const std::string& objects, std::vector<std::string> claims = {"claim-0"}) {
  World w;
  w.source = std::make_unique<Source>("world.yaml", std::string(kNodes) + objects);
  DiagnosticSink diags;
  w.table = rt::LoadCluster(*w.source, diags);
  REQUIRE_MESSAGE(w.table != nullptr, RenderAll(diags));
  w.pod.name = "p";
  w.pod.uid = "uid-p";
  for (const std::string& c : claims) w.pod.resource_claims.push_back({c, c, ""});
  return w;
}

// "fits", "cannot", "unavailable" or "error: ...", with the chosen devices.
std::string On(World& w, const char* node) {
  dra::Allocator allocator(w.pod, *w.table);
  if (!allocator.Claims().problem.empty()) return "prefilter: " + allocator.Claims().problem;
  std::optional<rt::RowId> row;
  for (rt::RowId r = 0; r < w.table->RowCount(); ++r) {
    if (w.table->NodeName(r) == node) row = r;
  }
  REQUIRE(row);
  dra::NodeAnswer a = allocator.Check(*row);
  // The verdict alone (the filter's column, with its fast paths) agrees with the full search.
  dra::Allocator other(w.pod, *w.table);
  CHECK(static_cast<int>(other.FitOf(*row)) == static_cast<int>(a.fit));
  switch (a.fit) {
    case dra::Fit::kFits: {
      std::string out = "fits";
      for (const dra::Chosen& c : a.devices) out += fmt::format(" {}={}/{}", c.request, c.slice->pool.name, c.device->name);
      return out;
    }
    case dra::Fit::kCannotAllocate: return "cannot";
    case dra::Fit::kNotAvailable: return "unavailable";
    case dra::Fit::kError: return "error: " + a.error;
  }
  return "?";
}

const std::string kOneRequest = "{requests: [{name: req-0, exactly: {deviceClassName: class-a}}]}";

}  // namespace

TEST_CASE("simple and other-node: a node-local device of the class") {
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")) + Claim(kOneRequest));
  CHECK(On(w, "node-1") == "fits req-0=pool-1/device-1");
  CHECK(On(w, "node-2") == "cannot");
  World other = Make(Slice("slice-1", "node-1", "pool-1", "driver-b", Device("device-1")) +
                     Slice("slice-2", "node-2", "pool-2", "driver-a", Device("device-1")) + Claim(kOneRequest));
  CHECK(On(other, "node-1") == "cannot");
  CHECK(On(other, "node-2") == "fits req-0=pool-2/device-1");
}

TEST_CASE("small-and-large-backtrack-requests: the first choice is undone") {
  std::string claim = Claim(R"({requests: [
      {name: req-0, exactly: {deviceClassName: class-a, selectors: [{cel: {expression: 'device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0'}}]}},
      {name: req-1, exactly: {deviceClassName: class-a, selectors: [{cel: {expression: 'device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0'}}]}}]})");
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-2", "2Gi") + ", " + Device("device-1", "1Gi")) + claim);
  CHECK(On(w, "node-1") == "fits req-0=pool-1/device-1 req-1=pool-1/device-2");
}

TEST_CASE("devices-split-across-different-slices and not-enough-suitable-devices") {
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")) +
                 Slice("slice-2", "node-1", "pool-2", "driver-a", Device("device-1")) +
                 Claim("{requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}]}"));
  CHECK(On(w, "node-1") == "fits req-0=pool-1/device-1 req-0=pool-2/device-1");
  World few = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")) +
                   Claim("{requests: [{name: req-0, exactly: {deviceClassName: class-a}}, {name: req-1, exactly: {deviceClassName: class-a}}]}"));
  CHECK(On(few, "node-1") == "cannot");
}

TEST_CASE("all-devices-many and all-devices-of-the-incomplete-pool") {
  std::string all = Claim("{requests: [{name: req-0, exactly: {deviceClassName: class-a, allocationMode: All}}]}");
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")) +
                 Slice("slice-2", "node-1", "pool-2", "driver-a", Device("device-1")) + all);
  CHECK(On(w, "node-1") == "fits req-0=pool-1/device-1 req-0=pool-2/device-1");
  World incomplete = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1"), 1, 2) + all);
  CHECK(On(incomplete, "node-1") ==
        "error: claim default/claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated");
}

TEST_CASE("a device another claim holds is not free but admin access may share it") {
  std::string holder = Claim(kOneRequest, "holder",
                             "{allocation: {devices: {results: [{request: req-0, driver: driver-a, pool: pool-1, device: device-1}]}}}");
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")) + holder + Claim(kOneRequest));
  CHECK(On(w, "node-1") == "cannot");
  World admin = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")) + holder +
                     Claim("{requests: [{name: req-0, exactly: {deviceClassName: class-a, adminAccess: true}}]}"));
  CHECK(On(admin, "node-1") == "fits req-0=pool-1/device-1");
}

TEST_CASE("matchAttribute keeps the requests' devices on one NUMA node") {
  std::string claim = Claim(R"({requests: [{name: gpu, exactly: {deviceClassName: class-a}}, {name: nic, exactly: {deviceClassName: class-b}}],
      constraints: [{matchAttribute: "topology.example.com/numa"}]})");
  std::string devices_a = "{name: gpu-0, attributes: {\"topology.example.com/numa\": {int: 0}}}, "
                          "{name: gpu-1, attributes: {\"topology.example.com/numa\": {int: 1}}}";
  std::string devices_b = "{name: nic-1, attributes: {\"topology.example.com/numa\": {int: 1}}}";
  World w = Make(Slice("slice-a", "node-1", "pool-a", "driver-a", devices_a) +
                 Slice("slice-b", "node-1", "pool-b", "driver-b", devices_b) + claim);
  CHECK(On(w, "node-1") == "fits gpu=pool-a/gpu-1 nic=pool-b/nic-1");
}

TEST_CASE("firstAvailable takes the first alternative that can be allocated") {
  std::string claim = Claim(R"({requests: [{name: req-0, firstAvailable: [
      {name: big, deviceClassName: class-a, selectors: [{cel: {expression: 'device.capacity["driver-a"].memory.compareTo(quantity("80Gi")) >= 0'}}]},
      {name: small, deviceClassName: class-a, count: 2}]}]})");
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1") + ", " + Device("device-2")) + claim);
  CHECK(On(w, "node-1") == "fits req-0/small=pool-1/device-1 req-0/small=pool-1/device-2");
}

TEST_CASE("network-attached slices reach the nodes their selector picks") {
  std::string slice = "- {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: shared}, spec: {driver: driver-a, "
                      "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: region, operator: In, values: [r2]}]}]}, "
                      "pool: {name: fabric, generation: 1, resourceSliceCount: 1}, devices: [{name: dev-0}]}}\n";
  World w = Make(slice + Claim(kOneRequest));
  CHECK(On(w, "node-1") == "cannot");
  CHECK(On(w, "node-2") == "fits req-0=fabric/dev-0");
}

TEST_CASE("a selector that fails at run time is the allocator's error") {
  std::string claim = Claim(R"({requests: [{name: req-0, exactly: {deviceClassName: class-a, selectors: [{cel: {expression: 'device.attributes["driver-a"].missing == 1'}}]}}]})");
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")) + claim);
  CHECK(On(w, "node-1") == "error: claim default/claim-0: selector #0: CEL runtime error: no such key: missing");
}

TEST_CASE("the PreFilter's lookups in kube's words") {
  World missing = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", Device("device-1")), {"nope"});
  CHECK(On(missing, "node-1") == "prefilter: resourceclaim.resource.k8s.io \"nope\" not found");
  World no_class = Make(Claim("{requests: [{name: req-0, exactly: {deviceClassName: class-z}}]}"));
  CHECK(On(no_class, "node-1") == "prefilter: request req-0: device class class-z does not exist");
  World pending = Make("");
  pending.pod.resource_claims = {{"gpu", "", "gpu-template"}};
  CHECK(On(pending, "node-1") == "prefilter: pod \"default/p\": ResourceClaim not created yet");
}

TEST_CASE("an allocated claim pins the pod to its node selector") {
  std::string claim = Claim(kOneRequest, "claim-0",
                            "{allocation: {devices: {results: [{request: req-0, driver: driver-a, pool: pool-1, device: device-1}]}, "
                            "nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-2]}]}]}}}");
  World w = Make(claim);
  CHECK(On(w, "node-1") == "unavailable");
  CHECK(On(w, "node-2") == "fits");
}

TEST_CASE("the search stops at its work bound instead of running away") {
  // 24 identical devices, a claim for 12 of them plus one more no device
  // matches: without a bound the search would try every 12-subset.
  std::string devices;
  for (int i = 0; i < 24; ++i) devices += (i ? ", " : "") + Device(fmt::format("d{}", i).c_str());
  std::string claim = Claim(R"({requests: [{name: many, exactly: {deviceClassName: class-a, count: 12}},
      {name: none, exactly: {deviceClassName: class-a, selectors: [{cel: {expression: 'device.capacity["driver-a"].memory.compareTo(quantity("1Ti")) >= 0'}}]}}]})");
  World w = Make(Slice("slice-1", "node-1", "pool-1", "driver-a", devices) + claim);
  CHECK(On(w, "node-1") == "error: timed out trying to allocate devices");
}

TEST_CASE("devices claims take and give back: the table brought up to date equals one built again") {
  // Two nodes of four devices each, pool names with a slash (they may have one).
  std::string devices = Device("d0") + ", " + Device("d1") + ", " + Device("d2") + ", " + Device("d3");
  World w = Make(Slice("s1", "node-1", "pool/one", "driver-a", devices) + Slice("s2", "node-2", "pool/two", "driver-a", devices));
  auto expect_same = [&] {
    std::shared_ptr<const rt::DeviceTable> kept = w.table->Devices();
    rt::DeviceTable rebuilt(w.table->Storage(), *w.table);
    REQUIRE(kept->Devices().size() == rebuilt.Devices().size());
    size_t in_use = 0;
    for (size_t i = 0; i < rebuilt.Devices().size(); ++i) {
      CHECK(kept->InUse(i) == rebuilt.InUse(i));
      in_use += rebuilt.InUse(i);
    }
    return in_use;
  };
  CHECK(expect_same() == 0);
  auto allocated = [](int i, const char* pool, const char* device, bool admin = false) {
    k8s::ResourceClaim c;
    c.name = fmt::format("c{}", i);
    c.allocation.emplace();
    c.allocation->devices.push_back({"req", "driver-a", pool, device, admin});
    return c;
  };
  const std::shared_ptr<const rt::DeviceTable> first = w.table->Devices();
  w.table->SetResourceClaim(allocated(0, "pool/one", "d0"));
  w.table->SetResourceClaim(allocated(1, "pool/one", "d0"));  // two claims on one device: held until both let go
  w.table->SetResourceClaim(allocated(2, "pool/two", "d3", /*admin=*/true));  // admin access holds nothing
  CHECK(expect_same() == 1);
  CHECK(first->InUse(0) == false);  // a reader's table stays as it was
  CHECK(w.table->RemoveResourceClaim("default", "c0"));
  CHECK(expect_same() == 1);
  k8s::ResourceClaim moved = allocated(1, "pool/two", "d1");  // c1 now holds another device
  w.table->SetResourceClaim(moved);
  CHECK(expect_same() == 1);
  CHECK(w.table->Devices()->InUse(5));  // node-2's d1
  moved.allocation.reset();  // deallocated
  w.table->SetResourceClaim(moved);
  CHECK(expect_same() == 0);
  CHECK_FALSE(w.table->RemoveResourceClaim("default", "nope"));
  // Any other storage change builds the table again, and it still agrees.
  w.table->SetResourceClaim(allocated(3, "pool/one", "d2"));
  w.table->MutableStorage();
  CHECK(expect_same() == 1);
  // So does a claim change past the log's bound (65,536 devices logged).
  k8s::ResourceClaim flapping = allocated(4, "pool/two", "d0");
  for (int i = 0; i < 40000; ++i) {
    w.table->SetResourceClaim(flapping);
    k8s::ResourceClaim released = flapping;
    released.allocation.reset();
    w.table->SetResourceClaim(released);
  }
  w.table->SetResourceClaim(allocated(4, "pool/two", "d2"));
  CHECK(expect_same() == 2);
}

TEST_CASE("a pod's claims answer again only on the nodes whose devices claims took since") {
  // Two nodes of two devices each and a network-attached device both reach.
  std::string devices = Device("d0") + ", " + Device("d1");
  std::string shared = "- {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: fabric}, spec: {driver: driver-b, "
                       "allNodes: true, pool: {name: fabric, generation: 1, resourceSliceCount: 1}, devices: [{name: f0}]}}\n";
  // claim-0 and claim-1 alike but for their names and where they were written; claim-2 asks for two.
  std::string claims = Claim(kOneRequest) + Claim(kOneRequest, "claim-1") +
                       Claim(R"({requests: [{name: req-0, exactly: {deviceClassName: class-a, count: 2}}]})", "claim-2");
  World w = Make(Slice("s1", "node-1", "pool-1", "driver-a", devices) + Slice("s2", "node-2", "pool-2", "driver-a", devices) +
                 shared + claims);
  k8s::Pod sibling = w.pod, two = w.pod;
  sibling.resource_claims = {{"claim-1", "claim-1", ""}};
  two.resource_claims = {{"claim-2", "claim-2", ""}};
  const dra::FitVersion before = dra::Allocator(w.pod, *w.table).Version();
  CHECK(dra::Allocator(sibling, *w.table).Version() == before);  // names are not what they answer by
  std::vector<rt::RowId> rows;
  CHECK_FALSE(dra::Allocator(two, *w.table).RowsMoved(before, rows));  // other claims: every row

  auto allocated = [](const char* name, const char* driver, const char* pool, const char* device) {
    k8s::ResourceClaim c;
    c.name = name;
    c.allocation.emplace();
    c.allocation->devices.push_back({"req", driver, pool, device, false});
    return c;
  };
  w.table->SetResourceClaim(allocated("held-1", "driver-a", "pool-2", "d0"));
  w.table->SetResourceClaim(allocated("held-2", "driver-a", "pool-2", "d1"));
  dra::Allocator after(sibling, *w.table);
  rows.clear();
  REQUIRE(after.RowsMoved(before, rows));
  for (rt::RowId row : rows) CHECK(w.table->NodeName(row) == "node-2");
  CHECK_FALSE(rows.empty());
  // node-2's devices are taken; node-1 answers as before.
  CHECK(after.FitOf(*w.table->FindNode("node-1")) == dra::Fit::kFits);

  // A device every node reaches moves every row; so does a table built again.
  const dra::FitVersion middle = after.Version();
  w.table->SetResourceClaim(allocated("held-3", "driver-b", "fabric", "f0"));
  rows.clear();
  CHECK_FALSE(dra::Allocator(sibling, *w.table).RowsMoved(middle, rows));
  const dra::FitVersion last = dra::Allocator(sibling, *w.table).Version();
  w.table->MutableStorage();
  CHECK_FALSE(dra::Allocator(sibling, *w.table).RowsMoved(last, rows));
  // Nothing moved: no row.
  const dra::FitVersion now = dra::Allocator(sibling, *w.table).Version();
  rows.clear();
  CHECK(dra::Allocator(w.pod, *w.table).RowsMoved(now, rows));
  CHECK(rows.empty());
}
