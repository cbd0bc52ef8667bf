// The C ABI (include/policyc.h) over the engine: handles, the readers'
// and writer's gate of a cluster, statuses and thread-local messages. No
// exception leaves a policyc_* function.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/k8s/object_reader.h"
#include "compiler/k8s/pod_reader.h"
#include "policyc.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/pod_template.h"
#include "runtime/engine/preemption.h"
#include "runtime/engine/watch_event.h"
#include "runtime/host/placement_json.h"

#define POLICYC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace policy;

namespace {

thread_local std::string last_error;

policyc_status Fail(policyc_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

// Runs `body`, turning every exception into a status and a message.
template <typename F>
policyc_status Guarded(F&& body) {
  try {
    last_error.clear();
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(POLICYC_E_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return Fail(POLICYC_E_INTERNAL, std::string("internal error (a bug in policyc): ") + e.what());
  } catch (...) {
    return Fail(POLICYC_E_INTERNAL, "internal error (a bug in policyc): an unknown exception");
  }
}

// The caller's bytes as a source named `name` (they may hold anything).
std::shared_ptr<const Source> Text(const char* name, const char* text, size_t len) {
  return std::make_shared<const Source>(name, std::string(text, len));
}

policyc_status BadInput(const DiagnosticSink& diags, const char* what) {
  std::string rendered = RenderAll(diags);
  return Fail(POLICYC_E_PARSE, rendered.empty() ? std::string(what) : rendered);
}

// A mapping's string field, or `fallback` when absent; false when it is not a string.
bool StringField(k8s::NodeRef m, const char* key, std::string* out) {
  k8s::NodeRef v = m.Get(key);
  if (!v.Valid()) return true;
  if (!v.IsScalar()) return false;
  *out = std::string(v.Text());
  return true;
}

// The engine configuration (policyc.h, policyc_engine_new).
struct EngineConfig {
  std::optional<std::string> profile;
  std::string scheduler_name = "default-scheduler";
  bool restrict = false;              // only `plugins` of the profile's in-tree plugins
  std::vector<std::string> plugins;
  std::vector<std::shared_ptr<const Source>> policies;
  engine::EngineOptions options;
};

class ConfigReader final : public k8s::ObjectVisitor {
 public:
  void Visit(k8s::NodeRef config, std::string_view) override {
    if (++documents_ > 1) return Problem("expected one configuration object, found another after it");
    if (!config.IsMapping()) return Problem("expected the configuration to be a JSON object");
    for (uint32_t i = 0; i < config.Size(); ++i) {
      std::string_view key = config.KeyAt(i).Text();
      if (key != "profile" && key != "schedulerName" && key != "plugins" && key != "policies" && key != "engine" &&
          key != "jitOpt") {
        return Problem("unknown configuration field `" + std::string(key) +
                       "` (expected profile, schedulerName, plugins, policies, engine, jitOpt)");
      }
    }
    std::string profile;
    if (!StringField(config, "profile", &profile)) return Problem("`profile` must be a string: a KubeSchedulerConfiguration");
    if (config.Get("profile").Valid()) out.profile = profile;
    if (!StringField(config, "schedulerName", &out.scheduler_name)) return Problem("`schedulerName` must be a string");
    k8s::NodeRef plugins = config.Get("plugins");
    if (plugins.Valid() && !plugins.IsSequence()) return Problem("`plugins` must be a list of in-tree plugin names");
    for (uint32_t i = 0; plugins.Valid() && i < plugins.Size(); ++i) {
      if (!plugins.At(i).IsScalar()) return Problem("`plugins` must be a list of in-tree plugin names");
      out.plugins.push_back(std::string(plugins.At(i).Text()));
    }
    if (plugins.Valid()) out.restrict = true;
    k8s::NodeRef policies = config.Get("policies");
    if (policies.Valid() && !policies.IsSequence()) return Problem("`policies` must be a list of {\"name\", \"source\"}");
    for (uint32_t i = 0; policies.Valid() && i < policies.Size(); ++i) {
      k8s::NodeRef p = policies.At(i);
      std::string name = "policy" + std::to_string(i) + ".policy", source;
      if (!p.IsMapping() || !StringField(p, "name", &name) || !StringField(p, "source", &source) ||
          !p.Get("source").Valid()) {
        return Problem("each of `policies` must be {\"name\": \"...\", \"source\": \"...\"}");
      }
      out.policies.push_back(std::make_shared<const Source>(name, source));
    }
    std::string backend = "interp";
    if (!StringField(config, "engine", &backend)) return Problem("`engine` must be a string");
    if (backend == "interp") out.options.backend = engine::Backend::kInterp;
    else if (backend == "jit") out.options.backend = engine::Backend::kJit;
    else if (backend == "tiered") out.options.backend = engine::Backend::kTiered;
    else return Problem("`engine` must be interp, jit or tiered, not `" + backend + "`");
    std::string opt = "2";
    if (!StringField(config, "jitOpt", &opt) || opt.size() != 1 || opt[0] < '0' || opt[0] > '3') {
      return Problem("`jitOpt` must be 0, 1, 2 or 3");
    }
    out.options.jit_opt_level = opt[0] - '0';
    if (out.options.backend != engine::Backend::kInterp && !engine::Engine::HasJit()) {
      return Problem("this build of policyc has no JIT: use \"engine\": \"interp\"");
    }
  }

  EngineConfig out;
  std::string problem;
  int documents() const { return documents_; }

 private:
  void Problem(std::string what) {
    if (problem.empty()) problem = std::move(what);
  }
  int documents_ = 0;
};

// Identifies what a kept plan was made against: a cluster's table and the
// objects Engine::Plan reads once (the Services and sets whose selectors make
// default spread constraints, PriorityClasses). Never reused.
std::atomic<uint64_t> next_epoch{1};

// A plan kept for the pods of one template (pod_template.h), as `policyc
// schedule` keeps them: the pass pipeline runs once per template and
// cluster epoch, not once per decision. One decision at a time uses it.
struct KeptPlan {
  k8s::Pod pod;  // the template
  uint64_t epoch = 0;
  std::mutex use;
  std::unique_ptr<engine::PodPlan> plan;
  uint64_t used = 0;
};

constexpr size_t kKeptPlans = 256;

}  // namespace

struct policyc_engine {
  std::unique_ptr<engine::Engine> engine;
  std::string scheduler_name;
  int64_t max_score = 0;
  std::mutex plans_mutex;
  std::unordered_multimap<size_t, std::shared_ptr<KeptPlan>> plans;  // by TemplateHash
  uint64_t uses = 0;

  // The kept plan for `pod` at `epoch` (made empty when there is none),
  // dropping the least recently used ones beyond kKeptPlans.
  std::shared_ptr<KeptPlan> PlanFor(const k8s::Pod& pod, uint64_t epoch) {
    std::lock_guard lock(plans_mutex);
    size_t hash = engine::TemplateHash(pod);
    std::shared_ptr<KeptPlan> found;
    auto [begin, end] = plans.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
      if (it->second->epoch == epoch && engine::SameTemplate(it->second->pod, pod)) found = it->second;
    }
    if (!found) {
      found = std::make_shared<KeptPlan>();
      found->pod = pod;
      found->epoch = epoch;
      plans.emplace(hash, found);
    }
    found->used = ++uses;
    while (plans.size() > kKeptPlans) {  // the least recently used one nobody is deciding with
      auto oldest = plans.end();
      for (auto it = plans.begin(); it != plans.end(); ++it) {
        if (it->second.use_count() == 1 && (oldest == plans.end() || it->second->used < oldest->second->used)) oldest = it;
      }
      if (oldest == plans.end()) break;
      plans.erase(oldest);
    }
    return found;
  }
};

// Readers (views) share the cluster; a writer waits for them to leave and
// keeps new ones out meanwhile. Not tied to threads: a view may be freed on
// another thread than the one that made it (Go moves goroutines).
struct policyc_cluster {
  std::mutex mutex;
  std::condition_variable changed;
  int readers = 0;
  int writers_waiting = 0;
  bool writing = false;
  std::unique_ptr<engine::Cluster> cluster = std::make_unique<engine::Cluster>();
  uint64_t epoch = next_epoch++;  // kept plans are for this epoch (next_epoch)

