#include "runtime/engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "compiler/binding/pod_view.h"
#include "compiler/codegen/jit.h"
#include "compiler/driver/compilation.h"
#include "compiler/ir/traits.h"
#include "runtime/engine/kernel_source.h"
#include "runtime/engine/pod_template.h"
#include "runtime/sched/default_spread.h"
#include "runtime/sched/resolve_claims.h"
#include "runtime/sched/resolve_volumes.h"
#include "runtime/sched/selector_kernels.h"
#include "stdlib/embedded.h"

namespace policy::engine {

/// What the engine owns and its plans share.
struct Engine::State {
  rt::Profile profile;
  EngineOptions options;
  driver::Compilation compilation;
  std::vector<const driver::CompiledFile*> files;
  std::vector<PluginSpec> plugins;
  KernelSource kernels;
  bool reads_pod_name = false;  // some file reads pod.name (then no two pods share a plan)
  bool policy_reads_volumes = false;  // a file outside the stdlib reads pod.volumes
  bool policy_reads_labels = false;   // a file outside the stdlib reads the pod's labels

  rt::DeviceSelectors device_selectors;  // how DRA CEL selectors are decided on the clusters planned for

  // Files specialized for earlier pods, kept for pods that read alike: per
  // file, the pod's fields it reads (the fields of Pod it loads from `pod`;
  // `whole` when it uses `pod` otherwise), and its last specializations,
  // most recent first. A pod asking for an extended resource of its own
  // specializes the files that read its requests, and takes the rest.
  struct FileReads {
    std::vector<lang::FieldId> fields;
    bool whole = false;
  };
  std::vector<FileReads> reads;
  struct Specialized {
    std::shared_ptr<const k8s::Pod> pod;
    uint64_t dictionary = 0;  // the table's DictionaryVersion (unique in the process)
    std::shared_ptr<const ir::Program> program;
    binding::ResourceReads resource_reads;  // what specializing it read of the pod's requests
  };
  static constexpr size_t kSpecializedPerFile = 8;
  std::mutex specialized_mu;
  size_t files_reused = 0;  // under specialized_mu
  std::vector<std::deque<Specialized>> specialized;  // by file

  State(rt::Profile p, EngineOptions o)
      : profile(std::move(p)), options(std::move(o)), kernels(options.jit_opt_level, options.hot_after) {
    // Selectors as the plugins: the evaluator for the interpreter, native
    // kernels for the JIT (checked with verify_kernels), and for the
    // engines that choose, kernels from enough devices to pay for them.
    if (options.backend == Backend::kInterp) return;
    device_selectors.decider = std::make_shared<rt::KernelSelectorDecider>(
        std::make_shared<codegen::Jit>(codegen::JitOptions{.opt_level = options.jit_opt_level}), options.verify_kernels,
        options.backend == Backend::kJit ? 0 : options.selectors_compile_from);
  }

  /// Compiles stdlib file `path` once; its index, or nullopt after diagnostics.
  std::optional<size_t> Stdlib(std::string_view path, std::map<std::string_view, size_t>& by_path, DiagnosticSink& diags) {
    if (auto it = by_path.find(path); it != by_path.end()) return it->second;
    for (const stdlib::EmbeddedPolicy& e : stdlib::Sources()) {
      if (e.path != path) continue;
      auto source = std::make_shared<const Source>(std::string(e.path), std::string(e.text));
      // The release the profile follows, to every built-in that declares
      // `param kubernetesMinor` (where kube's wording changed:
      // stdlib/taint_toleration.policy); not to a policy of one's own.
      lower::ParamValues params = profile.params;
      params[lower::kEveryPolicy]["kubernetesMinor"] = int64_t{profile.kube_minor};
      const driver::CompiledFile* file = compilation.Add(std::move(source), diags, &params);
      if (file == nullptr) return std::nullopt;
      files.push_back(file);
      return by_path[path] = files.size() - 1;
    }
    return std::nullopt;
  }

