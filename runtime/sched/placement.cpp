#include "runtime/sched/placement.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "runtime/interp/interpreter.h"
#include "runtime/sched/kernel_columns.h"

namespace policy::rt {
namespace {

}  // namespace

// kube-scheduler's NormalizeScore variants over the feasible nodes' raw scores.
void Normalize(sema::Normalize kind, std::span<int64_t> scores) {
  if (kind == sema::Normalize::kNone || scores.empty()) return;
  if (kind == sema::Normalize::kSpread) {  // podtopologyspread NormalizeScore
    int64_t min = INT64_MAX, max = 0;
    for (int64_t s : scores) {
      if (s < 0) continue;  // an ignored node
      min = std::min(min, s);
      max = std::max(max, s);
    }
    for (int64_t& s : scores) {
      if (s < 0) s = 0;
      else s = max == 0 ? 100 : 100 * (max + min - s) / max;
    }
    return;
  }
  int64_t max = scores[0], min = scores[0];
  for (int64_t s : scores) {  // one pass, no branch
    max = std::max(max, s);
    min = std::min(min, s);
  }
  if (kind == sema::Normalize::kMinMax) {  // interpodaffinity NormalizeScore: float64, truncated
    for (int64_t& s : scores) {
      s = max == min ? 0 : static_cast<int64_t>(100.0 * (static_cast<double>(s - min) / static_cast<double>(max - min)));
    }
    return;
  }
  // helper.DefaultNormalizeScore(100, reverse): a zero maximum leaves zeros
  // (or all 100 when reversed).
  bool reverse = kind == sema::Normalize::kReverse;
  if (max == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), 100);
    return;
  }
  if (min >= 0 && static_cast<size_t>(max) < scores.size()) {
    // Few distinct raw values (counts, weights), many rows: a table of the
    // answers, one load per row.
    std::vector<int64_t> answer(static_cast<size_t>(max) + 1);
    for (int64_t s = 0; s <= max; ++s) answer[static_cast<size_t>(s)] = reverse ? 100 - 100 * s / max : 100 * s / max;
    for (int64_t& s : scores) s = answer[static_cast<size_t>(s)];
    return;
  }
  if (min >= 0 && max <= (int64_t{1} << 50)) {
    // 100 * s / max for 0 <= s <= max without a division per row: the
    // quotient (0..100) estimated with a reciprocal, then made exact by its
    // remainder (100 * s fits in 64 bits here).
    double inverse = 100.0 / static_cast<double>(max);
    for (int64_t& s : scores) {
      int64_t q = static_cast<int64_t>(static_cast<double>(s) * inverse);
      int64_t r = 100 * s - q * max;
      q += (r >= max ? 1 : 0) - (r < 0 ? 1 : 0);
      s = reverse ? 100 - q : q;
    }
    return;
  }
  for (int64_t& s : scores) {
    s = 100 * s / max;
    if (reverse) s = 100 - s;
  }
}

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

}  // namespace

namespace {

[[noreturn]] void Disagree(const Plugin& plugin, std::string_view node, std::string what) {
  std::fprintf(stderr, "policyc: the JIT and the interpreter disagree on %s for %s at %s\n", what.c_str(),
               plugin.name.c_str(), std::string(node).c_str());
  std::abort();
}

// Bit f set per live row when filter f of the plugin's kernels fails there.
std::vector<uint64_t> KernelFilter(const Plugin& plugin, const NodeTable& table, const std::vector<RowId>& rows,
                                   Interpreter& interp) {
  std::vector<uint64_t> failed(rows.size(), 0);
  if (plugin.kernels->filter != nullptr && !rows.empty()) {
    KernelColumns columns(*plugin.kernels, table, &interp, plugin.function);
    plugin.kernels->filter(columns.get(), rows.data(), rows.size(), failed.data());
  }
  return failed;
}

}  // namespace

