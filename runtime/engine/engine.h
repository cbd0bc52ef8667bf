#pragma once
/// The library API: an Engine made from a scheduling profile and policy
/// files decides where a pod fits on a Cluster and explains why.
///
///   auto cluster = engine::Cluster::Load(snapshot, diags);
///   auto engine = engine::Engine::Create(rt::DefaultProfile(), {policy}, {}, diags);
///   auto plan = engine->Plan(pod, *cluster);          // specialized to the pod, bound to the table
///   const rt::Decision& d = engine->Decide(*plan, *cluster);   // feasible rows, scores, selection
///   rt::Placement words = engine->Explain(*plan, *cluster, d, rows);  // reasons for the rows asked
///
/// The engine owns every source, type, compiled program and kernel it
/// makes, the kernel cache and the tiering thread; a PodPlan shares that
/// ownership, so nothing it points into can go first. One decision path:
/// Explain adds words to a Decide, it never decides again.
///
/// Threads: Create once; Plan may be called from several threads; Decide
/// uses the engine's one Decider (its buffers and filter statistics), so
/// one thread decides at a time, unless each brings its own Decider.

#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "support/diagnostic.h"
#include "runtime/engine/cluster.h"
#include "runtime/sched/decide.h"
#include "runtime/sched/explain.h"
#include "runtime/sched/incremental.h"
#include "runtime/sched/plugin.h"
#include "runtime/sched/profile.h"

namespace policy::driver {
struct CompiledFile;
}

namespace policy::engine {

/// Which back end evaluates the plugins.
enum class Backend : uint8_t {
  kInterp,  ///< the reference interpreter for every plugin
  kJit,     ///< native kernels for every plugin the back end compiles (compiled when the pod is planned)
  kAuto,    ///< kJit for clusters of at least EngineOptions::jit_from_nodes nodes, else kInterp
  kTiered,  ///< a template's first pods interpreted while its kernels compile on a background thread
};

struct EngineOptions {
  Backend backend = Backend::kInterp;
  int jit_opt_level = 2;  ///< LLVM's optimization level, 0..3
  /// kAuto compiles from this many nodes: compiling a profile takes about
  /// 150 ms, interpreting it about 0.65 us per node, and one pod is placed.
  size_t jit_from_nodes = 250000;
  /// kTiered: pods of a template seen before its compilation is queued.
  size_t hot_after = 1;
  /// kAuto, kTiered: DRA CEL selectors are compiled to native kernels on
  /// clusters with at least this many devices, else evaluated (compiling
  /// one costs about what evaluating it on this many devices does: bench_dra).
  size_t selectors_compile_from = 4096;
  std::set<std::string> disabled_passes;  ///< pass names, or `all`
  std::set<std::string> print_after;      ///< pass names, or `all`: IR dumps into Plan's trace
  bool time_passes = false;               ///< pass timings into Plan's trace
  /// Differential testing: kernels are checked against the interpreter on
  /// every row they decide (rt::DecideOptions::verify_kernels).
  bool verify_kernels = false;
  /// Differential testing: every incremental decision is checked against a
  /// decision from scratch (also with verify_kernels).
  bool verify_incremental = false;
};

/// A plugin of the engine before any pod: which compiled file and function.
struct PluginSpec {
  std::string name;
  size_t file = 0;  ///< index into Engine::Files()
  size_t function = 0;
  int64_t weight = 1;
  bool filter = true;
  bool score = true;
};

class Engine;

/// What the templates' kept decisions and explanations may hold together by
/// default (`schedule`, `serve`); past it the least recently used template's
/// are dropped, and its next decision is full.
inline constexpr size_t kKeptBytesLimit = size_t{512} << 20;

/// The engine's plugins specialized to one pod and bound to a cluster's
/// dictionaries, with their kernels. Keeps what it points into alive.
class PodPlan {
 public:
  ~PodPlan();
  /// The pod as planned: kube-scheduler's default spread constraints added
  /// when the profile's PodTopologySpread gives them.
  const k8s::Pod& Pod() const { return pod_; }
  const std::vector<rt::Plugin>& Plugins() const { return plugins_; }
  /// The specialized, bound program of engine file `file`.
  const ir::Program& Program(size_t file) const { return *programs_[file]; }
  /// How many plugins run native kernels.
  size_t NativePlugins() const;
  /// Bytes its template's kept decision and explanation hold
  /// (Engine::DecideIncremental, ExplainIncremental).
  size_t KeptBytes() const { return incremental_.KeptBytes() + explainer_.KeptBytes(); }
  /// Makes a plan of `pod`'s template (Engine::Template) decide for `pod`:
  /// its uid and the names of its ResourceClaims, which the template names
  /// alike for every sibling (TemplateOf) and the DynamicResources
  /// allocator looks up, become the pod's own. Call before each decision
  /// for another pod of the template.
  void Adopt(const k8s::Pod& pod);

