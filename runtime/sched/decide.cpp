#include "runtime/sched/decide.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <span>
#include <thread>

#include "runtime/interp/interpreter.h"
#include "runtime/sched/kernel_columns.h"

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

}  // namespace

const Decision& Decider::Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                                const DecideOptions& options) {
  Decision& d = d_;
  d.feasible.clear();
  d.score.clear();
  d.selected.reset();
  ClusterView cluster(pod, table);
  passes::PodView pod_view(pod);  // one for every plugin's interpreter
  std::map<const ir::Program*, std::unique_ptr<Interpreter>> interpreters;
  auto interp = [&](const Plugin& plugin) -> Interpreter& {
    auto& slot = interpreters[plugin.program];
    if (!slot) slot = std::make_unique<Interpreter>(*plugin.program, pod, table, &cluster, &pod_view);
    return *slot;
  };
  std::vector<bool> applies;
  for (const Plugin& plugin : plugins) {
    const ir::Function& fn = plugin.program->functions[plugin.function];
    applies.push_back(!fn.when || interp(plugin).Applies(plugin.function));
  }

  // Filters: prefilters of the pod (reject all), of the node, then filters.
  // Each plugin runs over the rows still feasible (kube-scheduler stops at a
  // node's first failing plugin too), so later plugins see fewer rows.
  std::vector<bool> node_prefilters(plugins.size(), false);
  for (size_t i = 0; i < plugins.size(); ++i) {  // PreFilter of the pod: one rejection rejects every node
    const Plugin& plugin = plugins[i];
    if (!plugin.filter || !applies[i]) continue;
    const ir::Function& fn = plugin.program->functions[plugin.function];
    for (const ir::Filter& pre : fn.prefilters) node_prefilters[i] = node_prefilters[i] || plugin.program->reads_node[pre.condition] != 0;
    if (!fn.prefilters.empty() && interp(plugin).Prefilter(plugin.function, 0, false)) return d;
  }
  // alive: the rows still feasible, in table order; each step reads it and
  // writes the rows it keeps to the other buffer.
  std::span<const RowId> alive = table.LiveRows();
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
  std::vector<bool> done(plugins.size(), false);
  bool fused = options.fused != nullptr && options.threads <= 1;
  for (size_t i : options.fused_plugins) fused = fused && plugins[i].filter && applies[i] && !node_prefilters[i];
  if (fused) {  // one pass: the rows that pass every fused plugin's filters
    std::vector<std::unique_ptr<KernelColumns>> columns;
    std::vector<const PolicyColumns*> pointers;
    for (size_t j = 0; j < options.fused_plugins.size(); ++j) {
      const Plugin& plugin = plugins[options.fused_plugins[j]];
      columns.push_back(std::make_unique<KernelColumns>(options.fused->slots[j], table, &interp(plugin), plugin.function));
      pointers.push_back(columns.back()->get());
      done[options.fused_plugins[j]] = true;
    }
    narrow([&](const RowId* rows, size_t n, RowId* out) { return options.fused->pass(pointers.data(), rows, n, out); });
  }
  // The rest, cheapest and most selective first (the feasible set does not
  // depend on the order; only the first failing plugin's message would, and
  // there is none here): by what earlier pods measured, kube's order until
  // then.
  std::vector<size_t> order;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (plugins[i].filter && applies[i] && !done[i]) order.push_back(i);
  }
  auto rank = [&](size_t i) {
    auto it = filter_stats_.find(plugins[i].name);
    if (it == filter_stats_.end()) return 0.0;  // not measured yet: first, in kube's order
    return it->second.ns_per_row / std::max(1.0 - it->second.pass, 0.01);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return rank(x) < rank(y); });
  for (size_t i : order) {
    const Plugin& plugin = plugins[i];
    size_t before = alive.size();
    auto start = std::chrono::steady_clock::now();
    if (node_prefilters[i]) keep([&](size_t, RowId row) { return !interp(plugin).Prefilter(plugin.function, row, true); });
    if (plugin.kernels != nullptr && plugin.kernels->pass != nullptr && options.threads <= 1) {
      // One pass: the kernel writes the rows that pass, in order.
      KernelColumns columns(*plugin.kernels, table, &interp(plugin), plugin.function);
      narrow([&](const RowId* rows, size_t n, RowId* out) { return plugin.kernels->pass(columns.get(), rows, n, out); });
    } else if (plugin.kernels != nullptr && plugin.kernels->filter != nullptr) {
      KernelColumns columns(*plugin.kernels, table, &interp(plugin), plugin.function);
      failed_.resize(alive.size());
      Chunked(options.threads, alive.data(), alive.size(), failed_.data(), [&](const RowId* r, size_t n, uint64_t* out) {
        plugin.kernels->filter(columns.get(), r, n, out);
      });
      keep([&](size_t j, RowId) { return failed_[j] == 0; });
    } else if (plugin.kernels == nullptr) {
      keep([&](size_t, RowId row) { return interp(plugin).FailingFilters(plugin.function, row) == 0; });
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

  // Scores over the feasible rows.
  const std::vector<RowId>& rows = d.feasible;
  size_t n = rows.size();
  if (n == 0) return d;
  d.score.assign(n, 0);
  cluster.SetFeasible(rows);
  raw_.resize(n);
  int64_t* raw = raw_.data();
  int64_t* score = d.score.data();
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    const ir::Function& fn = plugin.program->functions[plugin.function];
    if (!plugin.score || !applies[i] || fn.scores.empty()) continue;
    std::optional<KernelColumns> columns;
    if (plugin.kernels != nullptr) columns.emplace(*plugin.kernels, table, &interp(plugin), plugin.function);
    // One rule adds its normalized value times the weight; several add
    // their sum divided by their count (integer division after the sum).
    size_t rules = fn.scores.size();
    if (rules > 1) total_.assign(n, 0);
    for (size_t s = 0; s < rules; ++s) {
      if (plugin.kernels != nullptr) {
        Chunked(options.threads, rows.data(), n, raw, [&](const RowId* r, size_t count, int64_t* out) {
          plugin.kernels->scores[s](columns->get(), r, count, out);
        });
      } else {
        for (size_t k = 0; k < n; ++k) raw[k] = interp(plugin).Score(plugin.function, s, rows[k]);
      }
      Normalize(fn.scores[s].normalize, std::span<int64_t>(raw, n));
      if (rules == 1) {
        for (size_t k = 0; k < n; ++k) score[k] += raw[k] * plugin.weight;
      } else {
        for (size_t k = 0; k < n; ++k) total_[k] += raw[k];
      }
    }
    if (rules > 1) {
      int64_t count = static_cast<int64_t>(rules);
      for (size_t k = 0; k < n; ++k) score[k] += total_[k] / count * plugin.weight;
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
