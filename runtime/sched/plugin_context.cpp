#include "runtime/sched/plugin_context.h"

#include <algorithm>

#include <fmt/format.h>

namespace policy::rt {

PluginContext::PluginContext(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                             bool details)
    : plugins_(plugins), pod_(pod), table_(table), cluster_(pod, table), pod_view_(pod),
      applies_(plugins.size(), -1), node_prefilters_(plugins.size(), false), aborting_(plugins.size(), 0),
      details_(details) {
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    const ir::Function& fn = plugin.program->functions[plugin.function];
    for (const ir::Filter& pre : fn.prefilters) {
      if (plugin.program->reads_node[pre.condition] != 0) node_prefilters_[i] = true;
    }
    for (size_t k = 0; k < fn.filters.size(); ++k) {  // the bits FailingFilters sets for them
      if (fn.filters[k].aborts) aborting_[i] |= uint64_t{1} << std::min<size_t>(k, 63);
    }
  }
}

Interpreter& PluginContext::Interp(size_t i) {
  const Plugin& plugin = plugins_[i];
  std::unique_ptr<Interpreter>& slot = interpreters_[plugin.program];
  if (!slot) {
    slot = std::make_unique<Interpreter>(*plugin.program, pod_, table_, &cluster_, &pod_view_);
    slot->SetDetails(details_);
  }
  return *slot;
}

bool PluginContext::Applies(size_t i) {
  if (applies_[i] < 0) {
    const Plugin& plugin = plugins_[i];
    const std::optional<ir::NodeId>& when = plugin.program->functions[plugin.function].when;
    // Specialized for the pod, a `when` is a constant: no interpreter needed.
    const auto* constant = when ? std::get_if<ir::BoolConst>(&plugin.program->nodes[*when]) : nullptr;
    applies_[i] = !when || (constant ? constant->value : Interp(i).Applies(plugin.function)) ? 1 : 0;
  }
  return applies_[i] == 1;
}

std::optional<std::pair<size_t, FilterFailure>> PluginContext::PodRejection() {
  for (size_t i = 0; i < plugins_.size(); ++i) {
    const Plugin& plugin = plugins_[i];
    if (plugin.program->functions[plugin.function].prefilters.empty() || !Filters(i)) continue;
    if (std::optional<FilterFailure> f = Interp(i).Prefilter(plugin.function, 0, false)) return std::pair(i, std::move(*f));
  }
  return std::nullopt;
}

std::optional<std::string> PluginContext::FilterError(std::span<const RowId> rows, std::span<const RowId> feasible) {
  for (size_t i = 0; i < plugins_.size(); ++i) {
    uint64_t aborting = aborting_[i];
    if (aborting == 0 || !Filters(i)) continue;
    const Plugin& plugin = plugins_[i];
    const ir::Function& fn = plugin.program->functions[plugin.function];
    size_t next_feasible = 0;  // both in table order: one pass over the two
    for (RowId row : rows) {
      while (next_feasible < feasible.size() && feasible[next_feasible] < row) ++next_feasible;
      if (next_feasible < feasible.size() && feasible[next_feasible] == row) continue;  // every filter passes there
      if ((Interp(i).FailingFilters(plugin.function, row) & aborting) == 0) continue;
      if (NodePrefilters(i) && Interp(i).Prefilter(plugin.function, row, true)) continue;  // its filters do not run there
      if (!PassesBefore(i, row)) continue;
      for (const FilterFailure& f : Interp(i).Filter(plugin.function, row)) {
        if (fn.filters[f.filter].aborts) return fmt::format("running \"{}\" filter plugin: {}", plugin.name, f.reason);
      }
    }
  }
  return std::nullopt;
}

bool PluginContext::PassesBefore(size_t i, RowId row) {
  for (size_t j = 0; j < i; ++j) {
    if (!Filters(j)) continue;
    const Plugin& plugin = plugins_[j];
    if (NodePrefilters(j) && Interp(j).Prefilter(plugin.function, row, true)) return false;
    if (Interp(j).FailingFilters(plugin.function, row) != 0) return false;
  }
  return true;
}

}  // namespace policy::rt
