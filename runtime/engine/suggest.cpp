// What would make a pod fit (suggest.h): candidate edits from the pod and
// the reasons its nodes gave, each tried by deciding again.
//
// Trying an edit decides only the rows it could open: a node stays
// rejected by every plugin the edit cannot make pass (a plugin reads only
// its own fields of the pod; PodTopologySpread also reads the pod's node
// affinity and tolerations through its inclusion policies; a policy may
// read anything). A suggestion that opens nodes is then decided again over
// every node, and its nodes are that decision's.

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
#include "k8s/selectors.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/preemption.h"
#include "runtime/engine/template_claims.h"
#include "runtime/sched/decide.h"
#include "runtime/sched/profile.h"

namespace policy::engine {
namespace {

constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";
// The most tolerations suggested: single edits, and those one node needs.
constexpr size_t kMaxTolerations = 8;
constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

std::string TaintText(const k8s::Taint& t) {
  return t.value.empty() ? fmt::format("{}:{}", t.key, k8s::ToString(t.effect))
                         : fmt::format("{}={}:{}", t.key, t.value, k8s::ToString(t.effect));
}

k8s::Quantity QuantityOf(std::string_view name, int64_t units) {
  return name == "cpu" ? k8s::Quantity::FromMilli(units) : k8s::Quantity::FromUnits(units);
}

int64_t RequestUnits(const k8s::Pod& pod, std::string_view name) {
  k8s::ResourceList requests = k8s::PodRequests(pod);
  const k8s::Quantity* q = k8s::Find(requests, name);
  return q ? k8s::SchedulerUnits(name, *q) : 0;
}

int64_t UnitsIn(const k8s::ResourceList& list, std::string_view name) {
  const k8s::Quantity* q = k8s::Find(list, name);
  return q ? k8s::SchedulerUnits(name, *q) : 0;
}

void SetUnits(k8s::ResourceList& list, std::string_view name, int64_t units) {
  for (auto& [n, q] : list) {
    if (n == name) {
      q = QuantityOf(name, units);
      return;
    }
  }
  if (units > 0) list.emplace_back(std::string(name), QuantityOf(name, units));
}

// Lowers the pod's effective request of `name` to `target` units (or less):
// the app containers' requests first, then every init container's capped.
// False when it cannot (the overhead alone asks more).
bool LowerRequest(k8s::Pod& pod, std::string_view name, int64_t target) {
  if (UnitsIn(pod.overhead, name) > target) return false;
  // Set at the pod level (spec.resources.requests), the pod-level request
  // is what counts: it is lowered, and the containers cut to fit in it.
  if (k8s::IsPodLevelResource(name) && k8s::Find(pod.pod_requests, name) != nullptr) {
    std::erase_if(pod.pod_requests, [&](const auto& entry) { return entry.first == name; });
    bool ok = RequestUnits(pod, name) <= target || LowerRequest(pod, name, target);  // the containers within it
    SetUnits(pod.pod_requests, name, target - UnitsIn(pod.overhead, name));
    return ok && RequestUnits(pod, name) <= target;
  }
  int64_t excess = RequestUnits(pod, name) - target;
  for (auto it = pod.containers.rbegin(); it != pod.containers.rend() && excess > 0; ++it) {
    int64_t have = UnitsIn(it->requests, name);
    int64_t cut = std::min(have, excess);
    if (cut > 0) SetUnits(it->requests, name, have - cut);
    excess -= cut;
  }
  int64_t cap = target - UnitsIn(pod.overhead, name);
  for (k8s::Container& c : pod.init_containers) {
    if (UnitsIn(c.requests, name) > cap) SetUnits(c.requests, name, cap);
  }
  // Sidecars count in both sums; cut them last.
  for (k8s::Container& c : pod.init_containers) {
    int64_t over = RequestUnits(pod, name) - target;
    if (over <= 0) break;
    if (!c.restartable) continue;
    int64_t have = UnitsIn(c.requests, name);
    SetUnits(c.requests, name, have - std::min(have, over));
  }
  return RequestUnits(pod, name) <= target;
}

// One edit of the pod.
struct Edit {
  Change change;
  std::function<bool(k8s::Pod&)> apply;     // false: cannot be applied to this pod
  rt::PodRemedy remedy = rt::PodRemedy::kNone;  // its kind: the built-ins it may make pass are those its rows say
  std::string group;                        // what it edits, for combinations ("lower cpu")
};

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
      if (!TemplateClaims(out)) ClaimEdits(pod_, out);
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
    if (remedies.contains(rt::PodRemedy::kNodeAffinity)) NodeAffinityEdits(edits);
    if (remedies.contains(rt::PodRemedy::kSpread)) SpreadEdits(edits);
    if (remedies.contains(rt::PodRemedy::kPodAffinity)) PodAffinityEdits(edits);
    if (remedies.contains(rt::PodRemedy::kHostPorts)) HostPortEdits(edits);
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

