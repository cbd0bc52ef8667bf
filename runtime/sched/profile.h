#pragma once
/// Scheduling profiles: which built-in plugins run, with which weights and
/// plugin args, modelled on KubeSchedulerConfiguration profiles.
///
///   apiVersion: kubescheduler.config.k8s.io/v1
///   kind: KubeSchedulerConfiguration
///   profiles:
///   - schedulerName: default-scheduler
///     plugins:
///       multiPoint: {enabled: [{name: X, weight: N}], disabled: [{name: X} | {name: "*"}]}
///       filter: {...}   score: {...}
///     pluginConfig:
///     - name: NodeResourcesFit
///       args: {scoringStrategy: {type: LeastAllocated | MostAllocated | RequestedToCapacityRatio,
///                                resources: [{name: R, weight: W}],
///                                requestedToCapacityRatio: {shape: [{utilization: U, score: S}, ...]}},
///              ignoredResources: [...], ignoredResourceGroups: [...]}
///     - name: NodeResourcesBalancedAllocation   args: {resources: [{name: R}]}   (at most two)
///     - name: InterPodAffinity   args: {hardPodAffinityWeight: N, ignorePreferredTermsOfExistingPods: B}
///     - name: PodTopologySpread  args: {defaultingType: System | List, defaultConstraints: [...]}
/// Args of other plugins are refused (exit 2), never ignored.

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/objects.h"
#include "compiler/lower/lower.h"
#include "support/diagnostic.h"

namespace policy::k8s {
class NodeRef;
}

namespace policy::rt {

struct Profile;

/// The edit of the pod that can lift a plugin's rejection, as `check`'s
/// suggestions make them (engine/suggest.cpp, docs/suggestions.md).
enum class PodRemedy : uint8_t {
  kNone,
  kTolerate,       ///< tolerate the node's taints
  kLowerRequests,  ///< ask for less of a resource the node is short of
  kNodeAffinity,   ///< drop or widen node selector and required node affinity terms
  kSpread,         ///< relax topology spread constraints
  kPodAffinity,    ///< drop required pod (anti-)affinity terms
  kHostPorts,      ///< drop host ports
  kDropNodeName,   ///< drop spec.nodeName
  kClaims,         ///< ask less of the pod's ResourceClaims
};

/// A set of remedies (bit `1 << remedy`).
using PodRemedies = uint32_t;
constexpr PodRemedies RemedySet(std::initializer_list<PodRemedy> remedies) {
  PodRemedies set = 0;
  for (PodRemedy r : remedies) {
    if (r != PodRemedy::kNone) set |= PodRemedies{1} << static_cast<unsigned>(r);
  }
  return set;
}

/// What a plugin does when no node passes its filters (kube-scheduler's
/// PostFilter extension point), in the scheduling core.
enum class PostFilter : uint8_t {
  kNone,
  kPreemption,        ///< evict pods of lower priority (DefaultPreemption; Profile::preemption)
  kDeallocateClaims,  ///< deallocate a claim whose allocation reaches no node (engine/scheduler.cpp)
};

/// Reads a plugin's `pluginConfig` args into `profile` (params of its
/// stdlib policies, its score file); errors go to `diags`. `plugin` is the
/// row read for.
struct InTreePlugin;
using ArgsReader = void (*)(const InTreePlugin& plugin, k8s::NodeRef args, Profile& profile, DiagnosticSink& diags);

/// A kube-scheduler plugin and where policyc's implementation lives: the
/// one place C++ knows a plugin (its row in InTreePlugins(), profile.cpp).
/// Nothing outside the row compares a plugin's name (scripts/check_layers.py).
struct InTreePlugin {
  std::string_view name;
  std::string_view filter_file = "";  ///< stdlib source of its filters; empty: none
  std::string_view score_file = "";   ///< stdlib source of its score; empty: none
  int64_t default_weight = 0;
  bool implemented = true;  ///< false: known to kube-scheduler, not yet to policyc
  /// The edit `check` suggests when it rejects a node.
  PodRemedy remedy = PodRemedy::kNone;
  /// Other edits that may make it pass: parts of the pod it reads beside
  /// its own (PodTopologySpread's inclusion policies read the node
  /// affinity and the tolerations). A suggestion decides again only the
  /// nodes every failing plugin of which an edit may relieve.
  PodRemedies also_relieved_by = 0;
  /// Its answer is the node's own, whatever runs there: a node like a
  /// rejected one rejects the pod too (suggestions add no such node).
  bool node_only = false;
  /// kLowerRequests: a reason naming a resource the node is short of is
  /// this text and the resource's name.
  std::string_view shortage_prefix = "";
  /// The Kubernetes minor version whose default profile first has it.
  int since = 0;
  /// Reads its pluginConfig args; null: args are refused (exit 2), never ignored.
  ArgsReader read_args = nullptr;
  PostFilter post_filter = PostFilter::kNone;
  /// While it runs, a pod without spread constraints gets the profile's
  /// default ones (kube-scheduler's system defaults, or the args' list).
  bool default_spread = false;

