#include "cli/engine_setup.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "runtime/tooling/input.h"
#include "runtime/tooling/policy_compile.h"
#include "support/suggest.h"

namespace policy::cli {

std::optional<int> KubeMinorFromFlags(std::string_view command, const Args& args) {
  if (!args.Has("kubernetes-version")) return rt::kDefaultKubeMinor;
  std::string v = args.Get("kubernetes-version");
  for (int m : rt::kKnownKubeMinors) {
    if (v == fmt::format("1.{}", m) || v == fmt::format("v1.{}", m)) return m;
  }
  std::vector<std::string> names;
  for (int m : rt::kKnownKubeMinors) names.push_back(fmt::format("1.{}", m));
  fmt::print(stderr, "policyc {}: `--kubernetes-version` must be one of {}, not `{}`\n", command, fmt::join(names, ", "),
             v);
  return std::nullopt;
}

std::optional<rt::Profile> ProfileFromFlags(std::string_view command, const Args& args, const std::string& scheduler_name,
                                            DiagnosticSink& diags) {
  std::optional<int> known = KubeMinorFromFlags(command, args);
  if (!known) return std::nullopt;
  int minor = *known;
  rt::Profile profile = rt::DefaultProfile(minor);
  if (args.Has("profile")) {
    std::shared_ptr<Source> source = tooling::ReadInput(args.Get("profile"), diags);
    if (!source) return std::nullopt;
    std::optional<std::vector<rt::Profile>> profiles = rt::ReadProfiles(*source, diags, minor);
    if (!profiles) return std::nullopt;
    const rt::Profile* chosen = profiles->size() == 1 ? &profiles->front() : nullptr;
    for (const rt::Profile& p : *profiles) {
      if (p.scheduler_name == scheduler_name) chosen = &p;
    }
    if (chosen == nullptr) {
      fmt::print(stderr, "policyc {}: no profile in {} is for schedulerName `{}`\n", command, args.Get("profile"),
                 scheduler_name);
      return std::nullopt;
    }
    profile = *chosen;
  }
  if (!args.Has("plugins")) return profile;
  std::vector<std::string> only;
  std::string list = args.Get("plugins");
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (!name.empty()) only.push_back(name);
  }
  std::string unknown;
  std::optional<rt::Profile> restricted = rt::RestrictProfile(std::move(profile), only, &unknown);
  if (!restricted) {
    std::vector<std::string_view> names;
    for (const rt::InTreePlugin& p : rt::InTreePlugins()) names.push_back(p.name);
    std::string_view close = Closest(unknown, names);
    fmt::print(stderr, "policyc {}: unknown plugin `{}` in --plugins{}\n", command, unknown,
               close.empty() ? "" : fmt::format("; did you mean `{}`?", close));
  }
  return restricted;
}

std::optional<k8s::FieldValidation> ValidationFromFlags(std::string_view command, const Args& args) {
  std::string value = args.Get("validate", "strict");
  std::optional<k8s::FieldValidation> validation = k8s::ParseFieldValidation(value);
  if (!validation) {
    fmt::print(stderr, "policyc {}: `--validate` must be `strict`, `warn` or `ignore`, not `{}`\n", command, value);
  }
  return validation;
}

std::optional<engine::EngineOptions> EngineOptionsFromFlags(std::string_view command, const Args& args) {
  engine::EngineOptions options;
  for (const std::string& name : args.GetAll("disable-pass")) options.disabled_passes.insert(name);
  if (std::optional<std::string> unknown = tooling::UnknownPass(options.disabled_passes)) {
    fmt::print(stderr, "policyc {}: {}\n", command, *unknown);
    return std::nullopt;
  }
  // A queue has many pods of few templates: compiling beside deciding pays.
  std::string backend = args.Get("engine", command == "schedule" ? "tiered" : "auto");
  if (backend != "interp" && backend != "jit" && backend != "auto" && backend != "tiered") {
    fmt::print(stderr, "policyc {}: `--engine` must be `interp`, `jit`, `auto` or `tiered`, not `{}`\n", command, backend);
    return std::nullopt;
  }
  options.backend = backend == "interp"   ? engine::Backend::kInterp
                    : backend == "jit"    ? engine::Backend::kJit
                    : backend == "tiered" ? engine::Backend::kTiered
                                          : engine::Backend::kAuto;
  std::string error;
  // A queue decides incrementally, on few rows a pod: kernels that arrive
  // sooner pay more than faster ones (bench_schedule measures O0 against O2).
  std::optional<int64_t> level = args.GetInt("jit-opt", command == "schedule" ? 0 : 2, 0, 3, &error);
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