 private:
  friend class Engine;
  PodPlan() = default;
  std::shared_ptr<void> engine_;  // the engine's compiled files and types
  k8s::Pod pod_;
  std::vector<std::shared_ptr<const ir::Program>> programs_;  // by file; may be shared with other plans (Engine::Fill)
  std::vector<rt::Plugin> plugins_;
  std::vector<std::shared_ptr<const codegen::CompiledFunction>> kernels_;  // by plugin, may be null
  uint64_t version_ = 0;  // the cluster dictionaries' version the programs are bound to
  bool tiered_ = false;
  bool afresh_ = false;  // its files are specialized for its pod alone (Engine::PlanAfresh)
  rt::IncrementalDecider incremental_;  // DecideIncremental's kept decision
  rt::IncrementalExplainer explainer_;  // ExplainIncremental's kept words
};

class Engine {
 public:
  /// Compiles `profile`'s built-in plugins (the stdlib) with its args and
  /// every policy of `policies` (each policy a plugin, after the built-ins,
  /// weight from the policy); null with diagnostics on any error.
  static std::unique_ptr<Engine> Create(rt::Profile profile, std::vector<std::shared_ptr<const Source>> policies,
                                        EngineOptions options, DiagnosticSink& diags);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const rt::Profile& Profile() const;
  /// The plugins in filter order.
  const std::vector<PluginSpec>& Plugins() const;
  /// The compiled files (as lowered), stdlib files first.
  const std::vector<const driver::CompiledFile*>& Files() const;

