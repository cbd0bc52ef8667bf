#include "runtime/sched/explain.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "runtime/interp/work_counters.h"
#include "runtime/sched/kernel_columns.h"
#include "runtime/sched/plugin_context.h"

namespace policy::rt {
namespace {

// `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had ...`: counts of
// the first failing plugin's reasons, sorted as strings (sort.Strings).
std::string Summary(const Placement& p) {
  size_t n = p.nodes.size();
  if (p.feasible > 0) return fmt::format("{}/{} nodes are available.", p.feasible, n);
  std::map<std::string, size_t> counts;
  for (const NodeResult& node : p.nodes) {
    for (size_t i = 0; i < node.first_failing_reasons; ++i) ++counts[node.reasons[i].reason];
  }
  std::vector<std::string> parts;
  for (const auto& [reason, count] : counts) parts.push_back(fmt::format("{} {}", count, reason));
  std::sort(parts.begin(), parts.end());
  return fmt::format("0/{} nodes are available: {}.", n, fmt::join(parts, ", "));
}

// Which filters of each plugin with a filter kernel fail on each of `rows`,
// as the kernel says (one native call a plugin): the interpreter then runs
// only where a plugin fails, for its messages. By plugin, then by index
// into `rows`; empty for a plugin without a kernel.
std::vector<std::vector<uint64_t>> KernelVerdicts(const std::vector<Plugin>& plugins, PluginContext& context,
                                                  const NodeTable& table, std::span<const RowId> rows) {
  std::vector<std::vector<uint64_t>> failed(plugins.size());
  if (rows.empty()) return failed;
  for (size_t i = 0; i < plugins.size(); ++i) {
    const codegen::CompiledFunction* kernels = plugins[i].kernels;
    if (!context.Filters(i) || kernels == nullptr || kernels->filter == nullptr) continue;
    KernelColumns columns(*kernels, table, &context.Interp(i), plugins[i].function, {}, KernelColumns::Kernels::kFilters);
    failed[i].resize(rows.size());
    kernels->filter(columns.get(), rows.data(), rows.size(), failed[i].data());
  }
  return failed;
}

// Every failing plugin's reasons on an infeasible row, in plugin order: a
// plugin's node-level prefilter excludes the node first (and its filters do
// not run there), then the filters. `failed` (KernelVerdicts' at `at`)
// skips a plugin whose kernel says every filter passes.
void Reasons(const std::vector<Plugin>& plugins, PluginContext& context, RowId row, NodeResult& node,
             const std::vector<std::vector<uint64_t>>& failed, size_t at) {
  std::vector<bool> excluded(plugins.size(), false);
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (!context.Filters(i) || !context.NodePrefilters(i)) continue;
    if (std::optional<FilterFailure> f = context.Interp(i).Prefilter(plugins[i].function, row, true)) {
      node.reasons.push_back({plugins[i].name, std::move(f->reason), std::move(f->detail), f->unresolvable});
      excluded[i] = true;
    }
  }
  node.first_failing_reasons = node.reasons.size();
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (!context.Filters(i) || excluded[i] || (!failed[i].empty() && failed[i][at] == 0)) continue;
    bool first = node.reasons.empty();
    for (FilterFailure& f : context.Interp(i).Filter(plugins[i].function, row)) {
      node.reasons.push_back({plugins[i].name, std::move(f.reason), std::move(f.detail), f.unresolvable});
    }
    if (first) node.first_failing_reasons = node.reasons.size();
  }
}

}  // namespace

std::vector<ReasonGroup> GroupReasons(const Placement& placement, size_t examples) {
  std::vector<ReasonGroup> groups;
  std::map<std::pair<std::string_view, std::string_view>, size_t> index;
  std::vector<const NodeResult*> last;  // the last node counted, by group
  for (const NodeResult& node : placement.nodes) {
    for (const NodeReason& r : node.reasons) {
      auto [it, added] = index.try_emplace({r.plugin, r.reason}, groups.size());
      if (added) {
        groups.push_back({r.plugin, r.reason, 0, {}, node.row, r.detail});
        last.push_back(nullptr);
      }
      ReasonGroup& g = groups[it->second];
      if (last[it->second] == &node) continue;  // one node, one count
      last[it->second] = &node;
      ++g.nodes;
      if (g.examples.size() < examples) g.examples.push_back(node.name);
    }
  }
  std::stable_sort(groups.begin(), groups.end(), [](const ReasonGroup& a, const ReasonGroup& b) { return a.nodes > b.nodes; });
  return groups;
}

