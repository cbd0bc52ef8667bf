// The C ABI (include/policyc.h) over the hosts' core (host.h): handles,
// the engine configuration, statuses and thread-local messages. No
// exception leaves a policyc_* function.

#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "k8s/object_reader.h"
#include "k8s/pod_reader.h"
#include "policyc.h"
#include "runtime/engine/engine.h"
#include "runtime/host/host.h"
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

// Sets `out` to a mapping's string field (left as it is when absent); false when it is not a string.
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

}  // namespace

struct policyc_engine {
  std::unique_ptr<host::Decisions> decisions;
};

struct policyc_cluster {
  host::ClusterState state;
};

struct policyc_view {
  host::ClusterState::View view;
};

struct policyc_result {
  host::Answer answer;
  int64_t max_score = 0;
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
    *out = new policyc_engine{std::make_unique<host::Decisions>(std::move(e))};
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
    if (!cluster->state.Load(Text("snapshot", snapshot == nullptr ? "" : snapshot, len), diags)) {
      return BadInput(diags, "the snapshot does not read");
    }
    return POLICYC_OK;
  });
}

POLICYC_EXPORT policyc_status policyc_cluster_apply(policyc_cluster* cluster, const char* event_json, size_t len) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || event_json == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_apply: a null argument");
    DiagnosticSink diags;
    if (!cluster->state.Apply(*Text("event", event_json, len), diags)) return BadInput(diags, "the event does not read");
    return POLICYC_OK;
  });
}

POLICYC_EXPORT policyc_status policyc_cluster_assume(policyc_cluster* cluster, const char* pod_json, size_t len,
                                                     const char* node) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || pod_json == nullptr || node == nullptr) {
      return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_assume: a null argument");
    }
    DiagnosticSink diags;
    std::optional<k8s::Pod> pod = k8s::ReadPod(*Text("pod", pod_json, len), diags, k8s::FieldValidation::kIgnore);
    if (!pod) return BadInput(diags, "the pod does not read");
    if (!cluster->state.Assume(std::move(*pod), node)) return Fail(POLICYC_E_NOT_FOUND, std::string("no node `") + node + "` in the cluster");
    return POLICYC_OK;
  });
}

POLICYC_EXPORT policyc_status policyc_cluster_forget(policyc_cluster* cluster, const char* pod_namespace,
                                                     const char* pod_name) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || pod_namespace == nullptr || pod_name == nullptr) {
      return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_forget: a null argument");
    }
    if (cluster->state.Forget(pod_namespace, pod_name)) return POLICYC_OK;
    return Fail(POLICYC_E_NOT_FOUND, std::string("no pod `") + pod_namespace + "/" + pod_name + "` counts in the cluster");
  });
}

POLICYC_EXPORT size_t policyc_cluster_node_count(const policyc_cluster* cluster) {
  return cluster != nullptr ? const_cast<policyc_cluster*>(cluster)->state.NodeCount() : 0;
}

POLICYC_EXPORT size_t policyc_cluster_pod_count(const policyc_cluster* cluster) {
  return cluster != nullptr ? const_cast<policyc_cluster*>(cluster)->state.PodCount() : 0;
}

POLICYC_EXPORT policyc_status policyc_cluster_view(policyc_cluster* cluster, policyc_view** out) {
  return Guarded([&]() -> policyc_status {
    if (cluster == nullptr || out == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_cluster_view: a null argument");
    *out = new policyc_view{cluster->state.Read()};
    return POLICYC_OK;
  });
}

POLICYC_EXPORT void policyc_view_free(policyc_view* view) { delete view; }

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
    std::optional<k8s::Pod> pod = k8s::ReadPod(*Text("pod", pod_json, len), diags, k8s::FieldValidation::kIgnore);
    if (!pod) return BadInput(diags, "the pod does not read");
    std::vector<std::string> names;
    for (size_t i = 0; o.candidates != nullptr && i < o.n_candidates; ++i) {
      if (o.candidates[i] == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_decide: a null candidate name");
      names.emplace_back(o.candidates[i]);
    }
    auto result = std::make_unique<policyc_result>();
    result->max_score = engine->decisions->MaxScore();
    result->answer = engine->decisions->Decide(std::move(*pod), view->view, o.candidates != nullptr ? &names : nullptr);
    *out = result.release();
    return POLICYC_OK;
  });
}

POLICYC_EXPORT size_t policyc_result_feasible_count(const policyc_result* result) {
  return result != nullptr ? result->answer.feasible.size() : 0;
}

POLICYC_EXPORT const char* policyc_result_feasible(const policyc_result* result, size_t i, int64_t* score) {
  if (result == nullptr || i >= result->answer.feasible.size()) return nullptr;
  if (score != nullptr) *score = result->answer.feasible[i].second;
  return result->answer.feasible[i].first.c_str();
}

POLICYC_EXPORT const char* policyc_result_selected(const policyc_result* result) {
  return result != nullptr && result->answer.selected ? result->answer.selected->c_str() : nullptr;
}

POLICYC_EXPORT int64_t policyc_result_max_score(const policyc_result* result) {
  return result != nullptr ? result->max_score : 0;
}

POLICYC_EXPORT size_t policyc_result_failed_count(const policyc_result* result) {
  return result != nullptr ? result->answer.failed.size() : 0;
}

POLICYC_EXPORT const char* policyc_result_failed(const policyc_result* result, size_t i, const char** reason,
                                                 int* unresolvable) {
  if (result == nullptr || i >= result->answer.failed.size()) return nullptr;
  const host::Answer::Failed& f = result->answer.failed[i];
  if (reason != nullptr) *reason = f.reason.c_str();
  if (unresolvable != nullptr) *unresolvable = f.unresolvable ? 1 : 0;
  return f.node.c_str();
}

POLICYC_EXPORT const char* policyc_result_summary(const policyc_result* result) {
  return result != nullptr ? result->answer.summary.c_str() : "";
}

POLICYC_EXPORT policyc_status policyc_result_explain_json(const policyc_result* result, const char** json, size_t* len) {
  return Guarded([&]() -> policyc_status {
    if (result == nullptr || json == nullptr) return Fail(POLICYC_E_INVALID_ARG, "policyc_result_explain_json: a null argument");
    auto* r = const_cast<policyc_result*>(result);
    if (r->json.empty()) r->json = host::PlacementJson(r->answer.pod, r->answer.placement, r->answer.notes);
    *json = r->json.c_str();
    if (len != nullptr) *len = r->json.size();
    return POLICYC_OK;
  });
}

POLICYC_EXPORT void policyc_result_free(policyc_result* result) { delete result; }
