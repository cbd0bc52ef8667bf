#include "runtime/sched/decide.h"

#include <algorithm>
#include <chrono>
#include <span>

#include "runtime/sched/normalize.h"
#include "runtime/sched/plugin_context.h"
#include "runtime/sched/plugin_rows.h"

namespace policy::rt {

const Decision& Decider::Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                                const DecideOptions& options) {
  Decision& d = d_;
  ClearDecision(d, plugins.size(), options.plugin_scores);
  PluginContext context(plugins, pod, table);

  // PreFilter of the pod: one rejection rejects every node.
  if (std::optional<std::pair<size_t, FilterFailure>> rejected = context.PodRejection()) {
    d.rejected_by = rejected->first;
    return d;
  }
  PluginRows evaluate(plugins, context, table, buffers_);
  const RowsOptions rows_options{.threads = options.threads, .verify_kernels = options.verify_kernels};
  // Then per plugin its node-level prefilters and its filters. Each plugin
  // runs over the rows still feasible (kube-scheduler stops at a node's
  // first failing plugin too), so later plugins see fewer rows.
  // alive: the rows still feasible, in table order; each plugin reads it
  // and writes the rows it keeps to the other buffer.
  std::span<const RowId> alive = options.rows.empty() ? table.LiveRows() : options.rows;
  const std::span<const RowId> candidates = alive;
  // Cheapest and most selective first (the feasible set does not depend on
  // the order; only the first failing plugin's message would, and there is
  // none here): by what earlier pods measured, kube's order until then.
  std::vector<size_t> order;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (context.Filters(i)) order.push_back(i);
  }
  auto rank = [&](size_t i) {
    auto it = filter_stats_.find(plugins[i].name);
    if (it == filter_stats_.end()) return 0.0;  // not measured yet: first, in kube's order
    return it->second.ns_per_row / std::max(1.0 - it->second.pass, 0.01);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return rank(x) < rank(y); });
  for (size_t i : order) {
    size_t before = alive.size();
    auto start = std::chrono::steady_clock::now();
    bool in_a = alive.data() == a_.data(), in_b = alive.data() == b_.data();
    std::vector<RowId>& out = in_a ? b_ : a_;
    if (out.size() < alive.size()) out.resize(alive.size());
    RowId* scratch = in_a ? a_.data() : in_b ? b_.data() : nullptr;  // alive is read once: its buffer is free
    alive = std::span<const RowId>(out.data(), evaluate.Passing(i, alive, out.data(), rows_options, scratch));
    if (before >= 256) {  // enough rows to say something: a moving average over pods
      double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      FilterStats& stats = filter_stats_[plugins[i].name];
      double pass = static_cast<double>(alive.size()) / static_cast<double>(before);
      double per_row = ns / static_cast<double>(before);
      stats.pass = stats.pods == 0 ? pass : 0.7 * stats.pass + 0.3 * pass;
      stats.ns_per_row = stats.pods == 0 ? per_row : 0.7 * stats.ns_per_row + 0.3 * per_row;
      ++stats.pods;
    }
    if (alive.empty()) break;
  }
  d.feasible.assign(alive.begin(), alive.end());
  if (std::optional<std::string> error = context.FilterError(candidates, d.feasible)) {  // the attempt ends
    d.error = std::move(error);
    d.feasible.clear();
    return d;
  }

  // Scores over the feasible rows: raw, normalized per score rule, averaged
  // over a plugin's rules, weighted.
  const std::vector<RowId>& rows = d.feasible;
  size_t n = rows.size();
  if (n == 0 || options.filters_only) return d;
  d.score.assign(n, 0);
  context.Cluster().SetFeasible(rows);
  int64_t* score = d.score.data();
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    const ir::Function& fn = plugin.program->functions[plugin.function];
    if (!plugin.score || fn.scores.empty() || !context.Applies(i)) continue;
    // One rule adds its normalized value times the weight; several add
    // their sum divided by their count (integer division after the sum).
    size_t rules = fn.scores.size();
    bool keep_scores = options.plugin_scores;
    if (rules > 1 || keep_scores) total_.assign(n, 0);
    evaluate.Scores(i, rows, rows_options, [&](size_t s, std::span<int64_t> raw) {
      Normalize(fn.scores[s].normalize, raw);
      // Locals, so that the loops keep them in registers.
      const int64_t* values = raw.data();
      const size_t count = raw.size();
      int64_t* into = rules == 1 && !keep_scores ? score : total_.data();
      const int64_t weight = rules == 1 && !keep_scores ? plugin.weight : 1;
      for (size_t k = 0; k < count; ++k) into[k] += values[k] * weight;
    });
    if (rules > 1 || keep_scores) {
      int64_t count = static_cast<int64_t>(rules);
      for (size_t k = 0; k < n; ++k) score[k] += total_[k] / count * plugin.weight;
      if (keep_scores) {
        std::vector<int64_t>& mine = d.plugin_scores[i];
        mine.resize(n);
        for (size_t k = 0; k < n; ++k) mine[k] = total_[k] / count;
      }
    }
  }
  d.selected = Best(d.score);
  return d;
}

Decision Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const DecideOptions& options) {
  Decider decider;
  return decider.Decide(plugins, pod, table, options);
}

void ClearDecision(Decision& d, size_t plugins, bool plugin_scores) {
  d.feasible.clear();
  d.score.clear();
  d.selected.reset();
  d.rejected_by.reset();
  d.error.reset();
  d.plugin_scores.assign(plugin_scores ? plugins : 0, {});
}

std::optional<size_t> Best(std::span<const int64_t> scores) {
  if (scores.empty()) return std::nullopt;
  size_t best = 0;
  int64_t top = scores[0];
  for (size_t k = 1; k < scores.size(); ++k) {
    if (scores[k] > top) top = scores[k], best = k;
  }
  return best;
}

}  // namespace policy::rt
