#pragma once
/// One node as `policyc inspect --node NAME` shows it: labels, taints,
/// resources (allocatable, requested), the pods bound to it, and the devices
/// Dynamic Resource Allocation drivers publish for it (ResourceSlices),
/// each with its attributes, capacity and whether an allocated claim holds it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/columnar/node_table.h"

namespace policy::tooling {

struct NodeDevice {
  std::string driver, pool, name;
  std::vector<std::pair<std::string, std::string>> attributes;  ///< qualified name -> value as written
  std::vector<std::pair<std::string, std::string>> capacity;    ///< qualified name -> quantity
  bool in_use = false;  ///< an allocated ResourceClaim holds it
  bool shared = false;  ///< from a slice for several nodes (nodeSelector, allNodes)
};

struct NodeView {
  std::string name;
  bool unschedulable = false;
  std::vector<std::pair<std::string, std::string>> labels;  ///< by key
  std::vector<std::string> taints;                          ///< `key=value:Effect`
  struct Resource {
    std::string name;
    int64_t allocatable = 0, requested = 0;  ///< kube-scheduler's units (milli-cpu)
  };
  std::vector<Resource> resources;
  std::vector<std::string> pods;  ///< namespace/name, bound to it
  std::vector<NodeDevice> devices;
};

/// The node named `name` of `table`; nullopt when there is none.
std::optional<NodeView> ViewNode(const rt::NodeTable& table, std::string_view name);

/// The devices of every live node (DeviceTable::DevicesOf), by node name in
/// table order; nodes without devices left out.
std::vector<std::pair<std::string, std::vector<NodeDevice>>> DevicesByNode(const rt::NodeTable& table);

}  // namespace policy::tooling
