// The hosts' shared core (host.h).

#include "runtime/host/host.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <span>

#include "runtime/columnar/cluster_loader.h"
#include "runtime/engine/pod_template.h"
#include "runtime/sched/profile.h"

namespace policy::host {
namespace {

// Never reused: a kept plan is for one epoch of one cluster.
std::atomic<uint64_t> next_epoch{1};

constexpr size_t kKeptPlans = 256;
// And the template pods they hold, in bytes (k8s::ApproximateBytes): a pod
// may carry megabytes of labels, and each plan copies what it reads.
constexpr size_t kKeptPlanPodBytes = size_t{64} << 20;

}  // namespace

// --- ClusterState -----------------------------------------------------------

ClusterState::ClusterState() : cluster_(std::make_unique<engine::Cluster>()), epoch_(next_epoch++) {}

template <typename F>
auto ClusterState::Write(F&& change) {
  {
    std::unique_lock lock(mutex_);
    ++writers_waiting_;
    changed_.wait(lock, [&] { return readers_ == 0 && !writing_; });
    --writers_waiting_;
    writing_ = true;
  }
  struct Done {
    ClusterState* s;
    ~Done() {
      std::lock_guard lock(s->mutex_);
      s->writing_ = false;
      s->changed_.notify_all();
    }
  } done{this};
  return change();
}

bool ClusterState::Load(std::shared_ptr<const Source> snapshot, DiagnosticSink& diags) {
  return Load(std::vector<std::shared_ptr<const Source>>{std::move(snapshot)}, diags);
}

bool ClusterState::Load(const std::vector<std::shared_ptr<const Source>>& files, DiagnosticSink& diags) {
  std::vector<rt::SnapshotFile> given;
  for (const std::shared_ptr<const Source>& f : files) given.push_back({f->Name(), f});
  return LoadFiles(given, rt::CacheOptions{}, diags);
}

bool ClusterState::LoadFiles(const std::vector<rt::SnapshotFile>& files, const rt::CacheOptions& cache,
                             DiagnosticSink& diags) {
  std::unique_ptr<engine::Cluster> loaded = engine::Cluster::LoadFiles(files, cache, diags);
  if (!loaded) return false;
  std::unordered_map<std::string, k8s::Node> nodes;
  if (keep_nodes_) {
    rt::SnapshotObjectList objects;
    std::vector<std::shared_ptr<const Source>> read;
    if (!rt::LoadSnapshotObjects(files, cache, objects, diags, read, false)) return false;
    for (k8s::Node& node : objects.nodes) {
      std::string name = node.name;
      nodes.insert_or_assign(std::move(name), std::move(node));
    }
  }
  Write([&] {
    cluster_ = std::move(loaded);
    nodes_ = std::move(nodes);
    epoch_ = next_epoch++;
    return 0;
  });
  return true;
}

std::optional<engine::EventOutcome> ClusterState::Apply(const Source& event, DiagnosticSink& diags) {
  return Write([&] {
    std::optional<engine::EventOutcome> done = engine::ApplyWatchEvent(*cluster_, event, diags);
    // Nodes and pods reach plans through the table's dictionaries; other
    // objects are read when a pod is planned (a Service's selector makes
    // default spread constraints, a PriorityClass a priority): plan again.
    if (done && done->changed && done->kind != "Node" && done->kind != "Pod") epoch_ = next_epoch++;
    if (done && !done->pod.empty()) assumed_.erase(done->pod);  // confirmed, or gone
    if (done && keep_nodes_ && done->node) {
      if (done->type == "DELETED") nodes_.erase(done->node->name);
      else nodes_.insert_or_assign(done->node->name, *done->node);
    }
    return done;
  });
}

bool ClusterState::Assume(k8s::Pod pod, const std::string& node) {
  pod.node_name = node;
  pod.phase = k8s::PodPhase::kRunning;
  return Write([&] {
    if (!cluster_->Table().FindNode(node)) return false;
    cluster_->UnbindPod(pod.namespace_name, pod.name);
    cluster_->BindPod(pod);
    std::string key = (pod.namespace_name.empty() ? std::string("default") : pod.namespace_name) + "/" + pod.name;
    if (assumed_.insert_or_assign(key, std::chrono::steady_clock::now()).second) assumed_order_.push_back(std::move(key));
    return true;
  });
}

size_t ClusterState::ExpireAssumed(std::chrono::steady_clock::duration ttl, size_t max) {
  auto now = std::chrono::steady_clock::now();
  auto due = [&] {  // under the mutex or the writer's hold
    while (!assumed_order_.empty() && !assumed_.contains(assumed_order_.front())) assumed_order_.pop_front();
    if (assumed_order_.empty()) return false;
    return assumed_.size() > max || now - assumed_.at(assumed_order_.front()) > ttl;
  };
  {
    std::lock_guard lock(mutex_);
    if (writing_ || !due()) return 0;  // a cheap look first: nothing is due most of the time
  }
  return Write([&] {
    size_t forgotten = 0;
    while (due()) {
      std::string key = std::move(assumed_order_.front());
      assumed_order_.pop_front();
      auto it = assumed_.find(key);
      if (it == assumed_.end()) continue;
      // Assumed again since it was queued: it goes back in order.
      if (assumed_.size() <= max && now - it->second <= ttl) {
        assumed_order_.push_back(std::move(key));
        continue;
      }
      assumed_.erase(it);
      size_t slash = key.find('/');
      forgotten += cluster_->UnbindPod(key.substr(0, slash), key.substr(slash + 1));
    }
    return forgotten;
  });
}

bool ClusterState::Forget(const std::string& namespace_name, const std::string& name) {
  std::string ns = namespace_name.empty() ? "default" : namespace_name;
  return Write([&] {
    assumed_.erase(ns + "/" + name);
    return cluster_->UnbindPod(ns, name);
  });
}

void ClusterState::Try(const std::function<void(engine::Cluster&)>& trial) {
  Write([&] {
    trial(*cluster_);
    return 0;
  });
}

ClusterState::View ClusterState::Overlay(std::vector<k8s::Node> nodes, size_t* differed) {
  *differed = 0;
  {
    View view = Read();
    const rt::NodeTable& table = view.cluster().Table();
    std::erase_if(nodes, [&](const k8s::Node& node) {
      std::optional<rt::RowId> row = table.FindNode(node.name);
      // A node the state holds but whose object it did not keep could not
      // be put back: it is judged as the state holds it.
      return row && (table.NodeFactsOf(*row) == rt::NodeTable::NodeFacts(node) || !nodes_.contains(node.name));
    });
    if (nodes.empty() || overlay_growth_ > kMaxOverlayGrowth) return view;
  }
  {
    std::unique_lock lock(mutex_);
    ++writers_waiting_;
    changed_.wait(lock, [&] { return readers_ == 0 && !writing_; });
    --writers_waiting_;
    writing_ = true;
  }
  View view(this);
  view.exclusive_ = true;
  view.table_bytes_ = cluster_->Table().RowMemoryBytes() + cluster_->Table().DictionaryMemoryBytes();
  for (k8s::Node& node : nodes) {
    if (cluster_->UpdateNode(node)) {
      view.put_back_.push_back(nodes_.at(node.name));
    } else if (cluster_->AddNode(node)) {
      view.take_out_.push_back(node.name);
    }
  }
  *differed = view.put_back_.size() + view.take_out_.size();
  epoch_ = next_epoch++;
  return view;
}

size_t ClusterState::NodeCount() { return Read().cluster().Table().NodeCount(); }
size_t ClusterState::PodCount() { return Read().cluster().Table().BoundPodCount(); }

std::optional<std::pair<size_t, size_t>> ClusterState::TryCounts() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || writing_ || writers_waiting_ > 0) return std::nullopt;
  const rt::NodeTable& table = cluster_->Table();  // no writer can start while the mutex is held
  return std::pair{table.NodeCount(), table.BoundPodCount()};
}

