#pragma once
/// What `check` and `schedule` share: a manifest's objects joining the
/// cluster, and the scheduler profile, engine options and engine their flags ask for (--profile, --plugins, --policy,
/// --disable-pass, --engine, --jit-opt, --verify-jit). Each step returns
/// nothing after printing why (the command then exits 2).

#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
/// --disable-pass, --engine, --jit-opt, --verify-jit.
std::optional<engine::EngineOptions> EngineOptionsFromFlags(std::string_view command, const Args& args);
/// The profile's built-ins and every --policy, compiled; null after
/// diagnostics in `diags` (printed by the caller).
std::unique_ptr<engine::Engine> EngineFromFlags(const Args& args, const rt::Profile& profile,
                                                const engine::EngineOptions& options, DiagnosticSink& diags);

}  // namespace policy::cli
