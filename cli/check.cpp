// `policyc check`: where can this pod go, and if nowhere, why?
// (../shared/spec/policyc-check.md). With policy files only, it type-checks
// and lints them instead.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <optional>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/engine_setup.h"
#include "cli/commands.h"
#include "runtime/tooling/input.h"
#include "runtime/tooling/recorded_answer.h"
#include "runtime/tooling/snapshot_objects.h"
#include "cli/report.h"
#include "runtime/tooling/structured_output.h"
#include "runtime/tooling/policy_compile.h"
#include "server/api_watch.h"
#include "server/kube_api.h"
#include "k8s/pod_reader.h"
#include "support/suggest.h"
#include "support/json_writer.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/pod_template.h"
#include "runtime/engine/suggest.h"
#include "runtime/engine/template_claims.h"
#include "runtime/sched/profile.h"

namespace policy::cli {
namespace {

constexpr const char* kSynopsis = R"(usage: policyc check [--cluster CLUSTER | --kubeconfig FILE [--context NAME] | --in-cluster]
                     (--pod POD [-n NAMESPACE] | --all-pending) [--output|-o text|json|yaml] [--node NAME ...] [--all-nodes]
                     [--suggest|--no-suggest] [--no-cache] [--validate strict|warn|ignore]
                     )";
constexpr const char* kUsage = R"(
       policyc check POLICY.policy...

Without --cluster, the cluster is the live one kubectl would talk to: the
current context of $KUBECONFIG or ~/.kube/config (--kubeconfig, --context),
or the pod's service account (--in-cluster); its objects are listed as
`policyc serve` lists them (nodes, pods and every kind below), read only.

Places POD (a Pod, or a workload whose template is the pod, from a file;
or a pod of the snapshot by name, as kubectl names one: NAME in --namespace
(-n, default `default`) or NAMESPACE/NAME; a pod bound to a node is answered
as if it were Pending now, taken off its node) on the nodes of
CLUSTER (`kubectl get nodes,pods,namespaces,services,replicasets,statefulsets,
replicationcontrollers,pvc,pv,storageclasses,csinodes,priorityclasses,pdb,
deviceclasses,resourceslices,resourceclaims -A -o yaml`
or `-o json`: every kind the plugins read; --cluster may be given several
times, and a directory stands for its .yaml, .yml and .json files; `-` reads
standard input) with kube-scheduler's (1.34 unless --kubernetes-version 1.31)
default plugins (or a KubeSchedulerConfiguration profile's), or only those named
by --plugins, plus every --policy (DSL or YAML form). Prints
kube-scheduler's summary, the reasons grouped with the nodes they apply to, and
with --node/--all-nodes the details per node. For a pod that fits nowhere
it then says what would make it fit: edits of the pod (tolerate a taint,
lower a request, drop a selector or a term, relax a spread constraint) and
changes of the cluster (one more node like one it has; the pods whose
removal frees a node), each tried by deciding again with it applied and
shown with the nodes it opens (docs/suggestions.md; --no-suggest leaves
them out, --suggest asks for them also for a pod that fits, what would open
more nodes, and for every pod of --all-pending). --all-pending checks every
Pending pod of the snapshot against it as it is: a line per pod (the whole
answer with --node/--all-nodes; a JSON array with --output json). A POD
file with several objects (a Helm-rendered manifest) has each Pod and
workload in it checked, with its Services, Namespaces, claims, volumes,
StorageClasses and PriorityClasses joining the snapshot (in place of the
dump's of the same name) for the check; the answers come one after another
(a JSON array). Exit
status: 0 schedulable (every pod), 1 schedulable nowhere (some pod), 2 bad
input or usage.

A snapshot file of 1 MiB or more is kept, once loaded, in a binary cache in
$XDG_CACHE_HOME/policyc (else ~/.cache/policyc; nothing is written beside
it) that the next run loads instead while the file is unchanged
(docs/cache.md); --no-cache reads the file itself.

--validate says what an unknown field of the pod's manifest is, as kubectl's
--validate does: strict (the default) refuses it with every other problem of
the file at once (exit 2), warn reads on without it, ignore says nothing.

With policy files only, type-checks and lints them.
)";

int Fail(const DiagnosticSink& diags) {
  std::fputs(RenderAll(diags).c_str(), stderr);
  return kExitBadInput;
}

int Lint(const std::vector<std::string>& files) {
  tooling::PolicyChecker checker;
  bool failed = false;
  for (const std::string& path : files) {
    DiagnosticSink diags;
    std::shared_ptr<Source> source = tooling::ReadInput(path, diags);
    std::optional<std::vector<std::string>> names = source ? checker.Check(source, diags) : std::nullopt;
    if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);
    if (!names) {
      failed = true;
      continue;
    }
    size_t warnings = diags.All().size();
    fmt::print("{}: {} polic{} ({}), {}\n", path, names->size(), names->size() == 1 ? "y" : "ies", fmt::join(*names, ", "),
               warnings == 0 ? std::string("no problems")
                             : fmt::format("{} warning{}", warnings, warnings == 1 ? "" : "s"));
  }
  return failed ? kExitBadInput : kExitOk;
}

// One `policyc check --cluster --pod` run, step by step. Every step returns
// false after printing why (the run then exits 2).
class CheckRun {
 public:
  explicit CheckRun(const Args& args) : args_(args) {}

