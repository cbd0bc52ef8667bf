// Scheduling lints of workload manifests against a snapshot
// (manifest_lints.h). Node-level facts — labels, taints, cordons,
// allocatable — are read from the table once; each lint reads them with the
// pod and points at the pod's YAML.

#include "runtime/tooling/manifest_lints.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/node_match.h"
#include "k8s/object_reader.h"
#include "k8s/pod_resources.h"
#include "k8s/quantity.h"
#include "k8s/selectors.h"
#include "k8s/strict_fields.h"
#include "support/suggest.h"
#include "runtime/engine/cluster.h"

namespace policy::tooling {
namespace {

struct NodeFacts {
  std::string name;
  std::unordered_map<std::string, std::string> labels;
  std::vector<k8s::Taint> taints;
  bool unschedulable = false;
  std::map<std::string, int64_t> allocatable;  // kube-scheduler's units
  const std::string* Label(std::string_view key) const {
    auto it = labels.find(std::string(key));
    return it == labels.end() ? nullptr : &it->second;
  }
};

std::vector<NodeFacts> ReadNodes(const rt::NodeTable& table) {
  std::vector<NodeFacts> nodes;
  std::vector<size_t> index(table.RowCount(), SIZE_MAX);
  for (rt::RowId row : table.LiveRows()) {
    index[row] = nodes.size();
    NodeFacts n;
    n.name = std::string(table.NodeName(row));
    n.unschedulable = table.Unschedulable()[row] != 0;
    for (uint32_t id : table.Taints(row)) {
      const rt::TaintEntry& e = table.TaintDictionary()[id];
      n.taints.push_back({std::string(table.pool().Get(e.key)), std::string(table.pool().Get(e.value)), e.effect});
    }
    nodes.push_back(std::move(n));
  }
  for (const rt::LabelColumn& column : table.Labels()) {
    std::string key(table.pool().Get(column.key));
    for (rt::RowId row : table.LiveRows()) {
      if (uint32_t d = column.domain[row]) nodes[index[row]].labels.emplace(key, table.pool().Get(column.value[d]));
    }
  }
  for (const rt::ResourceColumn& column : table.Resources()) {
    std::string name(table.pool().Get(column.name));
    for (rt::RowId row : table.LiveRows()) nodes[index[row]].allocatable[name] = column.allocatable[row];
  }
  return nodes;
}

std::optional<int64_t> Integer(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

bool Satisfies(const k8s::SelectorRequirement& r, const NodeFacts& n, bool field) {
  const std::string* value = field ? (r.key == "metadata.name" ? &n.name : nullptr) : n.Label(r.key);
  return k8s::RequirementHolds(r, value != nullptr ? std::optional<std::string_view>(*value) : std::nullopt);
}

bool Satisfies(const k8s::NodeSelectorTerm& term, const NodeFacts& n) {
  auto label = [&](std::string_view key) -> std::optional<std::string_view> {
    const std::string* value = n.Label(key);
    return value != nullptr ? std::optional<std::string_view>(*value) : std::nullopt;
  };
  return k8s::TermMatches(term, label, n.name);
}

// The pod spec of a Pod or of a workload's template.
k8s::NodeRef PodSpec(k8s::NodeRef object, std::string_view kind) {
  k8s::NodeRef spec = object.Get("spec");
  if (kind == "Pod") return spec;
  if (kind == "CronJob") spec = spec.Get("jobTemplate").Get("spec");
  return spec.Get("template").Get("spec");
}

// The span of key `key` in mapping `map`, or the mapping's.
Span KeySpan(k8s::NodeRef map, std::string_view key) {
  for (uint32_t i = 0; map.IsMapping() && i < map.Size(); ++i) {
    if (map.KeyAt(i).Text() == key) return map.KeyAt(i).GetSpan();
  }
  return map.GetSpan();
}

Span Or(Span a, Span b) { return a.Valid() ? a : b; }

class Linter final : public k8s::ObjectVisitor {
 public:
  Linter(const engine::Cluster* cluster, std::set<std::string> manifest_classes, DiagnosticSink& diags)
      : cluster_(cluster), manifest_classes_(std::move(manifest_classes)), diags_(diags) {
    if (cluster_) nodes_ = ReadNodes(cluster_->Table());
  }

  void Visit(k8s::NodeRef object, std::string_view default_kind) override {
    if (!object.IsMapping()) return;
    std::string_view kind = k8s::KindOf(object, default_kind);
    if (kind != "Pod" && !k8s::IsWorkloadKind(kind)) return;
    std::optional<k8s::Pod> pod = k8s::DecodePodOrTemplate(object, default_kind, diags_);
    if (!pod) return;
    k8s::CheckUnknownFields(object, kind, k8s::FieldValidation::kWarn, diags_);  // a lint warns
    spec_ = PodSpec(object, kind);
    object_ = object;
    if (cluster_) Lint(*pod);
    pods_.push_back(std::move(*pod));
  }

  std::vector<k8s::Pod> TakePods() { return std::move(pods_); }

 private:
  std::string Who(const k8s::Pod& pod) const {
    return pod.template_of.empty() ? fmt::format("pod `{}/{}`", pod.namespace_name, pod.name)
                                   : fmt::format("`{}`'s pods", pod.template_of);
  }

  void Lint(const k8s::Pod& pod) {
    eligible_.clear();
    for (const NodeFacts& n : nodes_) {
      if (Eligible(pod, n)) eligible_.push_back(&n);
    }
    NodeSelector(pod);
    NodeAffinity(pod);
    TopologyKeys(pod);
    AntiAffinityReplicas(pod);
    MinDomains(pod);
    Requests(pod);
    Tolerations(pod);
    PriorityClass(pod);
    Preferences(pod);
  }

  bool MatchesSelectorAndAffinity(const k8s::Pod& pod, const NodeFacts& n) const {
    for (const auto& [key, value] : pod.node_selector) {
      const std::string* have = n.Label(key);
      if (!have || *have != value) return false;
    }
    const auto& affinity = pod.affinity.node_affinity;
    if (affinity && affinity->required) {
      bool any = std::any_of(affinity->required->begin(), affinity->required->end(),
                             [&](const k8s::NodeSelectorTerm& t) { return Satisfies(t, n); });
      if (!any) return false;
    }
    return true;
  }

  // What the node-level filters let the pod onto: its selector and
  // affinity, taints it tolerates, not cordoned.
  bool Eligible(const k8s::Pod& pod, const NodeFacts& n) const {
    if (!MatchesSelectorAndAffinity(pod, n)) return false;
    if (n.unschedulable) {
      k8s::Taint cordon{"node.kubernetes.io/unschedulable", "", k8s::TaintEffect::kNoSchedule};
      if (!k8s::ToleratedBy(pod.tolerations, cordon)) return false;
    }
    return std::none_of(n.taints.begin(), n.taints.end(),
                        [&](const k8s::Taint& taint) { return k8s::Repels(pod.tolerations, taint); });
  }

  // Values of label `key` on the nodes, most common first (for help).
  std::string ValuesOf(std::string_view key) const {
    std::map<std::string, size_t> count;
    for (const NodeFacts& n : nodes_) {
      if (const std::string* v = n.Label(key)) ++count[*v];
    }
    std::vector<std::pair<size_t, std::string>> order;
    for (const auto& [v, c] : count) order.emplace_back(c, v);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> shown;
    for (size_t i = 0; i < order.size() && i < 6; ++i) shown.push_back(fmt::format("`{}`", order[i].second));
    return fmt::format("{}{}", fmt::join(shown, ", "), order.size() > 6 ? fmt::format(" and {} more", order.size() - 6) : "");
  }

  std::string KeyHelp(std::string_view key) const {
    bool present = std::any_of(nodes_.begin(), nodes_.end(), [&](const NodeFacts& n) { return n.Label(key); });
    if (present) return fmt::format("the nodes' values of `{}`: {}", key, ValuesOf(key));
    std::set<std::string> keys;
    for (const NodeFacts& n : nodes_) {
      for (const auto& [k, v] : n.labels) keys.insert(k);
    }
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::string_view close = Closest(key, views);
    return close.empty() ? fmt::format("no node has a label `{}`", key)
                         : fmt::format("no node has a label `{}`; did you mean `{}`?", key, close);
  }

  void NodeSelector(const k8s::Pod& pod) {
    k8s::NodeRef map = spec_.Get("nodeSelector");
    bool each_matches = true;
    for (const auto& entry : pod.node_selector) {
      const std::string& key = entry.first;
      const std::string& value = entry.second;
      size_t matching = std::count_if(nodes_.begin(), nodes_.end(), [&](const NodeFacts& n) {
        const std::string* have = n.Label(key);
        return have && *have == value;
      });
      if (matching > 0) continue;
      each_matches = false;
      Diagnostic& d = diags_.Error(DiagCode::kNoNodeMatches, Or(KeySpan(map, key), object_.GetSpan()),
                                   fmt::format("no node of the snapshot has `{}: {}`", key, value),
                                   fmt::format("none of {} nodes", nodes_.size()));
      d.help = KeyHelp(key);
    }
    if (each_matches && !pod.node_selector.empty()) {
      bool all = std::any_of(nodes_.begin(), nodes_.end(), [&](const NodeFacts& n) {
        return std::all_of(pod.node_selector.begin(), pod.node_selector.end(), [&](const auto& kv) {
          const std::string* have = n.Label(kv.first);
          return have && *have == kv.second;
        });
      });
      if (!all) {
        diags_.Error(DiagCode::kNoNodeMatches, Or(map.GetSpan(), object_.GetSpan()),
                     "each entry of the nodeSelector matches some node, but no node matches them all",
                     "no node has every label");
      }
    }
  }

  void NodeAffinity(const k8s::Pod& pod) {
    const auto& affinity = pod.affinity.node_affinity;
    if (!affinity || !affinity->required) return;
    k8s::NodeRef required = spec_.Get("affinity").Get("nodeAffinity").Get("requiredDuringSchedulingIgnoredDuringExecution");
    bool any = false;
    for (const k8s::NodeSelectorTerm& t : *affinity->required) {
      any = any || std::any_of(nodes_.begin(), nodes_.end(), [&](const NodeFacts& n) { return Satisfies(t, n); });
    }
    if (any) {
      bool with_selector = std::any_of(nodes_.begin(), nodes_.end(),
                                       [&](const NodeFacts& n) { return MatchesSelectorAndAffinity(pod, n); });
      if (!with_selector && !pod.node_selector.empty()) {
        diags_.Error(DiagCode::kNoNodeMatches, Or(required.GetSpan(), object_.GetSpan()),
                     "the required node affinity and the nodeSelector each match some node, but no node both",
                     "no node satisfies this and the nodeSelector");
      }
      return;
    }
    Diagnostic& d = diags_.Error(DiagCode::kNoNodeMatches, Or(required.GetSpan(), object_.GetSpan()),
                                 "no node of the snapshot satisfies the required node affinity",
                                 fmt::format("none of {} nodes", nodes_.size()));
    // Which requirements no node satisfies: the likely typo.
    for (const k8s::NodeSelectorTerm& t : *affinity->required) {
      for (int fields = 0; fields < 2; ++fields) {
        for (const k8s::SelectorRequirement& r : fields ? t.match_fields : t.match_expressions) {
          bool some = std::any_of(nodes_.begin(), nodes_.end(), [&](const NodeFacts& n) { return Satisfies(r, n, fields); });
          if (some) continue;
          d.notes.push_back(fmt::format("no node satisfies `{}`", k8s::RequirementText(r)));
          if (!fields && r.span.Valid()) d.secondary.push_back({r.span, "no node satisfies this"});
          if (!fields && d.help.empty()) d.help = KeyHelp(r.key);
        }
      }
    }
  }

  bool HasKey(std::string_view key) const {
    return std::any_of(nodes_.begin(), nodes_.end(), [&](const NodeFacts& n) { return n.Label(key); });
  }

  void TopologyKeys(const k8s::Pod& pod) {
    for (const k8s::TopologySpreadConstraint& c : pod.topology_spread) {
      if (HasKey(c.topology_key)) continue;
      bool hard = c.when_unsatisfiable == k8s::WhenUnsatisfiable::kDoNotSchedule;
      Diagnostic& d = (hard ? diags_.Error(DiagCode::kMissingTopologyKey, Or(c.span, spec_.GetSpan()), "", "")
                            : diags_.Warning(DiagCode::kMissingTopologyKey, Or(c.span, spec_.GetSpan()), "", ""));
      d.message = fmt::format("no node has the topology key `{}`", c.topology_key);
      d.primary.message = hard ? "DoNotSchedule: every node fails this constraint" : "ScheduleAnyway: it scores nothing";
      d.help = KeyHelp(c.topology_key);
    }
    auto terms = [&](const std::optional<k8s::PodAffinity>& a, bool anti) {
      if (!a) return;
      for (const k8s::PodAffinityTerm& t : a->required) {
        if (HasKey(t.topology_key)) continue;
        Diagnostic& d = diags_.Error(DiagCode::kMissingTopologyKey, Or(t.span, spec_.GetSpan()),
                                     fmt::format("no node has the topology key `{}`", t.topology_key),
                                     anti ? "every node passes this term: it keeps nothing apart"
                                          : "no node passes this term");
        d.help = KeyHelp(t.topology_key);
      }
      for (const k8s::WeightedPodAffinityTerm& w : a->preferred) {
        if (HasKey(w.term.topology_key)) continue;
        Diagnostic& d = diags_.Warning(DiagCode::kMissingTopologyKey, Or(w.term.span, spec_.GetSpan()),
                                       fmt::format("no node has the topology key `{}`", w.term.topology_key),
                                       "this preference scores nothing");
        d.help = KeyHelp(w.term.topology_key);
      }
    };
    terms(pod.affinity.pod_affinity, false);
    terms(pod.affinity.pod_anti_affinity, true);
  }

  // Distinct values of `key` among the nodes the pod may use.
  size_t Domains(std::string_view key) const {
    std::set<std::string> values;
    for (const NodeFacts* n : eligible_) {
      if (const std::string* v = n->Label(key)) values.insert(*v);
    }
    return values.size();
  }

  void AntiAffinityReplicas(const k8s::Pod& pod) {
    if (!pod.affinity.pod_anti_affinity || pod.template_replicas <= 1) return;
    for (const k8s::PodAffinityTerm& t : pod.affinity.pod_anti_affinity->required) {
      bool own_namespace = t.namespaces.empty() && !t.namespace_selector;
      bool same_namespace = own_namespace ||
                            std::find(t.namespaces.begin(), t.namespaces.end(), pod.namespace_name) != t.namespaces.end();
      if (!same_namespace || !k8s::Matches(t.label_selector, pod.labels) || !HasKey(t.topology_key)) continue;
      size_t domains = Domains(t.topology_key);
      if (static_cast<size_t>(pod.template_replicas) <= domains) continue;
      Diagnostic& d = diags_.Error(
          DiagCode::kTooManyReplicas, Or(t.span, spec_.GetSpan()),
          fmt::format("{} replicas keep apart by `{}`, but the pod may use {} such domain{}", pod.template_replicas,
                      t.topology_key, domains, domains == 1 ? "" : "s"),
          fmt::format("{} of the replicas stay Pending", pod.template_replicas - static_cast<int32_t>(domains)));
      d.notes.push_back(fmt::format("{} of {} nodes pass the pod's node selector, affinity and taints", eligible_.size(),
                                    nodes_.size()));
      d.help = "lower the replicas, widen the topology key, or make the term preferred";
    }
  }

  void MinDomains(const k8s::Pod& pod) {
    for (const k8s::TopologySpreadConstraint& c : pod.topology_spread) {
      if (c.when_unsatisfiable != k8s::WhenUnsatisfiable::kDoNotSchedule || !c.min_domains || !HasKey(c.topology_key)) continue;
      size_t domains = 0;
      std::set<std::string> values;
      for (const NodeFacts& n : nodes_) {
        bool counted = c.node_affinity_policy == k8s::InclusionPolicy::kIgnore || MatchesSelectorAndAffinity(pod, n);
        if (counted && c.node_taints_policy == k8s::InclusionPolicy::kHonor) counted = Eligible(pod, n);
        if (const std::string* v = n.Label(c.topology_key); counted && v) values.insert(*v);
      }
      domains = values.size();
      if (static_cast<size_t>(*c.min_domains) <= domains) continue;
      Diagnostic& d = diags_.Error(
          DiagCode::kTooFewDomains, Or(c.span, spec_.GetSpan()),
          fmt::format("minDomains is {} but the pod may use {} domain{} of `{}`", *c.min_domains, domains,
                      domains == 1 ? "" : "s", c.topology_key),
          "with fewer domains the global minimum counts as 0: each domain takes at most maxSkew matching pods");
      d.help = fmt::format("lower minDomains to {} or less, or add nodes in more domains", domains);
    }
  }

  void Requests(const k8s::Pod& pod) {
    for (const auto& [name, q] : k8s::PodRequests(pod)) {
      int64_t want = k8s::SchedulerUnits(name, q);
      if (want <= 0 || name == "pods") continue;
      GpuMemory(name);
      int64_t most = 0;
      const NodeFacts* biggest = nullptr;
      for (const NodeFacts& n : nodes_) {
        auto it = n.allocatable.find(name);
        if (it != n.allocatable.end() && it->second > most) most = it->second, biggest = &n;
      }
      if (want <= most) continue;
      Span at = RequestSpan(name);
      Diagnostic& d = diags_.Error(
          DiagCode::kRequestTooLarge, at,
          most == 0 ? fmt::format("no node of the snapshot has any `{}`", name)
                    : fmt::format("the pod requests {} {}, more than any node's allocatable", k8s::WrittenAmount(name, want), name),
          most == 0 ? "no node offers this resource" : fmt::format("the largest is {} on {}", k8s::WrittenAmount(name, most), biggest->name));
      if (most == 0) {
        std::set<std::string> names;
        for (const NodeFacts& n : nodes_) {
          for (const auto& [r, v] : n.allocatable) names.insert(r);
        }
        std::vector<std::string_view> views(names.begin(), names.end());
        std::string_view close = Closest(name, views);
        if (!close.empty()) d.help = fmt::format("did you mean `{}`?", close);
      }
    }
  }

  // The request of `name` in the container that asks the most of it.
  Span RequestSpan(std::string_view name) const {
    k8s::NodeRef containers = spec_.Get("containers");
    Span best = containers.GetSpan();
    int64_t most = -1;
    for (uint32_t i = 0; containers.IsSequence() && i < containers.Size(); ++i) {
      k8s::NodeRef resources = containers.At(i).Get("resources");
      for (const char* part : {"requests", "limits"}) {
        k8s::NodeRef value = resources.Get(part).Get(name);
        if (!value.IsScalar()) continue;
        std::optional<k8s::Quantity> q = k8s::Quantity::Parse(value.Text());
        int64_t v = q ? k8s::SchedulerUnits(name, *q) : 0;
        if (v > most) most = v, best = value.GetSpan();
        break;  // a request is the request; a limit only stands for a missing one
      }
    }
    return Or(best, spec_.GetSpan());
  }

  // A GPU-memory request written without a unit where the nodes report GPU
  // memory in MiB (GPU Feature Discovery's `nvidia.com/gpu.memory`).
  void GpuMemory(const std::string& name) {
    if (name.find("gpu") == std::string::npos || name.find("memory") == std::string::npos) return;
    const std::string* reported = nullptr;
    for (const NodeFacts& n : nodes_) {
      if ((reported = n.Label("nvidia.com/gpu.memory"))) break;
    }
    if (!reported) return;
    k8s::NodeRef containers = spec_.Get("containers");
    for (uint32_t i = 0; containers.IsSequence() && i < containers.Size(); ++i) {
      k8s::NodeRef value = containers.At(i).Get("resources").Get("requests").Get(name);
      if (!value.IsScalar() || !Integer(value.Text()) || *Integer(value.Text()) >= 1024 * 1024) continue;
      Diagnostic& d = diags_.Warning(DiagCode::kGpuMemoryUnit, value.GetSpan(),
                                     fmt::format("`{}: {}` has no unit: as a quantity it is {}, not {} GiB", name,
                                                 value.Text(), value.Text(), value.Text()),
                                     "a plain number");
      d.notes.push_back(fmt::format("the nodes report GPU memory in MiB, as `nvidia.com/gpu.memory: {}`", *reported));
      // The unit its size reads in beside the nodes' MiB: a count of MiB as
      // large as theirs (`15360`), else of GiB (`16`).
      int64_t number = *Integer(value.Text());
      d.help = number >= 1024 ? fmt::format("write `{}Mi` (MiB, as the nodes count it)", value.Text())
                              : fmt::format("write `{}Gi` (`{}Mi` in the nodes' unit)", value.Text(), number * 1024);
    }
  }

  void Tolerations(const k8s::Pod& pod) {
    k8s::NodeRef list = spec_.Get("tolerations");
    for (size_t i = 0; i < pod.tolerations.size(); ++i) {
      const k8s::Toleration& t = pod.tolerations[i];
      if (t.key.empty() || t.key.starts_with("node.kubernetes.io/") || t.key.starts_with("node.cloudprovider.kubernetes.io/")) {
        continue;  // tolerate-everything, and the taints nodes get from conditions
      }
      bool matches = std::any_of(nodes_.begin(), nodes_.end(), [&](const NodeFacts& n) {
        return std::any_of(n.taints.begin(), n.taints.end(), [&](const k8s::Taint& taint) { return k8s::Tolerates(t, taint); });
      });
      if (matches) continue;
      Span at = list.IsSequence() && i < list.Size() ? list.At(static_cast<uint32_t>(i)).GetSpan() : list.GetSpan();
      Diagnostic& d = diags_.Warning(DiagCode::kUselessToleration, Or(at, spec_.GetSpan()),
                                     fmt::format("no node of the snapshot has a taint this toleration of `{}` matches", t.key),
                                     "it tolerates nothing here");
      std::set<std::string> taints;
      for (const NodeFacts& n : nodes_) {
        for (const k8s::Taint& taint : n.taints) {
          taints.insert(taint.value.empty() ? fmt::format("`{}:{}`", taint.key, k8s::ToString(taint.effect))
                                            : fmt::format("`{}={}:{}`", taint.key, taint.value, k8s::ToString(taint.effect)));
        }
      }
      if (!taints.empty()) d.notes.push_back(fmt::format("the nodes' taints: {}", fmt::join(taints, ", ")));
    }
  }

  void PriorityClass(const k8s::Pod& pod) {
    const std::string& name = pod.priority_class_name;
    if (name.empty() || name == "system-cluster-critical" || name == "system-node-critical") return;
    const auto& classes = cluster_->Table().Storage().priority_classes;
    if (classes.contains(name) || manifest_classes_.contains(name)) return;
    k8s::NodeRef at = spec_.Get("priorityClassName");
    Diagnostic& d = diags_.Error(DiagCode::kUnknownPriorityClass, Or(at.GetSpan(), spec_.GetSpan()),
                                 fmt::format("the snapshot has no PriorityClass `{}`", name),
                                 "the API server refuses a pod naming one that does not exist");
    std::vector<std::string_view> names;
    for (const auto& [n, pc] : classes) names.push_back(n);
    std::string_view close = Closest(name, names);
    if (!close.empty()) {
      d.help = fmt::format("did you mean `{}`?", close);
    } else if (classes.empty()) {
      d.notes.push_back("the snapshot has no PriorityClass at all: dump them too (`kubectl get priorityclasses -o yaml`)");
    }
  }

  void Preferences(const k8s::Pod& pod) {
    const auto& affinity = pod.affinity.node_affinity;
    if (!affinity || eligible_.size() < 2) return;
    k8s::NodeRef list = spec_.Get("affinity").Get("nodeAffinity").Get("preferredDuringSchedulingIgnoredDuringExecution");
    for (size_t i = 0; i < affinity->preferred.size(); ++i) {
      const k8s::PreferredSchedulingTerm& p = affinity->preferred[i];
      size_t matching = std::count_if(eligible_.begin(), eligible_.end(),
                                      [&](const NodeFacts* n) { return Satisfies(p.preference, *n); });
      if (matching != 0 && matching != eligible_.size()) continue;
      Span at = list.IsSequence() && i < list.Size() ? list.At(static_cast<uint32_t>(i)).GetSpan() : list.GetSpan();
      Diagnostic& d = diags_.Warning(
          DiagCode::kPreferenceNoEffect, Or(at, spec_.GetSpan()),
          fmt::format("this preference (weight {}) matches {} of the {} nodes the pod may go to", p.weight,
                      matching == 0 ? "none" : "all", eligible_.size()),
          "it adds the same score everywhere: it changes no decision");
      d.notes.push_back("the nodes the pod may go to: those its nodeSelector, required affinity and tolerations allow");
    }
  }

  const engine::Cluster* cluster_;
  std::set<std::string> manifest_classes_;  // PriorityClasses the manifest itself defines
  DiagnosticSink& diags_;
  std::vector<NodeFacts> nodes_;
  std::vector<const NodeFacts*> eligible_;  // the current pod's
  k8s::NodeRef spec_, object_;              // the current pod's, valid during Visit
  std::vector<k8s::Pod> pods_;
};

// The PriorityClasses a manifest defines (read before its pods are linted).
class PriorityClasses final : public k8s::ObjectVisitor {
 public:
  void Visit(k8s::NodeRef object, std::string_view default_kind) override {
    if (object.IsMapping() && k8s::KindOf(object, default_kind) == "PriorityClass") {
      names.emplace(object.Get("metadata").Get("name").Text());
    }
  }
  std::set<std::string> names;
};

}  // namespace

std::vector<k8s::Pod> LintManifest(const Source& manifest, const engine::Cluster* cluster, DiagnosticSink& diags) {
  PriorityClasses classes;
  DiagnosticSink first;  // syntax errors are reported once, by the second read
  if (!k8s::ReadObjects(manifest, classes, first)) classes.names.clear();
  size_t errors = diags.ErrorCount();
  Linter linter(cluster, std::move(classes.names), diags);
  bool read = k8s::ReadObjects(manifest, linter, diags);
  std::vector<k8s::Pod> pods = linter.TakePods();
  if (read && pods.empty() && diags.ErrorCount() == errors) {
    Diagnostic& d = diags.Error(DiagCode::kNoObjects, Span{&manifest, 0, 0}, "the file holds no Pod or workload to lint");
    d.help = "give Pods or workloads (Deployment, StatefulSet, ReplicaSet, DaemonSet, Job, CronJob); policies end in `.policy` "
             "or go with --policy";
  }
  return pods;
}

}  // namespace policy::tooling
