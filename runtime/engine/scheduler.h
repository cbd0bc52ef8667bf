#pragma once
/// The scheduling core of `policyc schedule` (and, later, of the hosts): a
/// queue of pods placed one after another, each with one cycle through the
/// engine's decision path, DefaultPreemption when it fits nowhere, and a
/// bind into the cluster that every later pod sees.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/objects.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/explain.h"

namespace policy::engine {

struct ScheduleOptions {
  bool preemption = true;  ///< DefaultPreemption (the profile's)
  bool retry = true;       ///< rounds while the last one placed a pod
  /// Ties among the best nodes: the first in table order, or uniformly
  /// random from a generator seeded with this.
  std::optional<uint64_t> random_seed;
  /// kube-scheduler's percentageOfNodesToScore: unset scores every feasible
  /// node; 0 is its adaptive default (max(5, 50 - nodes/125) percent); either
  /// way at least 100 nodes. Filtering stops at that many feasible nodes,
  /// starting where the previous cycle stopped (nextStartNodeIndex).
  std::optional<int> percentage_of_nodes_to_score;
  /// Pods of one template (equal but for name and timestamps) share one
  /// plan, and each decision is brought up to date from the template's
  /// previous one (Engine::DecideIncremental); false decides every pod
  /// from scratch. The outcomes are the same either way.
  bool incremental = true;
  /// What the templates' kept decisions may hold together; past it, the
  /// least recently used template's is dropped (its next decision is full).
  size_t kept_bytes_limit = kKeptBytesLimit;
  /// How many templates' plans are kept; past it, the least recently used
  /// quarter is dropped (a pod of theirs that comes again is planned again).
  size_t max_templates = 4096;
  /// A Pending pod's words carry each reason's detail (the node's values,
  /// a did-you-mean). Off, only reasons are rendered: the summary and the
  /// unresolvable nodes need no more, and details cost per rejected row.
  bool details = false;
  /// A Pending pod's reasons also grouped (Outcome::groups), each group's
  /// detail explained on its first node alone: what a record prints
  /// without --all-nodes, sized by the distinct reasons.
  bool groups = false;
};

/// How a run's decisions were made.
struct ScheduleStats {
  rt::IncrementalStats decisions;
  size_t templates = 0;  ///< plans made for templates (pods that share them)
  size_t plans = 0;      ///< plans made in all (a pod that shares none gets its own)
};

/// What became of one pod.
struct Outcome {
  k8s::Pod pod;
  size_t order = 0;  ///< input order
  int attempts = 0;
  std::optional<std::string> node;  ///< where it was bound
  int64_t score = 0;                ///< the selected node's total
  size_t feasible = 0;              ///< nodes every filter passed, before preemption
  std::vector<std::string> preempted;  ///< victims, namespace/name, in eviction order
  /// The words of the final attempt, when Pending (shared: pods of one
  /// template that fail on an unchanged cluster share them).
  std::shared_ptr<const rt::Placement> words;
  const rt::Placement& placement() const {
    static const rt::Placement kNone;
    return words ? *words : kNone;
  }
  /// The words grouped (ScheduleOptions::groups), when Pending.
  std::shared_ptr<const std::vector<rt::ReasonGroup>> groups;
  std::string postscript;   ///< kube-scheduler's preemption postscript, when Pending
  /// `check`'s summary and the postscript.
  std::string Summary() const {
    return postscript.empty() ? placement().summary : placement().summary + " " + postscript;
  }
};

/// A claim the run assumed bound when it placed a pod (kube-scheduler's
/// AssumePodVolumes): to a volume, or, for provisioning, to a node.
struct AssumedClaim {
  std::string namespace_name, claim;
  std::string volume;         ///< the PersistentVolume it binds; empty: provisioned
  std::string selected_node;  ///< the node provisioning was asked for (volume empty)
};

class Scheduler {
 public:
  /// The pods bound in `cluster` are what preemption may evict, as the
  /// table holds them (no pod object is needed: a snapshot from the cache
  /// has none); the budgets preemption respects are the cluster's
  /// (rt::StorageObjects::budgets).
  Scheduler(Engine& engine, Cluster& cluster, ScheduleOptions options);

