// What would make a pod fit (suggest.h): candidate edits from the pod and
// the reasons its nodes gave, each tried by deciding again.
//
// Trying an edit decides only the rows it could open: a node stays
// rejected by every plugin the edit cannot make pass (a plugin reads only
// its own fields of the pod, and those its row names: PodTopologySpread's
// inclusion policies read the node affinity and tolerations; a policy may
// read anything). A suggestion that opens nodes is then decided again over
// every node, and its nodes are that decision's. The edits themselves are
// made in pod_edits.cpp (of the pod) and claim_edits.cpp (of its claims).

#include "runtime/engine/suggest.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "k8s/node_match.h"
#include "k8s/pod_resources.h"
#include "k8s/quantity.h"
#include "runtime/engine/claim_edits.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/pod_edits.h"
#include "runtime/engine/preemption.h"
#include "runtime/sched/decide.h"
#include "runtime/sched/profile.h"

namespace policy::engine {
namespace {

// The most tolerations suggested: single edits, and those one node needs.
constexpr size_t kMaxTolerations = 8;
constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

struct NodeNeeds {
  std::vector<std::string> plugins;  // failing plugins, each once
  std::vector<std::pair<std::string, std::string>> reasons;  // (plugin, reason)
  bool unresolvable = false;  // some reason is: no removal of pods helps
};

class Suggester {
 public:
  Suggester(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const rt::Placement& placement,
            const SuggestOptions& options)
      : engine_(engine), cluster_(cluster), pod_(pod), options_(options) {
    for (const auto& [name, q] : k8s::PodRequests(pod)) requested_[name] = k8s::SchedulerUnits(name, q);
    for (const rt::NodeResult& n : placement.nodes) {
      if (n.feasible) {
        feasible_.insert(n.row);
        continue;
      }
      NodeNeeds needs;
      for (const rt::NodeReason& r : n.reasons) {
        if (std::find(needs.plugins.begin(), needs.plugins.end(), r.plugin) == needs.plugins.end()) {
          needs.plugins.push_back(r.plugin);
        }
        needs.reasons.emplace_back(r.plugin, r.reason);
        needs.unresolvable = needs.unresolvable || r.unresolvable;
        failing_.insert(r.plugin);
      }
      rejected_.emplace_back(n.row, std::move(needs));
    }
  }

  std::vector<Suggestion> Run() {
    std::vector<Edit> edits = PodEdits();
    if (edits.size() > options_.edits) edits.resize(options_.edits);
    std::vector<Suggestion> out;
    for (const Edit& e : edits) {
      if (std::optional<Suggestion> s = Verify({&e})) out.push_back(std::move(*s));
    }
    if (Remedies().contains(rt::PodRemedy::kClaims)) {
      ClaimEditor claims(engine_, cluster_, feasible_, options_.edits);
      if (!claims.TemplateClaims(pod_, out)) claims.Edits(pod_, out);
    }
    std::stable_sort(out.begin(), out.end(), [](const Suggestion& a, const Suggestion& b) {
      return a.nodes.size() > b.nodes.size();
    });
    if (!feasible_.empty()) return out;
    if (out.empty()) Combinations(edits, out);
    AddNode(out);
    RemovePods(out);
    return out;
  }

 private:
  const rt::NodeTable& Table() const { return cluster_.Table(); }

  // --- candidate edits ------------------------------------------------------

  std::vector<Edit> PodEdits() {
    std::vector<Edit> edits;
    std::set<rt::PodRemedy> remedies = Remedies();
    if (remedies.contains(rt::PodRemedy::kTolerate)) TolerationEdits(edits);
    if (remedies.contains(rt::PodRemedy::kLowerRequests)) RequestEdits(edits);
    if (remedies.contains(rt::PodRemedy::kNodeAffinity)) NodeAffinityEdits(pod_, edits);
    if (remedies.contains(rt::PodRemedy::kSpread)) SpreadEdits(edits);
    if (remedies.contains(rt::PodRemedy::kPodAffinity)) PodAffinityEdits(pod_, edits);
    if (remedies.contains(rt::PodRemedy::kHostPorts)) HostPortEdits(pod_, edits);
    if (remedies.contains(rt::PodRemedy::kDropNodeName) && !pod_.node_name.empty()) {
      Edit e;
      e.change = {"drop-node-name", fmt::format("drop spec.nodeName `{}` (a pod naming its node skips the scheduler)",
                                                pod_.node_name), {{"nodeName", pod_.node_name}}};
      e.apply = [](k8s::Pod& p) {
        p.node_name.clear();
        return true;
      };
      e.remedy = rt::PodRemedy::kDropNodeName;
      e.group = "nodeName";
      edits.push_back(std::move(e));
    }
    return edits;
  }

