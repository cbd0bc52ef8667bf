#include "runtime/sched/incremental.h"

#include <algorithm>
#include <optional>
#include <span>

#include "compiler/ir/traits.h"
#include "compiler/sema/builtins.h"
#include "runtime/interp/interpreter.h"
#include "runtime/sched/kernel_columns.h"
#include "runtime/sched/normalize.h"
#include "runtime/sched/plugin_context.h"

namespace policy::rt {
namespace {

bool IsClusterCall(const ir::Node& node) {
  const auto* call = std::get_if<ir::CallBuiltin>(&node);
  return call != nullptr && sema::Builtins()[static_cast<size_t>(call->builtin)].reads == sema::BuiltinReads::kCluster;
}

// The cluster calls function `fn` reaches from some roots (through its
// lets), and whether each has a value per row that Interpreter::
// ClusterValues gives and a comparison can trust: arguments that read
// neither the node nor a loop variable, an int or bool value.
class SiteFinder {
 public:
  SiteFinder(const ir::Program& program, const ir::Function& fn)
      : program_(program), fn_(fn), seen_(program.nodes.size(), 0) {}

  void From(ir::NodeId root) { Visit(root); }
  std::vector<ir::NodeId> calls;
  bool comparable = true;

 private:
  void Visit(ir::NodeId id) {
    if (seen_[id]) return;
    seen_[id] = 1;
    const ir::Node& node = program_.nodes[id];
    if (const auto* local = std::get_if<ir::Local>(&node)) {
      const ir::Slot& slot = fn_.slots[local->slot];
      if (slot.value) Visit(*slot.value);
      return;
    }
    if (IsClusterCall(node)) {
      calls.push_back(id);
      const auto& call = std::get<ir::CallBuiltin>(node);
      // closestLabelKey's value is a string, not a per-row number.
      if (call.builtin == sema::BuiltinId::kClosestLabelKey) comparable = false;
      for (ir::NodeId a : call.args) {
        if (program_.reads_node[a] != 0 || ReadsLoopVariable(a)) comparable = false;
      }
    }
    ir::VisitOperands(node, [&](ir::NodeId operand) { Visit(operand); });
  }

  bool ReadsLoopVariable(ir::NodeId id) {
    const ir::Node& node = program_.nodes[id];
    if (const auto* local = std::get_if<ir::Local>(&node)) {
      const ir::Slot& slot = fn_.slots[local->slot];
      return !slot.value || ReadsLoopVariable(*slot.value);
    }
    if (std::holds_alternative<ir::Loop>(node)) return true;  // a loop's body reads its variable
    bool reads = false;
    ir::VisitOperands(node, [&](ir::NodeId operand) { reads = reads || ReadsLoopVariable(operand); });
    return reads;
  }

  const ir::Program& program_;
  const ir::Function& fn_;
  std::vector<uint8_t> seen_;
};

// A cluster call's value on every row, as last computed.
struct ClusterSite {
  ir::NodeId call;
  std::vector<int64_t> values;  // by row
};

}  // namespace

struct IncrementalDecider::State {
  using Site = ClusterSite;
  struct PluginState {
    const ir::Program* program = nullptr;
    bool filters = false;     // filtered this pod
    bool scores = false;      // scored this pod
    bool comparable = true;   // every cluster call it reads compares per row
    std::vector<Site> filter_sites, score_sites;
    std::vector<uint8_t> pass;               // by row: its prefilters and filters pass
    std::vector<std::vector<int64_t>> raw;   // by score rule, by row
    std::vector<uint8_t> raw_valid;          // by row
  };
  std::vector<PluginState> plugins;
  std::vector<uint32_t> fails;  // by row: how many filtering plugins fail there
  uint64_t epoch = 0;
  size_t rows = 0;
};

IncrementalDecider::IncrementalDecider() = default;
IncrementalDecider::~IncrementalDecider() = default;
IncrementalDecider::IncrementalDecider(IncrementalDecider&&) noexcept = default;
IncrementalDecider& IncrementalDecider::operator=(IncrementalDecider&&) noexcept = default;

void IncrementalDecider::Reset() { state_.reset(); }

namespace {

// The work of one decision: evaluates plugins on the rows that need it.
class Update {
 public:
  Update(const std::vector<Plugin>& plugins, PluginContext& context, const NodeTable& table)
      : plugins_(plugins), context_(context), table_(table), mark_(table.RowCount(), 0) {}