  Edit Tolerate(const k8s::Taint& taint) const {
    Edit e;
    bool cordon = taint.key == kUnschedulableTaint;
    e.change = {"tolerate", cordon ? fmt::format("tolerate `{}` (the nodes are cordoned; uncordoning them is the usual fix)",
                                                 TaintText(taint))
                                   : fmt::format("tolerate the taint `{}`", TaintText(taint)),
                {{"key", taint.key}, {"value", taint.value}, {"effect", std::string(k8s::ToString(taint.effect))}}};
    k8s::Toleration t;
    t.key = taint.key;
    t.op = taint.value.empty() ? k8s::TolerationOp::kExists : k8s::TolerationOp::kEqual;
    t.value = taint.value;
    t.effect = taint.effect;
    e.apply = [t](k8s::Pod& p) {
      p.tolerations.push_back(t);
      return true;
    };
    e.remedy = rt::PodRemedy::kTolerate;
    e.group = "tolerate " + TaintText(taint);
    return e;
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
    for (const auto& [n, id] : ranked) edits.push_back(Tolerate(TaintOf(id)));
  }

  int64_t Free(rt::RowId row, std::string_view name) const {
    const rt::ResourceColumn* column = Table().Resource(name);
    return column ? column->allocatable[row] - column->requested[row] : 0;
  }

  // `name` and `target` rounded down to a whole MiB for bytes (a value people write).
  Edit Lower(const std::string& name, int64_t target) const {
    if (k8s::BytesResource(name) && target >= (int64_t{1} << 20)) target &= ~((int64_t{1} << 20) - 1);
    Edit e;
    e.change = {"lower-request", fmt::format("lower the pod's {} request from {} to {}", name,
                                             k8s::WrittenAmount(name, Requested(name)), k8s::WrittenAmount(name, target)),
                {{"resource", name}, {"from", k8s::WrittenAmount(name, Requested(name))}, {"to", k8s::WrittenAmount(name, target)}}};
    e.apply = [name, target](k8s::Pod& p) { return LowerRequest(p, name, target); };
    e.remedy = rt::PodRemedy::kLowerRequests;
    e.group = "lower " + name;
    return e;
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
      for (auto it = values.begin(); it != values.end() && n < kValues; ++it, ++n) edits.push_back(Lower(name, *it));
    }
  }