  k8s::Taint TaintOf(uint32_t id) const {
    const rt::TaintEntry& e = Table().TaintDictionary()[id];
    const rt::StringPool& pool = Table().pool();
    return {std::string(pool.Get(e.key)), std::string(pool.Get(e.value)), e.effect};
  }

  // Whether the pod does not tolerate taint `id` and a filter reads it.
  bool Untolerated(uint32_t id) {
    if (untolerated_.size() <= id) untolerated_.resize(Table().TaintDictionary().size(), -1);
    if (untolerated_[id] < 0) {
      k8s::Taint taint = TaintOf(id);
      untolerated_[id] = k8s::Repels(pod_.tolerations, taint);
    }
    return untolerated_[id] == 1;
  }

  // The pod's effective request of `name`, in kube-scheduler's units.
  int64_t Requested(const std::string& name) const {
    auto it = requested_.find(name);
    return it == requested_.end() ? 0 : it->second;
  }

  // One edit per untolerated taint, for the kMaxTolerations taints that
  // reject the most nodes (each edit is decided again: a node with 100,000
  // taints must not mean 100,000 decisions, nor a reader 100,000 lines).
  void TolerationEdits(std::vector<Edit>& edits) {
    std::map<uint32_t, size_t> rows;  // taint id -> rejected nodes that have it
    for (const auto& [row, needs] : rejected_) {
      for (uint32_t id : Table().Taints(row)) {
        if (Untolerated(id)) ++rows[id];
      }
    }
    std::vector<std::pair<size_t, uint32_t>> ranked;
    for (const auto& [id, n] : rows) ranked.emplace_back(n, id);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    if (ranked.size() > kMaxTolerations) ranked.resize(kMaxTolerations);
    for (const auto& [n, id] : ranked) edits.push_back(TolerateEdit(TaintOf(id)));
  }

  int64_t Free(rt::RowId row, std::string_view name) const {
    const rt::ResourceColumn* column = Table().Resource(name);
    return column ? column->allocatable[row] - column->requested[row] : 0;
  }

  // The remedies of the failing plugins, as their rows declare them.
  std::set<rt::PodRemedy> Remedies() const {
    std::set<rt::PodRemedy> remedies;
    for (const std::string& plugin : failing_) remedies.insert(RemedyOf(plugin));
    return remedies;
  }

  static rt::PodRemedy RemedyOf(std::string_view plugin) {
    const rt::InTreePlugin* row = rt::FindInTreePlugin(plugin);
    return row != nullptr ? row->remedy : rt::PodRemedy::kNone;
  }

  // The resource a reason says the node is short of (the plugin's
  // shortage_prefix and the name), else nullopt.
  static std::optional<std::string> ShortResource(const std::string& plugin, const std::string& reason) {
    const rt::InTreePlugin* row = rt::FindInTreePlugin(plugin);
    if (row == nullptr || row->remedy != rt::PodRemedy::kLowerRequests || row->shortage_prefix.empty() ||
        !reason.starts_with(row->shortage_prefix)) {
      return std::nullopt;
    }
    return reason.substr(row->shortage_prefix.size());
  }

  // Per resource, the largest amounts free on the nodes short of it and of
  // nothing else: the smallest cuts that open a node (the second value
  // opens more). Nodes short of more are for Combinations.
  void RequestEdits(std::vector<Edit>& edits) const {
    std::map<std::string, std::set<int64_t, std::greater<>>> free;
    for (const auto& [row, needs] : rejected_) {
      if (needs.reasons.size() != 1) continue;
      std::optional<std::string> name = ShortResource(needs.reasons[0].first, needs.reasons[0].second);
      if (!name) continue;
      int64_t f = Free(row, *name);
      if (f > 0 && f < Requested(*name)) free[*name].insert(f);
    }
    constexpr size_t kValues = 2;
    for (const auto& [name, values] : free) {
      size_t n = 0;
      for (auto it = values.begin(); it != values.end() && n < kValues; ++it, ++n) edits.push_back(LowerEdit(pod_, name, *it));
    }
  }