  // Runs `change` with the cluster to itself.
  template <typename F>
  policyc_status Write(F&& change) {
    {
      std::unique_lock lock(mutex);
      ++writers_waiting;
      changed.wait(lock, [&] { return readers == 0 && !writing; });
      --writers_waiting;
      writing = true;
    }
    struct Done {
      policyc_cluster* c;
      ~Done() {
        std::lock_guard lock(c->mutex);
        c->writing = false;
        c->changed.notify_all();
      }
    } done{this};
    return change(cluster);
  }
};

struct policyc_view {
  policyc_cluster* cluster;
};

struct policyc_result {
  std::vector<std::string> feasible;
  std::vector<int64_t> scores;
  std::optional<std::string> selected;
  std::vector<std::string> failed, reasons;
  std::vector<int> unresolvable;
  std::string summary;
  int64_t max_score = 0;
  std::string pod;  // namespace/name
  rt::Placement placement;
  host::PodNotes notes;
  std::string json;  // made when asked
};

POLICYC_EXPORT uint32_t policyc_abi_version(void) { return POLICYC_ABI_VERSION; }

POLICYC_EXPORT const char* policyc_last_error(void) { return last_error.c_str(); }

POLICYC_EXPORT policyc_status policyc_engine_new(uint32_t abi_version, const char* config_json, size_t len,
                                                 policyc_engine** out) {
  return Guarded([&]() -> policyc_status {
    if (out == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_engine_new: `out` is null");
    *out = nullptr;
    if ((abi_version >> 16) != POLICYC_ABI_MAJOR || (abi_version & 0xFFFF) > POLICYC_ABI_MINOR) {
      return Fail(POLICYC_E_ABI, "policyc_engine_new: the host was compiled against ABI " + std::to_string(abi_version >> 16) +
                                     "." + std::to_string(abi_version & 0xFFFF) + ", this library is " +
                                     std::to_string(POLICYC_ABI_MAJOR) + "." + std::to_string(POLICYC_ABI_MINOR));
    }
    if (config_json == nullptr && len > 0) return Fail(POLICYC_E_INVALID_ARG, "policyc_engine_new: `config_json` is null");
    EngineConfig config;
    if (len > 0) {
      DiagnosticSink diags;
      std::shared_ptr<const Source> source = Text("engine-config.json", config_json, len);
      ConfigReader reader;
      if (!k8s::ReadObjects(*source, reader, diags, k8s::InputFormat::kJson)) return BadInput(diags, "the configuration does not read");
      if (reader.documents() == 0) return Fail(POLICYC_E_PARSE, "engine-config.json: expected a JSON object, found nothing");
      if (!reader.problem.empty()) return Fail(POLICYC_E_PARSE, "engine-config.json: " + reader.problem);
      config = std::move(reader.out);
    }
    rt::Profile profile = rt::DefaultProfile();
    if (config.profile) {
      DiagnosticSink diags;
      auto source = std::make_shared<const Source>("profile", *config.profile);
      std::optional<std::vector<rt::Profile>> profiles = rt::ReadProfiles(*source, diags);
      if (!profiles) return BadInput(diags, "the profile does not read");
      const rt::Profile* chosen = profiles->size() == 1 ? &profiles->front() : nullptr;
      for (const rt::Profile& p : *profiles) {
        if (p.scheduler_name == config.scheduler_name) chosen = &p;
      }
      if (chosen == nullptr) return Fail(POLICYC_E_INVALID_ARG, "no profile is for schedulerName `" + config.scheduler_name + "`");
      profile = *chosen;
    }
    if (config.restrict) {
      std::string unknown;
      std::optional<rt::Profile> restricted = rt::RestrictProfile(std::move(profile), config.plugins, &unknown);
      if (!restricted) return Fail(POLICYC_E_PARSE, "engine-config.json: unknown plugin `" + unknown + "` in `plugins`");
      profile = std::move(*restricted);
    }
    DiagnosticSink diags;
    std::unique_ptr<engine::Engine> e = engine::Engine::Create(profile, config.policies, config.options, diags);
    if (!e) return Fail(POLICYC_E_COMPILE, RenderAll(diags));
    auto made = std::make_unique<policyc_engine>();
    for (const engine::PluginSpec& p : e->Plugins()) made->max_score += p.score ? p.weight * 100 : 0;
    made->scheduler_name = e->Profile().scheduler_name;
    made->engine = std::move(e);
    *out = made.release();
    return POLICYC_OK;
  });
}

POLICYC_EXPORT void policyc_engine_free(policyc_engine* engine) { delete engine; }

POLICYC_EXPORT policyc_status policyc_cluster_new(policyc_cluster** out) {
  return Guarded([&]() -> policyc_status {
    if (out == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_new: `out` is null");
    *out = new policyc_cluster();
    return POLICYC_OK;
  });
}

POLICYC_EXPORT void policyc_cluster_free(policyc_cluster* cluster) { delete cluster; }

POLICYC_EXPORT policyc_status policyc_cluster_load(policyc_cluster* cluster, const char* snapshot, size_t len) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || (snapshot == nullptr && len > 0)) {
      return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_load: a null argument");
    }
    DiagnosticSink diags;
    std::unique_ptr<engine::Cluster> loaded = engine::Cluster::Load(Text("snapshot", snapshot == nullptr ? "" : snapshot, len), diags);
    if (!loaded) return BadInput(diags, "the snapshot does not read");
    return cluster->Write([&](std::unique_ptr<engine::Cluster>& c) {
      c = std::move(loaded);
      cluster->epoch = next_epoch++;
      return POLICYC_OK;
    });
  });
}