  /// The profile's built-ins in filter order (a plugin's filter and score
  /// may come from different stdlib files).
  bool AddBuiltins(DiagnosticSink& diags) {
    std::map<std::string_view, size_t> by_path;
    for (const rt::PluginSetting& setting : profile.plugins) {
      const rt::InTreePlugin* known = rt::FindInTreePlugin(setting.name);
      if (known == nullptr || !known->implemented) continue;
      std::string_view filter_file = setting.filter ? known->filter_file : std::string_view();
      std::string_view score_file = setting.score ? profile.ScoreFile(*known) : std::string_view();
      auto push = [&](std::string_view path, bool filters, bool scores) {
        std::optional<size_t> file = Stdlib(path, by_path, diags);
        if (file) plugins.push_back({setting.name, *file, 0, setting.weight, filters, scores});
        return file.has_value();
      };
      bool ok = true;
      if (!filter_file.empty() && filter_file == score_file) {
        ok = push(filter_file, true, true);
      } else {
        if (!filter_file.empty()) ok = ok && push(filter_file, true, false);
        if (!score_file.empty()) ok = ok && push(score_file, false, true);
      }
      if (!ok) return false;
    }
    return true;
  }

  /// Each policy of each file a plugin, with the policy's weight. A name
  /// must be new: two plugins of one name would score twice under one key.
  bool AddPolicies(std::vector<std::shared_ptr<const Source>> sources, DiagnosticSink& diags) {
    bool ok = true;
    std::map<std::string, Span> policy_names;  // where each policy's name was given
    for (std::shared_ptr<const Source>& source : sources) {
      const driver::CompiledFile* file = compilation.Add(std::move(source), diags, &profile.params);
      if (file == nullptr) {
        ok = false;
        continue;
      }
      files.push_back(file);
      for (size_t f = 0; f < file->program.functions.size(); ++f) {
        const ir::Function& fn = file->program.functions[f];
        Span name_span = file->module.policies[f].name_span;  // one function per policy, in order
        if (!NewName(fn.name, name_span, policy_names, diags)) {
          ok = false;
          continue;
        }
        plugins.push_back({fn.name, files.size() - 1, f, fn.weight, true, true});
      }
    }
    return ok;
  }