  int Run() {
    std::optional<tooling::OutputFormat> format = tooling::ParseOutputFormat("check", args_.Get("output", "text"));
    if (!format) return kExitBadInput;
    format_ = *format;
    if (!ReadInputs() || !ChooseProfile() || !EngineFromFlags() || !NodesExist() || !BuildEngine()) {
      return kExitBadInput;
    }
    if (!diags_.All().empty()) std::fputs(RenderAll(diags_).c_str(), stderr);  // warnings
    if (args_.Has("all-pending") || pods_.size() > 1) return Many();
    Answer answer = Check(std::move(pods_.front()), true);
    if (!bound_note_.empty()) answer.notes.notes.insert(answer.notes.notes.begin(), bound_note_);
    fmt::print("{}", Render(answer));
    return answer.fits ? kExitOk : kExitNo;
  }

 private:
  struct Answer {
    std::string pod;  // namespace/name
    rt::Placement placement;
    PodNotes notes;
    bool fits = false;
    std::optional<std::vector<engine::Suggestion>> suggestions;  // when asked or when it fits nowhere
    std::optional<std::vector<rt::ReasonGroup>> groups;            // --all-pending's JSON and YAML
    // A pod from a file with template claims: the answer once applied, and
    // the claims made for it (kube's answer, this one's owner, is transient).
    std::shared_ptr<Answer> applied;
    std::vector<std::string> made;
  };

  // One pod through the engine: plan, decide, explain, and what would make
  // it fit (for a pod that fits nowhere, unless --no-suggest; for any with --suggest).
  // `details` false: reasons only (a summary line shows no more).
  // `grouped`: the reasons grouped too, with a detail for each group's first node.
  Answer Check(k8s::Pod pod, bool suggest_by_default, bool details = true, bool grouped = false) {
    // A pod from a file whose claims come from ResourceClaimTemplates gets
    // kube-scheduler's answer (`ResourceClaim not created yet`: transient),
    // then the answer for the pod as it will be once applied, its claims
    // made as the resourceclaim controller makes them (Answer::applied).
    bool templated = pod_source_ != nullptr &&
                     std::any_of(pod.resource_claims.begin(), pod.resource_claims.end(),
                                 [](const k8s::PodResourceClaim& c) { return !c.template_name.empty(); });
    k8s::Pod as_read = pod;
    Answer a = Explained(*engine_->Plan(std::move(pod), *cluster_), details, grouped);
    if (templated) {
      k8s::Pod applied = as_read;
      std::vector<std::string> made = engine::MakeTemplateClaims(applied, *cluster_);
      if (!made.empty()) {
        a.notes.notes.push_back(fmt::format(
            "this answer is transient: the resourceclaim controller makes the pod's claim{} {} from {} template{} "
            "once the pod exists, and kube-scheduler tries again; below, the answer then",
            made.size() == 1 ? "" : "s", fmt::join(made, ", "), made.size() == 1 ? "its" : "their",
            made.size() == 1 ? "" : "s"));
        a.notes.node_hint = false;  // the answer below has the nodes' words
        a.applied = std::make_shared<Answer>(Check(std::move(applied), suggest_by_default, details, grouped));
        a.applied->made = std::move(made);
        return a;
      }
    }
    bool suggest = args_.Has("suggest") || (suggest_by_default && !a.fits && !args_.Has("no-suggest"));
    if (suggest && !a.notes.gated && !a.placement.nodes.empty()) {
      a.suggestions = engine::Suggest(*engine_, *cluster_, as_read, a.placement);
    }
    return a;
  }