POLICYC_EXPORT policyc_status policyc_cluster_apply(policyc_cluster* cluster, const char* event_json, size_t len) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || event_json == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_apply: a null argument");
    std::shared_ptr<const Source> source = Text("event", event_json, len);
    return cluster->Write([&](std::unique_ptr<engine::Cluster>& c) {
      DiagnosticSink diags;
      std::optional<engine::EventOutcome> done = engine::ApplyWatchEvent(*c, *source, diags);
      if (!done) return BadInput(diags, "the event does not read");
      // Nodes and pods reach plans through the table's dictionaries; other
      // objects are read when a pod is planned: plan again.
      if (done->changed && done->kind != "Node" && done->kind != "Pod") cluster->epoch = next_epoch++;
      return POLICYC_OK;
    });
  });
}

POLICYC_EXPORT policyc_status policyc_cluster_assume(policyc_cluster* cluster, const char* pod_json, size_t len,
                                                     const char* node) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || pod_json == nullptr || node == nullptr) {
      return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_assume: a null argument");
    }
    DiagnosticSink diags;
    std::optional<k8s::Pod> pod = k8s::ReadPod(*Text("pod", pod_json, len), diags);
    if (!pod) return BadInput(diags, "the pod does not read");
    pod->node_name = node;
    pod->phase = k8s::PodPhase::kRunning;
    return cluster->Write([&](std::unique_ptr<engine::Cluster>& c) {
      if (!c->Table().FindNode(node)) return Fail(POLICYC_E_NOT_FOUND, std::string("no node `") + node + "` in the cluster");
      c->UnbindPod(pod->namespace_name, pod->name);
      c->BindPod(*pod);
      return POLICYC_OK;
    });
  });
}