ClusterState::View ClusterState::Read() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !writing_ && writers_waiting_ == 0; });
  ++readers_;
  return View(this);
}

ClusterState::View::~View() {
  if (state_ == nullptr) return;
  if (exclusive_) {  // an Overlay's: the state's own nodes back, then let the others in
    for (const k8s::Node& node : put_back_) state_->cluster_->UpdateNode(node);
    for (const std::string& name : take_out_) state_->cluster_->RemoveNode(name);
    state_->epoch_ = next_epoch++;
    const rt::NodeTable& table = state_->cluster_->Table();
    size_t now = table.RowMemoryBytes() + table.DictionaryMemoryBytes();
    if (now > table_bytes_) state_->overlay_growth_ += now - table_bytes_;
    std::lock_guard lock(state_->mutex_);
    state_->writing_ = false;
    state_->changed_.notify_all();
    return;
  }
  bool trimmed = false;
  {
    std::lock_guard lock(state_->mutex_);
    // The last reader out trims what readers asked the table to count (a
    // pod set per selector of each new pod shape) as a writer would: no
    // reader holds a set id now, and no writer starts while the mutex is held.
    if (--state_->readers_ == 0 && state_->cluster_->Table().PodSetsOverBudget()) {
      state_->cluster_->TrimPodSets();
      trimmed = true;
    }
    state_->changed_.notify_all();
  }
#if defined(__GLIBC__)
  // The dropped sets' memory (a few hundred counts of 5,000 rows) back to
  // the system, not only to malloc: glibc keeps freed chunks in its arenas,
  // and a server that counts sets for ever new pod shapes would hold its
  // heap flat while its RSS crept up (bench_serve BM_ServeShapes).
  if (trimmed) malloc_trim(0);
#endif
}

