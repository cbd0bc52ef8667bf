#include "runtime/tooling/profile_choice.h"

#include <fmt/format.h>

#include "support/suggest.h"

namespace policy::tooling {

std::optional<rt::Profile> ChooseProfile(const ProfileChoice& choice, DiagnosticSink& diags,
                                         std::optional<ProfileProblem>& problem) {
  rt::Profile profile = rt::DefaultProfile(choice.kube_minor);
  if (choice.profile != nullptr) {
    std::optional<std::vector<rt::Profile>> profiles = rt::ReadProfiles(*choice.profile, diags, choice.kube_minor);
    if (!profiles) return std::nullopt;
    const rt::Profile* chosen = profiles->size() == 1 ? &profiles->front() : nullptr;
    for (const rt::Profile& p : *profiles) {
      if (p.scheduler_name == choice.scheduler_name) chosen = &p;
    }
    if (chosen == nullptr) {
      problem = ProfileProblem{ProfileProblem::Part::kProfile,
                               fmt::format("no profile in {} is for schedulerName `{}`", choice.profile->Name(),
                                           choice.scheduler_name),
                               ""};
      return std::nullopt;
    }
    profile = *chosen;
  }
  if (choice.plugins.empty()) return profile;
  std::string unknown;
  std::optional<rt::Profile> restricted = rt::RestrictProfile(std::move(profile), choice.plugins, &unknown);
  if (!restricted) {
    std::vector<std::string_view> names;
    for (const rt::InTreePlugin& p : rt::InTreePlugins()) names.push_back(p.name);
    std::string_view close = Closest(unknown, names);
    problem = ProfileProblem{ProfileProblem::Part::kPlugins, fmt::format("unknown plugin `{}`", unknown), std::string(close)};
  }
  return restricted;
}

std::optional<int> ParseKubeMinor(const std::string& version) {
  for (int m : rt::kKnownKubeMinors) {
    if (version == fmt::format("1.{}", m) || version == fmt::format("v1.{}", m)) return m;
  }
  return std::nullopt;
}

std::string KnownKubeVersions() {
  std::vector<std::string> names;
  for (int m : rt::kKnownKubeMinors) names.push_back(fmt::format("1.{}", m));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace policy::tooling
