// `policyc schedule`: places a queue of pods one after another, each seeing
// the ones placed before it (../shared/spec/policyc-schedule.md).
//
// The queue is the snapshot's Pending pods plus --pending files (workloads
// stand for their replicas, a DaemonSet for one pod per node), in
// kube-scheduler's PrioritySort order. Each pod gets one cycle through the
// engine (the same decision path as `check`), then binds into the cluster
// state. Rounds repeat while the last one placed a pod.
//
// Pods of one template share a plan and decide incrementally
// (engine::Scheduler, rt::IncrementalDecider); --output-cluster writes the
// cluster as the run left it (output_cluster.h).

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <map>
#include <unordered_set>
#include <unordered_map>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_setup.h"
#include "runtime/tooling/input.h"
#include "runtime/tooling/output_cluster.h"
#include "runtime/tooling/schedule_run.h"
#include "runtime/tooling/snapshot_objects.h"
#include "runtime/tooling/structured_output.h"
#include "cli/report.h"
#include "k8s/pod_reader.h"
#include "support/json_writer.h"
#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/scheduler.h"

namespace policy::cli {
namespace {

constexpr const char* kSynopsis = R"(usage: policyc schedule --cluster CLUSTER [--pending FILE ...] [--fill POD]
                        [--output|-o text|jsonl|json|yaml] [--tie-break first|random] [--seed N]
                        [--percentage-of-nodes-to-score N] [--no-retry] [--stats] [--no-incremental] [--verify-incremental]
                        [--output-cluster FILE] [--validate strict|warn|ignore] [--all-nodes] [--no-cache]
                        )";
// A queue has many pods of few templates (compiling beside deciding pays),
// decided incrementally on few rows a pod (kernels that arrive sooner pay
// more than faster ones: bench_schedule measures O0 against O2).
constexpr EngineDefaults kEngineDefaults{"tiered", 0};
constexpr const char* kUsage = R"(

Places the Pending pods of CLUSTER (those without spec.nodeName) and of each
--pending file (a Deployment, ReplicaSet or StatefulSet stands for
spec.replicas pods named NAME-0, NAME-1, ...; a Job for spec.parallelism; a
DaemonSet for one pod per node, NAME-NODE, pinned to it) one after another, in
kube-scheduler's queue order (priority, then creationTimestamp, then input
order), each with every plugin of the profile, bound into the cluster before
the next. Pods left Pending are tried again while a round places any
(--no-retry: one round). --fill POD then places copies of POD until one does
not fit: how many more fit.

--output jsonl prints one record per pod (pod, node, attempts, score,
feasible, preempted; summary and reasons when Pending), as the run goes;
json and yaml the same records as one list at the end. A Pending pod's
reasons are grouped as check's text groups them (plugin, reason, how many
nodes, the first 5 of them, the first one's detail); --all-nodes gives
every node's reasons instead (a record then grows with the cluster); text (the default)
a line per pod and a summary with the cluster's utilisation before and
after. --tie-break random picks among the best nodes with a generator seeded
by --seed (default 1); first (the default) takes the first in snapshot order.
--percentage-of-nodes-to-score N scores only the first N percent of the nodes
(at least 100) that pass the filters, from where the last cycle stopped, as
kube-scheduler samples (0: its adaptive default); without it every node is
scored. --stats prints timings as one JSON object on stderr, with how the
decisions were made.

Pods of one template (equal but for their names) share one plan, and each
decision is brought up to date from the template's previous one: only the
nodes a bind changed, and those whose inter-pod or spread counts moved, are
evaluated again. The outcome is the same as deciding every pod from scratch
(--no-incremental; --verify-incremental does both and stops on a difference).
The default engine is `tiered`: a template's first pods are interpreted while
its kernels compile on another thread, later ones use them; --jit-opt is 0 by
default here: kernels three times as soon, and an incremental decision runs
them on few rows.

A pod that fits nowhere preempts (DefaultPreemption, unless the profile or
--plugins leaves it out, or the pod says preemptionPolicy: Never): the
lower-priority pods of the best node, PodDisruptionBudgets respected, are
evicted and the pod is bound there.