  /// The edits that may make it pass: its remedy and also_relieved_by.
  PodRemedies Relief() const { return RemedySet({remedy}) | also_relieved_by; }
  /// Whether an edit of `r` may make it pass.
  bool RelievedBy(PodRemedy r) const { return (Relief() & RemedySet({r})) != 0; }
};

/// The Kubernetes minor versions whose semantics policyc knows (1.31 and
/// 1.34); the default is the newest.
constexpr int kDefaultKubeMinor = 34;
constexpr int kKnownKubeMinors[] = {31, 34};

/// Every built-in, in kube-scheduler's default filter order.
const std::vector<InTreePlugin>& InTreePlugins();
const InTreePlugin* FindInTreePlugin(std::string_view name);
/// The in-tree plugins an edit of `remedy` may make pass.
std::vector<std::string_view> PluginsRelievedBy(PodRemedy remedy);
/// The plugin whose PostFilter is `post_filter`, when `profile` runs its
/// filters, or null.
const InTreePlugin* PostFilterOf(const Profile& profile, PostFilter post_filter);

struct PluginSetting {
  std::string name;
  bool filter = false;
  bool score = false;
  int64_t weight = 0;
};

struct Profile {
  std::string scheduler_name = "default-scheduler";
  int kube_minor = kDefaultKubeMinor;  ///< whose semantics it follows (1.MINOR)
  std::vector<PluginSetting> plugins;            ///< in filter order
  /// A plugin's score file where its args choose another than its row's
  /// (NodeResourcesFit's scoringStrategy), by plugin name.
  std::map<std::string, std::string, std::less<>> score_files;
  /// DefaultPreemption (PostFilter; it acts in `policyc schedule`).
  bool preemption = true;
  lower::ParamValues params;                    ///< plugin args as the stdlib policies' params
  /// PodTopologySpreadArgs: defaultingType List gives these default
  /// constraints (selectors are derived per pod); System (nullopt) gives
  /// kube-scheduler's built-in ones.
  std::optional<std::vector<k8s::TopologySpreadConstraint>> spread_defaults;
  /// The stdlib source of a plugin's score under this profile: its args'
  /// choice, else its row's.
  std::string_view ScoreFile(const InTreePlugin& plugin) const;
};

/// kube-scheduler 1.MINOR's default profile (1.34 adds DynamicResources).
Profile DefaultProfile(int minor = kDefaultKubeMinor);

/// `profile` with only the in-tree plugins named in `only` enabled
/// (`policyc check --plugins`; DefaultPreemption among them keeps
/// preemption); nullopt with the first unknown name in `unknown`.
std::optional<Profile> RestrictProfile(Profile profile, const std::vector<std::string>& only, std::string* unknown);

/// Reads the profiles of a KubeSchedulerConfiguration file; nullopt with
/// diagnostics when the file is invalid or asks for what policyc lacks.
/// Each starts from kube-scheduler 1.MINOR's default profile.
std::optional<std::vector<Profile>> ReadProfiles(const Source& source, DiagnosticSink& diags,
                                                 int minor = kDefaultKubeMinor);

}  // namespace policy::rt