  // The answer for a template pod (engine::Engine::Template), shared by the
  // pods of its template; its details name claims as the template does.
  Answer CheckTemplate(engine::TemplatePod pod, bool details, bool grouped) {
    return Explained(*engine_->Plan(std::move(pod), *cluster_), details, grouped);
  }

  Answer Explained(engine::PodPlan& plan, bool details, bool grouped = false) {
    const rt::Decision& decision = engine_->Decide(plan, *cluster_, {.plugin_scores = true});
    Answer a;
    a.placement = engine_->Explain(plan, *cluster_, decision, {}, details);
    if (grouped) a.groups = engine_->Grouped(plan, *cluster_, decision, a.placement);
    a.pod = plan.Pod().namespace_name + "/" + plan.Pod().name;
    a.notes = host::NotesFor(plan.Pod(), profile_.scheduler_name);
    if (a.notes.gated) a.placement.summary = "Scheduling is blocked due to non-empty scheduling gates";
    a.fits = a.placement.feasible > 0 && !a.notes.gated;
    return a;
  }

  std::string Render(const Answer& a) const { return Render(a, a.pod); }
  std::string Render(const Answer& a, const std::string& pod) const {
    if (format_ == tooling::OutputFormat::kText) {
      std::map<std::string, int64_t> weights;
      for (const engine::PluginSpec& p : engine_->Plugins()) weights[p.name] = p.weight;
      std::string text = PlacementText(pod, a.placement, args_.GetAll("node"), args_.Has("all-nodes"), a.notes,
                                       a.suggestions ? SuggestionsText(*a.suggestions, a.fits) : std::string(), weights);
      if (a.applied) {
        text += fmt::format("\nonce applied (the claim{} {} made from the pod's template{}):\n",
                            a.applied->made.size() == 1 ? "" : "s", fmt::join(a.applied->made, ", "),
                            a.applied->made.size() == 1 ? "" : "s");
        text += Render(*a.applied, pod);
      }
      return text;
    }
    return tooling::Structured(format_, JsonOf(a, pod));
  }

  // check's document; with `applied`, the answer once applied nested in it
  // as `applied` (with the claims made, `claims_made`).
  static std::string JsonOf(const Answer& a, const std::string& pod) {
    std::string doc = !a.suggestions ? PlacementJson(pod, a.placement, a.notes)
                                     : PlacementJson(pod, a.placement, a.notes,
                                                     [&](JsonWriter& w) { SuggestionsJson(*a.suggestions, w); });
    if (!a.applied) return doc;
    std::string nested = JsonOf(*a.applied, pod);
    while (!nested.empty() && nested.back() == '\n') nested.pop_back();
    JsonWriter made(JsonWriter::Style::kLine);
    made.BeginArray();
    for (const std::string& name : a.applied->made) made.String(name);
    made.EndArray();
    std::string made_text = made.Take();
    while (!made_text.empty() && made_text.back() == '\n') made_text.pop_back();
    std::string head = doc.substr(0, doc.rfind('}'));
    while (!head.empty() && std::isspace(static_cast<unsigned char>(head.back()))) head.pop_back();
    std::string indented;
    for (char c : nested) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
    return head + ",\n  \"claims_made\": " + made_text + ",\n  \"applied\": " + indented + "\n}\n";
  }

