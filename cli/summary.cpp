#include "cli/summary.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "k8s/quantity.h"
#include "support/json_writer.h"

namespace policy::cli {

namespace {



constexpr const char* kTopologyKeys[] = {
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "node.kubernetes.io/instance-type",
    "nvidia.com/gpu.product",
};

void SortByNodes(std::vector<ClusterSummary::Count>& counts) {
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.nodes != b.nodes ? a.nodes > b.nodes : a.name < b.name;
  });
}

}  // namespace

ClusterSummary Summarize(const std::string& file, const rt::NodeTable& table, const rt::LoadReport& report) {
  ClusterSummary s;
  s.file = file;
  s.report = report;
  s.nodes = table.NodeCount();
  auto live = table.Live();
  for (size_t row = 0; row < table.RowCount(); ++row) s.unschedulable += live[row] && table.Unschedulable()[row];
  for (const rt::ResourceColumn& column : table.Resources()) {
    ClusterSummary::Resource r{std::string(table.pool().Get(column.name)), 0, 0, 0};
    // Totals saturate: two nodes of `cpu: 1e18` must not read as negative.
    auto add = [](int64_t& total, int64_t v) {
      if (__builtin_add_overflow(total, v, &total)) total = v > 0 ? INT64_MAX : INT64_MIN;
    };
    for (size_t row = 0; row < table.RowCount(); ++row) {
      if (!live[row]) continue;
      add(r.allocatable, column.allocatable[row]);
      // kube-scheduler counts pods, not a `pods` request.
      add(r.requested, r.name == "pods" ? static_cast<int64_t>(table.PodCount()[row]) : column.requested[row]);
      r.nodes += column.allocatable[row] > 0;
    }
    s.resources.push_back(std::move(r));
  }
  std::vector<size_t> per_taint(table.TaintDictionary().size(), 0);
  for (size_t row = 0; row < table.RowCount(); ++row) {
    if (!live[row]) continue;
    for (uint32_t id : table.Taints(static_cast<rt::RowId>(row))) ++per_taint[id];
  }
  for (size_t id = 0; id < per_taint.size(); ++id) {
    if (per_taint[id] == 0) continue;
    const rt::TaintEntry& t = table.TaintDictionary()[id];
    std::string_view value = table.pool().Get(t.value);
    s.taints.push_back({fmt::format("{}{}{}:{}", table.pool().Get(t.key), value.empty() ? "" : "=", value,
                                    k8s::ToString(t.effect)),
                        per_taint[id], 0});
  }
  SortByNodes(s.taints);
  for (const rt::LabelColumn& column : table.Labels()) {
    ClusterSummary::Count c{std::string(table.pool().Get(column.key)), 0, 0};
    for (uint32_t d = 1; d <= column.DomainCount(); ++d) {
      c.nodes += column.live_nodes[d];
      c.values += column.live_nodes[d] > 0;
    }
    if (c.nodes > 0) s.label_keys.push_back(std::move(c));
  }
  SortByNodes(s.label_keys);
  for (const char* key : kTopologyKeys) {
    const rt::LabelColumn* column = table.Label(key);
    if (column == nullptr) continue;
    ClusterSummary::Domains domains{key, {}};
    for (uint32_t d = 1; d <= column->DomainCount(); ++d) {
      if (column->live_nodes[d] == 0) continue;
      domains.values.push_back({std::string(table.pool().Get(column->value[d])), column->live_nodes[d], 0});
    }
    SortByNodes(domains.values);
    if (!domains.values.empty()) s.topology.push_back(std::move(domains));
  }
  s.row_bytes = table.RowMemoryBytes();
  s.dictionary_bytes = table.DictionaryMemoryBytes();
  return s;
}

