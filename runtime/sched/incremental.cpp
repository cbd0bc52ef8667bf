#include "runtime/sched/incremental.h"

#include <algorithm>
#include <optional>
#include <span>

#include "compiler/ir/traits.h"
#include "compiler/lang/builtins.h"
#include "runtime/interp/interpreter.h"
#include "runtime/sched/kernel_columns.h"
#include "runtime/sched/normalize.h"
#include "runtime/sched/plugin_context.h"
#include "runtime/sched/plugin_rows.h"

#include <fmt/format.h>

namespace policy::rt {
namespace {

bool IsClusterCall(const ir::Node& node) {
  const auto* call = std::get_if<ir::CallBuiltin>(&node);
  return call != nullptr && lang::Builtins()[static_cast<size_t>(call->builtin)].reads == lang::BuiltinReads::kCluster;
}

// The cluster calls function `fn` reaches from some roots (through its
// lets), and whether each has a value per row that Interpreter::
// ClusterValues gives and a comparison can trust: arguments that read
// neither the node nor a loop variable, an int or bool value.
class SiteFinder {
 public:
  /// `by_label_epoch`: closestLabelKey and nodesWithLabel are not sites but
  /// read the label columns alone (label_calls), whatever their arguments:
  /// their value on a row moves only with that row or with
  /// NodeTable::TopologyEpoch (for messages, where a string may be kept).
  SiteFinder(const ir::Program& program, const ir::Function& fn, bool by_label_epoch = false)
      : program_(program), fn_(fn), seen_(program.nodes.size(), 0), by_label_epoch_(by_label_epoch) {}

