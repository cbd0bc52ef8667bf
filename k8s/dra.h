#pragma once
/// Dynamic Resource Allocation objects (`resource.k8s.io/v1`, GA in
/// Kubernetes 1.34): the fields kube-scheduler's DynamicResources plugin and
/// its structured allocator read, with the API's defaults.
///
/// A CEL selector keeps its expression and where it was written
/// (`file:line:col`, as text, so it survives the snapshot cache); it is
/// compiled where it is used (compiler/cel), as kube compiles it when it
/// allocates, not when the object is stored.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/objects.h"

namespace policy::k8s {

/// One `selectors[].cel.expression`.
struct CelSelector {
  std::string expression;
  /// Where the expression's first character was written (line and column
  /// from 1; 0 when unknown), so that a position inside it can be named.
  std::string file;
  uint32_t line = 0, column = 0;
  /// `file:line:col`, or empty when unknown.
  std::string Where() const;
  bool operator==(const CelSelector&) const = default;
};

/// A device attribute's value: exactly one of int, bool, string, version.
struct DeviceAttribute {
  enum class Kind : uint8_t { kInt, kBool, kString, kVersion };
  Kind kind = Kind::kString;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  ///< the string, or the version as written
  bool operator==(const DeviceAttribute&) const = default;
};

/// A device a driver publishes. Attribute and capacity names are fully
/// qualified (`domain/name`): a name without a domain is in the driver's.
struct Device {
  std::string name;
  std::vector<std::pair<std::string, DeviceAttribute>> attributes;
  std::vector<std::pair<std::string, Quantity>> capacity;
  bool operator==(const Device&) const = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t slice_count = 0;  ///< resourceSliceCount
  bool operator==(const ResourcePool&) const = default;
};

/// A ResourceSlice: one driver's devices of one pool, available on one node
/// (`nodeName`), on the nodes a selector picks (`nodeSelector`) or on all.
struct ResourceSlice {
  std::string name;
  std::string driver;
  ResourcePool pool;
  std::string node_name;
  std::optional<std::vector<NodeSelectorTerm>> node_selector;
  bool all_nodes = false;
  std::vector<Device> devices;
  bool operator==(const ResourceSlice&) const = default;
};

struct DeviceClass {
  std::string name;
  std::vector<CelSelector> selectors;
  bool operator==(const DeviceClass&) const = default;
};

enum class AllocationMode : uint8_t { kExactCount, kAll };

/// `exactly`, or one entry of `firstAvailable`.
struct DeviceSubRequest {
  std::string name;  ///< the request's own name for `exactly`
  std::string class_name;
  std::vector<CelSelector> selectors;
  AllocationMode mode = AllocationMode::kExactCount;
  int64_t count = 1;  ///< ExactCount's count (defaulted to 1)
  bool admin_access = false;
  bool operator==(const DeviceSubRequest&) const = default;
};

struct DeviceRequest {
  std::string name;
  /// `exactly` (one entry, named as the request) or `firstAvailable` (the
  /// alternatives in order; the first that can be allocated wins).
  std::vector<DeviceSubRequest> alternatives;
  bool first_available = false;
  bool operator==(const DeviceRequest&) const = default;
};

/// `constraints[]`: the requests (all when empty) whose devices must share
/// the value of `matchAttribute`.
struct DeviceConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;  ///< fully qualified
  bool operator==(const DeviceConstraint&) const = default;
};

struct DeviceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  bool operator==(const DeviceClaimSpec&) const = default;
};

/// One device of `status.allocation.devices.results`.
struct DeviceResult {
  std::string request;  ///< `req` or `req/sub` for firstAvailable
  std::string driver, pool, device;
  bool admin_access = false;
  bool operator==(const DeviceResult&) const = default;
};

struct AllocationResult {
  std::vector<DeviceResult> devices;
  /// Where the allocated devices are; absent: on every node.
  std::optional<std::vector<NodeSelectorTerm>> node_selector;
  bool operator==(const AllocationResult&) const = default;
};

/// `status.reservedFor[]`.
struct ClaimConsumer {
  std::string resource, name, uid;
  bool operator==(const ClaimConsumer&) const = default;
};

struct ResourceClaim {
  std::string name;
  std::string namespace_name = "default";
  std::string uid;
  std::string controller_kind, controller_uid;  ///< the controlling owner reference
  bool deleting = false;
  DeviceClaimSpec spec;
  std::optional<AllocationResult> allocation;
  std::vector<ClaimConsumer> reserved_for;
  bool operator==(const ResourceClaim&) const = default;
};

struct ResourceClaimTemplate {
  std::string name;
  std::string namespace_name = "default";
  DeviceClaimSpec spec;
  bool operator==(const ResourceClaimTemplate&) const = default;
};

/// The name a ResourceSlice attribute or capacity `name` has in `driver`'s
/// devices: `name` when it has a domain, else `driver/name`.
std::string QualifiedName(std::string_view name, std::string_view driver);

}  // namespace policy::k8s
