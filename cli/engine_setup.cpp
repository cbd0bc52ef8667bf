#include "cli/engine_setup.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "runtime/tooling/input.h"
#include "runtime/tooling/profile_choice.h"
#include "runtime/tooling/policy_compile.h"
#include "support/suggest.h"

namespace policy::cli {

std::optional<int> KubeMinorFromFlags(std::string_view command, const Args& args) {
  if (!args.Has("kubernetes-version")) return rt::kDefaultKubeMinor;
  std::string v = args.Get("kubernetes-version");
  if (std::optional<int> minor = tooling::ParseKubeMinor(v)) return minor;
  fmt::print(stderr, "policyc {}: `--kubernetes-version` must be one of {}, not `{}`\n", command,
             tooling::KnownKubeVersions(), v);
  return std::nullopt;
}

std::optional<rt::Profile> ProfileFromFlags(std::string_view command, const Args& args, const std::string& scheduler_name,
                                            DiagnosticSink& diags) {
  std::optional<int> minor = KubeMinorFromFlags(command, args);
  if (!minor) return std::nullopt;
  tooling::ProfileChoice choice;
  choice.kube_minor = *minor;
  choice.scheduler_name = scheduler_name;
  std::shared_ptr<Source> source;
  if (args.Has("profile")) {
    source = tooling::ReadInput(args.Get("profile"), diags);
    if (!source) return std::nullopt;
    choice.profile = source.get();
  }
  std::string list = args.Get("plugins");
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (!name.empty()) choice.plugins.push_back(name);
  }
  std::optional<tooling::ProfileProblem> problem;
  std::optional<rt::Profile> profile = tooling::ChooseProfile(choice, diags, problem);
  if (problem) {
    bool plugins = problem->part == tooling::ProfileProblem::Part::kPlugins;
    fmt::print(stderr, "policyc {}: {}{}{}\n", command, problem->message, plugins ? " in --plugins" : "",
               problem->closest.empty() ? "" : fmt::format("; did you mean `{}`?", problem->closest));
  }
  return profile;
}

std::optional<k8s::FieldValidation> ValidationFromFlags(std::string_view command, const Args& args) {
  std::string value = args.Get("validate", "strict");
  std::optional<k8s::FieldValidation> validation = k8s::ParseFieldValidation(value);
  if (!validation) {
    fmt::print(stderr, "policyc {}: `--validate` must be `strict`, `warn` or `ignore`, not `{}`\n", command, value);
  }
  return validation;
}

std::vector<FlagSpec> WithEngineFlags(std::vector<FlagSpec> specs) {
  for (FlagSpec f : std::initializer_list<FlagSpec>{{"profile"}, {"kubernetes-version"}, {"plugins"}, {"policy", true, true},
                                                    {"disable-pass", true, true}, {"engine"}, {"jit-opt"},
                                                    {"verify-jit", false}}) {
    specs.push_back(std::move(f));
  }
  return specs;
}

std::string EngineSynopsis(size_t indent) {
  return fmt::format("[--profile PROFILE.yaml] [--kubernetes-version {}] [--plugins P1,P2,...] [--policy FILE.policy ...]\n"
                     "{:{}}[--engine interp|jit|auto|tiered] [--jit-opt 0..3] [--disable-pass NAME|all ...] [--verify-jit]",
                     "1.34|1.31", "", indent);
}

std::string EngineHelp(const EngineDefaults& defaults) {
  return fmt::format(R"(The profile: kube-scheduler's default plugins as release --kubernetes-version
(1.34 unless 1.31) has them, or --profile's (a KubeSchedulerConfiguration:
the profile for the pod's schedulerName, or its only one), only those
--plugins names (comma-separated), and every --policy (DSL or YAML form).
--engine: `interp` evaluates every plugin in the reference interpreter; `jit`
compiles each plugin the LLVM back end supports into native kernels (the rest,
and every message, stay with the interpreter); `auto` compiles only for
clusters of at least 250,000 nodes (compiling a profile takes about 150 ms,
interpreting it about 0.65 us per node); `tiered` interprets while the kernels
compile on another thread. Here the default is `{}`. --jit-opt sets LLVM's
optimization level (default {} here; 0 compiles in a third of the time).
--disable-pass leaves an optimisation pass out (`all`: every one).
--verify-jit also runs the interpreter everywhere and aborts on any
difference (testing).
)",
                     defaults.engine, defaults.jit_opt);
}

std::optional<engine::EngineOptions> EngineOptionsFromFlags(std::string_view command, const Args& args,
                                                            const EngineDefaults& defaults) {
  engine::EngineOptions options;
  for (const std::string& name : args.GetAll("disable-pass")) options.disabled_passes.insert(name);
  if (std::optional<std::string> unknown = tooling::UnknownPass(options.disabled_passes)) {
    fmt::print(stderr, "policyc {}: {}\n", command, *unknown);
    return std::nullopt;
  }
  std::string backend = args.Get("engine", std::string(defaults.engine));
  if (backend != "interp" && backend != "jit" && backend != "auto" && backend != "tiered") {
    fmt::print(stderr, "policyc {}: `--engine` must be `interp`, `jit`, `auto` or `tiered`, not `{}`\n", command, backend);
    return std::nullopt;
  }
  options.backend = backend == "interp"   ? engine::Backend::kInterp
                    : backend == "jit"    ? engine::Backend::kJit
                    : backend == "tiered" ? engine::Backend::kTiered
                                          : engine::Backend::kAuto;
  std::string error;
  std::optional<int64_t> level = args.GetInt("jit-opt", defaults.jit_opt, 0, 3, &error);
  if (!level) {
    fmt::print(stderr, "policyc {}: {}\n", command, error);
    return std::nullopt;
  }
  options.jit_opt_level = static_cast<int>(*level);
  options.verify_kernels = args.Has("verify-jit");
  options.verify_incremental = args.Has("verify-incremental");
  return options;
}

std::unique_ptr<engine::Engine> EngineFromFlags(const Args& args, const rt::Profile& profile,
                                                const engine::EngineOptions& options, DiagnosticSink& diags) {
  std::vector<std::shared_ptr<const Source>> policies;
  for (const std::string& path : args.GetAll("policy")) {
    std::shared_ptr<Source> source = tooling::ReadInput(path, diags);
    if (!source) return nullptr;
    policies.push_back(std::move(source));
  }
  return engine::Engine::Create(profile, std::move(policies), options, diags);
}

}  // namespace policy::cli
