#include "runtime/sched/profile.h"

#include <algorithm>

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "runtime/sched/plugin_args.h"
#include "support/suggest.h"

namespace policy::rt {

const std::vector<InTreePlugin>& InTreePlugins() {
  // Which rejections are UnschedulableAndUnresolvable is said by the
  // filters themselves (`unresolvable` in the .policy files).
  using R = PodRemedy;
  static const std::vector<InTreePlugin> kPlugins = {
      {.name = "NodeUnschedulable", .filter_file = "stdlib/node_unschedulable.policy", .remedy = R::kTolerate},
      {.name = "NodeName", .filter_file = "stdlib/node_name.policy", .remedy = R::kDropNodeName, .node_only = true},
      {.name = "TaintToleration",
       .filter_file = "stdlib/taint_toleration.policy",
       .score_file = "stdlib/taint_toleration.policy",
       .default_weight = 3,
       .remedy = R::kTolerate},
      {.name = "NodeAffinity",
       .filter_file = "stdlib/node_affinity.policy",
       .score_file = "stdlib/node_affinity.policy",
       .default_weight = 2,
       .remedy = R::kNodeAffinity,
       .node_only = true},
      {.name = "NodePorts", .filter_file = "stdlib/node_ports.policy", .remedy = R::kHostPorts},
      {.name = "NodeResourcesFit",
       .filter_file = "stdlib/node_resources_fit.policy",
       .score_file = "stdlib/least_allocated.policy",
       .default_weight = 1,
       .remedy = R::kLowerRequests,
       .shortage_prefix = "Insufficient ",
       .read_args = FitArgs},
      {.name = "VolumeRestrictions", .filter_file = "stdlib/volume_restrictions.policy"},
      {.name = "NodeVolumeLimits", .filter_file = "stdlib/node_volume_limits.policy"},
      {.name = "VolumeBinding", .filter_file = "stdlib/volume_binding.policy", .node_only = true},
      {.name = "VolumeZone", .filter_file = "stdlib/volume_zone.policy", .node_only = true},
      // Its inclusion policies read the pod's node affinity and tolerations.
      {.name = "PodTopologySpread",
       .filter_file = "stdlib/pod_topology_spread.policy",
       .score_file = "stdlib/pod_topology_spread_score.policy",
       .default_weight = 2,
       .remedy = R::kSpread,
       .also_relieved_by = RemedySet({R::kTolerate, R::kNodeAffinity}),
       .read_args = SpreadArgs,
       .default_spread = true},
      {.name = "InterPodAffinity",
       .filter_file = "stdlib/inter_pod_affinity.policy",
       .score_file = "stdlib/inter_pod_affinity.policy",
       .default_weight = 2,
       .remedy = R::kPodAffinity,
       .read_args = InterPodArgs},
      {.name = "NodeResourcesBalancedAllocation",
       .score_file = "stdlib/balanced_allocation.policy",
       .default_weight = 1,
       .read_args = BalancedArgs},
      // Not node_only: a node added like another gets copies of its ResourceSlices, devices no claim holds.
      {.name = "DynamicResources",
       .filter_file = "stdlib/dynamic_resources.policy",
       .remedy = R::kClaims,
       .since = 34,
       .post_filter = PostFilter::kDeallocateClaims},
      {.name = "ImageLocality", .score_file = "stdlib/image_locality.policy", .default_weight = 1},
      // PostFilter only, in the scheduling core (Profile::preemption).
      {.name = "DefaultPreemption", .post_filter = PostFilter::kPreemption},
  };
  return kPlugins;
}

const InTreePlugin* FindInTreePlugin(std::string_view name) {
  for (const InTreePlugin& p : InTreePlugins()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string_view> PluginsRelievedBy(PodRemedy remedy) {
  std::vector<std::string_view> out;
  for (const InTreePlugin& p : InTreePlugins()) {
    if (p.RelievedBy(remedy)) out.push_back(p.name);
  }
  return out;
}

const InTreePlugin* PostFilterOf(const Profile& profile, PostFilter post_filter) {
  for (const PluginSetting& setting : profile.plugins) {
    const InTreePlugin* row = FindInTreePlugin(setting.name);
    if (row != nullptr && row->post_filter == post_filter && setting.filter) return row;
  }
  return nullptr;
}

std::string_view Profile::ScoreFile(const InTreePlugin& plugin) const {
  auto chosen = score_files.find(plugin.name);
  return chosen != score_files.end() ? std::string_view(chosen->second) : plugin.score_file;
}

Profile DefaultProfile(int minor) {
  Profile profile;
  profile.kube_minor = minor;
  for (const InTreePlugin& p : InTreePlugins()) {
    if (p.since > minor) continue;
    profile.plugins.push_back({std::string(p.name), !p.filter_file.empty() || !p.implemented,
                               !p.score_file.empty() || !p.implemented, p.default_weight});
  }
  return profile;
}

namespace {

using k8s::NodeRef;

class ProfileReader final : public k8s::ObjectVisitor {
 public:
  ProfileReader(DiagnosticSink& diags, std::vector<Profile>& out, int minor) : diags_(diags), out_(out), minor_(minor) {}

  void Visit(NodeRef object, std::string_view) override {
    if (object.Get("kind").Text() != "KubeSchedulerConfiguration") {
      Bad(object.Get("kind").Valid() ? object.Get("kind") : object, "expected `kind: KubeSchedulerConfiguration`");
      return;
    }
    NodeRef profiles = object.Get("profiles");
    if (!profiles.Valid() || profiles.IsNull()) {
      out_.push_back(DefaultProfile(minor_));
      return;
    }
    if (!profiles.IsSequence()) return Bad(profiles, "`profiles` must be a list");
    for (uint32_t i = 0; i < profiles.Size(); ++i) ReadOne(profiles.At(i));
  }

 private:
  void Bad(NodeRef at, std::string message, std::string help = {}) {
    diags_.Error(DiagCode::kBadProfile, at.GetSpan(), std::move(message)).help = std::move(help);
  }

  bool Known(NodeRef name_node) {
    std::string_view name = name_node.Text();
    if (name == "*" || FindInTreePlugin(name) != nullptr) return true;
    std::vector<std::string_view> names;
    for (const InTreePlugin& p : InTreePlugins()) names.push_back(p.name);
    std::string_view close = Closest(name, names);
    Bad(name_node, fmt::format("unknown plugin `{}`", name),
        close.empty() ? fmt::format("the plugins are {}", fmt::join(names, ", ")) : fmt::format("did you mean `{}`?", close));
    return false;
  }

  // Whether disabling `name` (a known plugin, or `*`) turns preemption off.
  static bool Preempts(NodeRef name) {
    const InTreePlugin* row = FindInTreePlugin(name.Text());
    return name.Text() == "*" || (row != nullptr && row->post_filter == PostFilter::kPreemption);
  }

  // One plugin set (multiPoint, filter or score) applied to `profile`.
  void ApplySet(NodeRef set, Profile& profile, bool filter, bool score) {
    if (!set.IsMapping()) return;
    NodeRef disabled = set.Get("disabled");
    for (uint32_t i = 0; disabled.IsSequence() && i < disabled.Size(); ++i) {
      NodeRef name = disabled.At(i).Get("name");
      if (!Known(name)) continue;
      if (filter && score && Preempts(name)) profile.preemption = false;  // multiPoint
      for (PluginSetting& p : profile.plugins) {
        if (name.Text() != "*" && name.Text() != p.name) continue;
        if (filter) p.filter = false;
        if (score) p.score = false;
      }
    }
    NodeRef enabled = set.Get("enabled");
    for (uint32_t i = 0; enabled.IsSequence() && i < enabled.Size(); ++i) {
      NodeRef name = enabled.At(i).Get("name");
      if (!Known(name) || name.Text() == "*") continue;
      const InTreePlugin* known = FindInTreePlugin(name.Text());
      for (PluginSetting& p : profile.plugins) {
        if (p.name != name.Text()) continue;
        if (filter) p.filter = !known->filter_file.empty() || !known->implemented;
        if (score) p.score = !known->score_file.empty() || !known->implemented;
        NodeRef weight = enabled.At(i).Get("weight");
        if (weight.IsScalar() && weight.Type() == k8s::ScalarType::kInt) p.weight = std::stoll(std::string(weight.Text()));
      }
    }
  }

  void ReadOne(NodeRef node) {
    Profile profile = DefaultProfile(minor_);
    if (NodeRef name = node.Get("schedulerName"); name.IsScalar()) profile.scheduler_name = name.Text();
    NodeRef plugins = node.Get("plugins");
    if (plugins.IsMapping()) {
      ApplySet(plugins.Get("multiPoint"), profile, true, true);
      ApplySet(plugins.Get("filter"), profile, true, false);
      ApplySet(plugins.Get("score"), profile, false, true);
      // postFilter: preemption is the only one that may be turned off.
      NodeRef post = plugins.Get("postFilter");
      NodeRef off = post.IsMapping() ? post.Get("disabled") : NodeRef();
      for (uint32_t i = 0; off.IsSequence() && i < off.Size(); ++i) {
        NodeRef name = off.At(i).Get("name");
        if (Known(name) && Preempts(name)) profile.preemption = false;
      }
    }
    NodeRef config = node.Get("pluginConfig");
    for (uint32_t i = 0; config.IsSequence() && i < config.Size(); ++i) {
      NodeRef entry = config.At(i);
      NodeRef name = entry.Get("name");
      if (!Known(name)) continue;
      NodeRef args = entry.Get("args");
      const InTreePlugin* row = FindInTreePlugin(name.Text());
      if (row != nullptr && row->read_args != nullptr) {
        row->read_args(*row, args, profile, diags_);
      } else if (args.IsMapping() && args.Size() > 0) {
        Bad(args, fmt::format("plugin args for {} are not implemented in this build", name.Text()),
            "remove them, or check this pod with a profile without them");
      }
    }
    out_.push_back(std::move(profile));
  }

  DiagnosticSink& diags_;
  std::vector<Profile>& out_;
  int minor_;
};

}  // namespace

std::optional<std::vector<Profile>> ReadProfiles(const Source& source, DiagnosticSink& diags, int minor) {
  size_t errors = diags.ErrorCount();
  std::vector<Profile> profiles;
  ProfileReader reader(diags, profiles, minor);
  if (!k8s::ReadObjects(source, reader, diags)) return std::nullopt;
  if (diags.ErrorCount() != errors) return std::nullopt;
  if (profiles.empty()) {
    diags.Error(DiagCode::kBadProfile, Span{&source, 0, 0}, "the profile file holds no KubeSchedulerConfiguration");
    return std::nullopt;
  }
  return profiles;
}

std::optional<Profile> RestrictProfile(Profile profile, const std::vector<std::string>& only, std::string* unknown) {
  for (const std::string& name : only) {
    if (FindInTreePlugin(name) == nullptr) {
      if (unknown != nullptr) *unknown = name;
      return std::nullopt;
    }
  }
  for (PluginSetting& p : profile.plugins) {
    if (std::find(only.begin(), only.end(), p.name) == only.end()) p.filter = p.score = false;
  }
  profile.preemption = std::any_of(only.begin(), only.end(), [](const std::string& name) {
    return FindInTreePlugin(name)->post_filter == PostFilter::kPreemption;
  });
  return profile;
}

}  // namespace policy::rt