  // A spread constraint: the smallest maxSkew that opens a node (the
  // filter only relaxes as maxSkew grows), or ScheduleAnyway when none does.
  void SpreadEdits(std::vector<Edit>& edits) {
    constexpr size_t kConstraints = 8;  // searched at most (kube's pods carry one to three)
    for (size_t i = 0; i < pod_.topology_spread.size() && i < kConstraints; ++i) {
      const k8s::TopologySpreadConstraint& c = pod_.topology_spread[i];
      if (c.when_unsatisfiable != k8s::WhenUnsatisfiable::kDoNotSchedule) continue;
      auto skew = [i](int32_t k) {
        return [i, k](k8s::Pod& p) {
          p.topology_spread[i].max_skew = k;
          return true;
        };
      };
      std::vector<rt::RowId> rows = Rows(rt::RemedySet({rt::PodRemedy::kSpread}));
      int32_t lo = c.max_skew, hi = static_cast<int32_t>(std::min<size_t>(
                                    INT32_MAX, static_cast<size_t>(c.max_skew) + Table().BoundPodCount() + 1));
      if (!rows.empty() && !Try({skew(hi)}, rows).empty()) {
        while (hi - lo > 1) {  // opens nothing at lo, something at hi
          int32_t mid = lo + (hi - lo) / 2;
          (Try({skew(mid)}, rows).empty() ? lo : hi) = mid;
        }
        Edit e;
        e.change = {"raise-max-skew",
                    fmt::format("raise maxSkew of the spread constraint on `{}` from {} to {}", c.topology_key, c.max_skew, hi),
                    {{"constraint", static_cast<int64_t>(i)}, {"topologyKey", c.topology_key}, {"maxSkew", int64_t{hi}}}};
        e.apply = skew(hi);
        e.remedy = rt::PodRemedy::kSpread;
        e.group = "spread " + std::to_string(i);
        edits.push_back(std::move(e));
        continue;
      }
      Edit e;
      e.change = {"schedule-anyway",
                  fmt::format("make the spread constraint on `{}` whenUnsatisfiable: ScheduleAnyway", c.topology_key),
                  {{"constraint", static_cast<int64_t>(i)}, {"topologyKey", c.topology_key}}};
      e.apply = [i](k8s::Pod& p) {
        p.topology_spread[i].when_unsatisfiable = k8s::WhenUnsatisfiable::kScheduleAnyway;
        return true;
      };
      e.remedy = rt::PodRemedy::kSpread;
      e.group = "spread " + std::to_string(i);
      edits.push_back(std::move(e));
    }
  }

  // --- trying edits ------------------------------------------------------------