// --- Decisions ---------------------------------------------------------------

namespace {

// A rejected node's reasons in one line, each once, and whether preemption
// cannot help with any of them.
std::pair<std::string, bool> Joined(const rt::NodeResult& n) {
  std::string reason;
  bool unresolvable = false;
  for (const rt::NodeReason& r : n.reasons) {
    if (reason.find(r.reason) == std::string::npos) reason += (reason.empty() ? "" : ", ") + r.reason;
    unresolvable = unresolvable || r.unresolvable;
  }
  return {std::move(reason), unresolvable};
}

// Rows that fail alike (the same plugins' same reasons, in order) share
// their texts: most of a call's rejected rows fall into a few verdicts, so
// each verdict is joined and looked up once, not once a row. Only the first
// kCompared distinct verdicts are looked for; a row unlike them all gets
// its own (rows whose reasons name the node itself).
class Verdicts {
 public:
  // The index (for Text) of `n`'s verdict (`n` outlives this, or Clear()).
  uint32_t Of(const rt::NodeResult& n) {
    for (const auto& [reasons, at] : compared_) {
      if (Alike(*reasons, n.reasons)) return at;
    }
    auto [all, unresolvable] = Joined(n);
    std::string first = n.reasons.empty() ? std::string() : n.reasons.front().reason;
    auto at = static_cast<uint32_t>(texts_.size());
    texts_.push_back({0, std::make_shared<const std::string>(std::move(first)),
                      std::make_shared<const std::string>(std::move(all)), unresolvable});
    if (compared_.size() < kCompared) compared_.emplace_back(&n.reasons, at);
    return at;
  }
  const RowVerdicts::Rejected& Text(uint32_t at) const { return texts_[at]; }
  void Clear() {
    texts_.clear();
    compared_.clear();
  }

 private:
  static constexpr size_t kCompared = 16;
  static bool Alike(const std::vector<rt::NodeReason>& a, const std::vector<rt::NodeReason>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].plugin != b[i].plugin || a[i].reason != b[i].reason) return false;
    }
    return true;
  }
  std::vector<RowVerdicts::Rejected> texts_;
  std::vector<std::pair<const std::vector<rt::NodeReason>*, uint32_t>> compared_;
};

}  // namespace

