#pragma once
/// `policyc serve`'s Prometheus metrics, in the text exposition format
/// (version 0.0.4). Names start with `policyc_`: kube-scheduler has no
/// metric for extender calls, and its `scheduler_*` names are not reused.
///
///   policyc_extender_request_duration_seconds{verb,code}  histogram
///   policyc_decisions_total{verb}                         counter
///   policyc_feasible_nodes{verb}                          histogram (nodes a filter let through)
///   policyc_watch_events_total{result}                    counter (applied, refused)
///   policyc_api_lists_total                               counter (lists of the whole cluster from the API)
///   policyc_binds_total{result}                           counter (bound, failed)
///   policyc_preempt_nodes_total{answer}                   counter (kept, replaced, dropped: preempt's candidates)
///   policyc_sent_nodes_differing_total                    counter (node objects kube-scheduler sent that
///                                                           differed from the cluster state, or were not in it)
///   policyc_cluster_nodes, policyc_cluster_pods           gauges
///   policyc_last_event_age_seconds                        gauge (since start when none came)

#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace policy::server {

class Metrics {
 public:
  Metrics();
  void Request(const std::string& verb, int code, double seconds);
  void Decision(const std::string& verb, size_t feasible);
  void Event(bool applied);
  void Listed();
  void Bind(bool bound);
  /// A candidate node of a preempt call: its victims `kept` as kube-scheduler
  /// proposed them, `replaced` by a set that makes room, or `dropped`.
  void PreemptNode(const std::string& answer);
  /// A node object sent in a call's `Nodes` that the cluster state lacked
  /// or held otherwise (what was sent is then judged).
  void SentNodeDiffered();
  /// The exposition, with the cluster's counts now.
  std::string Render(size_t nodes, size_t pods);

 private:
  static constexpr std::array<double, 12> kSeconds = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,  0.5,   1,     5};
  static constexpr std::array<double, 8> kNodes = {0, 1, 10, 100, 500, 1000, 5000, 10000};
  template <size_t N>
  struct Histogram {
    std::array<uint64_t, N> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  std::mutex mutex_;
  std::map<std::pair<std::string, int>, Histogram<kSeconds.size()>> requests_;
  std::map<std::string, uint64_t> decisions_;
  std::map<std::string, Histogram<kNodes.size()>> feasible_;
  uint64_t applied_ = 0, refused_ = 0, lists_ = 0, bound_ = 0, bind_failed_ = 0, sent_differed_ = 0;
  std::map<std::string, uint64_t> preempt_nodes_ = {{"dropped", 0}, {"kept", 0}, {"replaced", 0}};
  std::chrono::steady_clock::time_point last_event_;
};

}  // namespace policy::server