  // --all-pending's document (../shared/spec/policyc-check.md, "Many pods
  // at once"): the reasons grouped, kube's recorded answer and whether it agrees.
  static std::string GroupedJsonOf(const Answer& a, const std::string& pod, const std::string& recorded) {
    return host::GroupedPlacementJson(pod, a.placement, *a.groups, a.notes, [&](JsonWriter& w) {
      if (!recorded.empty()) {
        w.Key("recorded").String(recorded);
        w.Key("agrees");
        switch (tooling::CompareRecorded(recorded, a.placement.summary)) {
          case tooling::Agreement::kSame: w.Bool(true); break;
          case tooling::Agreement::kWording: w.String("wording"); break;
          case tooling::Agreement::kDiffers: w.Bool(false); break;
        }
      }
      if (a.suggestions) SuggestionsJson(*a.suggestions, w);
    });
  }

  // Several pods, each against the cluster as it is (none placed):
  // --all-pending's every Pending pod of the snapshot, or every Pod and
  // workload of a manifest. Text: a line per pending pod, a manifest's whole
  // answers (and the pending pods' with --node/--all-nodes); JSON: an array
  // of check documents, each written as it is made (a pod's is O(nodes)).
  // Exit 0 when every pod fits somewhere, 1 when one does not.
  int Many() {
    bool json = format_ != tooling::OutputFormat::kText;
    bool all_fit = true;
    size_t documents = 0;
    bool details = args_.Has("all-nodes") || args_.Has("node") || !args_.Has("all-pending");
    // --all-pending's documents group the reasons; every node's only with --all-nodes.
    bool grouped = json && args_.Has("all-pending") && !args_.Has("all-nodes");
    // Pods of one template (a ReplicaSet's, a Job's) against the same
    // cluster get the same answer but for their names: decided once.
    // Not with suggestions, which are made from the pod as read.
    bool share = !args_.Has("suggest") && args_.Has("all-pending");
    std::unordered_map<size_t, std::vector<std::pair<k8s::Pod, const Answer*>>> answered;  // by TemplateHash
    std::deque<Answer> kept;
    for (k8s::Pod& pod : pods_) {
      std::string name = pod.namespace_name + "/" + pod.name;
      std::string recorded = pod.scheduled_message;
      const Answer* shown = nullptr;  // kept, or `own`
      Answer own;
      std::optional<engine::TemplatePod> t;
      if (share) t = engine_->Template(pod, *cluster_);
      // A pod's own ResourceClaims are named in its details as the
      // allocator looks them up: such a pod is answered on its own.
      if (t && t->own_plan_because.empty() && t->pod.resource_claims.empty()) {
        engine::ClaimNames claims = std::move(t->claims);
        std::vector<std::pair<k8s::Pod, const Answer*>>& bucket = answered[engine::TemplateHash(t->pod)];
        for (const auto& [earlier, answer] : bucket) {
          if (engine::SameTemplate(earlier, t->pod)) shown = answer;
        }
        if (shown == nullptr) {
          k8s::Pod key = t->pod;
          shown = &kept.emplace_back(CheckTemplate(std::move(*t), (json && !grouped) || details, grouped));
          bucket.emplace_back(std::move(key), shown);
        }
        if ((json || details) && !claims.empty()) {  // the template's details, with the pod's claims' names
          own = *shown;
          engine::NameClaims(own.placement, claims);
          if (own.groups) engine::NameClaims(*own.groups, claims);
          shown = &own;
        }
      } else {
        own = Check(std::move(pod), !args_.Has("all-pending"), (json && !grouped) || details, grouped);
        shown = &own;
      }
      all_fit = all_fit && shown->fits;
      if (json) {
        std::string d = shown->groups ? GroupedJsonOf(*shown, name, recorded) : JsonOf(*shown, name);
        while (!d.empty() && d.back() == '\n') d.pop_back();
        if (format_ == tooling::OutputFormat::kYaml) {  // a sequence of one, and the next one's continues it
          fmt::print("{}", tooling::Structured(format_, "[" + d + "]\n"));
        } else {
          fmt::print("{}{}", documents == 0 ? "[" : ",\n", d);
        }
        ++documents;
      } else if (details) {
        fmt::print("{}\n", Render(*shown, name));
      } else {
        fmt::print("{}: {}\n{}", name, shown->placement.summary, Recorded(recorded, shown->placement.summary));
      }
    }
    if (json && documents == 0) {
      fmt::print("{}", tooling::Structured(format_, "[]\n"));
    } else if (json && format_ != tooling::OutputFormat::kYaml) {
      fmt::print("]\n");
    } else if (pods_.empty()) {
      fmt::print("no Pending pod in {}\n", where_);
    }
    return all_fit ? kExitOk : kExitNo;
  }