// A plan kept for the pods of one template at one cluster epoch; one
// decision at a time uses it.
struct Decisions::KeptPlan {
  k8s::Pod pod;  // the template
  size_t pod_bytes = 0;
  uint64_t epoch = 0;
  std::mutex use;
  std::unique_ptr<engine::PodPlan> plan;
  uint64_t used = 0;
  bool incremental = false;  // the engine keeps its decision and explanation of every node
  uint32_t calls = 0;        // decisions made with it while not incremental
  // The rejected rows' words, from the template's explanation of every node
  // (`words_of`, brought up to date for the table's ChangeEpoch
  // `words_epoch`): its rows that fail alike share a verdict, its texts
  // made once. By row, the verdict (kUnknown: not asked yet). Kept while the
  // explanation is the same object — a change that alters no row's words
  // keeps it.
  static constexpr uint32_t kUnknown = UINT32_MAX;
  uint64_t words_epoch = UINT64_MAX;
  std::shared_ptr<const rt::Placement> words_of;
  std::vector<uint32_t> verdict_of_row;
  Verdicts verdicts;
  void ForgetWords() {
    words_epoch = UINT64_MAX;
    words_of.reset();
    verdict_of_row = {};
    verdicts.Clear();
  }
};

Decisions::Decisions(std::unique_ptr<engine::Engine> engine) : engine_(std::move(engine)) {
  for (const engine::PluginSpec& p : engine_->Plugins()) max_score_ += p.score ? p.weight * 100 : 0;
}

Decisions::~Decisions() = default;

std::shared_ptr<Decisions::KeptPlan> Decisions::PlanFor(const k8s::Pod& pod, uint64_t epoch) {
  std::lock_guard lock(plans_mutex_);
  size_t hash = engine::TemplateHash(pod);  // a template pod (Engine::Template)
  std::shared_ptr<KeptPlan> found;
  auto [begin, end] = plans_.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    if (it->second->epoch == epoch && engine::SameTemplate(it->second->pod, pod)) found = it->second;
  }
  if (!found) {
    found = std::make_shared<KeptPlan>();
    found->pod = pod;
    found->pod_bytes = k8s::ApproximateBytes(pod);
    found->epoch = epoch;
    plans_.emplace(hash, found);
    plan_pod_bytes_ += found->pod_bytes;
  }
  found->used = ++uses_;
  // The least recently used one nobody is deciding with goes, past the
  // count or the bytes.
  while (plans_.size() > kKeptPlans || plan_pod_bytes_ > kKeptPlanPodBytes) {
    auto oldest = plans_.end();
    for (auto it = plans_.begin(); it != plans_.end(); ++it) {
      if (it->second.use_count() == 1 && (oldest == plans_.end() || it->second->used < oldest->second->used)) oldest = it;
    }
    if (oldest == plans_.end()) break;
    plan_pod_bytes_ -= oldest->second->pod_bytes;
    plans_.erase(oldest);
  }
  return found;
}

template <typename F>
void Decisions::WithPlan(const k8s::Pod& pod, const ClusterState::View& view, F&& use) {
  engine::TemplatePod t = engine_->Template(pod, view.cluster());
  engine::ClaimNames claims = std::move(t.claims);
  if (t.own_plan_because.empty()) {
    std::shared_ptr<KeptPlan> kept = PlanFor(t.pod, view.epoch());
    std::lock_guard using_kept(kept->use);
    if (!kept->plan) kept->plan = engine_->Plan(std::move(t), view.cluster());
    kept->plan->Adopt(pod);
    use(*kept->plan, kept.get(), claims);
  } else {
    std::unique_ptr<engine::PodPlan> own = engine_->Plan(std::move(t), view.cluster());
    use(*own, nullptr, claims);
  }
}

