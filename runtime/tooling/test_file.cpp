// One `policyc test` file (test_file.h): read with the project's own YAML
// reader, so every problem points into the test file; each case is placed
// as `check` places it and compared with what it expects.

#include "runtime/tooling/test_file.h"

#include "runtime/tooling/profile_choice.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "runtime/tooling/profile_choice.h"
#include "runtime/tooling/snapshot_objects.h"
#include "runtime/tooling/input.h"
#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "k8s/pod_reader.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/host/placement_json.h"
#include "runtime/engine/policy_rules.h"
#include "runtime/sched/profile.h"
#include "support/suggest.h"

namespace policy::tooling {
namespace {

namespace fs = std::filesystem;

std::string List(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return fmt::format("[{}]", fmt::join(names, ", "));
}

std::optional<int64_t> Int(k8s::NodeRef n) {
  if (!n.IsScalar()) return std::nullopt;
  int64_t v = 0;
  std::string_view t = n.Text();
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

// The keys of each part of a test file (docs/testing.md).
const std::vector<std::string_view> kFileKeys = {"name",     "source",  "snapshot", "cluster", "policies", "plugins",
                                                 "profile",  "cases",   "pod",      "podFile", "expect"};
const std::vector<std::string_view> kCaseKeys = {"name",    "source", "snapshot", "cluster", "policies",
                                                 "plugins", "profile", "pod",     "podFile", "expect"};
const std::vector<std::string_view> kExpectKeys = {"feasible", "infeasible", "rejected",    "scores", "score",
                                                   "selected", "summary",    "schedulable", "exit"};

// Each key of the mapping `map` that is not one of `known`, said with its
// place: "FILE:LINE:COL: unknown key `feasable` in `expect`; did you mean
// `feasible`?"
std::vector<std::string> UnknownKeys(k8s::NodeRef map, const std::vector<std::string_view>& known, std::string_view in) {
  std::vector<std::string> out;
  for (uint32_t i = 0; map.IsMapping() && i < map.Size(); ++i) {
    k8s::NodeRef key = map.KeyAt(i);
    std::string_view name = key.Text();
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string where;
    if (Span span = key.GetSpan(); span.Valid()) {
      LineCol at = span.source->Locate(span.begin);
      where = fmt::format("{}:{}:{}: ", span.source->Name(), at.line, at.column);
    }
    std::string_view close = Closest(name, known);
    out.push_back(fmt::format("{}unknown key `{}` in {}{}", where, name, in,
                              close.empty() ? fmt::format(" (the keys: {})", fmt::join(known, ", "))
                                            : fmt::format("; did you mean `{}`?", close)));
  }
  return out;
}

// A list of strings: a sequence, or one comma-separated string.
std::vector<std::string> Strings(k8s::NodeRef n) {
  std::vector<std::string> out;
  if (n.IsSequence()) {
    for (uint32_t i = 0; i < n.Size(); ++i) out.emplace_back(n.At(i).Text());
  } else if (n.IsScalar() && !n.IsNull()) {
    std::string_view text = n.Text();
    for (size_t start = 0; start <= text.size();) {
      size_t comma = std::min(text.find(',', start), text.size());
      if (comma > start) out.emplace_back(text.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return out;
}

// The engines made so far, by what they are made of: cases share them.
std::map<std::string, std::unique_ptr<engine::Engine>>& Engines() {
  static std::map<std::string, std::unique_ptr<engine::Engine>> engines;
  return engines;
}

class Runner final : public k8s::ObjectVisitor {
 public:
  Runner(const std::string& path, const TestOptions& options, std::map<std::string, RuleCoverage>& coverage,
         TestFileResult& out)
      : path_(path), dir_(fs::path(path).parent_path()), options_(options), coverage_(coverage), out_(out) {}

  void Visit(k8s::NodeRef doc, std::string_view) override {
    if (++documents_ > 1) {
      out_.error = "a test file holds one YAML document";
      return;
    }
    if (!doc.IsMapping()) {
      out_.error = fmt::format("a test file is a mapping, not {}", doc.Describe());
      return;
    }
    k8s::NodeRef cases = doc.Get("cases");
    std::vector<std::string> unknown = UnknownKeys(doc, kFileKeys, "a test file");
    if (!cases.Valid() && !doc.Get("expect").Valid()) {
      out_.not_a_test = true;
      out_.not_a_test_why = "it has neither `cases` nor `expect`";
      for (const std::string& u : unknown) out_.not_a_test_why += "\n  " + u;
      return;
    }
    if (!unknown.empty()) {
      out_.error = fmt::format("{}", fmt::join(unknown, "\n"));
      return;
    }
    if (!cases.Valid()) {
      out_.cases.push_back(Run(doc, doc, 0));
      return;
    }
    if (!cases.IsSequence()) {
      out_.error = fmt::format("`cases` is a list of cases, not {}", cases.Describe());
      return;
    }
    for (uint32_t i = 0; i < cases.Size(); ++i) out_.cases.push_back(Run(doc, cases.At(i), i));
  }

 private:
  // A field of the case, or of the file's shared part.
  static k8s::NodeRef Field(k8s::NodeRef file, k8s::NodeRef c, std::string_view key) {
    k8s::NodeRef own = c.Get(key);
    return own.Valid() ? own : file.Get(key);
  }

  std::string Resolve(std::string_view path) const {
    fs::path p(path);
    return p.is_absolute() ? p.string() : (dir_ / p).lexically_normal().string();
  }

  // A file the test names (a snapshot, pod, profile or policy): regular
  // files only, so a test cannot make the run read a device or a pipe.
  std::shared_ptr<Source> ReadNamed(const std::string& path, k8s::NodeRef at, DiagnosticSink& diags) const {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      diags.Error(DiagCode::kIoError, at.GetSpan(), fmt::format("`{}` is not a file", path), "named here");
      return nullptr;
    }
    return ReadInput(path, diags);
  }

  std::optional<std::string> PolicyPath(const std::string& name) const {
    std::error_code ec;
    if (fs::exists(Resolve(name), ec)) return Resolve(name);
    for (const std::string& d : options_.policy_dirs) {
      fs::path p = fs::path(d) / name;
      if (fs::exists(p, ec)) return p.string();
    }
    return std::nullopt;
  }

  // The first error's message, for a one-line difference.
  static std::string FirstError(const DiagnosticSink& diags) {
    for (const Diagnostic& d : diags.Sorted()) {
      if (d.severity != Severity::kError) continue;
      std::string where;
      if (d.primary.span.Valid()) {
        LineCol at = d.primary.span.source->Locate(d.primary.span.begin);
        where = fmt::format("{}:{}:{}: ", d.primary.span.source->Name(), at.line, at.column);
      }
      return fmt::format("{}[{}] {}{}", where, CodeString(d.code), d.message,
                         d.help.empty() ? "" : fmt::format(" ({})", d.help));
    }
    return "an error";
  }

  CaseResult Run(k8s::NodeRef file, k8s::NodeRef c, uint32_t index) {
    CaseResult r;
    r.name = std::string(c.Get("name").Text());
    if (r.name.empty()) r.name = file.Get("cases").Valid() ? fmt::format("case {}", index + 1) : fs::path(path_).stem().string();
    if (!c.IsMapping()) {
      r.differences.push_back(fmt::format("a case is a mapping, not {}", c.Describe()));
      return r;
    }
    if (file.Get("cases").Valid()) r.differences = UnknownKeys(c, kCaseKeys, "a case");
    k8s::NodeRef expect = c.Get("expect");
    if (!expect.IsMapping()) {
      r.differences.push_back("the case has no `expect` mapping");
      return r;
    }
    for (std::string& u : UnknownKeys(expect, kExpectKeys, "`expect`")) r.differences.push_back(std::move(u));
    bool checks = false;
    for (std::string_view key : kExpectKeys) checks = checks || expect.Get(key).Valid();
    if (!checks) {
      r.differences.push_back(fmt::format("`expect` checks nothing: give one of {}", fmt::join(kExpectKeys, ", ")));
    }
    if (!r.differences.empty()) return r;  // a case that does not say what it checks is not run
    std::optional<int64_t> exit = Int(expect.Get("exit"));
    DiagnosticSink diags;
    std::string refused;
    Inputs in = Read(file, c, diags);
    if (diags.HasErrors() || !in.cluster || !in.pod || !in.engine) refused = FirstError(diags);
    if (exit == 2) {
      if (refused.empty()) r.differences.push_back("expected the input to be refused (exit 2), but it was accepted");
      return r;
    }
    if (!refused.empty()) {
      r.differences.push_back("the input is refused: " + refused);
      return r;
    }
    Compare(in, expect, exit, r);
    return r;
  }

  struct Inputs {
    std::vector<std::shared_ptr<const Source>> sources;  // kept alive: the answers' spans point into them
    std::unique_ptr<engine::Cluster> cluster;
    std::optional<k8s::Pod> pod;
    engine::Engine* engine = nullptr;
    std::string scheduler_name = "default-scheduler";
  };

  Inputs Read(k8s::NodeRef file, k8s::NodeRef c, DiagnosticSink& diags) {
    Inputs in;
    // The cluster: snapshot files, then inline objects (or their text).
    std::vector<std::shared_ptr<const Source>> files;
    std::vector<k8s::NodeRef> objects;
    k8s::NodeRef cluster = Field(file, c, "cluster");
    if (!cluster.Valid() || cluster.IsNull()) {  // snapshot files alone: from their cache, as check loads them
      std::vector<rt::SnapshotFile> snapshot;
      for (const std::string& p : Strings(Field(file, c, "snapshot"))) {
        std::error_code ec;
        if (!fs::is_regular_file(Resolve(p), ec)) {
          diags.Error(DiagCode::kIoError, Field(file, c, "snapshot").GetSpan(), fmt::format("`{}` is not a file", Resolve(p)),
                      "named here");
          continue;
        }
        snapshot.push_back({Resolve(p), nullptr});
      }
      if (diags.HasErrors()) return in;
      in.cluster = engine::Cluster::LoadFiles(snapshot, CacheFromFlags(!options_.cache), diags);
      if (!in.cluster) return in;
      return ReadPod(file, c, std::move(in), diags);
    }
    for (const std::string& p : Strings(Field(file, c, "snapshot"))) {
      if (std::shared_ptr<Source> s = ReadNamed(Resolve(p), Field(file, c, "snapshot"), diags)) files.push_back(s);
    }
    if (cluster.IsSequence()) {
      for (uint32_t i = 0; i < cluster.Size(); ++i) objects.push_back(cluster.At(i));
    } else if (cluster.IsScalar() && !cluster.IsNull()) {
      files.push_back(std::make_shared<Source>(path_ + " (cluster)", std::string(cluster.Text())));
    }
    if (diags.HasErrors()) return in;
    in.cluster = engine::Cluster::Load(files, objects, diags);
    in.sources = files;
    if (!in.cluster) return in;
    return ReadPod(file, c, std::move(in), diags);
  }

  // The case's pod (an object, its text, or a file) into `in`, whose
  // cluster is loaded; then the engine for it.
  Inputs ReadPod(k8s::NodeRef file, k8s::NodeRef c, Inputs in, DiagnosticSink& diags) {
    k8s::NodeRef pod = c.Get("pod");
    std::shared_ptr<Source> pod_text;
    if (pod.IsMapping()) {
      in.pod = k8s::DecodePodOrTemplate(pod, "", diags);
    } else if (pod.IsScalar() && !pod.IsNull()) {
      pod_text = std::make_shared<Source>(path_ + " (pod)", std::string(pod.Text()));
    } else if (c.Get("podFile").IsScalar()) {
      pod_text = ReadNamed(Resolve(c.Get("podFile").Text()), c.Get("podFile"), diags);
    } else {
      diags.Error(DiagCode::kMissingField, c.GetSpan(), "the case has no `pod` (an object, its YAML text) or `podFile`");
    }
    if (pod_text) {
      in.sources.push_back(pod_text);
      if (std::optional<k8s::Manifest> manifest = k8s::ReadManifest(*pod_text, diags, k8s::FieldValidation::kStrict)) {
        AddManifestObjects(*manifest, *in.cluster);
        in.pod = std::move(manifest->pods.front());
      }
    }
    if (!in.pod) return in;
    in.scheduler_name = in.pod->scheduler_name;
    in.engine = EngineFor(file, c, in.pod->scheduler_name, diags);
    return in;
  }

  engine::Engine* EngineFor(k8s::NodeRef file, k8s::NodeRef c, const std::string& scheduler_name, DiagnosticSink& diags) {
    std::vector<std::string> plugins = Strings(Field(file, c, "plugins"));
    std::vector<std::string> policies;
    for (const std::string& name : Strings(Field(file, c, "policies"))) {
      std::optional<std::string> p = PolicyPath(name);
      if (!p) {
        diags.Error(DiagCode::kIoError, Field(file, c, "policies").GetSpan(),
                    fmt::format("no policy file `{}` beside the test or in --policies", name));
        return nullptr;
      }
      policies.push_back(*p);
    }
    std::string profile_path(Field(file, c, "profile").Text());
    if (!profile_path.empty()) profile_path = Resolve(profile_path);
    std::string key = fmt::format("{}|{}|{}|{}|{}|{}", fmt::join(plugins, ","), fmt::join(policies, ","), profile_path,
                                  scheduler_name, options_.coverage, options_.kube_minor);
    auto& engines = Engines();
    if (auto it = engines.find(key); it != engines.end()) return it->second.get();

    ProfileChoice choice;
    choice.kube_minor = options_.kube_minor;
    choice.scheduler_name = scheduler_name;
    choice.plugins = plugins;
    std::shared_ptr<Source> profile_source;
    if (!profile_path.empty()) {
      profile_source = ReadNamed(profile_path, Field(file, c, "profile"), diags);
      if (!profile_source) return nullptr;
      choice.profile = profile_source.get();
    }
    std::optional<ProfileProblem> problem;
    std::optional<rt::Profile> profile = ChooseProfile(choice, diags, problem);
    if (problem) {
      bool plugins_named = problem->part == ProfileProblem::Part::kPlugins;
      Diagnostic& d =
          diags.Error(DiagCode::kBadProfile, Field(file, c, plugins_named ? "plugins" : "profile").GetSpan(), problem->message);
      if (!problem->closest.empty()) d.help = fmt::format("did you mean `{}`?", problem->closest);
    }
    if (!profile) return nullptr;
    std::vector<std::shared_ptr<const Source>> sources;
    for (const std::string& p : policies) {
      std::shared_ptr<Source> s = ReadNamed(p, Field(file, c, "policies"), diags);
      if (!s) return nullptr;
      sources.push_back(s);
    }
    engine::EngineOptions options;
    if (options_.coverage) options.disabled_passes = {"all"};  // every rule as written, where coverage points
    std::unique_ptr<engine::Engine> made = engine::Engine::Create(std::move(*profile), sources, options, diags);
    if (!made) return nullptr;
    return engines.emplace(key, std::move(made)).first->second.get();
  }

  // --- comparing -------------------------------------------------------------

  static std::optional<std::string> InRange(k8s::NodeRef want, int64_t got) {
    if (std::optional<int64_t> exact = Int(want)) {
      if (*exact != got) return fmt::format("expected {}, got {}", *exact, got);
      return std::nullopt;
    }
    std::optional<int64_t> lo = Int(want.Get("min")), hi = Int(want.Get("max"));
    if (!lo && !hi) return fmt::format("expected a number or {{min, max}}, found {}", want.Describe());
    if ((lo && got < *lo) || (hi && got > *hi)) {
      return fmt::format("expected {}..{}, got {}", lo ? std::to_string(*lo) : "", hi ? std::to_string(*hi) : "", got);
    }
    return std::nullopt;
  }

  void Compare(Inputs& in, k8s::NodeRef expect, std::optional<int64_t> exit, CaseResult& r) {
    engine::Engine& engine = *in.engine;
    std::unique_ptr<engine::PodPlan> plan = engine.Plan(*in.pod, *in.cluster);
    const rt::Decision& decision = engine.Decide(*plan, *in.cluster, {.plugin_scores = true});
    rt::Placement p = engine.Explain(*plan, *in.cluster, decision);
    host::PodNotes notes = host::NotesFor(plan->Pod(), engine.Profile().scheduler_name);
    if (notes.gated) p.summary = "Scheduling is blocked due to non-empty scheduling gates";
    bool fits = p.feasible > 0 && !notes.gated;
    std::map<std::string, const rt::NodeResult*> by_name;
    std::vector<std::string> feasible;
    for (const rt::NodeResult& n : p.nodes) {
      by_name[n.name] = &n;
      if (n.feasible) feasible.push_back(n.name);
    }
    auto differ = [&](std::string what) { r.differences.push_back(std::move(what)); };

    if (exit && *exit != (fits ? 0 : 1)) differ(fmt::format("exit: expected {}, got {}", *exit, fits ? 0 : 1));
    if (k8s::NodeRef s = expect.Get("schedulable"); s.IsScalar()) {
      bool want = s.Text() == "true";
      if (want != fits) differ(fmt::format("schedulable: expected {}, got {}", want, fits));
    }
    if (k8s::NodeRef f = expect.Get("feasible"); f.Valid()) {
      std::vector<std::string> want = Strings(f);
      if (List(want) != List(feasible)) differ(fmt::format("feasible: expected {}, got {}", List(want), List(feasible)));
    }
    for (const std::string& name : Strings(expect.Get("infeasible"))) {
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        differ(fmt::format("infeasible: no node `{}`", name));
      } else if (it->second->feasible) {
        differ(fmt::format("infeasible: `{}` is feasible", name));
      }
    }
    if (k8s::NodeRef rejected = expect.Get("rejected"); rejected.IsMapping()) {
      for (uint32_t i = 0; i < rejected.Size(); ++i) {
        std::string node(rejected.KeyAt(i).Text());
        k8s::NodeRef entries = rejected.ValueAt(i);
        auto it = by_name.find(node);
        if (it == by_name.end() || it->second->feasible) {
          differ(fmt::format("rejected: `{}` is {}", node, it == by_name.end() ? "not a node" : "feasible"));
          continue;
        }
        std::vector<k8s::NodeRef> wanted;
        if (entries.IsSequence()) {
          for (uint32_t j = 0; j < entries.Size(); ++j) wanted.push_back(entries.At(j));
        } else {
          wanted.push_back(entries);
        }
        for (k8s::NodeRef w : wanted) {
          std::string plugin(w.Get("plugin").Text()), reason(w.Get("reason").Text());
          bool found = std::any_of(it->second->reasons.begin(), it->second->reasons.end(), [&](const rt::NodeReason& got) {
            return (plugin.empty() || got.plugin == plugin) && (reason.empty() || got.reason == reason);
          });
          if (found) continue;
          std::vector<std::string> got;
          for (const rt::NodeReason& g : it->second->reasons) got.push_back(fmt::format("{} \"{}\"", g.plugin, g.reason));
          differ(fmt::format("rejected: `{}` lacks {} \"{}\"; its reasons: {}", node, plugin, reason, fmt::join(got, ", ")));
        }
      }
    }
    if (k8s::NodeRef scores = expect.Get("scores"); scores.IsMapping()) {
      for (uint32_t i = 0; i < scores.Size(); ++i) {
        std::string plugin(scores.KeyAt(i).Text());
        k8s::NodeRef nodes = scores.ValueAt(i);
        for (uint32_t j = 0; nodes.IsMapping() && j < nodes.Size(); ++j) {
          std::string node(nodes.KeyAt(j).Text());
          auto it = by_name.find(node);
          if (it == by_name.end() || !it->second->feasible) {
            differ(fmt::format("scores: `{}` is {}", node, it == by_name.end() ? "not a node" : "not feasible"));
            continue;
          }
          int64_t got = 0;  // a plugin that does not score this pod counts 0
          for (const auto& [name, value] : it->second->scores) {
            if (name == plugin) got = value;
          }
          if (std::optional<std::string> d = InRange(nodes.ValueAt(j), got)) differ(fmt::format("scores {} on {}: {}", plugin, node, *d));
        }
      }
    }
    if (k8s::NodeRef totals = expect.Get("score"); totals.IsMapping()) {
      for (uint32_t j = 0; j < totals.Size(); ++j) {
        std::string node(totals.KeyAt(j).Text());
        auto it = by_name.find(node);
        if (it == by_name.end() || !it->second->feasible) {
          differ(fmt::format("score: `{}` is {}", node, it == by_name.end() ? "not a node" : "not feasible"));
          continue;
        }
        if (std::optional<std::string> d = InRange(totals.ValueAt(j), it->second->score)) differ(fmt::format("score on {}: {}", node, *d));
      }
    }
    if (k8s::NodeRef s = expect.Get("selected"); s.Valid()) {
      std::string got = p.selected && !notes.gated ? p.nodes[*p.selected].name : "null";
      std::string want = s.IsNull() ? "null" : std::string(s.Text());
      if (want != got) differ(fmt::format("selected: expected {}, got {}", want, got));
    }
    if (k8s::NodeRef s = expect.Get("summary"); s.IsScalar() && s.Text() != p.summary) {
      differ(fmt::format("summary:\n      expected: {}\n      got:      {}", s.Text(), p.summary));
    }
    if (options_.coverage) Cover(engine, *plan, *in.cluster, decision);
  }

  // Every rule of every policy (not the profile's plugins) on every node.
  void Cover(const engine::Engine& engine, const engine::PodPlan& plan, const engine::Cluster& cluster,
             const rt::Decision& decision) {
    for (const engine::PolicyRules& rules : engine::EvaluatePolicyRules(engine, plan, cluster)) {
      auto entry = [&](Span span, bool score) -> RuleCoverage& {
        LineCol at = span.Valid() ? span.source->Locate(span.begin) : LineCol{};
        std::string where = span.Valid() ? fmt::format("{}:{}:{}", span.source->Name(), at.line, at.column) : rules.plugin;
        RuleCoverage& c = coverage_[where];
        c.where = where;
        c.policy = rules.plugin;
        c.score = score;
        ++c.cases;
        return c;
      };
      for (size_t i = 0; i < rules.filters.size(); ++i) {
        RuleCoverage& c = entry(rules.filters[i], false);
        c.rejected += rules.rejected[i];
        c.passed += rules.passed[i];
      }
      for (const Span& s : rules.scores) entry(s, true).passed += decision.feasible.size();
    }
  }

  std::string path_;
  fs::path dir_;
  const TestOptions& options_;
  std::map<std::string, RuleCoverage>& coverage_;
  TestFileResult& out_;
  int documents_ = 0;
};

}  // namespace

TestFileResult RunTestFile(const std::string& path, const TestOptions& options,
                           std::map<std::string, RuleCoverage>& coverage) {
  TestFileResult out;
  if (Engines().size() > 16) Engines().clear();  // a bound on what many distinct files keep compiled
  DiagnosticSink diags;
  std::shared_ptr<Source> source = ReadInput(path, diags);
  if (!source) {
    out.error = RenderAll(diags);
    return out;
  }
  Runner runner(path, options, coverage, out);
  if (!k8s::ReadObjects(*source, runner, diags)) out.error = RenderAll(diags);
  return out;
}

}  // namespace policy::tooling