POLICYC_EXPORT policyc_status policyc_cluster_forget(policyc_cluster* cluster, const char* pod_namespace,
                                                     const char* pod_name) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || pod_namespace == nullptr || pod_name == nullptr) {
      return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_forget: a null argument");
    }
    return cluster->Write([&](std::unique_ptr<engine::Cluster>& c) {
      if (c->UnbindPod(*pod_namespace != '\0' ? pod_namespace : "default", pod_name)) return POLICYC_OK;
      return Fail(POLICYC_E_NOT_FOUND, std::string("no pod `") + pod_namespace + "/" + pod_name + "` counts in the cluster");
    });
  });
}

POLICYC_EXPORT size_t policyc_cluster_node_count(const policyc_cluster* cluster) {
  if (cluster == nullptr) return 0;
  auto* c = const_cast<policyc_cluster*>(cluster);
  std::unique_lock lock(c->mutex);
  c->changed.wait(lock, [&] { return !c->writing; });
  return c->cluster->Table().NodeCount();
}

POLICYC_EXPORT size_t policyc_cluster_pod_count(const policyc_cluster* cluster) {
  if (cluster == nullptr) return 0;
  auto* c = const_cast<policyc_cluster*>(cluster);
  std::unique_lock lock(c->mutex);
  c->changed.wait(lock, [&] { return !c->writing; });
  return c->cluster->Table().BoundPodCount();
}