  // The rejected rows edits of `remedies` could open: those every failing
  // built-in of which one of them may relieve (a policy may read anything).
  std::vector<rt::RowId> Rows(rt::PodRemedies remedies) const {
    std::vector<rt::RowId> rows;
    for (const auto& [row, needs] : rejected_) {
      bool open = std::all_of(needs.plugins.begin(), needs.plugins.end(), [&](const std::string& p) {
        const rt::InTreePlugin* plugin = rt::FindInTreePlugin(p);
        return plugin == nullptr || (plugin->Relief() & remedies) != 0;
      });
      if (open) rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // The pod with `apply` applied, or nullopt when one cannot be.
  std::optional<k8s::Pod> Variant(const std::vector<std::function<bool(k8s::Pod&)>>& apply) const {
    k8s::Pod variant = pod_;
    for (const auto& a : apply) {
      if (!a(variant)) return std::nullopt;
    }
    return variant;
  }

  // The rows of `rows` (sorted) feasible for the pod edited.
  std::vector<rt::RowId> Try(const std::vector<std::function<bool(k8s::Pod&)>>& apply, std::span<const rt::RowId> rows) {
    std::optional<k8s::Pod> variant = Variant(apply);
    if (!variant || rows.empty()) return {};
    std::unique_ptr<PodPlan> plan = engine_.Plan(std::move(*variant), cluster_);
    return engine_.Decide(*plan, cluster_, {.filters_only = true, .rows = rows}).feasible;
  }

  // `edits` together: a suggestion when they open a node (tried first on
  // the rows they could open), its nodes from a decision over every node.
  std::optional<Suggestion> Verify(const std::vector<const Edit*>& edits) {
    rt::PodRemedies remedies = 0;
    std::vector<std::function<bool(k8s::Pod&)>> apply;
    for (const Edit* e : edits) {
      remedies |= rt::RemedySet({e->remedy});
      apply.push_back(e->apply);
    }
    std::vector<rt::RowId> rows = Rows(remedies);
    std::optional<k8s::Pod> variant = Variant(apply);
    if (!variant || rows.empty()) return std::nullopt;
    std::unique_ptr<PodPlan> plan = engine_.Plan(std::move(*variant), cluster_);
    // Tried on the rows it could open first, unless that is most rows anyway.
    bool few = rows.size() * 2 < Table().NodeCount();
    if (few && engine_.Decide(*plan, cluster_, {.filters_only = true, .rows = rows}).feasible.empty()) return std::nullopt;
    Suggestion s;
    for (rt::RowId row : engine_.Decide(*plan, cluster_, {.filters_only = true}).feasible) {
      if (!feasible_.contains(row)) s.nodes.emplace_back(Table().NodeName(row));
    }
    if (s.nodes.empty()) return std::nullopt;
    for (const Edit* e : edits) s.changes.push_back(e->change);
    return s;
  }

  // --- combinations ------------------------------------------------------------

  // Whether `plugin` alone passes on `row` for the pod with `edit` applied.
  bool Passes(const Edit& edit, const std::string& plugin, rt::RowId row) {
    auto key = std::make_pair(&edit, plugin);
    auto cached = passes_.find(key);
    if (cached == passes_.end()) {
      std::vector<rt::RowId> rows;
      for (const auto& [r, needs] : rejected_) {
        if (std::find(needs.plugins.begin(), needs.plugins.end(), plugin) != needs.plugins.end()) rows.push_back(r);
      }
      std::sort(rows.begin(), rows.end());
      std::set<rt::RowId> pass;
      if (std::optional<k8s::Pod> variant = Variant({edit.apply}); variant && !rows.empty()) {
        std::unique_ptr<PodPlan> plan = engine_.Plan(std::move(*variant), cluster_);
        for (const rt::Plugin& p : plan->Plugins()) {
          if (p.name != plugin || !p.filter) continue;
          rt::DecideOptions options{.filters_only = true, .rows = rows};
          for (rt::RowId r : rt::Decide({p}, plan->Pod(), Table(), options).feasible) pass.insert(r);
        }
      }
      cached = passes_.emplace(key, std::move(pass)).first;
    }
    return cached->second.contains(row);
  }

  // What `row` needs to be feasible, one entry per edit: a taint to
  // tolerate (its id), a resource to lower (to what the node has free), or
  // one of the single edits; nullopt when no edit of the pod is known to
  // make it feasible. Cheap: edits are made for one node of each kind.
  struct Need {
    enum class Kind : uint8_t { kTaint, kLower, kSingle } kind;
    uint32_t id = 0;        // taint id, or index into the single edits
    std::string resource;   // kLower
    int64_t free = 0;       // kLower
    std::string Key() const {
      return kind == Kind::kTaint ? fmt::format("t{}", id) : kind == Kind::kSingle ? fmt::format("e{}", id) : "r" + resource;
    }
  };
  std::optional<std::vector<Need>> NeedsOf(rt::RowId row, const NodeNeeds& needs, const std::vector<Edit>& singles) {
    std::vector<Need> out;
    for (const std::string& plugin : needs.plugins) {
      rt::PodRemedy remedy = RemedyOf(plugin);
      if (remedy == rt::PodRemedy::kTolerate) {
        std::set<uint32_t> have;
        for (const Need& n : out) {
          if (n.kind == Need::Kind::kTaint) have.insert(n.id);
        }
        for (uint32_t id : Table().Taints(row)) {
          if (Untolerated(id) && have.insert(id).second) out.push_back({Need::Kind::kTaint, id, {}, 0});
          if (have.size() > kMaxTolerations) return std::nullopt;  // no one adds that many tolerations
        }
        continue;
      }
      if (remedy == rt::PodRemedy::kLowerRequests) {
        for (const auto& [p, reason] : needs.reasons) {
          if (p != plugin) continue;
          std::optional<std::string> name = ShortResource(p, reason);
          int64_t free = name ? Free(row, *name) : 0;
          if (free <= 0) return std::nullopt;  // `Too many pods`, nothing free: no edit of the pod helps
          out.push_back({Need::Kind::kLower, 0, *name, free});
        }
        continue;
      }
      std::optional<uint32_t> found;
      for (uint32_t i = 0; i < singles.size() && !found; ++i) {
        const Edit& e = singles[i];
        const rt::InTreePlugin* row_of = rt::FindInTreePlugin(plugin);
        bool reads = row_of != nullptr && row_of->RelievedBy(e.remedy);
        if (reads && Passes(e, plugin, row)) found = i;
      }
      if (!found) return std::nullopt;
      out.push_back({Need::Kind::kSingle, *found, {}, 0});
    }
    return out;
  }

  Edit EditFor(const Need& need, const std::vector<Edit>& singles) const {
    if (need.kind == Need::Kind::kSingle) return singles[need.id];
    if (need.kind == Need::Kind::kLower) return LowerEdit(pod_, need.resource, need.free);
    return TolerateEdit(TaintOf(need.id));
  }

  void Combinations(const std::vector<Edit>& singles, std::vector<Suggestion>& out) {
    struct Group {
      size_t rows = 0;
      std::vector<Need> needs;  // its representative's
      double slack = -1;        // the representative's share of each request free (the smallest)
    };
    std::map<std::string, Group> groups;
    for (const auto& [row, needs] : rejected_) {
      std::optional<std::vector<Need>> need = NeedsOf(row, needs, singles);
      if (!need || need->size() < 2) continue;
      std::vector<std::string> key;
      double slack = 1;  // the node that needs the smallest cuts stands for its kind
      for (const Need& n : *need) {
        key.push_back(n.Key());
        if (n.kind == Need::Kind::kLower) {
          slack = std::min(slack, static_cast<double>(n.free) / static_cast<double>(Requested(n.resource)));
        }
      }
      std::sort(key.begin(), key.end());
      Group& g = groups[fmt::format("{}", fmt::join(key, " "))];
      ++g.rows;
      if (slack > g.slack) {
        g.slack = slack;
        g.needs = std::move(*need);
      }
    }
    std::vector<Group*> order;
    for (auto& [key, g] : groups) order.push_back(&g);
    std::stable_sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
      return a->rows != b->rows ? a->rows > b->rows : a->needs.size() < b->needs.size();
    });
    for (size_t i = 0; i < order.size() && i < options_.combinations; ++i) {
      std::vector<Edit> edits;
      for (const Need& n : order[i]->needs) edits.push_back(EditFor(n, singles));
      std::vector<const Edit*> pointers;
      for (const Edit& e : edits) pointers.push_back(&e);
      if (std::optional<Suggestion> s = Verify(pointers)) out.push_back(std::move(*s));
    }
  }

