// The hosts' shared core (host.h).

#include "runtime/host/host.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <span>

#include "compiler/k8s/object_reader.h"
#include "runtime/engine/pod_template.h"
#include "runtime/engine/preemption.h"

namespace policy::host {
namespace {

// Never reused: a kept plan is for one epoch of one cluster.
std::atomic<uint64_t> next_epoch{1};

constexpr size_t kKeptPlans = 256;
// Rejected rows' words kept over every kept plan (about 100 bytes each):
// past this, words are made for each call and not kept.
constexpr size_t kKeptWords = 200000;
// Templates whose decision and explanation of every node are kept to be
// brought up to date (Engine::DecideIncremental, ExplainIncremental: some
// hundred bytes a node each); the least recently used beyond are dropped.
constexpr size_t kIncrementalPlans = 16;

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
  std::unique_ptr<engine::Cluster> loaded = engine::Cluster::Load(files, diags);
  if (!loaded) return false;
  Write([&] {
    cluster_ = std::move(loaded);
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
    return true;
  });
}

bool ClusterState::Forget(const std::string& namespace_name, const std::string& name) {
  return Write([&] { return cluster_->UnbindPod(namespace_name.empty() ? "default" : namespace_name, name); });
}

size_t ClusterState::NodeCount() { return Read().cluster().Table().NodeCount(); }
size_t ClusterState::PodCount() { return Read().cluster().Table().BoundPodCount(); }

ClusterState::View ClusterState::Read() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !writing_ && writers_waiting_ == 0; });
  ++readers_;
  return View(this);
}