--output-cluster FILE writes the cluster as the run left it, as a v1/List in
the format of the first --cluster file: every object of the snapshot (the
victims left out, the placed Pending pods with spec.nodeName), the other
objects of the --pending files, and a Pod for each of their pods (a
workload's from its template; spec.nodeName where it was placed) and each
--fill copy that fitted. It can be checked or scheduled again.

CLUSTER is read from its snapshot cache when it has one, as check reads it
(docs/cache.md); --no-cache reads the files alone.

--validate says what an unknown field of a --pending or --fill manifest is,
as for check: strict (the default) refuses it, warn reads on, ignore is silent.

Exit status: 0 every pod placed, 1 some pod stayed Pending (with --fill, the
copy that did not fit), 2 bad input or usage.
)";

std::string Key(const k8s::Pod& pod) { return pod.namespace_name + "/" + pod.name; }

class ScheduleRun {
 public:
  explicit ScheduleRun(const Args& args) : args_(args) {}

  int Run() {
    auto start = Clock::now();
    std::string output = args_.Get("output", "text");
    if (output != "text" && output != "jsonl" && output != "json" && output != "yaml") {
      fmt::print(stderr, "policyc schedule: `--output` must be `text`, `jsonl`, `json` or `yaml`, not `{}`\n", output);
      return kExitBadInput;
    }
    jsonl_ = output != "text";  // records, one a line or as a list
    list_ = output == "json" ? std::optional(tooling::OutputFormat::kJson)
            : output == "yaml" ? std::optional(tooling::OutputFormat::kYaml)
                               : std::nullopt;
    std::string tie = args_.Get("tie-break", "first");
    if (tie != "first" && tie != "random") {
      fmt::print(stderr, "policyc schedule: `--tie-break` must be `first` or `random`, not `{}`\n", tie);
      return kExitBadInput;
    }
    std::string error;
    std::optional<int64_t> seed = args_.GetInt("seed", 1, 0, INT64_MAX, &error);
    if (!seed) {
      fmt::print(stderr, "policyc schedule: {}\n", error);
      return kExitBadInput;
    }
    std::optional<int64_t> percentage = args_.GetInt("percentage-of-nodes-to-score", -1, 0, 100, &error);
    if (!percentage) {
      fmt::print(stderr, "policyc schedule: {}\n", error);
      return kExitBadInput;
    }
    if (!ReadInputs()) return kExitBadInput;
    auto loaded = Clock::now();
    std::optional<rt::Profile> profile = ProfileFromFlags("schedule", args_, "default-scheduler", diags_);
    if (!profile) return diags_.HasErrors() ? Refuse() : kExitBadInput;
    std::optional<engine::EngineOptions> options = EngineOptionsFromFlags("schedule", args_, kEngineDefaults);
    if (!options) return kExitBadInput;
    engine_ = EngineFromFlags(args_, *profile, *options, diags_);
    if (!engine_) return Refuse();
    if (!diags_.All().empty()) std::fputs(RenderAll(diags_).c_str(), stderr);  // warnings
    auto compiled = Clock::now();

    Usage before = Utilisation();
    engine::ScheduleOptions schedule;
    schedule.preemption = profile->preemption;
    schedule.retry = !args_.Has("no-retry");
    if (args_.Get("tie-break", "first") == "random") schedule.random_seed = static_cast<uint64_t>(*seed);
    if (*percentage >= 0) schedule.percentage_of_nodes_to_score = static_cast<int>(*percentage);
    schedule.incremental = !args_.Has("no-incremental");
    schedule.details = jsonl_ && args_.Has("all-nodes");  // only the records show a reason's detail
    schedule.groups = jsonl_ && !args_.Has("all-nodes");
    scheduler_.emplace(*engine_, *cluster_, schedule);
    finished_ = scheduler_->Run(std::move(queue_));
    size_t fitted = Fill();
    auto done = Clock::now();

    size_t pending = 0;
    for (const engine::Outcome* e : finished_) pending += e->node ? 0 : 1;
    if (args_.Has("output-cluster") && !WriteCluster(args_.Get("output-cluster"))) return kExitBadInput;
    if (list_) {
      std::string list = "[";
      for (const engine::Outcome* e : finished_) {
        std::string record = tooling::OutcomeRecord(*e);
        while (!record.empty() && record.back() == '\n') record.pop_back();
        list += (list.size() > 1 ? ",\n" : "") + record;
      }
      fmt::print("{}", tooling::Structured(*list_, list + "]\n"));
    } else if (jsonl_) {
      for (const engine::Outcome* e : finished_) fmt::print("{}", tooling::OutcomeRecord(*e));
    } else {
      PrintText(before, fitted);
    }
    if (args_.Has("stats")) {
      double schedule_s = Seconds(compiled, done);
      JsonWriter w(JsonWriter::Style::kLine);
      w.BeginObject();
      w.Key("load_s").Double(Seconds(start, loaded));
      w.Key("compile_s").Double(Seconds(loaded, compiled));
      w.Key("schedule_s").Double(schedule_s);
      w.Key("pods").Int(static_cast<int64_t>(finished_.size()));
      w.Key("scheduled").Int(static_cast<int64_t>(finished_.size() - pending));
      w.Key("pending").Int(static_cast<int64_t>(pending));
      w.Key("preempted").Int(static_cast<int64_t>(scheduler_->Preempted()));
      w.Key("pods_per_second").Double(schedule_s > 0 ? static_cast<double>(finished_.size()) / schedule_s : 0);
      // How the decisions were made (beyond the spec's keys).
      const engine::ScheduleStats& stats = scheduler_->Stats();
      w.Key("templates").Int(static_cast<int64_t>(stats.templates));
      w.Key("kernels").Int(static_cast<int64_t>(engine_->CompiledKernels()));  // distinct, so far
      w.Key("plans").Int(static_cast<int64_t>(stats.plans));
      w.Key("decisions").BeginObject();
      w.Key("incremental").Int(static_cast<int64_t>(stats.decisions.incremental));
      w.Key("full").Int(static_cast<int64_t>(stats.decisions.full));
      w.Key("full_because").BeginObject();
      for (const auto& [why, n] : stats.decisions.full_because) w.Key(why).Int(static_cast<int64_t>(n));
      w.EndObject();
      w.Key("rows_evaluated").Int(static_cast<int64_t>(stats.decisions.rows_evaluated));
      w.Key("plugins_on_every_row").Int(static_cast<int64_t>(stats.decisions.plugins_on_every_row));
      w.EndObject();
      w.EndObject();
      fmt::print(stderr, "{}", w.Take());
    }
    return pending == 0 ? kExitOk : kExitNo;  // with --fill, the last copy is Pending
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

  int Refuse() {
    std::fputs(RenderAll(diags_).c_str(), stderr);
    return kExitBadInput;
  }

  bool ReadInputs() {
    std::optional<k8s::FieldValidation> validation = ValidationFromFlags("schedule", args_);
    if (!validation) return false;
    // From the snapshot cache when it can (docs/cache.md): the run needs
    // the table alone; --output-cluster reads the files when it writes.
    std::optional<std::vector<rt::SnapshotFile>> snapshot = tooling::SnapshotFiles(args_.GetAll("cluster"), diags_);
    if (!snapshot) return Refuse(), false;
    cluster_ = engine::Cluster::LoadFiles(*snapshot, tooling::CacheFromFlags(args_.Has("no-cache")), diags_);
    if (!cluster_) return Refuse(), false;
    if (std::optional<std::string> why =
            tooling::NotACluster(cluster_->Report(), fmt::format("{}", fmt::join(args_.GetAll("cluster"), ", ")))) {
      fmt::print(stderr, "policyc schedule: {}\n", *why);
      return false;
    }
    snapshot_ = std::move(*snapshot);
    std::vector<k8s::Pod> queue;
    for (const k8s::Pod& p : cluster_->Report().pending) {
      if (p.scheduler_name == "default-scheduler") queue.push_back(p);
    }
    for (const std::string& path : args_.GetAll("pending")) {
      std::shared_ptr<Source> source = tooling::ReadInput(path, diags_);
      if (!source) return Refuse(), false;
      sources_.push_back(source);
      std::optional<k8s::Manifest> manifest = k8s::ReadManifest(*source, diags_, *validation);
      if (!manifest) return Refuse(), false;
      tooling::CheckManifestSelectors(*manifest, *source, diags_);
      tooling::AddManifestObjects(*manifest, *cluster_);
      for (k8s::Pod& pod : manifest->pods) tooling::ExpandWorkload(std::move(pod), cluster_->Table(), queue);
    }
    if (args_.Has("fill")) {
      std::shared_ptr<Source> source = tooling::ReadInput(args_.Get("fill"), diags_);
      if (!source) return Refuse(), false;
      sources_.push_back(source);
      std::optional<k8s::Pod> pod = k8s::ReadPod(*source, diags_, *validation);
      if (!pod) return Refuse(), false;
      fill_ = std::move(*pod);
    }
    if (std::optional<std::string> refused = tooling::ResolveQueuePriorities(queue, cluster_->Table())) {
      fmt::print(stderr, "policyc schedule: {}\n", *refused);
      return false;
    }
    queue_ = std::move(queue);
    return true;
  }

  // --fill: copies of the pod until one stays Pending; how many fitted.
  size_t Fill() {
    if (!fill_) return 0;
    std::vector<const engine::Outcome*> copies = tooling::FillUntilPending(*scheduler_, *fill_);
    for (const engine::Outcome* o : copies) {
      finished_.push_back(o);
      fills_.insert(o);
    }
    return copies.size() - 1;
  }

  // --output-cluster: the snapshot as the run left it.
  bool WriteCluster(const std::string& path) const {
    tooling::RunResult result = tooling::ResultOf(finished_, fills_, fill_ ? fill_->name : "", *scheduler_, *cluster_);
    DiagnosticSink diags;
    std::vector<std::shared_ptr<const Source>> snapshot;
    for (const rt::SnapshotFile& file : snapshot_) {
      std::shared_ptr<const Source> source = file.source ? file.source : tooling::ReadInput(file.path, diags);
      if (!source) {
        std::fputs(RenderAll(diags).c_str(), stderr);
        return false;
      }
      snapshot.push_back(std::move(source));
    }
    std::string text = tooling::ClusterAfter(snapshot, sources_, result);
    std::FILE* out = std::fopen(path.c_str(), "wb");
    bool ok = out != nullptr && std::fwrite(text.data(), 1, text.size(), out) == text.size();
    if (out != nullptr) ok = std::fclose(out) == 0 && ok;
    if (!ok) fmt::print(stderr, "policyc schedule: cannot write `{}`: {}\n", path, std::strerror(errno));
    return ok;
  }

  // Requested over allocatable of the resources a capacity planner reads.
  struct Usage {
    std::vector<std::tuple<std::string, int64_t, int64_t>> resources;  // name, requested, allocatable (milli)
  };
  Usage Utilisation() const {
    Usage u;
    const rt::NodeTable& table = cluster_->Table();
    for (const char* name : {"cpu", "memory", "nvidia.com/gpu", "nvidia.com/gpu-memory"}) {
      const rt::ResourceColumn* column = table.Resource(name);
      if (column == nullptr) continue;
      int64_t requested = 0, allocatable = 0;
      for (rt::RowId row : table.LiveRows()) {
        requested += column->requested_milli[row];
        allocatable += column->allocatable_milli[row];
      }
      if (allocatable > 0) u.resources.emplace_back(name, requested, allocatable);
    }
    return u;
  }

  void PrintText(const Usage& before, size_t fitted) const {
    size_t placed = 0, pending = 0;
    std::map<std::string, size_t> why;  // summary -> pods
    for (const engine::Outcome* e : finished_) {
      if (fills_.contains(e)) continue;
      if (e->node) {
        ++placed;
        fmt::print("{} -> {} (score {}, {} feasible{}{})\n", Key(e->pod), *e->node, e->score, e->feasible,
                   e->attempts > 1 ? fmt::format(", attempt {}", e->attempts) : "",
                   e->preempted.empty() ? "" : fmt::format("; preempted {}", fmt::join(e->preempted, ", ")));
      } else {
        ++pending;
        ++why[e->placement().summary];
        fmt::print("{} stays Pending: {}\n", Key(e->pod), e->Summary());
      }
    }
    size_t preempted = scheduler_->Preempted();
    if (placed + pending > 0 || !fill_) {
      fmt::print("{}placed {} of {} pods; {} Pending{}\n", placed + pending > 0 ? "\n" : "", placed, placed + pending,
                 pending, preempted > 0 ? fmt::format("; {} preempted", preempted) : "");
    }
    for (const auto& [summary, n] : why) fmt::print("  {} pod{}: {}\n", n, n == 1 ? "" : "s", summary);
    if (fill_) {
      const engine::Outcome* last = finished_.back();
      fmt::print("{}{} more cop{} of {} fit", placed + pending > 0 ? "\n" : "", fitted, fitted == 1 ? "y" : "ies",
                 Key(*fill_));
      // Where they went: by instance type and zone, most first.
      std::map<std::string, size_t> groups;
      const rt::NodeTable& table = cluster_->Table();
      auto label = [&](rt::RowId row, std::string_view key) {
        const rt::LabelColumn* column = table.Label(key);
        uint32_t d = column != nullptr ? column->domain[row] : 0;
        return d == 0 ? std::string("-") : std::string(table.pool().Get(column->value[d]));
      };
      for (const engine::Outcome* e : finished_) {
        if (!fills_.contains(e) || !e->node) continue;
        rt::RowId row = *table.FindNode(*e->node);
        ++groups[label(row, "node.kubernetes.io/instance-type") + " in " + label(row, "topology.kubernetes.io/zone")];
      }
      std::vector<std::pair<std::string, size_t>> sorted(groups.begin(), groups.end());
      std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      fmt::print("{}\n", sorted.empty() ? "" : ":");
      for (const auto& [group, n] : sorted) fmt::print("  {:>5}  {}\n", n, group);
      fmt::print("the next one does not fit:\n{}", PlacementText(Key(last->pod), last->placement(), {}, false, {.notes = {}, .gated = false, .node_hint = false}));
    }
    Usage after = Utilisation();
    if (!after.resources.empty()) fmt::print("\n{:<24} {:>6}  {:>6}\n", "utilisation", "before", "after");
    for (size_t i = 0; i < after.resources.size(); ++i) {
      auto pct = [](int64_t req, int64_t alloc) { return alloc > 0 ? 100.0 * static_cast<double>(req) / static_cast<double>(alloc) : 0.0; };
      const auto& [name, req, alloc] = after.resources[i];
      int64_t req_before = i < before.resources.size() ? std::get<1>(before.resources[i]) : 0;
      fmt::print("  {:<22} {:>5.1f}%  {:>5.1f}%\n", name, pct(req_before, alloc), pct(req, alloc));
    }
  }

  const Args& args_;
  DiagnosticSink diags_;
  bool jsonl_ = false;
  std::optional<tooling::OutputFormat> list_;  // -o json or yaml: the records as one list
  std::unique_ptr<engine::Cluster> cluster_;
  std::unique_ptr<engine::Engine> engine_;
  std::vector<std::shared_ptr<Source>> sources_;  // the pods' spans point into them
  std::vector<k8s::Pod> queue_;
  std::optional<engine::Scheduler> scheduler_;
  std::optional<k8s::Pod> fill_;
  std::unordered_set<const engine::Outcome*> fills_;
  std::vector<const engine::Outcome*> finished_;  // in the order of their final attempts
  std::vector<rt::SnapshotFile> snapshot_;  // read again by --output-cluster
};

}  // namespace

namespace {

int Run(const Args& args) {
  if (!args.Has("cluster")) {
    fmt::print(stderr, "policyc schedule: `--cluster` is missing\nRun `policyc schedule --help` for usage.\n");
    return kExitBadInput;
  }
  if (!args.Positional().empty()) {
    fmt::print(stderr, "policyc schedule: unexpected argument `{}` (pods go with --pending)\nRun `policyc schedule --help` for usage.\n",
               args.Positional().front());
    return kExitBadInput;
  }
  return ScheduleRun(args).Run();
}

}  // namespace

Command ScheduleCommand() {
  return {"schedule", "place a queue of pods one after another, as kube-scheduler would",
          std::string(kSynopsis) + EngineSynopsis(24) + kUsage + "\n" + EngineHelp(kEngineDefaults),
          WithEngineFlags({{"cluster", true, true}, {"pending", true, true}, {"fill"}, {"output", true, false, 'o'}, {"tie-break"}, {"seed"}, {"percentage-of-nodes-to-score"}, {"no-retry", false}, {"output-cluster"}, {"stats", false}, {"no-incremental", false}, {"verify-incremental", false}, {"validate"}, {"all-nodes", false}, {"no-cache", false}}),
          &Run};
}

}  // namespace policy::cli