  bool Refuse() {
    Fail(diags_);
    return false;
  }

  // What kube-scheduler last said about a Pending pod (its PodScheduled
  // condition's message, when the dump has one) beside policyc's summary,
  // and whether the two agree (tooling/recorded_answer.h).
  static std::string Recorded(const std::string& recorded, const std::string& summary) {
    if (recorded.empty()) return "";
    tooling::Agreement agrees = tooling::CompareRecorded(recorded, summary);
    if (agrees == tooling::Agreement::kSame) return "  kube-scheduler's recorded answer (status.conditions PodScheduled) is the same\n";
    if (agrees == tooling::Agreement::kWording) {
      return "  kube-scheduler's recorded answer (status.conditions PodScheduled) is the same but for the taints' "
             "wording: kube-scheduler names each untolerated taint before 1.34.2 (--kubernetes-version 1.31 words it "
             "so)\n";
    }
    return fmt::format("  kube-scheduler recorded (status.conditions PodScheduled): {}\n"
                       "  which differs: the dump is not the cluster kube-scheduler last saw, or it runs a profile or "
                       "plugins this check does not (--profile)\n",
                       recorded);
  }

  bool ReadInputs() {
    if (args_.Has("cluster")) {
      where_ = fmt::format("{}", fmt::join(args_.GetAll("cluster"), ", "));
      std::optional<std::vector<rt::SnapshotFile>> snapshot = tooling::SnapshotFiles(args_.GetAll("cluster"), diags_);
      if (!snapshot) return Refuse();
      cluster_ = engine::Cluster::LoadFiles(*snapshot, tooling::CacheFromFlags(args_.Has("no-cache")), diags_);
      if (!cluster_) return Refuse();
      snapshot_files_ = std::move(*snapshot);
      if (std::optional<std::string> why = tooling::NotACluster(cluster_->Report(), where_)) {
        fmt::print(stderr, "policyc check: {}\n", *why);
        return false;
      }
    } else if (!ReadLive()) {
      return false;
    }
    if (!cluster_) return Refuse();
    if (args_.Has("all-pending")) {
      pods_ = cluster_->Report().pending;
      return true;
    }
    std::string pod = args_.Get("pod");
    // Not a file: a pod of the snapshot by name, as kubectl names one
    // (NAME in --namespace, default `default`; or NAMESPACE/NAME).
    if (pod != "-" && !std::filesystem::exists(pod)) return SnapshotPod(pod);
    pod_source_ = tooling::ReadInput(pod, diags_);
    if (!pod_source_) return Refuse();
    std::optional<k8s::FieldValidation> validation = ValidationFromFlags("check", args_);
    if (!validation) return false;
    std::optional<k8s::Manifest> manifest = k8s::ReadManifest(*pod_source_, diags_, *validation);
    if (!manifest) return Refuse();
    // The objects the manifest brings join the snapshot (replacing the
    // dump's of the same name, as applying it would) while its pods are checked.
    tooling::CheckManifestSelectors(*manifest, *pod_source_, diags_);
    tooling::AddManifestObjects(*manifest, *cluster_);
    pods_ = std::move(manifest->pods);
    return true;
  }