ClusterState::View::~View() {
  if (state_ == nullptr) return;
  bool trimmed = false;
  {
    std::lock_guard lock(state_->mutex_);
    // The last reader out trims what readers asked the table to count (a
    // pod set per selector of each new pod shape) as a writer would: no
    // reader holds a set id now, and no writer starts while the mutex is held.
    if (--state_->readers_ == 0 && state_->cluster_->Table().PodSetsKept() > rt::NodeTable::kMaxPodSets) {
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

// A plan kept for the pods of one template at one cluster epoch; one
// decision at a time uses it.
struct Decisions::KeptPlan {
  k8s::Pod pod;  // the template
  uint64_t epoch = 0;
  std::mutex use;
  std::unique_ptr<engine::PodPlan> plan;
  uint64_t used = 0;
  // Rejected rows' words while the table does not change (its ChangeEpoch
  // is `words_epoch`): the same pod template on the same table says the
  // same. By row.
  uint64_t words_epoch = UINT64_MAX;
  std::unordered_map<rt::RowId, RowVerdicts::Rejected> words;
  bool incremental = false;  // the engine keeps its decision and explanation of every node
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
    found->epoch = epoch;
    plans_.emplace(hash, found);
  }
  found->used = ++uses_;
  while (plans_.size() > kKeptPlans) {  // the least recently used one nobody is deciding with
    auto oldest = plans_.end();
    for (auto it = plans_.begin(); it != plans_.end(); ++it) {
      if (it->second.use_count() == 1 && (oldest == plans_.end() || it->second->used < oldest->second->used)) oldest = it;
    }
    if (oldest == plans_.end()) break;
    words_kept_ -= oldest->second->words.size();
    plans_.erase(oldest);
  }
  return found;
}

namespace {

// A rejected node's reasons in one line, each once, and whether preemption
// cannot help with any of them.
std::pair<std::string, bool> Joined(const rt::NodeResult& n) {
  std::string reason;
  bool unresolvable = false;
  for (const rt::NodeReason& r : n.reasons) {
    if (reason.find(r.reason) == std::string::npos) reason += (reason.empty() ? "" : ", ") + r.reason;
    unresolvable = unresolvable || engine::Unresolvable(r.plugin, r.reason);
  }
  return {std::move(reason), unresolvable};
}

// One copy of each text among a call's words.
using Texts = std::unordered_map<std::string, std::shared_ptr<const std::string>>;
std::shared_ptr<const std::string> Shared(Texts& texts, std::string text) {
  std::shared_ptr<const std::string>& shared = texts[text];
  if (!shared) shared = std::make_shared<const std::string>(std::move(text));
  return shared;
}

}  // namespace

template <typename F>
void Decisions::WithPlan(const k8s::Pod& pod, const ClusterState::View& view, F&& use) {
  engine::TemplatePod t = engine_->Template(pod, view.cluster());
  engine::ClaimNames claims = std::move(t.claims);
  if (t.own_plan_because.empty()) {
    std::shared_ptr<KeptPlan> kept = PlanFor(t.pod, view.epoch());
    std::lock_guard using_kept(kept->use);
    if (!kept->plan) kept->plan = engine_->Plan(std::move(t), view.cluster());
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
  WithPlan(pod, view, [&](engine::PodPlan& plan, KeptPlan* kept, const engine::ClaimNames&) {  // reasons only: no claim named
    out.gated = NotesFor(plan.Pod(), engine_->Profile().scheduler_name).gated;
    // The thread's own (decisions run at once on many threads), kept for its
    // buffers and what it learned of the filters' order.
    thread_local rt::Decider decider;
    const rt::Decision& d =
        engine_->Decide(plan, cluster, decider, {.threads = 1, .plugin_scores = false, .verify_kernels = false, .rows = rows});
    out.feasible = d.feasible;
    out.score = d.score;
    if (!out.gated) out.selected = d.selected;
    if (!words) return;
    std::vector<rt::RowId> rejected;
    std::span<const rt::RowId> decided = rows.empty() ? cluster.Table().LiveRows() : rows;
    std::set_difference(decided.begin(), decided.end(), d.feasible.begin(), d.feasible.end(), std::back_inserter(rejected));
    if (!rejected.empty()) out.rejected = Words(plan, kept, cluster, d, rejected);
  });
  return out;
}

std::vector<RowVerdicts::Rejected> Decisions::Words(engine::PodPlan& plan, KeptPlan* kept, const engine::Cluster& cluster,
                                                    const rt::Decision& d, const std::vector<rt::RowId>& rejected) {
  std::vector<RowVerdicts::Rejected> out;
  uint64_t now = cluster.Table().ChangeEpoch();
  if (kept != nullptr && kept->words_epoch != now) {
    words_kept_ -= kept->words.size();
    kept->words.clear();
    kept->words_epoch = now;
  }
  std::vector<rt::RowId> unknown;  // rows without kept words, in row order
  for (rt::RowId row : rejected) {
    if (kept == nullptr || !kept->words.contains(row)) unknown.push_back(row);
  }
  bool keep = kept != nullptr && words_kept_ + unknown.size() <= kKeptWords;
  std::vector<RowVerdicts::Rejected> fresh;  // not kept: this call's alone, in `unknown`'s order
  if (!unknown.empty()) {
    std::vector<const rt::NodeResult*> nodes;
    rt::Placement own;
    std::shared_ptr<const rt::Placement> incremental;
    if (kept != nullptr) {
      // The template's kept explanation of every node, brought up to date:
      // only the rows a change may have touched are explained again (a
      // bind touches one). Words do not depend on the rows asked.
      const rt::Decision& all = engine_->DecideIncremental(plan, cluster, {}, nullptr);
      incremental = engine_->ExplainIncremental(plan, cluster, all, /*details=*/false);  // Joined reads reasons only
      if (!kept->incremental) {
        kept->incremental = true;
        TrimIncremental(kept);
      }
      for (rt::RowId row : unknown) {
        auto at = std::lower_bound(incremental->nodes.begin(), incremental->nodes.end(), row,
                                   [](const rt::NodeResult& n, rt::RowId r) { return n.row < r; });
        nodes.push_back(&*at);  // a rejected row of a live table: there
      }
    } else {
      own = engine_->Explain(plan, cluster, d, unknown, /*details=*/false);
      for (const rt::NodeResult& n : own.nodes) nodes.push_back(&n);
    }
    // Rows that fail alike (the same plugins' same reasons, in order) share
    // their texts: most of a call's rejected rows fall into a few verdicts,
    // so each verdict is joined and looked up once, not once a row.
    struct Verdict {
      const std::vector<rt::NodeReason>* reasons;
      RowVerdicts::Rejected texts;
    };
    std::vector<Verdict> verdicts;  // the first kVerdictsCompared distinct ones
    constexpr size_t kVerdictsCompared = 16;
    auto alike = [](const std::vector<rt::NodeReason>& a, const std::vector<rt::NodeReason>& b) {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].plugin != b[i].plugin || a[i].reason != b[i].reason) return false;
      }
      return true;
    };
    Texts texts;
    for (const rt::NodeResult* node : nodes) {
      const rt::NodeResult& n = *node;
      const Verdict* seen = nullptr;
      for (const Verdict& v : verdicts) {
        if (alike(*v.reasons, n.reasons)) {
          seen = &v;
          break;
        }
      }
      RowVerdicts::Rejected r;
      if (seen != nullptr) {
        r = seen->texts;
      } else {
        auto [all, unresolvable] = Joined(n);
        std::string first = n.reasons.empty() ? std::string() : n.reasons.front().reason;
        r = {n.row, Shared(texts, std::move(first)), Shared(texts, std::move(all)), unresolvable};
        if (verdicts.size() < kVerdictsCompared) verdicts.push_back({&n.reasons, r});
      }
      r.row = n.row;
      if (keep) {
        kept->words.emplace(n.row, std::move(r));
      } else {
        fresh.push_back(std::move(r));
      }
    }
    if (keep) words_kept_ += nodes.size();
  }
  out.reserve(rejected.size());
  size_t next = 0;
  for (rt::RowId row : rejected) {
    if (kept != nullptr) {
      if (auto it = kept->words.find(row); it != kept->words.end()) {
        out.push_back(it->second);
        continue;
      }
    }
    out.push_back(std::move(fresh[next++]));
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
  size_t kept = 1;  // `keep`
  for (auto& [used, plan] : holding) {  // the most recently used first
    std::unique_lock use(plan->use, std::try_to_lock);
    if (!use.owns_lock() || !plan->incremental) continue;  // in use now: left for the next trim
    if (++kept <= kIncrementalPlans) continue;
    engine_->ForgetKept(*plan->plan, "more templates than policyc serve keeps");
    plan->incremental = false;
  }
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
