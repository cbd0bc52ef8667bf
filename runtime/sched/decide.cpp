#include "runtime/sched/decide.h"

#include <algorithm>
#include <map>
#include <memory>
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

Decision Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod, const NodeTable& table,
                const DecideOptions& options) {
  Decision d;
  d.rows.reserve(table.NodeCount());
  for (RowId row = 0; row < table.RowCount(); ++row) {
    if (table.Live()[row]) d.rows.push_back(row);
  }
  d.feasible.assign(d.rows.size(), 1);
  d.score.assign(d.rows.size(), 0);
  ClusterView cluster(pod, table);
  std::map<const ir::Program*, std::unique_ptr<Interpreter>> interpreters;
  auto interp = [&](const Plugin& plugin) -> Interpreter& {
    auto& slot = interpreters[plugin.program];
    if (!slot) slot = std::make_unique<Interpreter>(*plugin.program, pod, table, &cluster);
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
  std::vector<RowId> alive = d.rows, passing;  // alive: the rows still feasible, in table order
  std::vector<uint64_t> failed;  // per alive row, for mask kernels (sized when used)
  auto keep = [&](auto&& passes) {  // drops the rows where passes(j) is false
    size_t out = 0;
    for (size_t j = 0; j < alive.size(); ++j) {
      if (passes(j)) alive[out++] = alive[j];
    }
    alive.resize(out);
  };
  std::vector<bool> node_prefilters(plugins.size(), false);
  for (size_t i = 0; i < plugins.size(); ++i) {  // PreFilter of the pod: one rejection rejects every node
    const Plugin& plugin = plugins[i];
    if (!plugin.filter || !applies[i]) continue;
    const ir::Function& fn = plugin.program->functions[plugin.function];
    for (const ir::Filter& pre : fn.prefilters) node_prefilters[i] = node_prefilters[i] || plugin.program->reads_node[pre.condition] != 0;
    if (!fn.prefilters.empty() && interp(plugin).Prefilter(plugin.function, 0, false)) {
      d.feasible.assign(d.rows.size(), 0);
      return d;
    }
  }
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
    passing.resize(alive.size());
    passing.resize(options.fused->pass(pointers.data(), alive.data(), alive.size(), passing.data()));
    alive.swap(passing);
  }
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    if (!plugin.filter || !applies[i] || done[i]) continue;
    if (node_prefilters[i]) {
      keep([&](size_t j) { return !interp(plugin).Prefilter(plugin.function, alive[j], true); });
    }
    if (plugin.kernels != nullptr && plugin.kernels->pass != nullptr && options.threads <= 1) {
      // One pass: the kernel writes the rows that pass, in order.
      KernelColumns columns(*plugin.kernels, table, &interp(plugin), plugin.function);
      passing.resize(alive.size());
      size_t m = plugin.kernels->pass(columns.get(), alive.data(), alive.size(), passing.data());
      passing.resize(m);
      alive.swap(passing);
    } else if (plugin.kernels != nullptr && plugin.kernels->filter != nullptr) {
      KernelColumns columns(*plugin.kernels, table, &interp(plugin), plugin.function);
      failed.resize(alive.size());
      Chunked(options.threads, alive.data(), alive.size(), failed.data(), [&](const RowId* r, size_t n, uint64_t* out) {
        plugin.kernels->filter(columns.get(), r, n, out);
      });
      keep([&](size_t j) { return failed[j] == 0; });
    } else if (plugin.kernels == nullptr) {
      keep([&](size_t j) { return interp(plugin).FailingFilters(plugin.function, alive[j]) == 0; });
    }
  }

  // The feasible rows: alive, a subsequence of d.rows.
  d.feasible.assign(d.rows.size(), 0);
  std::vector<RowId>& rows = alive;
  std::vector<size_t> index(rows.size());
  for (size_t j = 0, k = 0; j < rows.size(); ++j) {
    while (d.rows[k] != rows[j]) ++k;
    index[j] = k;
    d.feasible[k] = 1;
  }

  // Scores over the feasible rows.
  d.feasible_count = rows.size();
  if (rows.empty()) return d;
  cluster.SetFeasible(rows);
  std::vector<int64_t> raw(rows.size()), total(rows.size());
  for (size_t i = 0; i < plugins.size(); ++i) {
    const Plugin& plugin = plugins[i];
    const ir::Function& fn = plugin.program->functions[plugin.function];
    if (!plugin.score || !applies[i] || fn.scores.empty()) continue;
    std::fill(total.begin(), total.end(), 0);
    std::optional<KernelColumns> columns;
    if (plugin.kernels != nullptr) columns.emplace(*plugin.kernels, table, &interp(plugin), plugin.function);
    for (size_t s = 0; s < fn.scores.size(); ++s) {
      if (plugin.kernels != nullptr) {
        Chunked(options.threads, rows.data(), rows.size(), raw.data(), [&](const RowId* r, size_t n, int64_t* out) {
          plugin.kernels->scores[s](columns->get(), r, n, out);
        });
      } else {
        for (size_t k = 0; k < rows.size(); ++k) raw[k] = interp(plugin).Score(plugin.function, s, rows[k]);
      }
      Normalize(fn.scores[s].normalize, raw);
      for (size_t k = 0; k < rows.size(); ++k) total[k] += raw[k];
    }
    int64_t rules = static_cast<int64_t>(fn.scores.size());
    if (rules == 1) {  // (a division per row is not free)
      for (size_t k = 0; k < rows.size(); ++k) d.score[index[k]] += total[k] * plugin.weight;
    } else {
      for (size_t k = 0; k < rows.size(); ++k) d.score[index[k]] += total[k] / rules * plugin.weight;
    }
  }
  for (size_t k : index) {
    if (!d.selected || d.score[k] > d.score[*d.selected]) d.selected = k;
  }
  return d;
}

}  // namespace policy::rt