  /// Prepares `pod` for `cluster`: every file specialized to the pod and
  /// bound to the cluster's dictionaries, kernels as the back end says.
  /// Pass dumps and timings (EngineOptions) go to `trace` when given.
  std::unique_ptr<PodPlan> Plan(k8s::Pod pod, const Cluster& cluster, std::string* trace = nullptr);
  /// The same, every file specialized for this pod alone: nothing taken
  /// from the files specialized for earlier pods that read alike (what
  /// --verify-incremental checks shared plans against).
  std::unique_ptr<PodPlan> PlanAfresh(k8s::Pod pod, const Cluster& cluster);
  /// How many files plans took as specialized for an earlier pod, so far.
  size_t FilesReused() const;
  /// The decision for the plan's pod on `cluster` now: feasible rows,
  /// scores, selection; valid until the next Decide. A plan bound to older
  /// dictionaries is planned again first; a tiered plan takes the kernels
  /// that are ready.
  const rt::Decision& Decide(PodPlan& plan, const Cluster& cluster, rt::DecideOptions options = {});
  /// The same with the caller's Decider: threads may decide at once, each
  /// with its own Decider and plan, while nobody changes the cluster.
  const rt::Decision& Decide(PodPlan& plan, const Cluster& cluster, rt::Decider& decider,
                             rt::DecideOptions options = {}) const;
  /// Decide for the next pod of the plan's template (Template): the same
  /// decision, brought up to date from the plan's last one rather than made
  /// over every node again (rt::IncrementalDecider). With
  /// EngineOptions::verify_incremental or verify_kernels it is checked
  /// against Decide, and a difference aborts.
  const rt::Decision& DecideIncremental(PodPlan& plan, const Cluster& cluster, rt::DecideOptions options,
                                        rt::IncrementalStats* stats);
  /// Explain for every live row, for the next pod of the plan's template:
  /// the words kept from its last explanation, brought up to date
  /// (rt::IncrementalExplainer); checked like DecideIncremental. `details`
  /// false: reasons only (a summary, a scheduler's failed nodes), and no
  /// detail is rendered or kept up to date.
  std::shared_ptr<const rt::Placement> ExplainIncremental(PodPlan& plan, const Cluster& cluster,
                                                          const rt::Decision& decision, bool details);
  /// Drops what DecideIncremental and ExplainIncremental keep for `plan`'s
  /// template (its next decision is full, `why` in the statistics); returns
  /// the bytes it held.
  size_t ForgetKept(PodPlan& plan, std::string why);
  /// Whether pods that differ only in name and timestamps may share one
  /// plan: no plugin reads the pod's name.
  bool SharesPlans() const;
  /// `pod` as the pods of its template share it (pod_template.h): its
  /// volumes resolved against `cluster`, the parts no plugin reads made
  /// equal, unless a policy outside the stdlib reads them (pod.volumes, the
  /// pod's labels). TemplatePod::own_plan_because says when it may not
  /// share; words with details of a plan for it name its claims after
  /// NameClaims(words, TemplatePod::claims).
  TemplatePod Template(const k8s::Pod& pod, const Cluster& cluster) const;
  /// Plan for a template pod (Template's), shared by its template's pods.
  std::unique_ptr<PodPlan> Plan(TemplatePod pod, const Cluster& cluster);
  /// With EngineOptions::verify_incremental: checks `shared`, what the
  /// plan of `pod`'s template decided for it (with `options`), against a
  /// plan of the pod's own; a difference aborts.
  void VerifyTemplate(const k8s::Pod& pod, const Cluster& cluster, const rt::Decision& shared,
                      rt::DecideOptions options);
  /// Words for `rows` of `decision` (made by Decide on this plan and
  /// cluster with DecideOptions::plugin_scores); every live row when
  /// `rows` is empty.
  rt::Placement Explain(const PodPlan& plan, const Cluster& cluster, const rt::Decision& decision,
                        std::span<const rt::RowId> rows = {}, bool details = true) const;
  /// `reasons` (an explanation of `decision`, details or not) grouped as
  /// rt::GroupReasons groups them, each group's detail explained for its
  /// first example alone (work per group, not per node); claims named as
  /// `claims` name them (a template's plan).
  std::vector<rt::ReasonGroup> Grouped(const PodPlan& plan, const Cluster& cluster, const rt::Decision& decision,
                                       const rt::Placement& reasons,
                                       const std::vector<std::pair<std::string, std::string>>& claims = {},
                                       size_t examples = kExampleNodes) const;
  /// How many nodes a group names (../shared/spec/policyc-schedule.md).
  static constexpr size_t kExampleNodes = 5;

  /// Waits for the tiering thread's queued compilations (tests, benchmarks).
  void DrainCompilations();
  /// Distinct kernels compiled so far (plugins equal after specialization,
  /// in any template, share one).
  size_t CompiledKernels() const;
  /// Whether this build has the LLVM back end.
  static bool HasJit();

 private:
  struct State;
  explicit Engine(std::shared_ptr<State> state);
  std::unique_ptr<PodPlan> PlanResolved(k8s::Pod pod, const Cluster& cluster, std::string* trace, bool afresh = false);
  // The pod's volumes and claims looked up, the volumes no plugin reads left out.
  void ResolveForPlan(k8s::Pod& pod, const Cluster& cluster) const;
  void Fill(PodPlan& plan, const Cluster& cluster, std::string* trace) const;
  void TakeTieredKernels(PodPlan& plan) const;

  std::shared_ptr<State> state_;
  rt::Decider decider_;
};

}  // namespace policy::engine
