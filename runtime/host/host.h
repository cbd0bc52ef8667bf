#pragma once
/// The core every scheduler host shares, in C++: the C ABI (c_api.cpp) and
/// `policyc serve` are thin layers over it.
///
///   ClusterState  the cluster, changed by snapshots, watch events, assume
///                 and forget; read through Views. Readers are counted, not
///                 locked: a View may end on another thread than the one
///                 that took it (Go moves goroutines). A change waits until
///                 every View has ended, and new Views wait for it.
///   Decisions     an engine and the plans it keeps per template (pods
///                 equal but for name and timestamps, as `policyc schedule`
///                 shares them) and cluster epoch; decisions run at once on
///                 many threads, those of one template taking turns on its
///                 plan.
///   Answer        a decision in a host's terms: feasible nodes best first
///                 with their scores, the selected one, every failed node
///                 with its reasons and whether preemption could help,
///                 kube-scheduler's line, and the words for check's JSON.

#include <atomic>
#include <chrono>
#include <deque>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "support/diagnostic.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/watch_event.h"
#include "runtime/host/placement_json.h"

namespace policy::host {

class ClusterState {
 public:
  ClusterState();

  /// Replaces the state with a snapshot; false with diagnostics (and the
  /// state unchanged) when it does not load.
  bool Load(std::shared_ptr<const Source> snapshot, DiagnosticSink& diags);
  /// The same for a snapshot split over files.
  bool Load(const std::vector<std::shared_ptr<const Source>>& files, DiagnosticSink& diags);
  /// The same for files named (read here) or given, from the snapshot
  /// cache and the objects cache when `cache` allows (docs/cache.md).
  bool LoadFiles(const std::vector<rt::SnapshotFile>& files, const rt::CacheOptions& cache, DiagnosticSink& diags);
  /// Applies one watch event (engine/watch_event.h); nullopt with
  /// diagnostics and the state unchanged when it does not read.
  std::optional<engine::EventOutcome> Apply(const Source& event, DiagnosticSink& diags);
  /// kube-scheduler's assume: `pod` counts as bound to `node` (replacing
  /// what there was of it); false when there is no such node.
  bool Assume(k8s::Pod pod, const std::string& node);
  /// Unreserve: false when no such pod counts.
  bool Forget(const std::string& namespace_name, const std::string& name);
  /// Forgets the pods assumed (Assume) that no event has confirmed since
  /// (a Pod event of that name confirms one: it replaces the pod), those
  /// assumed longer ago than `ttl`, and the oldest past `max` of them; how
  /// many. A bind that never lands, or a caller's fake pods, are gone in
  /// `ttl`.
  size_t ExpireAssumed(std::chrono::steady_clock::duration ttl, size_t max);
  /// Keeps the node objects the state is given (by Load and by events), so
  /// that Overlay can put them back: call before Load. Costs the objects'
  /// memory.
  void KeepNodeObjects() { keep_nodes_ = true; }
  size_t NodeCount();
  size_t PodCount();
  /// Nodes and bound pods now, or nullopt while a writer holds or waits
  /// for the state: for health probes, which must never wait.
  std::optional<std::pair<size_t, size_t>> TryCounts();
  /// Runs `trial` on the cluster with no reader or other writer (what would
  /// change if pods went: engine::SelectVictimsOnNode). It must leave the
  /// cluster as it found it: pods set aside are put back.
  void Try(const std::function<void(engine::Cluster&)>& trial);

  /// A reader's hold on the state: it does not change while a View lives.
  class View {
   public:
    View(View&& other) noexcept
        : state_(other.state_), exclusive_(other.exclusive_), put_back_(std::move(other.put_back_)),
          take_out_(std::move(other.take_out_)), table_bytes_(other.table_bytes_) {
      other.state_ = nullptr;
    }
    View& operator=(View&&) = delete;
    ~View();
    const engine::Cluster& cluster() const { return *state_->cluster_; }
    /// Changes when something Engine::Plan reads once may have changed:
    /// kept plans are per epoch.
    uint64_t epoch() const { return state_->epoch_; }

   private:
    friend class ClusterState;
    explicit View(ClusterState* state) : state_(state) {}
    ClusterState* state_;
    bool exclusive_ = false;           // an Overlay's: no other reader or writer meanwhile
    std::vector<k8s::Node> put_back_;  // the state's own objects of nodes overlaid
    std::vector<std::string> take_out_;  // nodes the state lacked
    size_t table_bytes_ = 0;             // the table's columns and dictionaries before the overlay
  };
  View Read();
  /// A view in which node objects a host was sent stand for the state's
  /// own for as long as it lives, for one call: each the state lacks is
  /// added, each it holds otherwise (rt::NodeTable::NodeFacts) replaced,
  /// with every other reader and writer kept out, and the state's own are
  /// put back when the view ends (a node whose object the state did not
  /// keep is judged as the state holds it). The state changes only by Load
  /// and events. `differed`: how many stood in. Sent nodes that match cost
  /// a hash each and leave the view a shared reader's. What stands in may
  /// leave the table new columns and strings (nothing trims them): past
  /// kMaxOverlayGrowth of that in all, sent nodes are judged as the state
  /// holds them (one it lacks is then unknown), so no caller grows the
  /// state without bound.
  static constexpr size_t kMaxOverlayGrowth = size_t{64} << 20;
  View Overlay(std::vector<k8s::Node> nodes, size_t* differed);

 private:
  // Runs `change` on the cluster with no reader or other writer.
  template <typename F>
  auto Write(F&& change);

