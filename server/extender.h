#pragma once
/// kube-scheduler's extender protocol, v1 (../shared/spec/host-reference.md
/// §1), over the hosts' core (runtime/host/host.h): the bodies of
/// `POST PREFIX/filter`, `/prioritize` and `/preempt` and what kube-scheduler
/// reads back.
///
/// Keys are read in any case and written in PascalCase, as Go's
/// encoding/json does for the untagged extender/v1 types; a field kube-
/// scheduler would send as nil is written as `null`. With node names in
/// (`nodeCacheCapable: true`) the answer names nodes; with node objects in,
/// it gives back the objects that pass, judged as sent: a node the cluster
/// state lacks or holds otherwise (labels, taints, allocatable,
/// unschedulable, images) stands in for the state's own for that call only
/// (host::ClusterState::Overlay), while bound pods and topology counts are
/// the state's own; the state changes only by its watch or events. Every rejected node is listed: in
/// `FailedNodes` when preemption could help there, else in
/// `FailedAndUnresolvableNodes`. A request that does not read is answered
/// 200 with `Error` set, since kube-scheduler reads nothing else of a call
/// that fails.
///
/// Modes (host-reference.md §1.7; `policyc serve --mode`): authoritative
/// decides with the whole profile (kube-scheduler's own plugins then only
/// repeat it); policies with the custom policies alone, beside
/// kube-scheduler's in-tree plugins (the engine is made with no in-tree
/// plugin enabled); decide is authoritative with filter answering the one
/// node chosen (ExtenderOptions::decide).

#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/host/host.h"
#include "server/metrics.h"

namespace policy::server {

class ApiClient;

/// Pods decided lately, by namespace/name: what a bind call assumes (its
/// arguments name the pod, not its spec), and where filter assumed them
/// (--mode decide). Bounded, in count and in bytes: the oldest go first.
class RecentPods {
 public:
  void Remember(const k8s::Pod& pod);
  std::optional<k8s::Pod> Find(const std::string& namespace_name, const std::string& name);
  /// Filter assumed the pod on a node.
  void Assumed(const k8s::Pod& pod);
  /// Whether filter had assumed the pod (then forgets that it had).
  bool TakeAssumed(const k8s::Pod& pod);

 private:
  static constexpr size_t kCapacity = 4096;
  static constexpr size_t kCapacityBytes = size_t{64} << 20;  ///< their k8s::ApproximateBytes
  std::mutex mutex_;
  size_t bytes_ = 0;
  std::unordered_map<std::string, std::pair<k8s::Pod, bool>> pods_;  // the pod, assumed by filter
  std::deque<std::string> order_;
};

struct Reply {
  int status = 200;
  std::string body;   ///< JSON
  std::string error;  ///< what went wrong, when the body says something did (for the log)
};

struct ExtenderOptions {
  Metrics* metrics = nullptr;      ///< counts the decisions and binds
  RecentPods* recent = nullptr;    ///< remembers the pods filtered, for Bind and decide
  const ApiClient* api = nullptr;  ///< Bind binds through it
  /// Decide in filter (host-reference.md §1.7, mode B): filter answers the
  /// one node policyc selects (the other feasible ones are failed with
  /// that reason) and assumes the pod there at once; a pod filtered again
  /// (kube-scheduler retrying it) is forgotten first. Needs `recent`.
  bool decide = false;
  /// FailedNodes and FailedAndUnresolvableNodes give every failing
  /// plugin's reasons joined, as check names them, instead of the first
  /// failing plugin's first reason (the one string kube-scheduler's Pending
  /// event counts per node, so that nodes failing alike are counted alike).
  bool all_reasons = false;
  /// Pods assumed by filter (decide) or bind that no watch event has
  /// confirmed are forgotten after this, and past `max_assumed` the
  /// oldest first (host::ClusterState::ExpireAssumed).
  std::chrono::seconds assume_ttl{300};
  size_t max_assumed = 4096;
};

class Extender {
 public:
  Extender(host::Decisions& decisions, host::ClusterState& state, ExtenderOptions options = {})
      : decisions_(decisions), state_(state), options_(options) {}

  /// ExtenderArgs -> ExtenderFilterResult.
  Reply Filter(std::string_view body);
  /// ExtenderArgs -> HostPriorityList: each node's total score scaled to
  /// kube-scheduler's 0-10 (rounded), 0 for a node that does not fit.
  Reply Prioritize(std::string_view body);
  /// ExtenderPreemptionArgs -> ExtenderPreemptionResult: of the candidate
  /// nodes kube-scheduler proposes, those where the pod passes every filter
  /// policyc runs once the victims are gone — kube's victims when they make
  /// room, else the ones policyc's dry run picks there (kube's order:
  /// lowest priority first, reprieve, PDB violations counted). A node where
  /// no eviction resolves what rejects the pod, or none makes room, is
  /// left out.
  Reply Preempt(std::string_view body);
  /// ExtenderBindingArgs -> ExtenderBindingResult: assumes the pod on the
  /// node (when it was filtered here), then POSTs its Binding to the API;
  /// a refused binding is forgotten and its reason is the Error.
  Reply Bind(std::string_view body);

  /// The verbs, as the server serves them (POST PREFIX/NAME), in order: a
  /// new verb is its method here and its row in extender.cpp.
  struct Verb {
    const char* name;
    Reply (Extender::*call)(std::string_view body);
  };
  static std::span<const Verb> Verbs();

  /// A decision among the nodes a request names, holding the cluster while
  /// the answer is written.
  struct Named {
    explicit Named(host::ClusterState::View v);
    host::ClusterState::View view;
    std::vector<rt::RowId> row;  ///< per name: its row; kNoRow when the cluster has no such node
    host::RowVerdicts verdicts;
    std::vector<int32_t> at;  ///< per table row: index into feasible (>= 0), -2 - index into rejected, or -1
    /// Whether the i-th name passed; its total in `score`.
    bool Feasible(size_t i, int64_t* score = nullptr) const;
    /// The i-th name's rejection, when it was rejected (and words asked).
    const host::RowVerdicts::Rejected* Rejected(size_t i) const;
  };

 private:
  // `pod` decided among `names` on the cluster now (what every verb needs),
  // counted under `verb`; with `words`, the rejected nodes' reasons.
  // `view`: the hold to decide in (else a reader's).
  Named Decide(k8s::Pod pod, std::span<const std::string_view> names, const char* verb, bool words,
               std::optional<host::ClusterState::View> view = std::nullopt);
  // Node objects sent (the NodeList form): those the state lacks or holds
  // otherwise stand in for this call (counted), in the view returned.
  host::ClusterState::View Judge(std::vector<k8s::Node> sent);

  host::Decisions& decisions_;
  host::ClusterState& state_;
  ExtenderOptions options_;
};

}  // namespace policy::server