  void From(ir::NodeId root) { Visit(root); }
  std::vector<ir::NodeId> calls;
  bool comparable = true;
  bool label_calls = false;

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
      const auto& call = std::get<ir::CallBuiltin>(node);
      if (by_label_epoch_ &&
          (call.builtin == lang::BuiltinId::kClosestLabelKey || call.builtin == lang::BuiltinId::kNodesWithLabel)) {
        label_calls = true;
        ir::VisitOperands(node, [&](ir::NodeId operand) { Visit(operand); });
        return;
      }
      calls.push_back(id);
      // closestLabelKey's value is a string, not a per-row number.
      if (call.builtin == lang::BuiltinId::kClosestLabelKey || call.builtin == lang::BuiltinId::kClaimsError ||
          call.builtin == lang::BuiltinId::kClaimsDetail) {
        comparable = false;
      }
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
  bool by_label_epoch_ = false;
};

// A cluster call's value on every row, as last computed, and the version
// of what it counted then (Interpreter::ClusterVersion).
// A call whose values move row by row (claimsFit) keeps what they depended
// on instead (Interpreter::ClusterRowsVersion).
struct ClusterSite {
  ir::NodeId call;
  std::vector<int64_t> values;  // by row
  std::optional<uint64_t> version = std::nullopt;
  std::optional<dra::FitVersion> rows_version = std::nullopt;
};

}  // namespace

struct IncrementalDecider::State {
  using Site = ClusterSite;
  struct Rule {
    Extremes extremes;
    bool valid = false;
  };
  struct PluginState {
    const ir::Program* program = nullptr;
    bool filters = false;     // filtered this pod
    bool scores = false;      // scored this pod
    bool comparable = true;   // every cluster call it reads compares per row
    std::vector<Site> filter_sites, score_sites;
    std::vector<uint8_t> pass;               // by row: its prefilters and filters pass
    std::vector<uint8_t> aborts;             // by row: an `aborts` filter fails (empty: it has none)
    size_t aborting_rows = 0;                // how many aborts are set
    std::vector<std::vector<int64_t>> raw;   // by score rule, by row
    std::vector<uint8_t> raw_valid;          // by row
    std::vector<Rule> rules;                 // by score rule: the extremes its values were normalized by
    std::vector<int64_t> contribution;       // by row: weighted, normalized, as in the total
  };
  std::vector<PluginState> plugins;
  std::vector<uint32_t> fails;  // by row: how many filtering plugins fail there
  // The last scored rows (R): as a list, as flags by row; and each row's
  // total, the sum of the plugins' contributions.
  bool scored = false;
  std::vector<RowId> r;
  std::vector<uint8_t> in_r;
  std::vector<int64_t> total;
  uint64_t epoch = 0;
  size_t rows = 0;
};

IncrementalDecider::IncrementalDecider() = default;
IncrementalDecider::~IncrementalDecider() = default;
IncrementalDecider::IncrementalDecider(IncrementalDecider&&) noexcept = default;
IncrementalDecider& IncrementalDecider::operator=(IncrementalDecider&&) noexcept = default;

void IncrementalDecider::Reset(std::string why) {
  state_.reset();
  dropped_because_ = std::move(why);
}

size_t IncrementalDecider::KeptBytes() const {
  if (!state_) return 0;
  size_t bytes = state_->fails.size() * sizeof(uint32_t) + state_->in_r.size() + state_->total.size() * sizeof(int64_t) +
                 state_->r.size() * sizeof(RowId);
  for (const State::PluginState& ps : state_->plugins) {
    bytes += ps.pass.size() + ps.aborts.size() + ps.raw_valid.size() + ps.contribution.size() * sizeof(int64_t);
    for (const auto& raw : ps.raw) bytes += raw.size() * sizeof(int64_t);
    for (const auto* sites : {&ps.filter_sites, &ps.score_sites}) {
      for (const ClusterSite& site : *sites) {
        bytes += site.values.size() * sizeof(int64_t) + (site.rows_version ? site.rows_version->claims.capacity() : 0);
      }
    }
  }
  return bytes;
}

namespace {

// The work of one decision: evaluates plugins on the rows that need it.
class Update {
 public:
  Update(const std::vector<Plugin>& plugins, PluginContext& context, const NodeTable& table)
      : plugins_(plugins), context_(context), table_(table), rows_(plugins, context, table, buffers_),
        mark_(table.RowCount(), 0) {}

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
      Interpreter& interp = context_.Interp(i);
      // What it counts has not moved since: neither have its values.
      std::optional<uint64_t> version = interp.ClusterVersion(plugin.function, site.call);
      if (!all && version && site.version == version) continue;
      site.version = version;
      std::optional<dra::FitVersion> rows_version;
      if (!version) rows_version = interp.ClusterRowsVersion(plugin.function, site.call);
      moved_.clear();
      if (!all && rows_version && site.rows_version &&
          interp.ClusterRowsMoved(plugin.function, site.call, *site.rows_version, moved_)) {
        // Only the rows whose devices moved can answer otherwise.
        for (RowId row : moved_) {
          int64_t value = interp.ClusterValueAt(plugin.function, site.call, row);
          if (value != site.values[row]) add(row);
          site.values[row] = value;
        }
        site.rows_version = std::move(rows_version);
        continue;
      }
      site.rows_version = std::move(rows_version);
      interp.ClusterValues(plugin.function, site.call, now.data());
      if (!all) {
        for (RowId row : live) {
          if (now[row] != site.values[row]) add(row);
        }
      }
      site.values.swap(now);
    }
    for (const ClusterSite& site : sites) {
      if (site.rows_version) context_.Interp(i).KnowClusterValues(plugin.function, site.call, site.values.data());
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // Calls f once for each row of a, b and c.
  template <typename F>
  void Unique(std::span<const RowId> a, std::span<const RowId> b, std::span<const RowId> c, F&& f) {
    ++stamp_;
    for (std::span<const RowId> list : {a, b, c}) {
      for (RowId row : list) {
        if (mark_[row] == stamp_) continue;
        mark_[row] = stamp_;
        f(row);
      }
    }
  }

  // Whether each of `rows` (sorted) passes plugin i's node prefilters and filters.
  void Filter(size_t i, std::span<const RowId> rows, std::vector<ClusterSite>& sites,
              std::vector<uint8_t>& ok) {
    size_t n = rows.size();
    ok.assign(n, 0);
    if (n == 0) return;
    std::vector<std::pair<ir::NodeId, const int64_t*>> given = Given(sites);
    passed_.resize(n);
    size_t m = rows_.Passing(i, rows, passed_.data(), {.given = given});
    for (size_t j = 0, k = 0; j < n; ++j) {  // passed_ is an ordered subset of rows
      bool passes = k < m && passed_[k] == rows[j];
      k += passes ? 1 : 0;
      ok[j] = passes ? 1 : 0;
    }
  }

  // Plugin i's raw score of each rule on `rows` into raw[rule][row].
  void Score(size_t i, std::span<const RowId> rows, std::vector<ClusterSite>& sites,
             std::vector<std::vector<int64_t>>& raw) {
    std::vector<std::pair<ir::NodeId, const int64_t*>> given = Given(sites);
    rows_.Scores(i, rows, {.given = given}, [&](size_t s, std::span<int64_t> values) {
      for (size_t k = 0; k < rows.size(); ++k) raw[s][rows[k]] = values[k];
    });
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
  RowBuffers buffers_;
  PluginRows rows_;  // the evaluation Decider does too
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<int64_t> now_;
  std::vector<RowId> moved_;
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
  ClearDecision(d, plugins.size(), false);
  PluginContext context(plugins, pod, table);
  if (std::optional<std::pair<size_t, FilterFailure>> rejected = context.PodRejection()) {
    d.rejected_by = rejected->first;  // no node is read: what was kept stays valid
    return d;
  }

  // Can the kept decision be brought up to date? If not, why not.
  std::vector<RowId> changed;
  std::string full_because;
  if (!state_) {
    full_because = dropped_because_.empty() ? "the template's first pod" : dropped_because_;
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
    state_->in_r.assign(table.RowCount(), 0);
    state_->total.assign(table.RowCount(), 0);
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
      if (context.AbortingFilters(i) != 0) ps.aborts.assign(table.RowCount(), 0);
      ps.raw.assign(ps.scores ? fn.scores.size() : 0, std::vector<int64_t>(table.RowCount(), 0));
      ps.raw_valid.assign(table.RowCount(), 0);
      ps.rules.assign(ps.raw.size(), {});
      ps.contribution.assign(table.RowCount(), 0);
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
    if (!ps.aborts.empty()) {  // where FilterError must look: kept as `pass` is
      const Plugin& plugin = plugins[i];
      for (size_t j = 0; j < rows.size(); ++j) {
        bool aborts = ok[j] == 0 &&
                      (context.Interp(i).FailingFilters(plugin.function, rows[j]) & context.AbortingFilters(i)) != 0;
        uint8_t& kept = ps.aborts[rows[j]];
        if (kept != 0) --ps.aborting_rows;
        if (aborts) ++ps.aborting_rows;
        kept = aborts ? 1 : 0;
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
  // Only rows where an `aborts` filter fails can end the attempt.
  std::vector<const std::vector<uint8_t>*> may_abort;
  for (const State::PluginState& ps : state.plugins) {
    if (ps.filters && ps.aborting_rows != 0) may_abort.push_back(&ps.aborts);
  }
  std::vector<RowId> aborting;
  for (size_t k = 0; !may_abort.empty() && k < alive.size(); ++k) {
    RowId row = alive[k];
    if (std::any_of(may_abort.begin(), may_abort.end(), [&](const auto* aborts) { return (*aborts)[row] != 0; })) {
      aborting.push_back(row);
    }
  }
  if (std::optional<std::string> error = context.FilterError(aborting, d.feasible)) {  // the attempt ends
    d.error = std::move(error);
    d.feasible.clear();
    Reset("the last attempt ended with an error");  // nothing was scored: start again
    return d;
  }

  // Scores over the feasible rows (R), from kept raw values where still
  // valid. Each rule's normalized values are kept with the extremes they
  // were normalized by: while the extremes over R stay, only the rows whose
  // raw value changed, or that entered R, are normalized again; and the
  // total per row is kept as the sum of the plugins' contributions.
  const std::vector<RowId>& rows = d.feasible;
  size_t n = rows.size();
  if (n > 0) {
    context.Cluster().SetFeasible(rows);
    bool fresh = full || !state.scored;
    std::vector<RowId> entering, leaving;
    if (fresh) {
      std::fill(state.in_r.begin(), state.in_r.end(), 0);
      for (RowId row : rows) state.total[row] = 0;
    } else {
      for (RowId row : rows) {
        if (state.in_r[row] == 0) entering.push_back(row);
        state.in_r[row] |= 2;  // in R now
      }
      for (RowId row : state.r) {
        if ((state.in_r[row] & 2) == 0) leaving.push_back(row);
      }
    }
    for (RowId row : state.r) state.in_r[row] = 0;
    for (RowId row : rows) state.in_r[row] = 1;
    std::vector<RowId> need, touched;
    std::vector<int64_t> before;  // raw values of need rows that were in R, by rule
    for (size_t i = 0; i < plugins.size(); ++i) {
      State::PluginState& ps = state.plugins[i];
      if (!ps.scores) continue;
      const Plugin& plugin = plugins[i];
      const ir::Function& fn = plugin.program->functions[plugin.function];
      size_t rules = fn.scores.size();
      bool every = fresh || !ps.comparable;
      std::vector<RowId> stale = update.Dirty(i, ps.score_sites, {}, every);
      for (RowId row : stale) ps.raw_valid[row] = 0;
      // The rows of R to evaluate again.
      need.clear();
      if (every) {
        for (RowId row : rows) {
          if (ps.raw_valid[row] == 0) need.push_back(row);
        }
      } else {
        update.Unique(entering, stale, changed, [&](RowId row) {
          if (state.in_r[row] == 1 && ps.raw_valid[row] == 0) need.push_back(row);
        });
      }
      before.clear();
      bool was_in_r = !fresh;
      for (size_t s = 0; was_in_r && s < rules; ++s) {
        for (RowId row : need) before.push_back(ps.raw[s][row]);
      }
      update.Score(i, need, ps.score_sites, ps.raw);
      for (RowId row : need) ps.raw_valid[row] = 1;
      if (!full && stats != nullptr) stats->rows_evaluated += need.size();
      // Rows whose normalized value may change even with the extremes kept.
      touched.clear();
      if (!every) update.Unique(need, entering, {}, [&](RowId row) { touched.push_back(row); });
      bool all = every;
      for (size_t s = 0; s < rules; ++s) {
        lang::Normalize kind = fn.scores[s].normalize;
        State::Rule& rule = ps.rules[s];
        const std::vector<int64_t>& raw = ps.raw[s];
        bool recompute = every || !rule.valid;
        // The extremes may move when a value at one of them goes or
        // changes, or a new value lies outside them.
        auto at_edge = [&](int64_t v) {
          if (kind == lang::Normalize::kSpread && v < 0) return false;
          return v == rule.extremes.min || v == rule.extremes.max;
        };
        auto outside = [&](int64_t v) {
          if (kind == lang::Normalize::kSpread && v < 0) return false;
          return v < rule.extremes.min || v > rule.extremes.max;
        };
        if (kind != lang::Normalize::kNone) {
          for (size_t k = 0; !recompute && k < leaving.size(); ++k) recompute = at_edge(raw[leaving[k]]);
          for (size_t k = 0; !recompute && k < need.size(); ++k) {
            bool old_in_r = state.in_r[need[k]] == 1 &&
                            !std::binary_search(entering.begin(), entering.end(), need[k]);
            recompute = (old_in_r && at_edge(before[s * need.size() + k])) || outside(raw[need[k]]);
          }
          for (size_t k = 0; !recompute && k < entering.size(); ++k) recompute = outside(raw[entering[k]]);
        }
        if (recompute) {
          Extremes e = ExtremesOf(kind, raw.data(), rows);
          if (!rule.valid || !(e == rule.extremes)) all = true;
          rule.extremes = e;
          rule.valid = true;
        }
      }
      // Normalize again and update each row's contribution and total.
      auto contribute = [&](RowId row) {
        int64_t sum = 0;
        for (size_t s = 0; s < rules; ++s) sum += NormalizeOne(fn.scores[s].normalize, ps.raw[s][row], ps.rules[s].extremes);
        int64_t c = (rules == 1 ? sum : sum / static_cast<int64_t>(rules)) * plugin.weight;
        state.total[row] += c - ps.contribution[row];
        ps.contribution[row] = c;
      };
      if (all) {
        if (fresh) {
          for (RowId row : rows) ps.contribution[row] = 0;
        }
        for (RowId row : rows) contribute(row);
      } else {
        for (RowId row : touched) contribute(row);
      }
    }
    state.r = rows;
    state.scored = true;
    d.score.resize(n);
    for (size_t k = 0; k < n; ++k) d.score[k] = state.total[rows[k]];
    d.selected = Best(d.score);
  }
  state.epoch = table.ChangeEpoch();
  return d;
}

// --- IncrementalExplainer ------------------------------------------------

struct IncrementalExplainer::State {
  struct PluginState {
    const ir::Program* program = nullptr;
    bool filters = false;
    bool comparable = true;           // its filters' cluster calls compare per row
    bool messages_comparable = true;  // and its messages'
    bool messages_read_labels = false;  // its messages read the label columns (SiteFinder::label_calls)
    std::vector<ClusterSite> filter_sites, message_sites;
  };
  std::vector<PluginState> plugins;
  std::shared_ptr<const Placement> last;  // every live row, in row order; shared with callers, never changed
  std::map<std::string, size_t> counts;  // the summary's: first failing reasons
  uint64_t epoch = 0;
  uint64_t topology_epoch = 0;  // the table's when last explained
  size_t rows = 0;
  bool details = true;  // the words carry details
  size_t placement_bytes = 0;  // `last`'s, kept current as rows are replaced
};

IncrementalExplainer::IncrementalExplainer() = default;
IncrementalExplainer::~IncrementalExplainer() = default;
IncrementalExplainer::IncrementalExplainer(IncrementalExplainer&&) noexcept = default;
IncrementalExplainer& IncrementalExplainer::operator=(IncrementalExplainer&&) noexcept = default;
void IncrementalExplainer::Reset() { state_.reset(); }

size_t IncrementalExplainer::KeptBytes() const {
  if (!state_) return 0;
  size_t bytes = state_->placement_bytes;
  for (const State::PluginState& ps : state_->plugins) {
    for (const auto* sites : {&ps.filter_sites, &ps.message_sites}) {
      for (const ClusterSite& site : *sites) {
        bytes += site.values.size() * sizeof(int64_t) + (site.rows_version ? site.rows_version->claims.capacity() : 0);
      }
    }
  }
  return bytes;
}

namespace {

std::string SummaryOf(size_t nodes, const std::map<std::string, size_t>& counts) {
  std::vector<std::string> parts;
  for (const auto& [reason, count] : counts) {
    if (count > 0) parts.push_back(fmt::format("{} {}", count, reason));
  }
  std::sort(parts.begin(), parts.end());
  return fmt::format("0/{} nodes are available: {}.", nodes, fmt::join(parts, ", "));
}

// A feasible row as the kept explanation holds it: no scores (they move
// with every bind; the decision has them).
NodeResult WithoutScores(NodeResult node) {
  node.score = 0;
  node.scores.clear();
  return node;
}

// What a kept row holds, its strings' heap included.
size_t BytesOf(const NodeResult& node) {
  auto heap = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; };
  size_t bytes = sizeof(NodeResult) + heap(node.name) + node.reasons.capacity() * sizeof(NodeReason);
  for (const NodeReason& r : node.reasons) bytes += heap(r.plugin) + heap(r.reason) + heap(r.detail);
  return bytes;
}

void Count(std::map<std::string, size_t>& counts, const NodeResult& node, int sign) {
  for (size_t k = 0; k < node.first_failing_reasons; ++k) counts[node.reasons[k].reason] += static_cast<size_t>(sign);
}

}  // namespace

std::shared_ptr<const Placement> IncrementalExplainer::Explain(const std::vector<Plugin>& plugins,
                                                               const k8s::Pod& pod, const NodeTable& table,
                                                               const Decision& decision, bool details) {
  // A pod its PreFilter rejects, or whose attempt ended with an error, is answered in one sentence: nothing to keep.
  if (decision.rejected_by || decision.error || table.NodeCount() == 0) {
    state_.reset();
    return std::make_shared<const Placement>(rt::Explain(plugins, pod, table, decision, table.LiveRows(), details));
  }
  PluginContext context(plugins, pod, table, details);
  std::vector<RowId> changed;
  bool usable = state_ && state_->details == details && state_->plugins.size() == plugins.size() &&
                state_->rows == table.RowCount() && table.RowsChangedSince(state_->epoch, changed);
  for (size_t i = 0; usable && i < plugins.size(); ++i) {
    usable = state_->plugins[i].program == plugins[i].program && state_->plugins[i].filters == context.Filters(i);
  }
  if (!usable) {
    state_ = std::make_unique<State>();
    State& st = *state_;
    st.rows = table.RowCount();
    st.details = details;
    st.plugins.resize(plugins.size());
    for (size_t i = 0; i < plugins.size(); ++i) {
      State::PluginState& ps = st.plugins[i];
      const Plugin& plugin = plugins[i];
      const ir::Function& fn = plugin.program->functions[plugin.function];
      ps.program = plugin.program;
      ps.filters = context.Filters(i);
      if (!ps.filters) continue;
      SiteFinder filter_sites(*plugin.program, fn), message_sites(*plugin.program, fn, true);
      auto messages = [&](const ir::Message& m) {
        for (const ir::Message::Part& part : m.parts) {
          if (part.value) message_sites.From(*part.value);
        }
      };
      for (const ir::Filter& f : fn.prefilters) {
        filter_sites.From(f.condition);
        messages(f.reason);
        if (details) messages(f.detail);
      }
      for (const ir::Filter& f : fn.filters) {
        filter_sites.From(f.condition);
        if (f.each_collection) filter_sites.From(*f.each_collection);
        messages(f.reason);
        if (details) messages(f.detail);
      }
      ps.comparable = filter_sites.comparable;
      ps.messages_comparable = message_sites.comparable;
      ps.messages_read_labels = message_sites.label_calls;
      for (ir::NodeId call : filter_sites.calls) ps.filter_sites.push_back({call, std::vector<int64_t>(table.RowCount())});
      for (ir::NodeId call : message_sites.calls) ps.message_sites.push_back({call, std::vector<int64_t>(table.RowCount())});
      Update update(plugins, context, table);
      update.Dirty(i, ps.filter_sites, {}, true);  // their values now
      update.Dirty(i, ps.message_sites, {}, true);
    }
    explained_rows_ += table.LiveRows().size();
    Placement first = rt::Explain(plugins, pod, table, decision, table.LiveRows(), details);
    first.selected.reset();
    for (NodeResult& node : first.nodes) node = WithoutScores(std::move(node));
    st.last = std::make_shared<const Placement>(std::move(first));
    for (const NodeResult& node : st.last->nodes) {
      Count(st.counts, node, +1);
      st.placement_bytes += BytesOf(node);
    }
    st.epoch = table.ChangeEpoch();
    st.topology_epoch = table.TopologyEpoch();
    return st.last;
  }
  State& st = *state_;
  std::span<const RowId> live = table.LiveRows();
  Update update(plugins, context, table);
  std::vector<uint8_t> dirty(table.RowCount(), 0);
  for (RowId row : changed) dirty[row] = 1;
  for (size_t i = 0; i < plugins.size(); ++i) {
    State::PluginState& ps = st.plugins[i];
    if (!ps.filters) continue;
    for (RowId row : update.Dirty(i, ps.filter_sites, {}, !ps.comparable)) dirty[row] = 1;
    std::vector<RowId> moved = update.Dirty(i, ps.message_sites, {}, false);
    bool all_moved = !ps.messages_comparable || (ps.messages_read_labels && table.TopologyEpoch() != st.topology_epoch);
    if (all_moved || !moved.empty()) {
      // Rows where it failed: their words may differ.
      std::vector<uint8_t> moved_at(table.RowCount(), all_moved ? 1 : 0);
      for (RowId row : moved) moved_at[row] = 1;
      for (const NodeResult& node : st.last->nodes) {
        if (!moved_at[node.row]) continue;
        for (const NodeReason& r : node.reasons) {
          if (r.plugin == plugins[i].name) dirty[node.row] = 1;
        }
      }
    }
  }
  // The dirty rows explained again, all in one explanation (what does not
  // vary by row is worked out once); a new Placement only when some row's
  // words differ (callers keep the old one).
  std::vector<size_t> at;  // indexes into live
  std::vector<RowId> again;
  for (size_t k = 0; k < live.size(); ++k) {
    if (!dirty[live[k]]) continue;
    at.push_back(k);
    again.push_back(live[k]);
  }
  explained_rows_ += again.size();
  std::vector<std::pair<size_t, NodeResult>> differ;
  if (!again.empty()) {
    Placement fresh = rt::Explain(plugins, pod, table, decision, again, details);
    for (size_t j = 0; j < again.size(); ++j) {
      // A row that became feasible, or no longer is, has other words.
      size_t k = at[j];
      if (!SameWords(fresh.nodes[j], st.last->nodes[k])) differ.emplace_back(k, WithoutScores(std::move(fresh.nodes[j])));
    }
  }
  if (!differ.empty()) {
    auto next = std::make_shared<Placement>(*st.last);
    for (auto& [k, node] : differ) {
      Count(st.counts, next->nodes[k], -1);
      st.placement_bytes -= BytesOf(next->nodes[k]);
      next->nodes[k] = std::move(node);
      Count(st.counts, next->nodes[k], +1);
      st.placement_bytes += BytesOf(next->nodes[k]);
    }
    next->feasible = decision.feasible.size();
    next->summary = decision.feasible.empty() ? SummaryOf(live.size(), st.counts)
                                              : fmt::format("{}/{} nodes are available.", decision.feasible.size(), live.size());
    st.last = std::move(next);
  }
  st.epoch = table.ChangeEpoch();
  st.topology_epoch = table.TopologyEpoch();
  return st.last;
}

}  // namespace policy::rt