POLICYC_EXPORT policyc_status policyc_cluster_view(policyc_cluster* cluster, policyc_view** out) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || out == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_view: a null argument");
    auto view = std::make_unique<policyc_view>(policyc_view{cluster});
    std::unique_lock lock(cluster->mutex);
    cluster->changed.wait(lock, [&] { return !cluster->writing && cluster->writers_waiting == 0; });
    ++cluster->readers;
    *out = view.release();
    return POLICYC_OK;
  });
}

POLICYC_EXPORT void policyc_view_free(policyc_view* view) {
  if (view == nullptr) return;
  {
    std::lock_guard lock(view->cluster->mutex);
    --view->cluster->readers;
    view->cluster->changed.notify_all();
  }
  delete view;
}

POLICYC_EXPORT policyc_status policyc_decide(const policyc_engine* engine, const policyc_view* view, const char* pod_json,
                                             size_t len, const policyc_decide_opts* opts, policyc_result** out) {
  return Guarded([&]() -> policyc_status {
    if (out == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_decide: `out` is null");
    *out = nullptr;
    if (engine == nullptr || view == nullptr || pod_json == nullptr) {
      return Fail(POLICYC_E_INVALID_ARG, "policyc_decide: a null argument");
    }
    policyc_decide_opts o{};
    if (opts != nullptr) {
      if (opts->struct_size < sizeof(uint32_t) * 2 || opts->struct_size > sizeof(policyc_decide_opts)) {
        return Fail(POLICYC_E_INVALID_ARG, "policyc_decide: opts->struct_size is not a size of policyc_decide_opts");
      }
      std::memcpy(&o, opts, opts->struct_size);
      if (o.flags != 0) return Fail(POLICYC_E_INVALID_ARG, "policyc_decide: unknown bits in opts->flags");
      if (o.candidates == nullptr && o.n_candidates > 0) return Fail(POLICYC_E_INVALID_ARG, "policyc_decide: candidates is null");
    }
    DiagnosticSink diags;
    std::optional<k8s::Pod> pod = k8s::ReadPod(*Text("pod", pod_json, len), diags);
    if (!pod) return BadInput(diags, "the pod does not read");
    const engine::Cluster& cluster = *view->cluster->cluster;
    const rt::NodeTable& table = cluster.Table();
    auto result = std::make_unique<policyc_result>();
    std::vector<rt::RowId> rows;
    if (o.candidates != nullptr) {
      for (size_t i = 0; i < o.n_candidates; ++i) {
        if (o.candidates[i] == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_decide: a null candidate name");
        if (std::optional<rt::RowId> row = table.FindNode(o.candidates[i])) {
          rows.push_back(*row);
        } else {
          result->failed.push_back(o.candidates[i]);
          result->reasons.push_back("node(s) not found in policyc's cluster state");
          result->unresolvable.push_back(1);
        }
      }
    }
    std::sort(rows.begin(), rows.end());  // the decision reads them in table order
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    engine::Engine& e = *engine->engine;
    std::string key = pod->namespace_name + "/" + pod->name;
    std::shared_ptr<KeptPlan> kept;
    std::unique_ptr<engine::PodPlan> own;
    std::unique_lock<std::mutex> using_kept;
    engine::PodPlan* plan = nullptr;
    if (e.SharesPlans() && pod->volumes.empty()) {
      kept = const_cast<policyc_engine*>(engine)->PlanFor(*pod, view->cluster->epoch);
      using_kept = std::unique_lock(kept->use);
      if (!kept->plan) kept->plan = e.Plan(std::move(*pod), cluster);
      plan = kept->plan.get();
    } else {
      own = e.Plan(std::move(*pod), cluster);
      plan = own.get();
    }
    rt::Placement placement;
    if (o.candidates != nullptr && rows.empty()) {  // no node to decide among
      placement.summary = "no nodes available to schedule pods";
    } else {
      rt::Decider decider;  // this call's own: decisions run at once on many threads
      const rt::Decision& d =
          e.Decide(*plan, cluster, decider, {.threads = 1, .plugin_scores = true, .verify_kernels = false, .rows = rows});
      placement = e.Explain(*plan, cluster, d, rows);
    }
    result->pod = key;
    result->notes = host::NotesFor(plan->Pod(), engine->scheduler_name);
    if (result->notes.gated) placement.summary = "Scheduling is blocked due to non-empty scheduling gates";
    std::vector<const rt::NodeResult*> feasible;
    for (const rt::NodeResult& n : placement.nodes) {
      if (n.feasible) {
        feasible.push_back(&n);
        continue;
      }
      std::string reason;
      bool unresolvable = false;
      for (const rt::NodeReason& r : n.reasons) {
        if (reason.find(r.reason) == std::string::npos) reason += (reason.empty() ? "" : ", ") + r.reason;
        unresolvable = unresolvable || engine::Unresolvable(r.plugin, r.reason);
      }
      result->failed.push_back(n.name);
      result->reasons.push_back(std::move(reason));
      result->unresolvable.push_back(unresolvable ? 1 : 0);
    }
    std::stable_sort(feasible.begin(), feasible.end(), [](const auto* a, const auto* b) { return a->score > b->score; });
    for (const rt::NodeResult* n : feasible) {
      result->feasible.push_back(n->name);
      result->scores.push_back(n->score);
    }
    if (placement.selected && !result->notes.gated) result->selected = placement.nodes[*placement.selected].name;
    result->summary = placement.summary;
    result->max_score = engine->max_score;
    result->placement = std::move(placement);
    *out = result.release();
    return POLICYC_OK;
  });
}

POLICYC_EXPORT size_t policyc_result_feasible_count(const policyc_result* result) {
  return result != nullptr ? result->feasible.size() : 0;
}

POLICYC_EXPORT const char* policyc_result_feasible(const policyc_result* result, size_t i, int64_t* score) {
  if (result == nullptr || i >= result->feasible.size()) return nullptr;
  if (score != nullptr) *score = result->scores[i];
  return result->feasible[i].c_str();
}

POLICYC_EXPORT const char* policyc_result_selected(const policyc_result* result) {
  return result != nullptr && result->selected ? result->selected->c_str() : nullptr;
}

POLICYC_EXPORT int64_t policyc_result_max_score(const policyc_result* result) {
  return result != nullptr ? result->max_score : 0;
}

POLICYC_EXPORT size_t policyc_result_failed_count(const policyc_result* result) {
  return result != nullptr ? result->failed.size() : 0;
}

POLICYC_EXPORT const char* policyc_result_failed(const policyc_result* result, size_t i, const char** reason,
                                                 int* unresolvable) {
  if (result == nullptr || i >= result->failed.size()) return nullptr;
  if (reason != nullptr) *reason = result->reasons[i].c_str();
  if (unresolvable != nullptr) *unresolvable = result->unresolvable[i];
  return result->failed[i].c_str();
}

POLICYC_EXPORT const char* policyc_result_summary(const policyc_result* result) {
  return result != nullptr ? result->summary.c_str() : "";
}

POLICYC_EXPORT policyc_status policyc_result_explain_json(const policyc_result* result, const char** json, size_t* len) {
  return Guarded([&]() -> policyc_status {
    if (result == nullptr || json == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_result_explain_json: a null argument");
    auto* r = const_cast<policyc_result*>(result);
    if (r->json.empty()) r->json = host::PlacementJson(r->pod, r->placement, r->notes);
    *json = r->json.c_str();
    if (len != nullptr) *len = r->json.size();
    return POLICYC_OK;
  });
}

POLICYC_EXPORT void policyc_result_free(policyc_result* result) { delete result; }
