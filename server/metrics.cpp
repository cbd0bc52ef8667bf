// Prometheus text exposition of `policyc serve`'s metrics (metrics.h).

#include "server/metrics.h"

#include <fmt/format.h>

namespace policy::server {
namespace {

std::string Le(double bound) { return fmt::format("{}", bound); }

template <typename H, typename B>
void Observe(H& h, const B& bounds, double value) {
  for (size_t i = 0; i < bounds.size(); ++i) h.buckets[i] += value <= bounds[i] ? 1 : 0;
  ++h.count;
  h.sum += value;
}

template <typename H, typename B>
void Write(std::string& out, const std::string& name, const std::string& labels, const H& h, const B& bounds) {
  std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < bounds.size(); ++i) {
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, Le(bounds[i]), h.buckets[i]);
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, h.count);
  out += fmt::format("{}_sum{{{}}} {}\n", name, labels, h.sum);
  out += fmt::format("{}_count{{{}}} {}\n", name, labels, h.count);
}

}  // namespace

Metrics::Metrics() : last_event_(std::chrono::steady_clock::now()) {}

void Metrics::Request(const std::string& verb, int code, double seconds) {
  std::lock_guard lock(mutex_);
  Observe(requests_[{verb, code}], kSeconds, seconds);
}

void Metrics::Decision(const std::string& verb, size_t feasible) {
  std::lock_guard lock(mutex_);
  ++decisions_[verb];
  Observe(feasible_[verb], kNodes, static_cast<double>(feasible));
}

void Metrics::Listed() {
  std::lock_guard lock(mutex_);
  ++lists_;
}

void Metrics::Bind(bool bound) {
  std::lock_guard lock(mutex_);
  (bound ? bound_ : bind_failed_) += 1;
}

void Metrics::PreemptNode(const std::string& answer) {
  std::lock_guard lock(mutex_);
  ++preempt_nodes_[answer];
}

void Metrics::SentNodeDiffered() {
  std::lock_guard lock(mutex_);
  ++sent_differed_;
}

void Metrics::Event(bool applied) {
  std::lock_guard lock(mutex_);
  (applied ? applied_ : refused_) += 1;
  last_event_ = std::chrono::steady_clock::now();
}

std::string Metrics::Render(size_t nodes, size_t pods) {
  std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP policyc_extender_request_duration_seconds Time to answer an extender call, by verb and HTTP status.\n";
  out += "# TYPE policyc_extender_request_duration_seconds histogram\n";
  for (const auto& [key, h] : requests_) {
    Write(out, "policyc_extender_request_duration_seconds", fmt::format("verb=\"{}\",code=\"{}\"", key.first, key.second), h,
          kSeconds);
  }
  out += "# HELP policyc_decisions_total Pods decided, by verb.\n# TYPE policyc_decisions_total counter\n";
  for (const auto& [verb, n] : decisions_) out += fmt::format("policyc_decisions_total{{verb=\"{}\"}} {}\n", verb, n);
  out += "# HELP policyc_feasible_nodes Nodes a decision found feasible, by verb.\n# TYPE policyc_feasible_nodes histogram\n";
  for (const auto& [verb, h] : feasible_) Write(out, "policyc_feasible_nodes", fmt::format("verb=\"{}\"", verb), h, kNodes);
  out += "# HELP policyc_watch_events_total Watch events read, by whether they were applied.\n";
  out += "# TYPE policyc_watch_events_total counter\n";
  out += fmt::format("policyc_watch_events_total{{result=\"applied\"}} {}\n", applied_);
  out += fmt::format("policyc_watch_events_total{{result=\"refused\"}} {}\n", refused_);
  out += "# HELP policyc_api_lists_total Lists of the whole cluster from the Kubernetes API (the first, then one per 410 Gone).\n";
  out += "# TYPE policyc_api_lists_total counter\n";
  out += fmt::format("policyc_api_lists_total {}\n", lists_);
  out += "# HELP policyc_binds_total Bind calls, by whether the API bound the pod.\n";
  out += "# TYPE policyc_binds_total counter\n";
  out += fmt::format("policyc_binds_total{{result=\"bound\"}} {}\n", bound_);
  out += fmt::format("policyc_binds_total{{result=\"failed\"}} {}\n", bind_failed_);
  out += "# HELP policyc_preempt_nodes_total Candidate nodes of preempt calls, by answer: victims kept as proposed, "
         "replaced by a set that makes room, or node dropped.\n";
  out += "# TYPE policyc_preempt_nodes_total counter\n";
  for (const auto& [answer, n] : preempt_nodes_) out += fmt::format("policyc_preempt_nodes_total{{answer=\"{}\"}} {}\n", answer, n);
  out += "# HELP policyc_sent_nodes_differing_total Node objects kube-scheduler sent that the cluster state lacked or "
         "held otherwise (labels, taints, allocatable, unschedulable); the sent ones are judged.\n";
  out += "# TYPE policyc_sent_nodes_differing_total counter\n";
  out += fmt::format("policyc_sent_nodes_differing_total {}\n", sent_differed_);
  out += "# HELP policyc_cluster_nodes Nodes in the cluster state.\n# TYPE policyc_cluster_nodes gauge\n";
  out += fmt::format("policyc_cluster_nodes {}\n", nodes);
  out += "# HELP policyc_cluster_pods Pods counted as bound in the cluster state.\n# TYPE policyc_cluster_pods gauge\n";
  out += fmt::format("policyc_cluster_pods {}\n", pods);
  double age = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_event_).count();
  out += "# HELP policyc_last_event_age_seconds Seconds since the last watch event (since start when none came).\n";
  out += "# TYPE policyc_last_event_age_seconds gauge\n";
  out += fmt::format("policyc_last_event_age_seconds {:.3f}\n", age);
  return out;
}

}  // namespace policy::server