RowVerdicts Decisions::DecideRows(k8s::Pod pod, const ClusterState::View& view, std::span<const rt::RowId> rows,
                                  bool words) {
  RowVerdicts out;
  const engine::Cluster& cluster = view.cluster();
  std::span<const rt::RowId> live = cluster.Table().LiveRows();
  bool every_row = rows.empty() || rows.size() == live.size();  // rows are live, sorted, unique
  WithPlan(pod, view, [&](engine::PodPlan& plan, KeptPlan* kept, const engine::ClaimNames&) {  // reasons only: no claim named
    out.gated = NotesFor(plan.Pod(), engine_->Profile().scheduler_name).gated;
    rt::DecideOptions options{.threads = 1, .plugin_scores = false, .verify_kernels = false, .rows = every_row ? std::span<const rt::RowId>() : rows};
    const rt::Decision* decided = nullptr;
    // A template asked about again keeps its decision and explanation of
    // every node, brought up to date on each call (a bind touches a row):
    // what a decision from scratch gives, bit for bit. Once is not enough:
    // a pod of a shape never seen before is most often not seen again, and
    // what is kept is O(nodes x plugins).
    if (kept != nullptr && !kept->incremental && ++kept->calls >= 2) {
      kept->incremental = true;
      TrimIncremental(kept);
    }
    if (kept != nullptr && !kept->incremental) kept = nullptr;  // this call's alone
    // The kept decision is always over every row: its scores' raw values
    // are kept for the feasible rows of the last call, and some depend on
    // which rows those are (a spread counted over the feasible nodes), so
    // a call among some rows decides afresh.
    if (kept != nullptr && every_row) {
      decided = &engine_->DecideIncremental(plan, cluster, options, nullptr);
    } else {
      // The thread's own (decisions run at once on many threads), kept for
      // its buffers and what it learned of the filters' order.
      thread_local rt::Decider decider;
      decided = &engine_->Decide(plan, cluster, decider, options);
    }
    const rt::Decision& d = *decided;
    out.feasible = d.feasible;
    out.score = d.score;
    if (!out.gated) out.selected = d.selected;
    out.error = d.error;
    if (!words || d.error) return;
    std::vector<rt::RowId> rejected;
    std::span<const rt::RowId> decided_rows = every_row ? live : rows;
    std::set_difference(decided_rows.begin(), decided_rows.end(), d.feasible.begin(), d.feasible.end(),
                        std::back_inserter(rejected));
    // `d` is read no more: Words may decide the kept plan again over every row.
    if (!rejected.empty()) out.rejected = Words(plan, kept, cluster, d, every_row, rejected);
  });
  return out;
}

std::vector<RowVerdicts::Rejected> Decisions::Words(engine::PodPlan& plan, KeptPlan* kept, const engine::Cluster& cluster,
                                                    const rt::Decision& d, bool every_row,
                                                    const std::vector<rt::RowId>& rejected) {
  std::vector<RowVerdicts::Rejected> out;
  out.reserve(rejected.size());
  if (kept == nullptr) {  // a plan of the call's own: its rows explained afresh
    rt::Placement own = engine_->Explain(plan, cluster, d, rejected, /*details=*/false);
    Verdicts verdicts;
    for (const rt::NodeResult& n : own.nodes) {
      out.push_back(verdicts.Text(verdicts.Of(n)));
      out.back().row = n.row;
    }
    return out;
  }
  const rt::NodeTable& table = cluster.Table();
  uint64_t now = table.ChangeEpoch();
  if (kept->words_epoch != now || !kept->words_of) {
    // The template's kept explanation of every node, brought up to date:
    // only the rows a change may have touched are explained again (a bind
    // touches one). Words do not depend on the rows asked.
    const rt::Decision& all = every_row ? d : engine_->DecideIncremental(plan, cluster, {}, nullptr);
    std::shared_ptr<const rt::Placement> explained =
        engine_->ExplainIncremental(plan, cluster, all, /*details=*/false);  // Joined reads reasons only
    if (explained != kept->words_of || kept->verdict_of_row.size() != table.RowCount()) {
      kept->words_of = std::move(explained);
      kept->verdict_of_row.assign(table.RowCount(), KeptPlan::kUnknown);
      kept->verdicts.Clear();
    }
    kept->words_epoch = now;
  }
  const std::vector<rt::NodeResult>& nodes = kept->words_of->nodes;  // every live row, in row order
  for (rt::RowId row : rejected) {
    uint32_t& verdict = kept->verdict_of_row[row];
    if (verdict == KeptPlan::kUnknown) {
      auto at = std::lower_bound(nodes.begin(), nodes.end(), row,
                                 [](const rt::NodeResult& n, rt::RowId r) { return n.row < r; });
      verdict = kept->verdicts.Of(*at);  // a rejected row of a live table: there
    }
    out.push_back(kept->verdicts.Text(verdict));
    out.back().row = row;
  }
  return out;
}