Placement Place(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const PlaceOptions& options) {
  Placement p;
  ClusterView cluster(pod, table);  // the pod's cluster-wide counts, shared by every plugin
  passes::PodView pod_view(pod);  // one for every plugin's interpreter
  std::map<const ir::Program*, std::unique_ptr<Interpreter>> interpreters;
  for (const Plugin& plugin : plugins) {
    auto& slot = interpreters[plugin.program];
    if (!slot) slot = std::make_unique<Interpreter>(*plugin.program, pod, table, &cluster, &pod_view);
  }
  std::vector<bool> applies;
  for (const Plugin& plugin : plugins) applies.push_back(interpreters[plugin.program]->Applies(plugin.function));

  // PreFilter, per pod: the first plugin that rejects the pod rejects every
  // node with its reason alone, and kube-scheduler's message is that reason.
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    if (!plugin.filter || !applies[i]) continue;
    std::optional<FilterFailure> rejected = interpreters[plugin.program]->Prefilter(plugin.function, 0, false);
    if (!rejected) continue;
    for (RowId row = 0; row < table.RowCount(); ++row) {
      if (!table.Live()[row]) continue;
      NodeResult node;
      node.row = row;
      node.name = std::string(table.NodeName(row));
      node.reasons.push_back({plugin.name, rejected->reason, rejected->detail});
      node.first_failing_reasons = 1;
      p.nodes.push_back(std::move(node));
    }
    p.summary = fmt::format("0/{} nodes are available: {}.", p.nodes.size(), rejected->reason);
    return p;
  }

  // Plugins with kernels filter every live row natively first; the
  // interpreter then renders the messages of the rows that fail.
  std::vector<RowId> live_rows;
  for (RowId row = 0; row < table.RowCount(); ++row) {
    if (table.Live()[row]) live_rows.push_back(row);
  }
  std::vector<std::vector<uint64_t>> kernel_failed(plugins.size());
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (plugins[i].kernels != nullptr && plugins[i].filter && applies[i]) {
      kernel_failed[i] = KernelFilter(plugins[i], table, live_rows, *interpreters[plugins[i].program]);
    }
  }

  // Plugins whose prefilters read the node (the others decided above).
  std::vector<bool> node_prefilters(plugins.size(), false);
  for (size_t i = 0; i < plugins.size(); ++i) {
    for (const ir::Filter& pre : plugins[i].program->functions[plugins[i].function].prefilters) {
      node_prefilters[i] = node_prefilters[i] || plugins[i].program->reads_node[pre.condition] != 0;
    }
  }

  p.nodes.reserve(live_rows.size());
  for (size_t live = 0; live < live_rows.size(); ++live) {
    RowId row = live_rows[live];
    NodeResult node;
    node.row = row;
    if (options.explain) node.name = std::string(table.NodeName(row));
    // PreFilter, per node: nodes a plugin excludes carry its reason first, and
    // that plugin's filters do not run on them.
    uint64_t excluded = 0;  // bit i: plugin i's prefilter rejected the node
    for (size_t i = 0; i < plugins.size(); ++i) {
      const Plugin& plugin = plugins[i];
      if (!plugin.filter || !applies[i] || !node_prefilters[i]) continue;
      if (auto f = interpreters[plugin.program]->Prefilter(plugin.function, row, true)) {
        node.reasons.push_back({plugin.name, std::move(f->reason), std::move(f->detail)});
        node.failed_plugins |= uint64_t{1} << std::min<size_t>(i, 63);
        excluded |= uint64_t{1} << std::min<size_t>(i, 63);
      }
    }
    node.first_failing_reasons = node.reasons.size();
    for (size_t i = 0; i < plugins.size(); ++i) {
      const Plugin& plugin = plugins[i];
      if (!plugin.filter || !applies[i] || (excluded >> std::min<size_t>(i, 63) & 1)) continue;
      bool first = node.reasons.empty();
      if (!kernel_failed[i].empty() && kernel_failed[i][live] == 0 && !options.verify_kernels) continue;
      if (!options.explain && !options.verify_kernels) {  // which plugins fail, no words
        uint64_t mask = !kernel_failed[i].empty() ? kernel_failed[i][live]
                                                  : interpreters[plugin.program]->FailingFilters(plugin.function, row);
        if (mask != 0) node.failed_plugins |= uint64_t{1} << std::min<size_t>(i, 63);
        continue;
      }
      std::vector<FilterFailure> failures = interpreters[plugin.program]->Filter(plugin.function, row);
      if (!kernel_failed[i].empty()) {
        uint64_t mask = 0;
        for (const FilterFailure& f : failures) mask |= uint64_t{1} << f.filter;
        if (mask != kernel_failed[i][live]) {
          Disagree(plugin, node.name, fmt::format("failing filters (kernel {:#x}, interpreter {:#x})", kernel_failed[i][live], mask));
        }
      }
      for (FilterFailure& f : failures) {
        node.reasons.push_back({plugin.name, std::move(f.reason), std::move(f.detail)});
      }
      if (first) node.first_failing_reasons = node.reasons.size();
    }
    node.feasible = node.reasons.empty() && node.failed_plugins == 0;
    p.feasible += node.feasible;
    p.nodes.push_back(std::move(node));
  }

  // Scores over feasible nodes: raw, normalized per score rule, summed per
  // plugin (a plugin's rules average), weighted.
  std::vector<size_t> feasible;
  std::vector<RowId> feasible_rows;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    if (p.nodes[i].feasible) feasible.push_back(i), feasible_rows.push_back(p.nodes[i].row);
  }
  cluster.SetFeasible(std::move(feasible_rows));
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    const ir::Function& fn = plugin.program->functions[plugin.function];
    if (!plugin.score || !applies[i] || fn.scores.empty() || feasible.empty()) continue;
    std::vector<int64_t> total(feasible.size(), 0);
    std::vector<RowId> rows;
    for (size_t k : feasible) rows.push_back(p.nodes[k].row);
    std::optional<KernelColumns> columns;
    if (plugin.kernels != nullptr) columns.emplace(*plugin.kernels, table, interpreters[plugin.program].get(), plugin.function);
    for (size_t s = 0; s < fn.scores.size(); ++s) {
      std::vector<int64_t> raw(rows.size(), 0);
      if (plugin.kernels != nullptr) {
        plugin.kernels->scores[s](columns->get(), rows.data(), rows.size(), raw.data());
      }
      if (plugin.kernels == nullptr || options.verify_kernels) {
        for (size_t k = 0; k < rows.size(); ++k) {
          int64_t v = interpreters[plugin.program]->Score(plugin.function, s, rows[k]);
          if (plugin.kernels != nullptr && v != raw[k]) {
            Disagree(plugin, p.nodes[feasible[k]].name, fmt::format("score {} (kernel {}, interpreter {})", s, raw[k], v));
          }
          raw[k] = v;
        }
      }
      Normalize(fn.scores[s].normalize, raw);
      for (size_t k = 0; k < raw.size(); ++k) total[k] += raw[k];
    }
    for (size_t k = 0; k < feasible.size(); ++k) {
      NodeResult& node = p.nodes[feasible[k]];
      int64_t score = total[k] / static_cast<int64_t>(fn.scores.size());
      if (options.explain) node.scores.emplace_back(plugin.name, score);
      node.score += score * plugin.weight;
    }
  }
  for (size_t k : feasible) {
    if (!p.selected || p.nodes[k].score > p.nodes[*p.selected].score) p.selected = k;
  }
  if (options.explain) p.summary = Summary(p);
  return p;
}

}  // namespace policy::rt
