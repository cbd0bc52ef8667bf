// One node as `inspect --node` shows it (node_view.h).

#include "runtime/tooling/node_view.h"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/columnar/device_table.h"

namespace policy::tooling {
namespace {

std::string AttributeText(const k8s::DeviceAttribute& a) {
  switch (a.kind) {
    case k8s::DeviceAttribute::Kind::kInt: return fmt::format("{}", a.int_value);
    case k8s::DeviceAttribute::Kind::kBool: return a.bool_value ? "true" : "false";
    default: return a.text;
  }
}

std::vector<NodeDevice> Devices(const rt::NodeTable& table, rt::RowId row) {
  std::vector<NodeDevice> out;
  std::shared_ptr<const rt::DeviceTable> devices = table.Devices();
  if (!devices) return out;
  std::span<const uint32_t> local = devices->LocalDevices(row);
  for (uint32_t id : devices->DevicesOf(row)) {
    const rt::DeviceTable::Device& d = devices->Devices()[id];
    NodeDevice n;
    const rt::DeviceTable::Pool& pool = devices->Pools()[d.pool];
    n.driver = std::string(pool.driver);
    n.pool = std::string(pool.name);
    n.name = d.device->name;
    for (const auto& [name, value] : d.device->attributes) n.attributes.emplace_back(name, AttributeText(value));
    for (const auto& [name, q] : d.device->capacity) n.capacity.emplace_back(name, q.ToString());
    n.in_use = devices->InUse(id);
    n.shared = std::find(local.begin(), local.end(), id) == local.end();
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

std::optional<NodeView> ViewNode(const rt::NodeTable& table, std::string_view name) {
  std::optional<rt::RowId> found = table.FindNode(name);
  if (!found) return std::nullopt;
  rt::RowId row = *found;
  NodeView v;
  v.name = std::string(name);
  v.unschedulable = table.Unschedulable()[row] != 0;
  for (const rt::LabelColumn& column : table.Labels()) {
    if (uint32_t d = column.domain[row]) {
      v.labels.emplace_back(std::string(table.pool().Get(column.key)), std::string(table.pool().Get(column.value[d])));
    }
  }
  std::sort(v.labels.begin(), v.labels.end());
  for (uint32_t id : table.Taints(row)) {
    const rt::TaintEntry& e = table.TaintDictionary()[id];
    v.taints.push_back(fmt::format("{}={}:{}", table.pool().Get(e.key), table.pool().Get(e.value), k8s::ToString(e.effect)));
  }
  for (const rt::ResourceColumn& column : table.Resources()) {
    if (column.allocatable[row] == 0 && column.requested[row] == 0) continue;
    v.resources.push_back({std::string(table.pool().Get(column.name)), column.allocatable[row], column.requested[row]});
  }
  for (const rt::NodeTable::PodOnRow& p : table.PodsBoundTo(row)) v.pods.emplace_back(p.key);
  std::sort(v.pods.begin(), v.pods.end());
  v.devices = Devices(table, row);
  return v;
}

std::vector<std::pair<std::string, std::vector<NodeDevice>>> DevicesByNode(const rt::NodeTable& table) {
  std::vector<std::pair<std::string, std::vector<NodeDevice>>> out;
  if (!table.Devices()) return out;
  for (rt::RowId row : table.LiveRows()) {
    std::vector<NodeDevice> devices = Devices(table, row);
    if (!devices.empty()) out.emplace_back(std::string(table.NodeName(row)), std::move(devices));
  }
  return out;
}

}  // namespace policy::tooling
