#include "runtime/sched/plugin_rows.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "runtime/interp/interpreter.h"
#include "runtime/sched/kernel_columns.h"
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

size_t PluginRows::Passing(size_t i, std::span<const RowId> rows, RowId* out, const RowsOptions& options,
                           RowId* scratch) {
  const Plugin& plugin = plugins_[i];
  // Node prefilters first (kube's PreFilter that narrows nodes): the
  // filters see only the rows they keep.
  if (context_.NodePrefilters(i)) {
    if (scratch == nullptr) {
      kept_.resize(rows.size());
      scratch = kept_.data();
    }
    size_t m = 0;
    for (RowId row : rows) {  // in place when scratch is rows' buffer: m never passes the row read
      scratch[m] = row;
      m += context_.Interp(i).Prefilter(plugin.function, row, true) ? 0 : 1;
    }
    rows = std::span<const RowId>(scratch, m);
  }
  size_t n = rows.size();
  const codegen::CompiledFunction* kernels = plugin.kernels;
  if (kernels == nullptr) {
    size_t m = 0;
    for (RowId row : rows) {
      out[m] = row;
      m += context_.Interp(i).FailingFilters(plugin.function, row) == 0 ? 1 : 0;
    }
    return m;
  }
  bool one_pass = kernels->pass != nullptr && ((options.threads <= 1 && !options.verify_kernels) || kernels->filter == nullptr);
  if (!one_pass && kernels->filter == nullptr) {  // compiled with no filters
    std::copy(rows.begin(), rows.end(), out);
    return n;
  }
  KernelColumns columns(*kernels, table_, &context_.Interp(i), plugin.function, options.given,
                        KernelColumns::Kernels::kFilters);
  if (one_pass) return kernels->pass(columns.get(), rows.data(), n, out);  // writes the rows that pass, in order
  failed_.resize(n);
  Chunked(options.threads, rows.data(), n, failed_.data(),
          [&](const RowId* r, size_t count, uint64_t* o) { kernels->filter(columns.get(), r, count, o); });
  size_t m = 0;
  for (size_t j = 0; j < n; ++j) {
    if (options.verify_kernels) {
      uint64_t want = context_.Interp(i).FailingFilters(plugin.function, rows[j]);
      if (want != failed_[j]) {
        Disagree(plugin, table_, rows[j], fmt::format("failing filters (kernel {:#x}, interpreter {:#x})", failed_[j], want));
      }
    }
    out[m] = rows[j];
    m += failed_[j] == 0 ? 1 : 0;
  }
  return m;
}

void PluginRows::Scores(size_t i, std::span<const RowId> rows, const RowsOptions& options,
                        const std::function<void(size_t, std::span<int64_t>)>& rule) {
  const Plugin& plugin = plugins_[i];
  const ir::Function& fn = plugin.program->functions[plugin.function];
  size_t n = rows.size();
  if (n == 0) return;
  Interpreter& interp = context_.Interp(i);
  std::optional<KernelColumns> columns;
  if (plugin.kernels != nullptr) {
    columns.emplace(*plugin.kernels, table_, &interp, plugin.function, options.given, KernelColumns::Kernels::kScores);
  }
  raw_.resize(n);
  int64_t* raw = raw_.data();
  for (size_t s = 0; s < fn.scores.size(); ++s) {
    if (plugin.kernels != nullptr) {
      Chunked(options.threads, rows.data(), n, raw, [&](const RowId* r, size_t count, int64_t* out) {
        plugin.kernels->scores[s](columns->get(), r, count, out);
      });
      for (size_t k = 0; options.verify_kernels && k < n; ++k) {
        int64_t want = interp.Score(plugin.function, s, rows[k]);
        if (want != raw[k]) Disagree(plugin, table_, rows[k], fmt::format("score {} (kernel {}, interpreter {})", s, raw[k], want));
      }
    } else {
      for (size_t k = 0; k < n; ++k) raw[k] = interp.Score(plugin.function, s, rows[k]);
    }
    rule(s, std::span<int64_t>(raw, n));
  }
}

}  // namespace policy::rt