  /// Places `queue` in kube-scheduler's PrioritySort order (priority, then
  /// creationTimestamp, then input order), in rounds; the outcomes in the
  /// order of their final attempts.
  std::vector<const Outcome*> Run(std::vector<k8s::Pod> queue);
  /// One cycle for one pod (no retry): decide, preempt, bind.
  const Outcome& Place(k8s::Pod pod, bool may_preempt = true);
  size_t Preempted() const { return preempted_; }
  /// The claims assumed bound so far, in the order of the binds.
  const std::vector<AssumedClaim>& AssumedClaims() const { return assumed_claims_; }
  const ScheduleStats& Stats() const { return stats_; }
  /// Templates whose plans are kept now (at most ScheduleOptions::max_templates).
  size_t KeptTemplates() const { return template_count_; }

 private:
  void Cycle(Outcome& o, bool may_preempt);
  void Preempt(Outcome& o);
  void Bind(const Outcome& o);
  void AssumeVolumes(const k8s::Pod& pod, const std::string& node);
  void AssumeClaims(const k8s::Pod& pod, const std::string& node);
  void ReleaseClaims(std::string_view namespace_name, std::string_view name, std::string_view uid);
  // The rows a cycle decides among under sampling; empty for all.
  std::vector<rt::RowId> Sample(const rt::Decision& full);
  // The plan `pod` decides with: its template's, or `own` when it has none.
  PodPlan& PlanFor(const k8s::Pod& pod, std::unique_ptr<PodPlan>& own);
  const rt::Decision& Decide(PodPlan& plan, const k8s::Pod& pod, bool shared, std::span<const rt::RowId> rows);

  struct Template {
    k8s::Pod pod;
    std::unique_ptr<PodPlan> plan;
    uint64_t used = 0;   // when it last decided (a counter)
    bool keeps = false;  // it has decided incrementally (its plan keeps a decision)
  };
  // Keeps the templates' kept decisions under kept_bytes_limit.
  void BoundKept(const Template& current);
  // Drops the least recently used quarter of the templates (their plans).
  void DropTemplates();

  Engine& engine_;
  Cluster& cluster_;
  std::map<int32_t, size_t> bound_priorities_;  // how many bound pods of each priority
  ScheduleOptions options_;
  std::optional<std::mt19937_64> random_;
  std::deque<Outcome> outcomes_;  // stable addresses
  size_t preempted_ = 0;
  size_t deallocated_ = 0;  // claims DynamicResources' PostFilter deallocated (a change a retry may see)
  std::vector<AssumedClaim> assumed_claims_;
  size_t next_start_ = 0;  // nextStartNodeIndex, into the live rows
  std::unordered_map<size_t, std::vector<Template>> templates_;  // by TemplateHash
  size_t template_count_ = 0;  // in templates_
  size_t keeping_ = 0;         // templates that keep a decision
  Template* current_ = nullptr;  // the last pod's template (null: a plan of its own)
  // Why the last pod's template is new (the first pod of a template
  // decides without keeping anything: most shapes are seen once); empty
  // when it was seen before.
  std::string_view first_because_;
  uint64_t uses_ = 0;
  std::string_view own_because_;  // why the last pod planned on its own did (TemplatePod::own_plan_because)
  ClaimNames claims_;             // the last pod planned from its template: its claims renamed there
  // The last words grouped, and their groups: pods of one template Pending
  // on an unchanged cluster share both.
  std::shared_ptr<const rt::Placement> grouped_words_;
  std::shared_ptr<const std::vector<rt::ReasonGroup>> groups_;
  ScheduleStats stats_;
};

}  // namespace policy::engine