  // --- on the cluster ----------------------------------------------------------

  bool FitsOn(rt::RowId row) {
    if (!plan_) plan_ = engine_.Plan(pod_, cluster_);
    rt::RowId rows[] = {row};
    return !engine_.Decide(*plan_, cluster_, {.filters_only = true, .rows = rows}).feasible.empty();
  }

  // `row` as a new, empty node named `name`: its labels (the hostname's
  // its own), taints other than the cordon's, and allocatable.
  k8s::Node Like(rt::RowId row, const std::string& name) const {
    const rt::StringPool& pool = Table().pool();
    k8s::Node node;
    node.name = name;
    for (const rt::LabelColumn& column : Table().Labels()) {
      uint32_t domain = column.domain[row];
      if (domain == 0) continue;
      std::string key(pool.Get(column.key));
      node.labels.emplace_back(key, key == kHostnameLabel ? name : std::string(pool.Get(column.value[domain])));
    }
    for (uint32_t id : Table().Taints(row)) {
      const rt::TaintEntry& e = Table().TaintDictionary()[id];
      if (pool.Get(e.key) == kUnschedulableTaint) continue;
      node.taints.push_back({std::string(pool.Get(e.key)), std::string(pool.Get(e.value)), e.effect});
    }
    for (const rt::ResourceColumn& column : Table().Resources()) {
      if (column.allocatable[row] == 0) continue;
      std::string resource(pool.Get(column.name));
      node.allocatable.emplace_back(resource, QuantityOf(resource, column.allocatable[row]));
    }
    node.capacity = node.allocatable;
    return node;
  }

