#include "runtime/sched/decide.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "runtime/interp/interpreter.h"
#include "runtime/sched/kernel_columns.h"
#include "runtime/sched/normalize.h"
#include "runtime/sched/plugin_context.h"

namespace policy::rt {

namespace {

// Runs `kernel(rows + begin, n, out + begin)` over [0, count) in chunks on
// `threads` threads; each chunk writes only its own part of `out`.
template <typename Out, typename Kernel>
void Chunked(int threads, const RowId* rows, size_t count, Out* out, const Kernel& kernel) {
  constexpr size_t kMinChunk = 4096;  // below, a thread costs more than it saves
  size_t chunks = std::min<size_t>(std::max(threads, 1), (count + kMinChunk - 1) / kMinChunk);
  if (chunks <= 1) {
    kernel(rows, count, out);
    return;
  }
  std::vector<std::thread> workers;
  size_t per = (count + chunks - 1) / chunks;
  for (size_t begin = 0; begin < count; begin += per) {
    size_t n = std::min(per, count - begin);
    workers.emplace_back([&, begin, n] { kernel(rows + begin, n, out + begin); });
  }
  for (std::thread& t : workers) t.join();
}

[[noreturn]] void Disagree(const Plugin& plugin, const NodeTable& table, RowId row, const std::string& what) {
  std::fprintf(stderr, "policyc: the JIT and the interpreter disagree on %s for %s at %s\n", what.c_str(),
               plugin.name.c_str(), std::string(table.NodeName(row)).c_str());
  std::abort();
}

}  // namespace

const Decision& Decider::Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                                const DecideOptions& options) {
  Decision& d = d_;
  d.feasible.clear();
  d.score.clear();
  d.selected.reset();
  d.rejected_by.reset();
  d.error.reset();
  d.plugin_scores.assign(options.plugin_scores ? plugins.size() : 0, {});
  PluginContext context(plugins, pod, table);

  // PreFilter of the pod: one rejection rejects every node.
  if (std::optional<std::pair<size_t, FilterFailure>> rejected = context.PodRejection()) {
    d.rejected_by = rejected->first;
    return d;
  }
  // Then per plugin its node-level prefilters and its filters. Each plugin
  // runs over the rows still feasible (kube-scheduler stops at a node's
  // first failing plugin too), so later plugins see fewer rows.
  // alive: the rows still feasible, in table order; each step reads it and
  // writes the rows it keeps to the other buffer.
  std::span<const RowId> alive = options.rows.empty() ? table.LiveRows() : options.rows;
  const std::span<const RowId> candidates = alive;
  auto narrow = [&](auto&& step) {  // step(rows, n, out) -> how many rows it wrote to out
    std::vector<RowId>& out = alive.data() == a_.data() ? b_ : a_;
    if (out.size() < alive.size()) out.resize(alive.size());
    size_t m = step(alive.data(), alive.size(), out.data());
    alive = std::span<const RowId>(out.data(), m);
  };
  auto keep = [&](auto&& passes) {  // the rows where passes(j, row), j: the row's index in alive
    narrow([&](const RowId* rows, size_t n, RowId* out) {
      size_t m = 0;
      for (size_t j = 0; j < n; ++j) {
        out[m] = rows[j];
        m += passes(j, rows[j]) ? 1 : 0;
      }
      return m;
    });
  };
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
    const Plugin& plugin = plugins[i];
    auto interp = [&]() -> Interpreter& { return context.Interp(i); };  // made only when used
    size_t before = alive.size();
    auto start = std::chrono::steady_clock::now();
    if (context.NodePrefilters(i)) keep([&](size_t, RowId row) { return !interp().Prefilter(plugin.function, row, true); });
    const codegen::CompiledFunction* kernels = plugin.kernels;
    if (kernels != nullptr && kernels->pass != nullptr && options.threads <= 1 && !options.verify_kernels) {
      // One pass: the kernel writes the rows that pass, in order.
      KernelColumns columns(*kernels, table, &interp(), plugin.function, {}, KernelColumns::Kernels::kFilters);
      narrow([&](const RowId* rows, size_t n, RowId* out) { return kernels->pass(columns.get(), rows, n, out); });
    } else if (kernels != nullptr && kernels->filter != nullptr) {
      KernelColumns columns(*kernels, table, &interp(), plugin.function, {}, KernelColumns::Kernels::kFilters);
      failed_.resize(alive.size());
      Chunked(options.threads, alive.data(), alive.size(), failed_.data(), [&](const RowId* r, size_t n, uint64_t* out) {
        kernels->filter(columns.get(), r, n, out);
      });
      if (options.verify_kernels) {
        for (size_t j = 0; j < alive.size(); ++j) {
          uint64_t want = interp().FailingFilters(plugin.function, alive[j]);
          if (want != failed_[j]) {
            Disagree(plugin, table, alive[j],
                     fmt::format("failing filters (kernel {:#x}, interpreter {:#x})", failed_[j], want));
          }
        }
      }
      keep([&](size_t j, RowId) { return failed_[j] == 0; });
    } else if (kernels == nullptr) {
      keep([&](size_t, RowId row) { return interp().FailingFilters(plugin.function, row) == 0; });
    }
    if (before >= 256) {  // enough rows to say something: a moving average over pods
      double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      FilterStats& stats = filter_stats_[plugin.name];
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
  raw_.resize(n);
  int64_t* raw = raw_.data();
  int64_t* score = d.score.data();
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    const ir::Function& fn = plugin.program->functions[plugin.function];
    if (!plugin.score || fn.scores.empty() || !context.Applies(i)) continue;
    Interpreter& interp = context.Interp(i);
    std::optional<KernelColumns> columns;
    if (plugin.kernels != nullptr) {
      columns.emplace(*plugin.kernels, table, &interp, plugin.function, std::span<const std::pair<ir::NodeId, const int64_t*>>(),
                      KernelColumns::Kernels::kScores);
    }
    // One rule adds its normalized value times the weight; several add
    // their sum divided by their count (integer division after the sum).
    size_t rules = fn.scores.size();
    bool keep_scores = options.plugin_scores;
    if (rules > 1 || keep_scores) total_.assign(n, 0);
    for (size_t s = 0; s < rules; ++s) {
      if (plugin.kernels != nullptr) {
        Chunked(options.threads, rows.data(), n, raw, [&](const RowId* r, size_t count, int64_t* out) {
          plugin.kernels->scores[s](columns->get(), r, count, out);
        });
        for (size_t k = 0; options.verify_kernels && k < n; ++k) {
          int64_t want = interp.Score(plugin.function, s, rows[k]);
          if (want != raw[k]) {
            Disagree(plugin, table, rows[k], fmt::format("score {} (kernel {}, interpreter {})", s, raw[k], want));
          }
        }
      } else {
        for (size_t k = 0; k < n; ++k) raw[k] = interp.Score(plugin.function, s, rows[k]);
      }
      Normalize(fn.scores[s].normalize, std::span<int64_t>(raw, n));
      if (rules == 1 && !keep_scores) {
        for (size_t k = 0; k < n; ++k) score[k] += raw[k] * plugin.weight;
      } else {
        for (size_t k = 0; k < n; ++k) total_[k] += raw[k];
      }
    }
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
  size_t best = 0;
  int64_t top = score[0];
  for (size_t k = 1; k < n; ++k) {
    if (score[k] > top) top = score[k], best = k;
  }
  d.selected = best;
  return d;
}

Decision Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const DecideOptions& options) {
  Decider decider;
  return decider.Decide(plugins, pod, table, options);
}

}  // namespace policy::rt