std::string RenderText(const ClusterSummary& s, size_t max_label_keys) {
  std::string out;
  const rt::LoadReport& r = s.report;
  out += fmt::format("cluster     {}\n", s.file);
  out += fmt::format("nodes       {}", s.nodes);
  if (s.unschedulable > 0) out += fmt::format(" ({} unschedulable)", s.unschedulable);
  out += '\n';
  out += fmt::format("pods        {} bound", r.pods_bound);
  std::vector<std::string> left_out;
  if (r.pods_not_bound > 0) left_out.push_back(fmt::format("{} not yet bound", r.pods_not_bound));
  if (r.pods_finished > 0) left_out.push_back(fmt::format("{} finished", r.pods_finished));
  if (r.pods_unknown_node > 0) left_out.push_back(fmt::format("{} on nodes not in the snapshot", r.pods_unknown_node));
  if (!left_out.empty()) out += fmt::format("; not counted: {}", fmt::join(left_out, ", "));
  out += '\n';
  if (r.namespaces > 0) out += fmt::format("namespaces  {}\n", r.namespaces);
  if (r.selector_owners > 0) {
    out += fmt::format("selectors   {} (Services, ReplicationControllers, ReplicaSets, StatefulSets: default spread)\n",
                       r.selector_owners);
  }
  std::vector<std::string> storage;
  auto add = [&](size_t n, std::string_view kind) {
    if (n > 0) storage.push_back(fmt::format("{} {}", n, kind));
  };
  add(r.claims, "PersistentVolumeClaims");
  add(r.volumes, "PersistentVolumes");
  add(r.storage_classes, "StorageClasses");
  add(r.csi_nodes, "CSINodes");
  if (!storage.empty()) out += fmt::format("storage     {}\n", fmt::join(storage, ", "));
  if (r.priority_classes > 0) out += fmt::format("priorities  {} PriorityClasses\n", r.priority_classes);
  if (r.budgets > 0) out += fmt::format("budgets     {} PodDisruptionBudgets\n", r.budgets);
  if (!r.read.skipped_kinds.empty()) {
    std::vector<std::string> kinds;
    for (const auto& [kind, n] : r.read.skipped_kinds) kinds.push_back(fmt::format("{} {}", n, kind));
    out += fmt::format("skipped     {}\n", fmt::join(kinds, ", "));
  }

  if (!s.resources.empty()) {
    out += fmt::format("\n{:<34} {:>12} {:>12} {:>12} {:>6}\n", "resources", "allocatable", "requested", "free", "nodes");
    for (const auto& res : s.resources) {
      out += fmt::format("  {:<32} {:>12} {:>12} {:>12} {:>6}\n", res.name, k8s::ReadableAmount(res.name, res.allocatable),
                         k8s::ReadableAmount(res.name, res.requested), k8s::ReadableAmount(res.name, res.allocatable - res.requested),
                         res.nodes);
    }
  }
  for (const auto& domains : s.topology) {
    out += fmt::format("\n{} ({} value{})\n", domains.key, domains.values.size(), domains.values.size() == 1 ? "" : "s");
    for (const auto& v : domains.values) out += fmt::format("  {:<40} {:>6} node{}\n", v.name, v.nodes, v.nodes == 1 ? "" : "s");
  }
  out += fmt::format("\ntaints ({})\n", s.taints.size());
  if (s.taints.empty()) out += "  none\n";
  for (const auto& t : s.taints) out += fmt::format("  {:<60} {:>6} node{}\n", t.name, t.nodes, t.nodes == 1 ? "" : "s");
  out += fmt::format("\nlabel keys ({})\n", s.label_keys.size());
  size_t shown = std::min(max_label_keys, s.label_keys.size());
  for (size_t i = 0; i < shown; ++i) {
    const auto& k = s.label_keys[i];
    out += fmt::format("  {:<60} {:>6} node{}, {} value{}\n", k.name, k.nodes, k.nodes == 1 ? "" : "s", k.values,
                       k.values == 1 ? "" : "s");
  }
  if (shown < s.label_keys.size()) {
    out += fmt::format("  ... {} more (--all-labels shows them)\n", s.label_keys.size() - shown);
  }
  out += fmt::format("\ntable memory: {} bytes per node in columns, {} in strings and dictionaries\n",
                     s.nodes ? s.row_bytes / s.nodes : 0,
                     fmt::format("{:.1f} MiB", static_cast<double>(s.dictionary_bytes) / (1 << 20)));
  return out;
}

std::string RenderJson(const ClusterSummary& s) {
  JsonWriter w;
  const rt::LoadReport& r = s.report;
  w.BeginObject();
  w.Key("cluster").String(s.file);
  w.Key("nodes").Int(static_cast<int64_t>(s.nodes));
  w.Key("unschedulable").Int(static_cast<int64_t>(s.unschedulable));
  w.Key("pods").BeginObject();
  w.Key("bound").Int(static_cast<int64_t>(r.pods_bound));
  w.Key("notBound").Int(static_cast<int64_t>(r.pods_not_bound));
  w.Key("finished").Int(static_cast<int64_t>(r.pods_finished));
  w.Key("onUnknownNodes").Int(static_cast<int64_t>(r.pods_unknown_node));
  w.EndObject();
  w.Key("namespaces").Int(static_cast<int64_t>(r.namespaces));
  w.Key("selectorOwners").Int(static_cast<int64_t>(r.selector_owners));
  w.Key("persistentVolumeClaims").Int(static_cast<int64_t>(r.claims));
  w.Key("persistentVolumes").Int(static_cast<int64_t>(r.volumes));
  w.Key("storageClasses").Int(static_cast<int64_t>(r.storage_classes));
  w.Key("csiNodes").Int(static_cast<int64_t>(r.csi_nodes));
  w.Key("priorityClasses").Int(static_cast<int64_t>(r.priority_classes));
  w.Key("podDisruptionBudgets").Int(static_cast<int64_t>(r.budgets));
  w.Key("skippedKinds").BeginObject();
  for (const auto& [kind, n] : r.read.skipped_kinds) w.Key(kind).Int(static_cast<int64_t>(n));
  w.EndObject();
  w.Key("resources").BeginArray();
  for (const auto& res : s.resources) {
    w.BeginObject();
    w.Key("name").String(res.name);
    w.Key("allocatable").String(k8s::WrittenAmount(res.name, res.allocatable));
    w.Key("requested").String(k8s::WrittenAmount(res.name, res.requested));
    w.Key("nodes").Int(static_cast<int64_t>(res.nodes));
    w.EndObject();
  }
  w.EndArray();
  w.Key("topology").BeginObject();
  for (const auto& domains : s.topology) {
    w.Key(domains.key).BeginObject();
    for (const auto& v : domains.values) w.Key(v.name).Int(static_cast<int64_t>(v.nodes));
    w.EndObject();
  }
  w.EndObject();
  w.Key("taints").BeginArray();
  for (const auto& t : s.taints) {
    w.BeginObject().Key("taint").String(t.name).Key("nodes").Int(static_cast<int64_t>(t.nodes)).EndObject();
  }
  w.EndArray();
  w.Key("labelKeys").BeginArray();
  for (const auto& k : s.label_keys) {
    w.BeginObject();
    w.Key("key").String(k.name);
    w.Key("nodes").Int(static_cast<int64_t>(k.nodes));
    w.Key("values").Int(static_cast<int64_t>(k.values));
    w.EndObject();
  }
  w.EndArray();
  w.Key("memory").BeginObject();
  w.Key("columnBytes").Int(static_cast<int64_t>(s.row_bytes));
  w.Key("dictionaryBytes").Int(static_cast<int64_t>(s.dictionary_bytes));
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace policy::cli