  // No --cluster: the live cluster, listed as `serve` lists it, from the
  // kubeconfig's context (--kubeconfig, else $KUBECONFIG or ~/.kube/config,
  // as kubectl; --context) or the pod's service account (--in-cluster).
  bool ReadLive() {
    std::string error;
    std::optional<server::ApiConfig> config =
        args_.Has("in-cluster")
            ? server::InClusterApi("/var/run/secrets/kubernetes.io/serviceaccount", &error)
            : server::KubeconfigApi(args_.Get("kubeconfig", server::DefaultKubeconfig()), &error, args_.Get("context"));
    if (!config) {
      fmt::print(stderr, "policyc check: {}\n(give a snapshot with --cluster, or a kubeconfig with --kubeconfig)\n", error);
      return false;
    }
    server::ApiClient api(std::move(*config));
    std::map<size_t, std::string> versions;
    std::vector<std::string> not_served, forbidden;
    if (!server::ListApi(api, snapshot_sources_, versions, not_served, forbidden, &error)) {
      fmt::print(stderr, "policyc check: {}\n", error);
      return false;
    }
    for (const std::string& kind : not_served) {
      fmt::print(stderr, "policyc check: the API does not serve {}; read without them\n", kind);
    }
    for (const std::string& why : forbidden) fmt::print(stderr, "policyc check: read without {}\n", why);
    where_ = fmt::format("the cluster at {} ({})", api.config().server, api.config().origin);
    cluster_ = engine::Cluster::Load(snapshot_sources_, diags_);
    return true;
  }

  // `--pod NAME` (in --namespace) or `--pod NAMESPACE/NAME` that is no
  // file: a Pending pod of the snapshot, or a bound one, answered for the
  // cluster without it (set aside from its node) with a note saying so: where
  // it would go now, its own node among the candidates.
  bool SnapshotPod(const std::string& name) {
    if (size_t slash = name.find('/'); slash != std::string::npos && args_.Has("namespace") &&
                                       name.substr(0, slash) != args_.Get("namespace")) {
      fmt::print(stderr, "policyc check: `--pod {}` names namespace `{}`, and `--namespace` says `{}`: give one\n", name,
                 name.substr(0, slash), args_.Get("namespace"));
      return false;
    }
    std::string key = name.find('/') != std::string::npos ? name : args_.Get("namespace", "default") + "/" + name;
    for (const k8s::Pod& p : cluster_->Report().pending) {
      if (p.namespace_name + "/" + p.name == key) {
        pods_.push_back(p);
        return true;
      }
    }
    // A bound pod, whole: from the objects cache as the table came from
    // its cache (docs/cache.md), else the files (a live cluster's pages).
    if (!args_.Has("cluster")) {
      for (const std::shared_ptr<const Source>& page : snapshot_sources_) snapshot_files_.push_back({page->Name(), page});
    }
    tooling::SnapshotObjects objects;
    std::vector<std::shared_ptr<const Source>> read;
    if (!tooling::LoadSnapshotObjects(snapshot_files_, tooling::CacheFromFlags(args_.Has("no-cache")), objects, diags_, read)) {
      return Refuse();
    }
    if (auto it = objects.bound.find(key); it != objects.bound.end()) {
      k8s::Pod pod = it->second;
      bound_note_ = fmt::format("{} is bound to {}: answered as if it were Pending now, with it taken off {}", key,
                                pod.node_name, pod.node_name);
      cluster_->UnbindPod(pod.namespace_name, pod.name);
      pod.node_name.clear();
      snapshot_sources_.insert(snapshot_sources_.end(), read.begin(), read.end());  // the pod's spans point into them
      pods_.push_back(std::move(pod));
      return true;
    }
    std::vector<std::string> names;
    for (const k8s::Pod& p : cluster_->Report().pending) names.push_back(p.namespace_name + "/" + p.name);
    for (const auto& [k, p] : objects.bound) names.push_back(k);
    std::vector<std::string_view> views(names.begin(), names.end());
    std::string_view close = Closest(key, views);
    fmt::print(stderr, "policyc check: `{}` is no file, and {} has no pod `{}`{}\n", name, where_, key,
               close.empty() ? std::string() : fmt::format("; did you mean `{}`?", close));
    return false;
  }

  // The scheduler the profile is chosen for: the pod's (the first pod's
  // with --all-pending; the others get a note when theirs differs).
  std::string SchedulerName() const { return pods_.empty() ? "default-scheduler" : pods_.front().scheduler_name; }

  bool ChooseProfile() {
    std::optional<rt::Profile> profile = ProfileFromFlags("check", args_, SchedulerName(), diags_);
    if (!profile) return diags_.HasErrors() ? Refuse() : false;
    profile_ = std::move(*profile);
    return true;
  }