  bool NewName(const std::string& name, Span span, std::map<std::string, Span>& policy_names, DiagnosticSink& diags) {
    if (auto earlier = policy_names.find(name); earlier != policy_names.end()) {
      Diagnostic& d = diags.Error(DiagCode::kDuplicateName, span, fmt::format("a second policy named `{}`", name),
                                  "this one");
      diags.AddSecondary(d, earlier->second, "the first");  // in another file
      d.help = "every plugin of a profile needs its own name: rename one of them";
      return false;
    }
    policy_names.emplace(name, span);
    for (const PluginSpec& p : plugins) {
      if (p.name != name) continue;
      Diagnostic& d = diags.Error(DiagCode::kDuplicateName, span,
                                  fmt::format("the profile already has a plugin named `{}`", name), "a second one");
      d.help = "rename the policy, or leave the in-tree plugin out (--plugins, or disable it in a --profile)";
      return false;
    }
    return true;
  }
};

PodPlan::~PodPlan() = default;

size_t PodPlan::NativePlugins() const {
  size_t n = 0;
  for (const rt::Plugin& p : plugins_) n += p.kernels != nullptr;
  return n;
}

Engine::Engine(std::shared_ptr<State> state) : state_(std::move(state)) {}
Engine::~Engine() = default;

std::unique_ptr<Engine> Engine::Create(rt::Profile profile, std::vector<std::shared_ptr<const Source>> policies,
                                       EngineOptions options, DiagnosticSink& diags) {
  auto state = std::make_shared<State>(std::move(profile), std::move(options));
  if (!state->AddBuiltins(diags)) return nullptr;
  size_t stdlib_files = state->files.size();
  if (!state->AddPolicies(std::move(policies), diags)) return nullptr;
  for (size_t f = 0; f < state->files.size(); ++f) {
    for (const ir::Node& node : state->files[f]->program.nodes) {
      const auto* load = std::get_if<ir::LoadField>(&node);
      if (load != nullptr && load->field == lang::FieldId::kPodName) state->reads_pod_name = true;
      if (load != nullptr && load->field == lang::FieldId::kPodVolumes && f >= stdlib_files) {
        state->policy_reads_volumes = true;
      }
      // The pod's labels, read as a field or matched against terms the
      // policy makes (which may name any key).
      const auto* call = std::get_if<ir::CallBuiltin>(&node);
      if (f >= stdlib_files && ((load != nullptr && load->field == lang::FieldId::kPodLabels) ||
                                (call != nullptr && call->builtin == lang::BuiltinId::kPodMatches))) {
        state->policy_reads_labels = true;
      }
    }
  }
  for (const driver::CompiledFile* file : state->files) {
    const ir::Program& program = file->program;
    State::FileReads reads;
    auto from_pod = [&](ir::NodeId id) { return std::holds_alternative<ir::PodRoot>(program.nodes[id]); };
    for (const ir::Node& node : program.nodes) {
      const auto* load = std::get_if<ir::LoadField>(&node);
      ir::VisitOperands(node, [&](ir::NodeId operand) {
        if (!from_pod(operand)) return;
        if (load == nullptr) {
          reads.whole = true;
        } else if (std::find(reads.fields.begin(), reads.fields.end(), load->field) == reads.fields.end()) {
          reads.fields.push_back(load->field);
        }
      });
    }
    for (const ir::Function& fn : program.functions) {
      for (const ir::Slot& slot : fn.slots) reads.whole |= slot.value && from_pod(*slot.value);
    }
    state->reads.push_back(std::move(reads));
  }
  state->specialized.resize(state->files.size());
  return std::unique_ptr<Engine>(new Engine(std::move(state)));
}

const rt::Profile& Engine::Profile() const { return state_->profile; }
const std::vector<PluginSpec>& Engine::Plugins() const { return state_->plugins; }
const std::vector<const driver::CompiledFile*>& Engine::Files() const { return state_->files; }
void Engine::DrainCompilations() { state_->kernels.Drain(); }
size_t Engine::CompiledKernels() const { return state_->kernels.Compiled(); }
bool Engine::HasJit() { return KernelSource::Available(); }

std::unique_ptr<PodPlan> Engine::Plan(k8s::Pod pod, const Cluster& cluster, std::string* trace) {
  ResolveForPlan(pod, cluster);
  return PlanResolved(std::move(pod), cluster, trace);
}

void Engine::ResolveForPlan(k8s::Pod& pod, const Cluster& cluster) const {
  if (!state_->policy_reads_volumes) DropIncidentalVolumes(pod);
  rt::ResolveVolumes(pod, cluster.Table());
  rt::ResolveClaims(pod, cluster.Table());
}

void PodPlan::Adopt(const k8s::Pod& pod) {
  if (pod_.resource_claims.empty()) return;
  pod_.uid = pod.uid;
  pod_.resource_claim_statuses = pod.resource_claim_statuses;
}

size_t Engine::FilesReused() const {
  std::lock_guard lock(state_->specialized_mu);
  return state_->files_reused;
}

std::unique_ptr<PodPlan> Engine::PlanAfresh(k8s::Pod pod, const Cluster& cluster) {
  ResolveForPlan(pod, cluster);
  return PlanResolved(std::move(pod), cluster, nullptr, /*afresh=*/true);
}

std::unique_ptr<PodPlan> Engine::Plan(TemplatePod pod, const Cluster& cluster) {
  return PlanResolved(std::move(pod.pod), cluster, nullptr);
}

TemplatePod Engine::Template(const k8s::Pod& pod, const Cluster& cluster) const {
  std::shared_ptr<const LabelKeys> keys = state_->policy_reads_labels ? nullptr : cluster.SelectorKeys();
  TemplateRules rules{.keep_volumes = state_->policy_reads_volumes,
                      .keep_labels = state_->policy_reads_labels,
                      .keys_read = keys.get()};
  TemplatePod t = TemplateOf(pod, cluster.Table(), rules);
  if (state_->reads_pod_name) t.own_plan_because = "a plugin reads the pod's name";
  return t;
}

std::unique_ptr<PodPlan> Engine::PlanResolved(k8s::Pod pod, const Cluster& cluster, std::string* trace, bool afresh) {
  std::unique_ptr<PodPlan> plan(new PodPlan());
  plan->engine_ = state_;
  plan->afresh_ = afresh;
  plan->pod_ = std::move(pod);
  // kube-scheduler's default spread constraints (the system's or the
  // profile's list) become the pod's own before anything reads it.
  const rt::Profile& profile = state_->profile;
  for (const rt::PluginSetting& p : profile.plugins) {
    const rt::InTreePlugin* row = rt::FindInTreePlugin(p.name);
    if (row == nullptr || !row->default_spread || !(p.filter || p.score)) continue;
    rt::ApplyDefaultSpread(plan->pod_, cluster.Table(), profile.spread_defaults ? &*profile.spread_defaults : nullptr);
  }
  // Its priority from the snapshot (its volumes are resolved already).
  rt::ResolvePriority(plan->pod_, cluster.Table());
  Fill(*plan, cluster, trace);
  return plan;
}

void Engine::Fill(PodPlan& plan, const Cluster& cluster, std::string* trace) const {
  State& s = *state_;
  passes::PassOptions pass_options;
  pass_options.pod = &plan.pod_;
  pass_options.table = &cluster.Dictionary();
  pass_options.print_after = s.options.print_after;
  pass_options.time = s.options.time_passes;
  if (s.options.disabled_passes.contains("all")) {
    for (std::string_view name : passes::PassNames()) pass_options.disabled.insert(std::string(name));
  } else {
    pass_options.disabled = s.options.disabled_passes;
  }
  plan.programs_.clear();
  // A file specialized for an earlier pod that reads alike (the same values
  // of every pod field the file reads, the same dictionaries) is taken as
  // it is: specializing it again would give the same program.
  bool keep = !plan.afresh_ && trace == nullptr && pass_options.print_after.empty() && !pass_options.time;
  uint64_t dictionary = cluster.Table().DictionaryVersion();
  std::shared_ptr<const k8s::Pod> pod;
  for (size_t f = 0; f < s.files.size(); ++f) {
    const State::FileReads& reads = s.reads[f];
    std::shared_ptr<const ir::Program> program;
    if (keep && !reads.whole) {
      std::lock_guard lock(s.specialized_mu);
      std::deque<State::Specialized>& kept = s.specialized[f];
      for (auto it = kept.begin(); it != kept.end(); ++it) {
        if (it->dictionary != dictionary) continue;
        bool alike = std::all_of(reads.fields.begin(), reads.fields.end(), [&](lang::FieldId field) {
          return binding::SameResourceReads(field, it->resource_reads, *it->pod, plan.pod_);
        });
        if (!alike) continue;
        program = it->program;
        ++s.files_reused;
        if (it != kept.begin()) {  // most recent first
          State::Specialized used = std::move(*it);
          kept.erase(it);
          kept.push_front(std::move(used));
        }
        break;
      }
    }
    if (program == nullptr) {
      binding::ResourceReads resource_reads;
      pass_options.resource_reads = &resource_reads;
      program = std::make_shared<const ir::Program>(s.compilation.Optimize(s.files[f]->program, pass_options, trace));
      pass_options.resource_reads = nullptr;
      if (keep && !reads.whole) {
        if (pod == nullptr) pod = std::make_shared<const k8s::Pod>(plan.pod_);
        std::lock_guard lock(s.specialized_mu);
        std::deque<State::Specialized>& kept = s.specialized[f];
        kept.push_front({pod, dictionary, program, std::move(resource_reads)});
        if (kept.size() > State::kSpecializedPerFile) kept.pop_back();
      }
    }
    plan.programs_.push_back(std::move(program));
  }
  plan.version_ = cluster.Table().DictionaryVersion();
  cluster.Table().SetDeviceSelectors(s.device_selectors);
  plan.incremental_.Reset();  // new programs (perhaps at the old addresses)
  plan.explainer_.Reset();

  Backend backend = s.options.backend;
  if (backend == Backend::kAuto) {
    backend = cluster.Table().NodeCount() >= s.options.jit_from_nodes ? Backend::kJit : Backend::kInterp;
  }
  plan.tiered_ = backend == Backend::kTiered;
  plan.plugins_.clear();
  plan.kernels_.assign(s.plugins.size(), nullptr);
  std::vector<KernelSource::Function> functions;
  for (const PluginSpec& spec : s.plugins) functions.push_back({plan.programs_[spec.file].get(), spec.function});
  if (backend == Backend::kJit) plan.kernels_ = s.kernels.Compile(functions);  // the template's kernels: one module
  if (backend == Backend::kTiered) plan.kernels_ = s.kernels.Tiered(functions);
  for (size_t i = 0; i < s.plugins.size(); ++i) {
    const PluginSpec& spec = s.plugins[i];
    const ir::Program& program = *plan.programs_[spec.file];
    plan.plugins_.push_back({spec.name, &program, spec.function, spec.weight, spec.filter, spec.score,
                             plan.kernels_[i].get()});
  }
}

const rt::Decision& Engine::Decide(PodPlan& plan, const Cluster& cluster, rt::DecideOptions options) {
  return Decide(plan, cluster, decider_, options);
}

const rt::Decision& Engine::Decide(PodPlan& plan, const Cluster& cluster, rt::Decider& decider,
                                   rt::DecideOptions options) const {
  if (plan.version_ != cluster.Table().DictionaryVersion()) Fill(plan, cluster, nullptr);
  TakeTieredKernels(plan);
  options.verify_kernels = options.verify_kernels || state_->options.verify_kernels;
  return decider.Decide(plan.plugins_, plan.pod_, cluster.Table(), options);
}

bool Engine::SharesPlans() const { return !state_->reads_pod_name; }

void Engine::VerifyTemplate(const k8s::Pod& pod, const Cluster& cluster, const rt::Decision& shared,
                            rt::DecideOptions options) {
  if (!state_->options.verify_incremental) return;
  std::unique_ptr<PodPlan> own = PlanAfresh(pod, cluster);
  rt::Decider decider;
  const rt::Decision& d = Decide(*own, cluster, decider, options);
  if (d.feasible != shared.feasible || d.score != shared.score || d.selected != shared.selected ||
      d.rejected_by != shared.rejected_by || d.error != shared.error) {
    std::fprintf(stderr,
                 "policyc: pod %s/%s decided by its template's plan differs from its own plan (%zu vs %zu feasible)\n",
                 pod.namespace_name.c_str(), pod.name.c_str(), shared.feasible.size(), d.feasible.size());
    std::abort();
  }
}

size_t Engine::ForgetKept(PodPlan& plan, std::string why) {
  size_t bytes = plan.KeptBytes();
  plan.incremental_.Reset(std::move(why));
  plan.explainer_.Reset();
  return bytes;
}

const rt::Decision& Engine::DecideIncremental(PodPlan& plan, const Cluster& cluster, rt::DecideOptions options,
                                              rt::IncrementalStats* stats) {
  if (plan.version_ != cluster.Table().DictionaryVersion()) Fill(plan, cluster, nullptr);
  TakeTieredKernels(plan);
  const rt::Decision& d = plan.incremental_.Decide(plan.plugins_, plan.pod_, cluster.Table(), options, stats);
  if (state_->options.verify_incremental || state_->options.verify_kernels) {  // the same as from scratch, or stop
    options.verify_kernels = state_->options.verify_kernels;
    const rt::Decision& full = decider_.Decide(plan.plugins_, plan.pod_, cluster.Table(), options);
    if (full.feasible != d.feasible || full.score != d.score || full.selected != d.selected ||
        full.rejected_by != d.rejected_by || full.error != d.error) {
      std::fprintf(stderr, "policyc: an incremental decision differs from a full one for pod %s/%s (%zu vs %zu feasible)\n",
                   plan.pod_.namespace_name.c_str(), plan.pod_.name.c_str(), d.feasible.size(), full.feasible.size());
      std::abort();
    }
  }
  return d;
}

std::shared_ptr<const rt::Placement> Engine::ExplainIncremental(PodPlan& plan, const Cluster& cluster,
                                                                const rt::Decision& decision, bool details) {
  std::shared_ptr<const rt::Placement> shared =
      plan.explainer_.Explain(plan.plugins_, plan.pod_, cluster.Table(), decision, details);
  const rt::Placement& p = *shared;
  if (state_->options.verify_incremental || state_->options.verify_kernels) {
    rt::Placement full = Explain(plan, cluster, decision, {}, details);
    bool same = full.summary == p.summary && full.nodes.size() == p.nodes.size();
    for (size_t k = 0; same && k < full.nodes.size(); ++k) {
      same = full.nodes[k].row == p.nodes[k].row && rt::SameWords(full.nodes[k], p.nodes[k]);
    }
    if (!same) {
      std::fprintf(stderr, "policyc: an incremental explanation differs from a full one for pod %s/%s:\n  %s\n  %s\n",
                   plan.pod_.namespace_name.c_str(), plan.pod_.name.c_str(), p.summary.c_str(), full.summary.c_str());
      std::abort();
    }
  }
  return shared;
}

void Engine::TakeTieredKernels(PodPlan& plan) const {
  if (!plan.tiered_) return;
  std::vector<size_t> missing;  // the kernels the tiering thread may have finished since
  std::vector<KernelSource::Function> functions;
  for (size_t i = 0; i < plan.plugins_.size(); ++i) {
    if (plan.plugins_[i].kernels != nullptr) continue;
    missing.push_back(i);
    functions.push_back({plan.plugins_[i].program, plan.plugins_[i].function});
  }
  if (missing.empty()) return;
  KernelSource::Kernels got = state_->kernels.Tiered(functions);
  for (size_t k = 0; k < missing.size(); ++k) {
    plan.kernels_[missing[k]] = std::move(got[k]);
    plan.plugins_[missing[k]].kernels = plan.kernels_[missing[k]].get();
  }
}

std::vector<rt::ReasonGroup> Engine::Grouped(const PodPlan& plan, const Cluster& cluster, const rt::Decision& decision,
                                             const rt::Placement& reasons,
                                             const std::vector<std::pair<std::string, std::string>>& claims,
                                             size_t examples) const {
  std::vector<rt::ReasonGroup> groups = rt::GroupReasons(reasons, examples);
  std::vector<rt::RowId> rows = rt::ExampleRows(groups);
  if (rows.empty()) return groups;
  rt::DetailGroups(groups, Explain(plan, cluster, decision, rows, true));
  NameClaims(groups, claims);
  return groups;
}

rt::Placement Engine::Explain(const PodPlan& plan, const Cluster& cluster, const rt::Decision& decision,
                              std::span<const rt::RowId> rows, bool details) const {
  if (rows.empty()) rows = cluster.Table().LiveRows();
  return rt::Explain(plan.plugins_, plan.pod_, cluster.Table(), decision, rows, details);
}

}  // namespace policy::engine
