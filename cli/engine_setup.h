#pragma once
/// What `check` and `schedule` share: a manifest's objects joining the
/// cluster, and the scheduler profile, engine options and engine their flags ask for (--profile, --plugins, --policy,
/// --disable-pass, --engine, --jit-opt, --verify-jit). Each step returns
/// nothing after printing why (the command then exits 2).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "k8s/pod_reader.h"
#include "support/diagnostic.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/profile.h"

namespace policy::cli {


/// --kubernetes-version 1.MINOR (or v1.MINOR): whose semantics to follow;
/// the newest known when absent; nullopt after a message.
std::optional<int> KubeMinorFromFlags(std::string_view command, const Args& args);
/// The default profile or --profile's (the one for `scheduler_name`),
/// restricted by --plugins.
std::optional<rt::Profile> ProfileFromFlags(std::string_view command, const Args& args, const std::string& scheduler_name,
                                            DiagnosticSink& diags);
/// --validate (strict, the default, as kubectl's; warn; ignore): what an
/// unknown field of the pods a person gives is; nullopt after a message.
std::optional<k8s::FieldValidation> ValidationFromFlags(std::string_view command, const Args& args);
/// The engine flags' defaults, which differ by command: a queue has many
/// pods of few templates (compiling beside deciding pays), and decides
/// incrementally on few rows (kernels that arrive sooner pay more than
/// faster ones: bench_schedule measures O0 against O2).
struct EngineDefaults {
  std::string_view engine = "auto";
  int jit_opt = 2;
};
/// The flags of the profile and the engine, declared once for every command
/// that decides: `specs` then --profile, --kubernetes-version, --plugins,
/// --policy, --disable-pass, --engine, --jit-opt, --verify-jit.
std::vector<FlagSpec> WithEngineFlags(std::vector<FlagSpec> specs);
/// Their synopsis for a usage text: two lines, the second indented by
/// `indent` spaces.
std::string EngineSynopsis(size_t indent);
/// Their help paragraph, with the command's defaults.
std::string EngineHelp(const EngineDefaults& defaults);
/// --disable-pass, --engine, --jit-opt, --verify-jit.
std::optional<engine::EngineOptions> EngineOptionsFromFlags(std::string_view command, const Args& args,
                                                            const EngineDefaults& defaults = {});
/// The profile's built-ins and every --policy, compiled; null after
/// diagnostics in `diags` (printed by the caller).
std::unique_ptr<engine::Engine> EngineFromFlags(const Args& args, const rt::Profile& profile,
                                                const engine::EngineOptions& options, DiagnosticSink& diags);

}  // namespace policy::cli