  // What a node like `row` would be (Like), as bytes: its label values
  // but the hostname, taints but the cordon's, and allocatable.
  std::string ShapeKey(rt::RowId row) {
    std::string key;
    auto put = [&](uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    const rt::StringPool& pool = Table().pool();
    for (const rt::LabelColumn& column : Table().Labels()) {
      if (pool.Get(column.key) != kHostnameLabel) put(column.domain[row]);
    }
    for (uint32_t id : Table().Taints(row)) {
      if (pool.Get(Table().TaintDictionary()[id].key) != kUnschedulableTaint) put(id);
    }
    put(UINT64_MAX);
    for (const rt::ResourceColumn& column : Table().Resources()) put(static_cast<uint64_t>(column.allocatable[row]));
    for (const k8s::ResourceSlice* s : LocalSlices(row)) {  // a pod asking devices: the node's devices too
      key += s->driver;
      for (const k8s::Device& d : s->devices) {
        put(UINT64_MAX - 1);
        for (const auto& [name, a] : d.attributes) key += fmt::format("{}={}{}{},", name, a.text, a.int_value, a.bool_value);
        for (const auto& [name, q] : d.capacity) key += fmt::format("{}={},", name, q.MilliValue());
      }
    }
    return key;
  }

  // The ResourceSlices published for `row` alone (nodeName), by name, when
  // the pod asks for devices (else none: no suggestion reads them).
  std::span<const k8s::ResourceSlice* const> LocalSlices(rt::RowId row) {
    if (pod_.resource_claims.empty()) return {};
    if (!slices_by_node_) {
      slices_by_node_.emplace();
      for (const auto& [name, slice] : Table().Storage().resource_slices) {  // a map: in name order
        if (!slice.node_name.empty()) (*slices_by_node_)[slice.node_name].push_back(&slice);
      }
    }
    auto it = slices_by_node_->find(std::string(Table().NodeName(row)));
    if (it == slices_by_node_->end()) return {};
    return it->second;
  }

  // Copies of `like`'s node-local slices for a new node `name`: each pool
  // renamed (a pool named after the node takes the new name, another gets
  // `-copy`), so the copies are pools of their own whose devices no claim
  // holds; a `-copy` name of each slice.
  std::vector<k8s::ResourceSlice> SlicesFor(rt::RowId like, const std::string& name) {
    std::vector<k8s::ResourceSlice> out;
    std::string old_name(Table().NodeName(like));
    for (const k8s::ResourceSlice* s : LocalSlices(like)) {
      k8s::ResourceSlice copy = *s;
      copy.node_name = name;
      copy.pool.name = s->pool.name == old_name ? name : s->pool.name + "-copy";
      copy.name = s->name + "-copy";
      while (Table().Storage().resource_slices.contains(copy.name)) copy.name += "-copy";
      out.push_back(std::move(copy));
    }
    return out;
  }

  // A plugin the node itself answers for, whatever runs on it.
  bool NodeRejects(rt::RowId row, const NodeNeeds& needs) {
    for (const std::string& p : needs.plugins) {
      const rt::InTreePlugin* plugin = rt::FindInTreePlugin(p);
      if (plugin == nullptr) continue;
      if (plugin->node_only) return true;
      if (plugin->remedy == rt::PodRemedy::kTolerate) {  // but a node like it need not be cordoned
        for (uint32_t id : Table().Taints(row)) {
          if (Untolerated(id) && Table().pool().Get(Table().TaintDictionary()[id].key) != kUnschedulableTaint) return true;
        }
      }
    }
    return false;
  }

  // One more node of each kind the rejected nodes come in (the first
  // `node_shapes` kinds, the most common first) that the pod fits on;
  // kinds that differ only in labels are told as one, with every node it is like.
  void AddNode(std::vector<Suggestion>& out) {
    std::map<std::string, std::vector<rt::RowId>> shapes;
    std::vector<std::string> order;
    for (const auto& [row, needs] : rejected_) {
      if (NodeRejects(row, needs)) continue;
      std::string key = ShapeKey(row);
      auto& rows = shapes[key];
      if (rows.empty()) order.push_back(key);
      rows.push_back(row);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](const std::string& a, const std::string& b) { return shapes[a].size() > shapes[b].size(); });
    k8s::ResourceList requests = k8s::PodRequests(pod_);
    std::map<std::string, size_t> told;  // what the new node has -> index into out
    std::map<size_t, std::vector<std::string>> likes;  // index into out -> the nodes it is like
    // Every kind's new node at once, decided in one pass: new nodes run no
    // pods, so for the built-in plugins each answers as it would alone
    // (spread's and affinity's counts on them are 0 either way); with
    // policies, which may read anything, each is tried alone again.
    std::vector<std::pair<rt::RowId, k8s::Node>> trial;  // (the node it is like, the new node)
    for (size_t i = 0; i < order.size() && i < options_.node_shapes; ++i) {
      rt::RowId like = shapes[order[i]].front();
      std::string name = fmt::format("{}-copy", Table().NodeName(like));
      while (Table().FindNode(name)) name += "-copy";
      trial.emplace_back(like, Like(like, name));
    }
    std::vector<rt::RowId> rows;
    std::map<std::string, std::vector<k8s::ResourceSlice>> slices;  // by new node: its copies of the slices
    for (const auto& [like, node] : trial) slices[node.name] = SlicesFor(like, node.name);
    auto add_slices = [&](const std::string& node) {
      for (const k8s::ResourceSlice& s : slices[node]) cluster_.SetResourceSlice(s);
    };
    auto remove_slices = [&](const std::string& node) {
      for (const k8s::ResourceSlice& s : slices[node]) cluster_.RemoveResourceSlice(s.name);
    };
    for (const auto& [like, node] : trial) {
      if (std::optional<rt::RowId> row = cluster_.AddNode(node)) rows.push_back(*row);
      add_slices(node.name);
    }
    std::set<std::string> fit;
    if (!rows.empty()) {
      std::sort(rows.begin(), rows.end());
      if (!plan_) plan_ = engine_.Plan(pod_, cluster_);
      for (rt::RowId row : engine_.Decide(*plan_, cluster_, {.filters_only = true, .rows = rows}).feasible) {
        fit.emplace(Table().NodeName(row));
      }
    }
    for (const auto& [like, node] : trial) {
      remove_slices(node.name);
      cluster_.RemoveNode(node.name);
    }
    bool alone = trial.size() > 1 && std::any_of(plan_->Plugins().begin(), plan_->Plugins().end(), [](const rt::Plugin& p) {
      return rt::FindInTreePlugin(p.name) == nullptr;
    });
    for (const auto& [like, node] : trial) {
      if (!fit.contains(node.name)) continue;
      if (alone) {
        std::optional<rt::RowId> row = cluster_.AddNode(node);
        add_slices(node.name);
        bool fits = row && FitsOn(*row);
        remove_slices(node.name);
        cluster_.RemoveNode(node.name);
        if (!fits) continue;
      }
      const std::string& name = node.name;
      std::vector<std::string> has, asks;
      for (const auto& [r, q] : requests) {
        if (q.IsZero()) continue;
        const k8s::Quantity* a = k8s::Find(node.allocatable, r);
        has.push_back(fmt::format("{} {}", a ? k8s::ReadableAmount(r, k8s::SchedulerUnits(r, *a)) : "0", r));
        asks.push_back(fmt::format("{} {}", k8s::WrittenAmount(r, k8s::SchedulerUnits(r, q)), r));  // as the pod writes it
      }
      std::vector<std::string> taints;
      for (const k8s::Taint& t : node.taints) taints.push_back(TaintText(t));
      std::map<std::string, size_t> devices;  // by driver
      for (const k8s::ResourceSlice& s : slices[name]) devices[s.driver] += s.devices.size();
      std::vector<std::string> published;
      for (const auto& [driver, n] : devices) published.push_back(fmt::format("{} {} device{}", n, driver, n == 1 ? "" : "s"));
      std::string what = fmt::format("{} allocatable{}{}; the pod asks for {}", fmt::join(has, ", "),
                                     taints.empty() ? std::string() : fmt::format(", taints {}", fmt::join(taints, ", ")),
                                     published.empty() ? std::string()
                                                       : fmt::format(", its ResourceSlices' {} free", fmt::join(published, ", ")),
                                     asks.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(asks, ", ")));
      auto [it, added] = told.emplace(what, out.size());
      if (added) {
        Suggestion s;
        s.cluster = true;
        s.changes.push_back({"add-node", ""});
        out.push_back(std::move(s));
      }
      Suggestion& s = out[it->second];
      s.nodes.push_back(name);
      std::vector<std::string>& like_nodes = likes[it->second];
      like_nodes.emplace_back(Table().NodeName(like));
      s.changes.front().words = fmt::format("add one more node like {} (its labels; {}; nothing running on it)",
                                            fmt::join(like_nodes, " or "), what);
      s.changes.front().fields = {{"like", fmt::format("{}", fmt::join(like_nodes, ","))}};
    }
  }