  // The rows in `base` plus those where a site's value changed (the sites
  // computed again and kept); every live row when `all`.
  std::vector<RowId> Dirty(size_t i, std::vector<ClusterSite>& sites, std::span<const RowId> base,
                           bool all) {
    std::vector<RowId> rows;
    std::span<const RowId> live = table_.LiveRows();
    ++stamp_;
    auto add = [&](RowId row) {
      if (mark_[row] == stamp_ || !table_.Live()[row]) return;
      mark_[row] = stamp_;
      rows.push_back(row);
    };
    if (all) {
      for (RowId row : live) add(row);
    } else {
      for (RowId row : base) add(row);
    }
    const Plugin& plugin = plugins_[i];
    std::vector<int64_t>& now = now_;
    now.resize(table_.RowCount());
    for (auto& site : sites) {
      context_.Interp(i).ClusterValues(plugin.function, site.call, now.data());
      if (!all) {
        for (RowId row : live) {
          if (now[row] != site.values[row]) add(row);
        }
      }
      site.values.swap(now);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // Whether each of `rows` passes plugin i's node prefilters and filters.
  void Filter(size_t i, std::span<const RowId> rows, std::vector<ClusterSite>& sites,
              std::vector<uint8_t>& ok) {
    const Plugin& plugin = plugins_[i];
    size_t n = rows.size();
    ok.assign(n, 1);
    if (n == 0) return;
    if (context_.NodePrefilters(i)) {
      for (size_t j = 0; j < n; ++j) {
        if (context_.Interp(i).Prefilter(plugin.function, rows[j], true)) ok[j] = 0;
      }
    }
    const codegen::CompiledFunction* kernels = plugin.kernels;
    if (kernels == nullptr) {
      for (size_t j = 0; j < n; ++j) {
        if (ok[j] != 0 && context_.Interp(i).FailingFilters(plugin.function, rows[j]) != 0) ok[j] = 0;
      }
      return;
    }
    if (kernels->filter == nullptr && kernels->pass == nullptr) return;
    KernelColumns columns(*kernels, table_, &context_.Interp(i), plugin.function, Given(sites));
    if (kernels->filter != nullptr) {
      failed_.resize(n);
      kernels->filter(columns.get(), rows.data(), n, failed_.data());
      for (size_t j = 0; j < n; ++j) ok[j] = ok[j] != 0 && failed_[j] == 0 ? 1 : 0;
    } else {
      passed_.resize(n);
      size_t m = kernels->pass(columns.get(), rows.data(), n, passed_.data());
      for (size_t j = 0, k = 0; j < n; ++j) {  // passed_ is an ordered subset of rows
        bool passes = k < m && passed_[k] == rows[j];
        k += passes ? 1 : 0;
        if (!passes) ok[j] = 0;
      }
    }
  }

  // Plugin i's raw score of each rule on `rows` into raw[rule][row].
  void Score(size_t i, std::span<const RowId> rows, std::vector<ClusterSite>& sites,
             std::vector<std::vector<int64_t>>& raw) {
    const Plugin& plugin = plugins_[i];
    size_t n = rows.size();
    if (n == 0) return;
    const ir::Function& fn = plugin.program->functions[plugin.function];
    std::optional<KernelColumns> columns;
    if (plugin.kernels != nullptr) {
      columns.emplace(*plugin.kernels, table_, &context_.Interp(i), plugin.function, Given(sites));
    }
    std::vector<int64_t> out(n);
    for (size_t s = 0; s < fn.scores.size(); ++s) {
      if (plugin.kernels != nullptr) {
        plugin.kernels->scores[s](columns->get(), rows.data(), n, out.data());
      } else {
        for (size_t k = 0; k < n; ++k) out[k] = context_.Interp(i).Score(plugin.function, s, rows[k]);
      }
      for (size_t k = 0; k < n; ++k) raw[s][rows[k]] = out[k];
    }
  }

 private:
  static std::vector<std::pair<ir::NodeId, const int64_t*>> Given(
      const std::vector<ClusterSite>& sites) {
    std::vector<std::pair<ir::NodeId, const int64_t*>> given;
    for (const auto& site : sites) given.emplace_back(site.call, site.values.data());
    return given;
  }

  const std::vector<Plugin>& plugins_;
  PluginContext& context_;
  const NodeTable& table_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<int64_t> now_;
  std::vector<uint64_t> failed_;
  std::vector<RowId> passed_;
};

bool Scores(const Plugin& plugin, PluginContext& context, size_t i) {
  return plugin.score && !plugin.program->functions[plugin.function].scores.empty() && context.Applies(i);
}

}  // namespace

const Decision& IncrementalDecider::Decide(const std::vector<Plugin>& plugins, const k8s::Pod& pod,
                                           const NodeTable& table, const DecideOptions& options,
                                           IncrementalStats* stats) {
  Decision& d = d_;
  d.feasible.clear();
  d.score.clear();
  d.selected.reset();
  d.rejected_by.reset();
  d.plugin_scores.clear();
  PluginContext context(plugins, pod, table);
  if (std::optional<std::pair<size_t, FilterFailure>> rejected = context.PodRejection()) {
    d.rejected_by = rejected->first;  // no node is read: what was kept stays valid
    return d;
  }

  // Can the kept decision be brought up to date? If not, why not.
  std::vector<RowId> changed;
  std::string full_because;
  if (!state_) {
    full_because = "the template's first pod";
  } else if (state_->plugins.size() != plugins.size() || state_->rows != table.RowCount()) {
    full_because = "the cluster changed beyond binds";
  } else if (!table.RowsChangedSince(state_->epoch, changed)) {
    full_because = "the cluster changed beyond binds";
  } else {
    for (size_t i = 0; i < plugins.size() && full_because.empty(); ++i) {
      const State::PluginState& ps = state_->plugins[i];
      if (ps.program != plugins[i].program) full_because = "its plugins were specialized again";
      if (ps.filters != context.Filters(i) || ps.scores != Scores(plugins[i], context, i)) {
        full_because = "a plugin's `when` changed";
      }
    }
  }
  bool full = !full_because.empty();
  if (full) {
    state_ = std::make_unique<State>();
    state_->rows = table.RowCount();
    state_->fails.assign(table.RowCount(), 0);
    state_->plugins.resize(plugins.size());
    for (size_t i = 0; i < plugins.size(); ++i) {
      State::PluginState& ps = state_->plugins[i];
      const Plugin& plugin = plugins[i];
      const ir::Function& fn = plugin.program->functions[plugin.function];
      ps.program = plugin.program;
      ps.filters = context.Filters(i);
      ps.scores = Scores(plugin, context, i);
      SiteFinder filter_sites(*plugin.program, fn), score_sites(*plugin.program, fn);
      for (const ir::Filter& f : fn.prefilters) filter_sites.From(f.condition);
      for (const ir::Filter& f : fn.filters) {
        filter_sites.From(f.condition);
        if (f.each_collection) filter_sites.From(*f.each_collection);
      }
      for (const ir::Score& s : fn.scores) score_sites.From(s.value);
      ps.comparable = filter_sites.comparable && score_sites.comparable;
      for (ir::NodeId call : filter_sites.calls) ps.filter_sites.push_back({call, std::vector<int64_t>(table.RowCount())});
      for (ir::NodeId call : score_sites.calls) ps.score_sites.push_back({call, std::vector<int64_t>(table.RowCount())});
      ps.pass.assign(table.RowCount(), 1);
      ps.raw.assign(ps.scores ? fn.scores.size() : 0, std::vector<int64_t>(table.RowCount(), 0));
      ps.raw_valid.assign(table.RowCount(), 0);
    }
    if (stats != nullptr) {
      ++stats->full;
      ++stats->full_because[full_because];
    }
  } else {
    // Rows a bind or unbind touched score anew too, whether or not they are
    // feasible now.
    for (State::PluginState& ps : state_->plugins) {
      for (RowId row : changed) ps.raw_valid[row] = 0;
    }
    if (stats != nullptr) ++stats->incremental;
  }
  State& state = *state_;

  // Filters: each plugin on its dirty rows, the failing count per row kept.
  Update update(plugins, context, table);
  std::vector<uint8_t> ok;
  for (size_t i = 0; i < plugins.size(); ++i) {
    State::PluginState& ps = state.plugins[i];
    if (!ps.filters) continue;
    // Kernels that arrived since (tiering) may read a call the walk did not
    // see; then no comparison is trusted for them.
    const codegen::CompiledFunction* kernels = plugins[i].kernels;
    for (size_t k = 0; kernels != nullptr && ps.comparable && k < kernels->cluster.size(); ++k) {
      auto known = [&](const auto& sites) {
        return std::any_of(sites.begin(), sites.end(), [&](const auto& s) { return s.call == kernels->cluster[k]; });
      };
      if (!known(ps.filter_sites) && !known(ps.score_sites)) ps.comparable = false;
    }
    bool all = full || !ps.comparable;
    std::vector<RowId> rows = update.Dirty(i, ps.filter_sites, changed, all);
    update.Filter(i, rows, ps.filter_sites, ok);
    for (size_t j = 0; j < rows.size(); ++j) {
      RowId row = rows[j];
      if (ps.pass[row] != ok[j]) {
        state.fails[row] += ok[j] != 0 ? -1u : 1u;
        ps.pass[row] = ok[j];
      }
    }
    if (!full && stats != nullptr) {
      stats->rows_evaluated += rows.size();
      stats->plugins_on_every_row += ps.comparable ? 0 : 1;
    }
  }
  std::span<const RowId> alive = options.rows.empty() ? table.LiveRows() : options.rows;
  for (RowId row : alive) {
    if (state.fails[row] == 0) d.feasible.push_back(row);
  }

  // Scores over the feasible rows, from kept raw values where still valid.
  const std::vector<RowId>& rows = d.feasible;
  size_t n = rows.size();
  if (n > 0) {
    d.score.assign(n, 0);
    context.Cluster().SetFeasible(rows);
    std::vector<int64_t> normalized(n), total;
    for (size_t i = 0; i < plugins.size(); ++i) {
      State::PluginState& ps = state.plugins[i];
      if (!ps.scores) continue;
      const Plugin& plugin = plugins[i];
      const ir::Function& fn = plugin.program->functions[plugin.function];
      std::vector<RowId> stale = update.Dirty(i, ps.score_sites, {}, full || !ps.comparable);
      for (RowId row : stale) ps.raw_valid[row] = 0;
      std::vector<RowId> need;
      for (RowId row : rows) {
        if (ps.raw_valid[row] == 0) need.push_back(row);
      }
      update.Score(i, need, ps.score_sites, ps.raw);
      for (RowId row : need) ps.raw_valid[row] = 1;
      if (!full && stats != nullptr) stats->rows_evaluated += need.size();
      // As Decider: one rule adds its normalized value times the weight;
      // several add their sum divided by their count.
      size_t rules = fn.scores.size();
      if (rules > 1) total.assign(n, 0);
      for (size_t s = 0; s < rules; ++s) {
        for (size_t k = 0; k < n; ++k) normalized[k] = ps.raw[s][rows[k]];
        Normalize(fn.scores[s].normalize, std::span<int64_t>(normalized.data(), n));
        if (rules == 1) {
          for (size_t k = 0; k < n; ++k) d.score[k] += normalized[k] * plugin.weight;
        } else {
          for (size_t k = 0; k < n; ++k) total[k] += normalized[k];
        }
      }
      if (rules > 1) {
        int64_t count = static_cast<int64_t>(rules);
        for (size_t k = 0; k < n; ++k) d.score[k] += total[k] / count * plugin.weight;
      }
    }
    size_t best = 0;
    for (size_t k = 1; k < n; ++k) {
      if (d.score[k] > d.score[best]) best = k;
    }
    d.selected = best;
  }
  state.epoch = table.ChangeEpoch();
  return d;
}

}  // namespace policy::rt