void DetailGroups(std::vector<ReasonGroup>& groups, const Placement& detailed) {
  for (ReasonGroup& g : groups) {
    for (const NodeResult& node : detailed.nodes) {
      if (node.row != g.example_row) continue;
      for (const NodeReason& r : node.reasons) {
        if (r.plugin == g.plugin && r.reason == g.reason) {
          g.detail = r.detail;
          break;
        }
      }
      break;
    }
  }
}

std::vector<RowId> ExampleRows(const std::vector<ReasonGroup>& groups) {
  std::vector<RowId> rows;
  for (const ReasonGroup& g : groups) rows.push_back(g.example_row);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

bool SameWords(const NodeResult& a, const NodeResult& b) {
  if (a.first_failing_reasons != b.first_failing_reasons || a.reasons.size() != b.reasons.size()) return false;
  for (size_t r = 0; r < a.reasons.size(); ++r) {
    const NodeReason &x = a.reasons[r], &y = b.reasons[r];
    if (x.plugin != y.plugin || x.reason != y.reason || x.detail != y.detail || x.unresolvable != y.unresolvable) {
      return false;
    }
  }
  return true;
}

Placement Explain(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                  const Decision& decision, std::span<const RowId> rows, bool details) {
  Placement p;
  p.feasible = decision.feasible.size();
  PluginContext context(plugins, pod, table, details);
  std::optional<std::pair<size_t, FilterFailure>> rejected;
  if (decision.rejected_by) rejected = context.PodRejection();
  auto feasible = [&](RowId row) { return std::binary_search(decision.feasible.begin(), decision.feasible.end(), row); };
  std::vector<RowId> infeasible;  // in the order of `rows`
  if (!rejected) {
    for (RowId row : rows) {
      if (!feasible(row)) infeasible.push_back(row);
    }
  }
  std::vector<std::vector<uint64_t>> failed = KernelVerdicts(plugins, context, table, infeasible);
  size_t next_infeasible = 0;
  p.nodes.reserve(rows.size());
  for (RowId row : rows) {
    NodeResult node;
    node.row = row;
    node.name = std::string(table.NodeName(row));
    auto at = std::lower_bound(decision.feasible.begin(), decision.feasible.end(), row);
    if (at != decision.feasible.end() && *at == row) {  // feasible: the decision's scores
      size_t k = static_cast<size_t>(at - decision.feasible.begin());
      node.feasible = true;
      node.score = decision.score[k];
      for (size_t i = 0; i < decision.plugin_scores.size(); ++i) {
        if (!decision.plugin_scores[i].empty()) node.scores.emplace_back(plugins[i].name, decision.plugin_scores[i][k]);
      }
      if (decision.selected == k) p.selected = p.nodes.size();
    } else if (rejected) {  // PreFilter rejected the pod: its reason alone, everywhere
      node.reasons.push_back({plugins[rejected->first].name, rejected->second.reason, rejected->second.detail,
                              rejected->second.unresolvable});
      node.first_failing_reasons = 1;
    } else {
      Work().rows_explained.fetch_add(1, std::memory_order_relaxed);
      Reasons(plugins, context, row, node, failed, next_infeasible++);
      if (node.reasons.empty() && !decision.error) {  // after an error, a node may have passed every filter
        std::fprintf(stderr, "policyc: internal error: node %s was rejected but no filter rejects it in the interpreter\n",
                     node.name.c_str());
        std::abort();
      }
    }
    p.nodes.push_back(std::move(node));
  }
  p.error = decision.error;
  if (decision.error) {
    p.summary = *decision.error;  // what kube-scheduler's FailedScheduling event says; no FitError
  } else if (table.NodeCount() == 0) {
    p.summary = "no nodes available to schedule pods";  // kube-scheduler's ErrNoNodesAvailable, before any plugin
  } else {
    p.summary = rejected ? fmt::format("0/{} nodes are available: {}.", p.nodes.size(), rejected->second.reason)
                         : Summary(p);
  }
  return p;
}

}  // namespace policy::rt