  // The fewest pods whose removal frees `row`, reprieving the smallest
  // first; empty when removing every pod does not free it.
  std::vector<std::string> Victims(rt::RowId row) {
    std::vector<std::pair<double, std::string>> pods;
    for (const rt::NodeTable::PodOnRow& p : Table().PodsBoundTo(row)) {
      double size = 0;
      for (const auto& [column, amount] : p.requests) {
        const rt::ResourceColumn& c = Table().Resources()[column];
        if (c.allocatable[row] > 0) size += static_cast<double>(amount) / static_cast<double>(c.allocatable[row]);
      }
      pods.emplace_back(size, std::string(p.key));
    }
    std::sort(pods.begin(), pods.end());
    for (const auto& [size, key] : pods) cluster_.SetPodAside(key);
    std::vector<std::string> victims;
    if (!FitsOn(row)) {
      for (const auto& [size, key] : pods) cluster_.PutPodBack(key);
      return victims;
    }
    for (const auto& [size, key] : pods) {
      cluster_.PutPodBack(key);
      if (FitsOn(row)) continue;
      cluster_.SetPodAside(key);
      victims.push_back(key);
    }
    for (const std::string& key : victims) cluster_.PutPodBack(key);
    return victims;
  }

  void RemovePods(std::vector<Suggestion>& out) {
    std::vector<std::pair<size_t, rt::RowId>> candidates;  // (pods on it, row)
    for (const auto& [row, needs] : rejected_) {
      bool resolvable = !needs.unresolvable;
      size_t pods = Table().PodsBoundTo(row).size();
      if (resolvable && pods > 0 && pods <= options_.pods_per_removal) candidates.emplace_back(pods, row);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (candidates.size() > options_.removal_nodes) candidates.resize(options_.removal_nodes);
    std::vector<Suggestion> found;
    for (const auto& [count, row] : candidates) {
      std::vector<std::string> victims = Victims(row);
      if (victims.empty()) continue;
      Suggestion s;
      s.cluster = true;
      std::string node(Table().NodeName(row));
      s.changes.push_back({"remove-pods",
                           fmt::format("remove {} pod{} from {}", victims.size(), victims.size() == 1 ? "" : "s", node),
                           {{"node", node}}});
      s.nodes.push_back(node);
      s.pods = std::move(victims);
      s.note = "priority ignored: preemption evicts only pods of lower priority than this one; where the removed pods "
               "would go is not checked";
      found.push_back(std::move(s));
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Suggestion& a, const Suggestion& b) { return a.pods.size() < b.pods.size(); });
    if (found.size() > options_.removals_kept) found.resize(options_.removals_kept);
    for (Suggestion& s : found) out.push_back(std::move(s));
  }

  Engine& engine_;
  Cluster& cluster_;
  const k8s::Pod& pod_;
  const SuggestOptions& options_;
  std::set<rt::RowId> feasible_;
  std::set<std::string> failing_;  // every plugin that rejects some node
  std::vector<std::pair<rt::RowId, NodeNeeds>> rejected_;
  std::map<std::pair<const Edit*, std::string>, std::set<rt::RowId>> passes_;
  std::unique_ptr<PodPlan> plan_;  // the pod as it is (cluster changes)
  // LocalSlices' index: node name -> its node-local ResourceSlices, by name.
  std::optional<std::unordered_map<std::string, std::vector<const k8s::ResourceSlice*>>> slices_by_node_;
  std::vector<int8_t> untolerated_;  // by taint id: -1 not known yet
  std::map<std::string, int64_t> requested_;  // the pod's effective requests
};

}  // namespace

std::vector<Suggestion> Suggest(Engine& engine, Cluster& cluster, const k8s::Pod& pod, const rt::Placement& placement,
                                const SuggestOptions& options) {
  return Suggester(engine, cluster, pod, placement, options).Run();
}

}  // namespace policy::engine
