#pragma once
/// The profile a decision is made with, resolved one way for every command
/// (cli/engine_setup's flags) and for `policyc test` (a test file's
/// `profile:` and `plugins:`): kube-scheduler's default profile of the
/// release followed, or a KubeSchedulerConfiguration's profile for the
/// pod's scheduler, restricted to the plugins named.

#include <optional>
#include <string>
#include <vector>

#include "runtime/sched/profile.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace policy::tooling {

struct ProfileChoice {
  int kube_minor = rt::kDefaultKubeMinor;  ///< whose semantics (1.MINOR)
  const Source* profile = nullptr;         ///< a KubeSchedulerConfiguration, or none: the default profile
  std::string scheduler_name = "default-scheduler";
  std::vector<std::string> plugins;        ///< only these of the profile's; empty: all
};

/// What kept a choice from a profile, for the caller to say where.
struct ProfileProblem {
  enum class Part { kProfile, kPlugins } part;
  std::string message;  ///< `no profile in FILE is for schedulerName `X``, `unknown plugin `X``
  std::string closest;  ///< the known plugin nearest an unknown one, or empty
};

/// The profile `choice` asks for; nullopt with `problem` set (or with the
/// configuration's own diagnostics in `diags`, `problem` then unset).
std::optional<rt::Profile> ChooseProfile(const ProfileChoice& choice, DiagnosticSink& diags,
                                         std::optional<ProfileProblem>& problem);

/// The release `--kubernetes-version` (or a test's) names: `1.MINOR` or
/// `v1.MINOR` of a known minor; nullopt otherwise.
std::optional<int> ParseKubeMinor(const std::string& version);
/// The known releases, as they are written (`1.31, 1.34`).
std::string KnownKubeVersions();

}  // namespace policy::tooling