  std::mutex mutex_;
  std::condition_variable changed_;
  int readers_ = 0;
  int writers_waiting_ = 0;
  bool writing_ = false;
  std::unique_ptr<engine::Cluster> cluster_;
  uint64_t epoch_;
  // Pods assumed and not yet confirmed by an event: when, in order.
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> assumed_;
  std::deque<std::string> assumed_order_;
  bool keep_nodes_ = false;
  size_t overlay_growth_ = 0;  // bytes the table kept from overlays (under the writer's hold)
  std::unordered_map<std::string, k8s::Node> nodes_;  // with keep_nodes_: the state's node objects by name
};

struct Answer {
  std::string pod;                                       ///< namespace/name
  std::vector<std::pair<std::string, int64_t>> feasible;  ///< best first, with the total score
  std::optional<std::string> selected;
  struct Failed {
    std::string node;
    std::string reason;         ///< every failing plugin's reasons
    bool unresolvable = false;  ///< preemption cannot help (UnschedulableAndUnresolvable)
  };
  std::vector<Failed> failed;
  std::string summary;  ///< kube-scheduler's line over the nodes decided among
  rt::Placement placement;
  PodNotes notes;
};

/// A decision among rows of the view's table, for a host that answers node
/// by node while it holds the view (the extender): nothing is copied per
/// node but the words of rejected rows.
struct RowVerdicts {
  std::vector<rt::RowId> feasible;  ///< in table order
  std::vector<int64_t> score;       ///< per feasible row: the total
  std::optional<size_t> selected;   ///< index into feasible
  /// With words: each rejected row, its words and whether preemption
  /// cannot help (any failing plugin's reason says so).
  struct Rejected {
    rt::RowId row;
    /// Shared: the same words are kept for the template's next calls, and
    /// many nodes say the same. `reason`: the first failing plugin's first
    /// reason, in the profile's order — the one string kube-scheduler's
    /// FitError counts for the node, as its own status for it would be;
    /// `all`: every failing plugin's reasons joined, each once (check's).
    std::shared_ptr<const std::string> reason, all;
    bool unresolvable = false;
  };
  std::vector<Rejected> rejected;  ///< in table order
  bool gated = false;              ///< the pod has scheduling gates: no node is selected
  /// rt::Decision::error: the attempt ended with kube-scheduler's Error
  /// status (nothing feasible, no words: an extender answers it as Error).
  std::optional<std::string> error;
};

class Decisions {
 public:
  explicit Decisions(std::unique_ptr<engine::Engine> engine);
  ~Decisions();

  /// Decides `pod` on the view's cluster among `candidates` (node names; all
  /// nodes when null). Names the cluster does not have fail as unresolvable.
  /// Everything is in the answer, every node's words included (check's
  /// document); DecideRows is the lean form.
  Answer Decide(k8s::Pod pod, const ClusterState::View& view, const std::vector<std::string>* candidates);
  /// Decides `pod` among `rows` (live rows of the view's table, in table
  /// order, no repeats; every live row when empty): feasible rows with
  /// totals, and with `words` the reasons of the rejected ones.
  RowVerdicts DecideRows(k8s::Pod pod, const ClusterState::View& view, std::span<const rt::RowId> rows, bool words);
  /// What the templates' kept decisions and explanations may hold together
  /// (engine::kKeptBytesLimit unless set); the least recently used ones'
  /// are dropped past it. `KeptBytes`: what they hold now.
  void SetKeptBytesLimit(size_t bytes) { kept_bytes_limit_ = bytes; }
  size_t KeptBytes();
  /// The largest total score: the scoring plugins' weights x 100.
  int64_t MaxScore() const { return max_score_; }
  const engine::Engine& engine() const { return *engine_; }
  /// For work beside the kept plans while nothing else decides (within
  /// ClusterState::Try: preemption's dry runs).
  engine::Engine& engine() { return *engine_; }

 private:
  struct KeptPlan;
  std::shared_ptr<KeptPlan> PlanFor(const k8s::Pod& pod, uint64_t epoch);
  // Runs `use` with a plan for `pod` — the template's kept one (taking turns
  // on it) or one of its own — and the claims its template renamed
  // (engine::NameClaims gives the plan's words the pod's names).
  template <typename F>
  void WithPlan(const k8s::Pod& pod, const ClusterState::View& view, F&& use);
  // The words of `rejected` (rows `d`, made on `plan`, rejected; over every
  // live row when `every_row`): kept ones while the table is unchanged, else
  // from the template's kept explanation brought up to date (`kept` null: a
  // plan of the call's own, explained afresh).
  std::vector<RowVerdicts::Rejected> Words(engine::PodPlan& plan, KeptPlan* kept, const engine::Cluster& cluster,
                                           const rt::Decision& d, bool every_row,
                                           const std::vector<rt::RowId>& rejected);
  // Drops the kept decisions and explanations of the least recently used
  // templates till the rest, `keep` among them, hold no more than
  // kept_bytes_limit_.
  void TrimIncremental(const KeptPlan* keep);

  std::unique_ptr<engine::Engine> engine_;
  int64_t max_score_ = 0;
  std::mutex plans_mutex_;
  std::unordered_multimap<size_t, std::shared_ptr<KeptPlan>> plans_;  // by TemplateHash
  uint64_t uses_ = 0;
  size_t kept_bytes_limit_ = engine::kKeptBytesLimit;
  size_t plan_pod_bytes_ = 0;  // the kept plans' template pods, in bytes (under plans_mutex_)
};

}  // namespace policy::host