  bool EngineFromFlags() {
    std::optional<engine::EngineOptions> options = EngineOptionsFromFlags("check", args_);
    if (!options) return false;
    options_ = std::move(*options);
    return true;
  }

  bool BuildEngine() {
    engine_ = cli::EngineFromFlags(args_, profile_, options_, diags_);
    return engine_ ? true : Refuse();
  }

  bool NodesExist() {
    std::optional<std::string> unknown =
        tooling::UnknownNode(cluster_->Table(), args_.GetAll("node"), {where_});
    if (unknown) fmt::print(stderr, "policyc check: {}\n", *unknown);
    return !unknown;
  }

  const Args& args_;
  DiagnosticSink diags_;
  std::string bound_note_;  // --pod named a bound pod
  std::string where_;       // the snapshot's files, or the live cluster, for messages
  std::vector<std::shared_ptr<const Source>> snapshot_sources_;  // the live cluster's pages; a bound pod's files
  std::vector<rt::SnapshotFile> snapshot_files_;                 // --cluster's files
  std::unique_ptr<engine::Cluster> cluster_;
  std::shared_ptr<Source> pod_source_;  // the pod's spans point into it
  std::vector<k8s::Pod> pods_;          // the pod, a manifest's pods, or every Pending pod (--all-pending)
  rt::Profile profile_;
  tooling::OutputFormat format_ = tooling::OutputFormat::kText;
  engine::EngineOptions options_;
  std::unique_ptr<engine::Engine> engine_;
};

}  // namespace

namespace {

int Run(const Args& args) {
  bool live_flags = args.Has("kubeconfig") || args.Has("context") || args.Has("in-cluster");
  if (!args.Has("cluster") && !args.Has("pod") && !args.Has("all-pending") && !live_flags) {
    std::vector<std::string> files = args.Positional();
    for (const std::string& f : args.GetAll("policy")) files.push_back(f);
    if (files.empty()) {
      fmt::print(stderr, "policyc check: give --pod (or --all-pending), or policy files to lint\nRun `policyc check --help` for usage.\n");
      return kExitBadInput;
    }
    return Lint(files);
  }
  if (!args.Positional().empty()) {
    fmt::print(stderr, "policyc check: unexpected argument `{}` beside --cluster and --pod (policies go with --policy)\nRun `policyc check --help` for usage.\n",
               args.Positional().front());
    return kExitBadInput;
  }
  if (args.Has("all-pending") && args.Has("pod")) {
    fmt::print(stderr, "policyc check: give `--pod` or `--all-pending`, not both\nRun `policyc check --help` for usage.\n");
    return kExitBadInput;
  }
  if (!(args.Has("pod") || args.Has("all-pending"))) {
    fmt::print(stderr, "policyc check: `--pod` is missing: give the pod to place (or --all-pending)\nRun `policyc check --help` for usage.\n");
    return kExitBadInput;
  }
  if (args.Has("cluster") && live_flags) {
    fmt::print(stderr, "policyc check: give the cluster one way: --cluster SNAPSHOT, or the live cluster (--kubeconfig, "
                       "--context, --in-cluster)\nRun `policyc check --help` for usage.\n");
    return kExitBadInput;
  }
  if (args.Has("in-cluster") && (args.Has("kubeconfig") || args.Has("context"))) {
    fmt::print(stderr, "policyc check: --in-cluster takes no kubeconfig or context\nRun `policyc check --help` for usage.\n");
    return kExitBadInput;
  }
  return CheckRun(args).Run();
}

}  // namespace

Command CheckCommand() {
  return {"check", "place a pod on a cluster snapshot and explain, or lint policy files",
          std::string(kSynopsis) + EngineSynopsis(21) + kUsage + "\n" + EngineHelp({}),
          WithEngineFlags({{"cluster", true, true}, {"pod"}, {"output", true, false, 'o'}, {"node", true, true}, {"all-nodes", false}, {"all-pending", false}, {"suggest", false}, {"no-suggest", false}, {"no-cache", false}, {"validate"},
                           {"namespace", true, false, 'n'}, {"kubeconfig"}, {"context"}, {"in-cluster", false}}),
          &Run};
}

}  // namespace policy::cli