  void NodeAffinityEdits(std::vector<Edit>& edits) const {
    for (const auto& [key, value] : pod_.node_selector) {
      Edit e;
      e.change = {"drop-node-selector", fmt::format("drop `{}: {}` from the pod's nodeSelector", key, value), {{"key", key}}};
      std::string k = key;
      e.apply = [k](k8s::Pod& p) {
        std::erase_if(p.node_selector, [&](const auto& kv) { return kv.first == k; });
        return true;
      };
      e.remedy = rt::PodRemedy::kNodeAffinity;
      e.group = "nodeSelector " + key;
      edits.push_back(std::move(e));
    }
    const std::optional<k8s::NodeAffinity>& affinity = pod_.affinity.node_affinity;
    if (!affinity || !affinity->required) return;
    const std::vector<k8s::NodeSelectorTerm>& terms = *affinity->required;
    for (size_t t = 0; t < terms.size(); ++t) {
      size_t requirements = terms[t].match_expressions.size() + terms[t].match_fields.size();
      if (requirements < 2) continue;  // an empty term matches nothing: dropping its last requirement relaxes nothing
      for (int fields = 0; fields < 2; ++fields) {
        const auto& list = fields ? terms[t].match_fields : terms[t].match_expressions;
        for (size_t i = 0; i < list.size(); ++i) {
          Edit e;
          std::string text = k8s::RequirementText(list[i]);
          e.change = {"drop-node-affinity-requirement",
                      terms.size() == 1
                          ? fmt::format("drop `{}` from the pod's required node affinity", text)
                          : fmt::format("drop `{}` from term {} of the pod's required node affinity", text, t + 1),
                      {{"term", static_cast<int64_t>(t)}, {"requirement", text}}};
          e.apply = [t, fields, i](k8s::Pod& p) {
            k8s::NodeSelectorTerm& term = (*p.affinity.node_affinity->required)[t];
            auto& l = fields ? term.match_fields : term.match_expressions;
            l.erase(l.begin() + static_cast<ptrdiff_t>(i));
            return true;
          };
          e.remedy = rt::PodRemedy::kNodeAffinity;
          e.group = "node affinity " + text;
          edits.push_back(std::move(e));
        }
      }
    }
    Edit e;
    e.change = {"drop-node-affinity", terms.size() == 1 && !terms[0].match_expressions.empty() &&
                                              terms[0].match_expressions.size() + terms[0].match_fields.size() == 1
                                          ? fmt::format("drop the pod's required node affinity (`{}`)",
                                                        k8s::RequirementText(terms[0].match_expressions[0]))
                                          : std::string("drop the pod's required node affinity")};
    e.apply = [](k8s::Pod& p) {
      p.affinity.node_affinity->required.reset();
      return true;
    };
    e.remedy = rt::PodRemedy::kNodeAffinity;
    e.group = "node affinity";
    edits.push_back(std::move(e));
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

  void PodAffinityEdits(std::vector<Edit>& edits) const {
    for (int anti = 0; anti < 2; ++anti) {
      const std::optional<k8s::PodAffinity>& affinity = anti ? pod_.affinity.pod_anti_affinity : pod_.affinity.pod_affinity;
      if (!affinity) continue;
      for (size_t i = 0; i < affinity->required.size(); ++i) {
        const k8s::PodAffinityTerm& term = affinity->required[i];
        Edit e;
        e.change = {anti ? "drop-pod-anti-affinity-term" : "drop-pod-affinity-term",
                    fmt::format("drop the required pod {}affinity term on `{}` selecting `{}`", anti ? "anti-" : "",
                                term.topology_key, k8s::SelectorText(term.label_selector)),
                    {{"term", static_cast<int64_t>(i)}}};
        e.apply = [anti, i](k8s::Pod& p) {
          auto& terms = (anti ? p.affinity.pod_anti_affinity : p.affinity.pod_affinity)->required;
          terms.erase(terms.begin() + static_cast<ptrdiff_t>(i));
          return true;
        };
        e.remedy = rt::PodRemedy::kPodAffinity;
        e.group = fmt::format("pod {}affinity {}", anti ? "anti-" : "", i);
        edits.push_back(std::move(e));
      }
    }
  }

  void HostPortEdits(std::vector<Edit>& edits) const {
    for (size_t c = 0; c < pod_.containers.size(); ++c) {
      for (size_t i = 0; i < pod_.containers[c].host_ports.size(); ++i) {
        const k8s::HostPort& port = pod_.containers[c].host_ports[i];
        Edit e;
        e.change = {"drop-host-port",
                    fmt::format("drop hostPort {}/{} of container `{}`", port.port, port.protocol, pod_.containers[c].name),
                    {{"container", pod_.containers[c].name}, {"hostPort", int64_t{port.port}}, {"protocol", port.protocol}}};
        e.apply = [c, i](k8s::Pod& p) {
          auto& ports = p.containers[c].host_ports;
          ports.erase(ports.begin() + static_cast<ptrdiff_t>(i));
          return true;
        };
        e.remedy = rt::PodRemedy::kHostPorts;
        e.group = fmt::format("host port {}/{}", c, i);
        edits.push_back(std::move(e));
      }
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

  // --- DynamicResources: edits of what the pod's claims ask ------------------
  //
  // A claim is an object of its own (made from the pod's template, or
  // named by the pod): each edit replaces the claim in the cluster while
  // the pod is decided again, and puts it back. For every request of every
  // claim still to allocate: the most devices fewer than asked that open a
  // node (a bisection over the count), each CEL selector dropped, and each
  // other DeviceClass in its place. They share the single edits' budget.

  // Where a person changes the claim: the pod's template, else the claim.
  static std::string ClaimWhere(const k8s::Pod& pod, const k8s::ResourceClaim& claim) {
    for (const k8s::PodResourceClaimStatus& status : pod.resource_claim_statuses) {
      if (status.claim_name != claim.name) continue;
      for (const k8s::PodResourceClaim& entry : pod.resource_claims) {
        if (entry.name == status.name && !entry.template_name.empty()) return "template " + entry.template_name;
      }
    }
    return "claim " + claim.name;
  }

  std::optional<Suggestion> TryClaim(const k8s::Pod& pod, const k8s::ResourceClaim& original, k8s::ResourceClaim edited,
                                     Change change) {
    ++claim_edits_;
    cluster_.SetResourceClaim(std::move(edited));
    std::unique_ptr<PodPlan> plan = engine_.Plan(pod, cluster_);
    std::vector<rt::RowId> feasible = engine_.Decide(*plan, cluster_, {.filters_only = true}).feasible;
    plan.reset();
    cluster_.SetResourceClaim(original);
    Suggestion s;
    for (rt::RowId row : feasible) {
      if (!feasible_.contains(row)) s.nodes.emplace_back(Table().NodeName(row));
    }
    if (s.nodes.empty()) return std::nullopt;
    s.changes.push_back(std::move(change));
    return s;
  }

  // A pod whose template claims are not made yet (kube-scheduler: `pod
  // "NS/NAME": ResourceClaim not created yet`): the resourceclaim
  // controller's work, tried as a cluster change — alone, else with each
  // claim edit (in the template) that then opens a node. False when the pod
  // has no claim to make.
  bool TemplateClaims(std::vector<Suggestion>& out) {
    k8s::Pod pod = pod_;
    std::vector<std::string> made = MakeTemplateClaims(pod, cluster_);
    if (made.empty()) return false;
    Change create{"create-claims",
                  fmt::format("the ResourceClaim{} {} made from the pod's template{}, as the resourceclaim controller "
                              "makes {} once the pod exists",
                              made.size() == 1 ? "" : "s", fmt::join(made, ", "), made.size() == 1 ? "" : "s",
                              made.size() == 1 ? "it" : "them"),
                  {{"claims", fmt::format("{}", fmt::join(made, ","))}}};
    Suggestion alone;
    alone.cluster = true;
    {
      std::unique_ptr<PodPlan> plan = engine_.Plan(pod, cluster_);
      for (rt::RowId row : engine_.Decide(*plan, cluster_, {.filters_only = true}).feasible) {
        if (!feasible_.contains(row)) alone.nodes.emplace_back(Table().NodeName(row));
      }
    }
    if (!alone.nodes.empty()) {
      alone.changes.push_back(create);
      out.push_back(std::move(alone));
    } else {
      std::vector<Suggestion> edits;
      ClaimEdits(pod, edits);
      for (Suggestion& e : edits) {
        e.cluster = true;
        e.changes.insert(e.changes.begin(), create);
        out.push_back(std::move(e));
      }
    }
    for (const std::string& name : made) cluster_.RemoveResourceClaim(pod.namespace_name, name);
    return true;
  }

  void ClaimEdits(const k8s::Pod& pod, std::vector<Suggestion>& out) {
    // The pod's claims not allocated yet, looked up by name (also when the
    // PreFilter refuses them, e.g. for a class that does not exist).
    std::vector<k8s::ResourceClaim> originals;  // copies: the storage changes while edits are tried
    for (const k8s::PodResourceClaim& entry : pod.resource_claims) {
      std::string name = entry.claim_name;
      for (const k8s::PodResourceClaimStatus& status : pod.resource_claim_statuses) {
        if (status.name == entry.name) name = status.claim_name;
      }
      const k8s::ResourceClaim* claim = rt::StorageObjects::Get(Table().Storage().resource_claims,
                                                                rt::StorageObjects::ClaimKey(pod.namespace_name, name));
      if (claim != nullptr && !claim->allocation) originals.push_back(*claim);
    }
    std::vector<std::string> classes;
    for (const auto& [name, c] : Table().Storage().device_classes) classes.push_back(name);
    std::sort(classes.begin(), classes.end());
    auto budget = [&] { return claim_edits_ < options_.edits; };
    for (const k8s::ResourceClaim& original : originals) {
      std::string where = ClaimWhere(pod, original);
      for (size_t r = 0; r < original.spec.requests.size(); ++r) {
        const k8s::DeviceRequest& request = original.spec.requests[r];
        for (size_t a = 0; a < request.alternatives.size(); ++a) {
          const k8s::DeviceSubRequest& sub = request.alternatives[a];
          std::string name = request.first_available ? request.name + "/" + sub.name : request.name;
          auto edited = [&](auto&& edit) {
            k8s::ResourceClaim c = original;
            edit(c.spec.requests[r].alternatives[a]);
            return c;
          };
          auto fields = [&](std::vector<std::pair<std::string, std::variant<std::string, int64_t>>> more) {
            std::vector<std::pair<std::string, std::variant<std::string, int64_t>>> f = {
                {where.starts_with("template ") ? "template" : "claim", where.substr(where.find(' ') + 1)},
                {"request", name}};
            f.insert(f.end(), more.begin(), more.end());
            return f;
          };
          // Fewer devices: the largest count that opens a node.
          std::optional<Suggestion> fewer;
          for (int64_t lo = 1, hi = sub.mode == k8s::AllocationMode::kExactCount ? sub.count - 1 : 0;
               lo <= hi && budget();) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            Change change{"lower-device-count",
                          fmt::format("ask for {} device{} instead of {} in request `{}` of {}", mid, mid == 1 ? "" : "s",
                                      sub.count, name, where),
                          fields({{"from", sub.count}, {"to", mid}})};
            std::optional<Suggestion> s = TryClaim(
                pod, original, edited([&](k8s::DeviceSubRequest& x) { x.count = mid; }), std::move(change));
            if (s) {
              fewer = std::move(s);
              lo = mid + 1;
            } else {
              hi = mid - 1;
            }
          }
          if (fewer) out.push_back(std::move(*fewer));
          for (size_t i = 0; i < sub.selectors.size() && budget(); ++i) {
            const k8s::CelSelector& selector = sub.selectors[i];
            Change change{"drop-device-selector",
                          fmt::format("drop the selector `{}` from request `{}` of {}", selector.expression, name, where),
                          fields({{"selector", selector.expression}})};
            auto drop = [i](k8s::DeviceSubRequest& x) { x.selectors.erase(x.selectors.begin() + static_cast<ptrdiff_t>(i)); };
            if (auto s = TryClaim(pod, original, edited(drop), std::move(change))) out.push_back(std::move(*s));
          }
          for (const std::string& other : classes) {
            if (other == sub.class_name || !budget()) continue;
            Change change{"use-device-class",
                          fmt::format("use DeviceClass `{}` instead of `{}` in request `{}` of {}", other,
                                      sub.class_name, name, where),
                          fields({{"from", sub.class_name}, {"to", other}})};
            auto use = [&other](k8s::DeviceSubRequest& x) { x.class_name = other; };
            if (auto s = TryClaim(pod, original, edited(use), std::move(change))) out.push_back(std::move(*s));
          }
        }
      }
    }
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
    if (need.kind == Need::Kind::kLower) return Lower(need.resource, need.free);
    return Tolerate(TaintOf(need.id));
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
  size_t claim_edits_ = 0;  // claim edits tried (DynamicResources)
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