void Decisions::TrimIncremental(const KeptPlan* keep) {
  std::vector<std::pair<uint64_t, std::shared_ptr<KeptPlan>>> holding;  // by when last used
  {
    std::lock_guard lock(plans_mutex_);
    for (const auto& [hash, plan] : plans_) {
      if (plan.get() != keep) holding.emplace_back(plan->used, plan);
    }
  }
  std::sort(holding.begin(), holding.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  // Each template's share is O(nodes x plugins), a few MB at 5,000 nodes:
  // a count of templates would keep too few on a small cluster and too much
  // on a large one (the realistic queue's 19 templates thrashed 16 kept).
  // `keep`'s own share is made after this trim (the caller holds its turn):
  // the budget may be passed by one template's share until the next trim.
  size_t total = keep->plan ? keep->plan->KeptBytes() : 0;
  for (auto& [used, plan] : holding) {  // the most recently used first
    std::unique_lock use(plan->use, std::try_to_lock);
    if (!use.owns_lock() || !plan->incremental) continue;  // in use now: left for the next trim
    size_t bytes = plan->plan->KeptBytes();
    if (total + bytes <= kept_bytes_limit_) {
      total += bytes;
      continue;
    }
    engine_->ForgetKept(*plan->plan, "its kept decision was dropped to bound memory");
    plan->incremental = false;
    plan->ForgetWords();  // they hold the explanation dropped
  }
}

size_t Decisions::KeptBytes() {
  std::vector<std::shared_ptr<KeptPlan>> holding;
  {
    std::lock_guard lock(plans_mutex_);
    for (const auto& [hash, plan] : plans_) holding.push_back(plan);
  }
  size_t total = 0;
  for (const auto& plan : holding) {
    std::lock_guard use(plan->use);
    if (plan->plan) total += plan->plan->KeptBytes();
  }
  return total;
}

Answer Decisions::Decide(k8s::Pod pod, const ClusterState::View& view, const std::vector<std::string>* candidates) {
  const rt::NodeTable& table = view.cluster().Table();
  Answer answer;
  answer.pod = pod.namespace_name + "/" + pod.name;
  answer.notes = NotesFor(pod, engine_->Profile().scheduler_name);
  std::vector<rt::RowId> rows;
  if (candidates != nullptr) {
    for (const std::string& name : *candidates) {
      if (std::optional<rt::RowId> row = table.FindNode(name)) {
        rows.push_back(*row);
      } else {
        answer.failed.push_back({name, "node(s) not found in policyc's cluster state", true});
      }
    }
    std::sort(rows.begin(), rows.end());  // the decision reads them in table order
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  if (candidates != nullptr && rows.empty()) {  // no node to decide among
    answer.summary = "no nodes available to schedule pods";
    answer.placement.summary = answer.summary;
    return answer;
  }
  WithPlan(pod, view, [&](engine::PodPlan& plan, KeptPlan*, const engine::ClaimNames& claims) {
    rt::Decider decider;
    const rt::Decision& d =
        engine_->Decide(plan, view.cluster(), decider, {.threads = 1, .plugin_scores = true, .verify_kernels = false, .rows = rows});
    answer.placement = engine_->Explain(plan, view.cluster(), d, rows);
    engine::NameClaims(answer.placement, claims);
  });
  rt::Placement& placement = answer.placement;
  if (answer.notes.gated) placement.summary = "Scheduling is blocked due to non-empty scheduling gates";
  std::vector<const rt::NodeResult*> feasible;
  for (const rt::NodeResult& n : placement.nodes) {
    if (n.feasible) {
      feasible.push_back(&n);
      continue;
    }
    auto [reason, unresolvable] = Joined(n);
    answer.failed.push_back({n.name, std::move(reason), unresolvable});
  }
  std::stable_sort(feasible.begin(), feasible.end(), [](const auto* a, const auto* b) { return a->score > b->score; });
  for (const rt::NodeResult* n : feasible) answer.feasible.emplace_back(n->name, n->score);
  if (placement.selected && !answer.notes.gated) answer.selected = placement.nodes[*placement.selected].name;
  answer.summary = placement.summary;
  return answer;
}

}  // namespace policy::host
