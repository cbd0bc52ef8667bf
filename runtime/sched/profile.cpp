#include "runtime/sched/profile.h"

#include <algorithm>

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/object_reader.h"
#include "support/suggest.h"

namespace policy::rt {

const std::vector<InTreePlugin>& InTreePlugins() {
  // node_only and remedy: what `check`'s suggestions read (engine/suggest.cpp).
  // Which rejections are UnschedulableAndUnresolvable is said by the
  // filters themselves (`unresolvable` in the .policy files).
  using R = PodRemedy;
  static const std::vector<InTreePlugin> kPlugins = {
      {"NodeUnschedulable", "stdlib/node_unschedulable.policy", "", 0, true, R::kTolerate},
      {"NodeName", "stdlib/node_name.policy", "", 0, true, R::kDropNodeName, true},
      {"TaintToleration", "stdlib/taint_toleration.policy", "stdlib/taint_toleration.policy", 3, true, R::kTolerate},
      {"NodeAffinity", "stdlib/node_affinity.policy", "stdlib/node_affinity.policy", 2, true, R::kNodeAffinity, true},
      {"NodePorts", "stdlib/node_ports.policy", "", 0, true, R::kHostPorts},
      {"NodeResourcesFit", "stdlib/node_resources_fit.policy", "stdlib/least_allocated.policy", 1, true,
       R::kLowerRequests, false, "Insufficient "},
      {"VolumeRestrictions", "stdlib/volume_restrictions.policy", "", 0, true},
      {"NodeVolumeLimits", "stdlib/node_volume_limits.policy", "", 0, true},
      {"VolumeBinding", "stdlib/volume_binding.policy", "", 0, true, R::kNone, true},
      {"VolumeZone", "stdlib/volume_zone.policy", "", 0, true, R::kNone, true},
      {"PodTopologySpread", "stdlib/pod_topology_spread.policy", "stdlib/pod_topology_spread_score.policy", 2, true,
       R::kSpread},
      {"InterPodAffinity", "stdlib/inter_pod_affinity.policy", "stdlib/inter_pod_affinity.policy", 2, true,
       R::kPodAffinity},
      {"NodeResourcesBalancedAllocation", "", "stdlib/balanced_allocation.policy", 1, true},
      // Not node_only: a node added like another gets copies of its ResourceSlices, devices no claim holds.
      {"DynamicResources", "stdlib/dynamic_resources.policy", "", 0, true, R::kNone, false, "", 34},
      {"ImageLocality", "", "stdlib/image_locality.policy", 1, true},
      // PostFilter only, in the scheduling core (Profile::preemption).
      {"DefaultPreemption", "", "", 0, true},
  };
  return kPlugins;
}

const InTreePlugin* FindInTreePlugin(std::string_view name) {
  for (const InTreePlugin& p : InTreePlugins()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string_view Profile::ScoreFile(const InTreePlugin& plugin) const {
  if (plugin.name == "NodeResourcesFit" && fit_strategy == "MostAllocated") return "stdlib/most_allocated.policy";
  if (plugin.name == "NodeResourcesFit" && fit_strategy == "RequestedToCapacityRatio") {
    return "stdlib/requested_to_capacity_ratio.policy";
  }
  return plugin.score_file;
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

  // One plugin set (multiPoint, filter or score) applied to `profile`.
  void ApplySet(NodeRef set, Profile& profile, bool filter, bool score) {
    if (!set.IsMapping()) return;
    NodeRef disabled = set.Get("disabled");
    for (uint32_t i = 0; disabled.IsSequence() && i < disabled.Size(); ++i) {
      NodeRef name = disabled.At(i).Get("name");
      if (!Known(name)) continue;
      if (filter && score && (name.Text() == "*" || name.Text() == "DefaultPreemption")) profile.preemption = false;  // multiPoint
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

  // requestedToCapacityRatio.shape: points {utilization 0..100 ascending, score 0..10}.
  void Shape(NodeRef shape, Profile& profile) {
    if (!shape.IsSequence() || shape.Size() == 0) {
      return Bad(shape.Valid() ? shape : NodeRef(), "RequestedToCapacityRatio needs `requestedToCapacityRatio.shape`",
                 "give points such as [{utilization: 0, score: 0}, {utilization: 100, score: 10}]");
    }
    std::vector<int64_t> utilization, scores;
    for (uint32_t i = 0; i < shape.Size(); ++i) {
      NodeRef u = shape.At(i).Get("utilization");
      NodeRef s = shape.At(i).Get("score");
      if (!u.IsScalar() || u.Type() != k8s::ScalarType::kInt || !s.IsScalar() || s.Type() != k8s::ScalarType::kInt) {
        return Bad(shape.At(i), "a shape point needs integer `utilization` and `score`");
      }
      int64_t uv = std::stoll(std::string(u.Text())), sv = std::stoll(std::string(s.Text()));
      if (uv < 0 || uv > 100 || (!utilization.empty() && uv <= utilization.back())) {
        return Bad(u, "utilizations must rise strictly, within 0..100");
      }
      if (sv < 0 || sv > 10) return Bad(s, "a shape score is within 0..10");
      utilization.push_back(uv);
      scores.push_back(sv * 10);  // kube-scheduler scales shape scores to 0..100
    }
    profile.params["RequestedToCapacityRatio"]["utilization"] = utilization;
    profile.params["RequestedToCapacityRatio"]["scores"] = scores;
  }

  // A `resources` list of ResourceSpecs: names and weights (an absent or 0
  // weight is 1, as kube-scheduler defaults it); false after a diagnostic.
  bool Resources(NodeRef list, int64_t max_weight, std::vector<std::string>& names, std::vector<int64_t>& weights) {
    if (!list.IsSequence()) {
      Bad(list, "`resources` must be a list of {name, weight}");
      return false;
    }
    for (uint32_t r = 0; r < list.Size(); ++r) {
      NodeRef res = list.At(r);
      NodeRef name = res.Get("name");
      if (!name.IsScalar() || name.Text().empty()) {
        Bad(res, "a scoring resource needs a `name`");
        return false;
      }
      int64_t weight = 1;
      if (NodeRef w = res.Get("weight"); w.Valid() && !w.IsNull()) {
        if (!w.IsScalar() || w.Type() != k8s::ScalarType::kInt) {
          Bad(w, "a resource weight is an integer");
          return false;
        }
        weight = std::stoll(std::string(w.Text()));
        if (weight == 0) weight = 1;
      }
      if (weight < 1 || weight > max_weight) {
        Bad(res.Get("weight"), max_weight == 1 ? fmt::format("resource weight of {} must be 1", name.Text())
                                               : fmt::format("resource weight of {} not in valid range [1, {}]",
                                                             name.Text(), max_weight));
        return false;
      }
      names.emplace_back(name.Text());
      weights.push_back(weight);
    }
    return true;
  }

  // NodeResourcesFitArgs: scoringStrategy (type, resources, shape),
  // ignoredResources, ignoredResourceGroups.
  void FitArgs(NodeRef args, Profile& profile) {
    if (!args.IsMapping()) return;
    std::vector<std::string> ignored, prefixes;
    for (NodeRef r = args.Get("ignoredResources"); uint32_t k : Indices(r)) ignored.emplace_back(r.At(k).Text());
    for (NodeRef g = args.Get("ignoredResourceGroups"); uint32_t k : Indices(g)) {
      prefixes.push_back(std::string(g.At(k).Text()) + "/");
    }
    if (!ignored.empty()) profile.params["NodeResourcesFit"]["ignoredResources"] = ignored;
    if (!prefixes.empty()) profile.params["NodeResourcesFit"]["ignoredPrefixes"] = prefixes;
    NodeRef strategy = args.Get("scoringStrategy");
    if (!strategy.IsMapping()) return;
    NodeRef type = strategy.Get("type");
    if (type.Valid()) {
      if (type.Text() == "LeastAllocated" || type.Text() == "MostAllocated") {
        profile.fit_strategy = type.Text();
      } else if (type.Text() == "RequestedToCapacityRatio") {
        profile.fit_strategy = type.Text();
        Shape(strategy.Get("requestedToCapacityRatio").Get("shape"), profile);
      } else {
        Bad(type, fmt::format("unknown scoring strategy `{}`", type.Text()),
            "use LeastAllocated, MostAllocated or RequestedToCapacityRatio");
      }
    }
    NodeRef resources = strategy.Get("resources");
    if (!resources.Valid() || resources.IsNull() || (resources.IsSequence() && resources.Size() == 0)) return;
    std::vector<std::string> names;
    std::vector<int64_t> weights;
    if (!Resources(resources, 100, names, weights)) return;
    for (const char* policy : {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"}) {
      profile.params[policy]["resources"] = names;
      profile.params[policy]["weights"] = weights;
    }
  }

  // NodeResourcesBalancedAllocationArgs: resources (weights must be 1).
  void BalancedArgs(NodeRef args, Profile& profile) {
    if (!args.IsMapping()) return;
    NodeRef resources = args.Get("resources");
    if (!resources.Valid() || resources.IsNull() || (resources.IsSequence() && resources.Size() == 0)) return;
    std::vector<std::string> names;
    std::vector<int64_t> weights;
    if (!Resources(resources, 1, names, weights)) return;
    if (names.size() == 2 && names[0] == names[1]) {
      Bad(resources.At(1).Get("name"), fmt::format("duplicate resource `{}`", names[1]));
      return;
    }
    if (names.size() > 2) {
      Bad(resources, "balanced allocation over more than two resources is not implemented in this build",
          "list at most two resources");
      return;
    }
    profile.params["NodeResourcesBalancedAllocation"]["resources"] = names;
  }

  // InterPodAffinityArgs: hardPodAffinityWeight (0..100),
  // ignorePreferredTermsOfExistingPods.
  void InterPodArgs(NodeRef args, Profile& profile) {
    if (!args.IsMapping()) return;
    if (NodeRef w = args.Get("hardPodAffinityWeight"); w.Valid() && !w.IsNull()) {
      if (!w.IsScalar() || w.Type() != k8s::ScalarType::kInt) return Bad(w, "`hardPodAffinityWeight` is an integer");
      int64_t weight = std::stoll(std::string(w.Text()));
      if (weight < 0 || weight > 100) return Bad(w, "`hardPodAffinityWeight` must be within 0..100");
      profile.params["InterPodAffinity"]["hardPodAffinityWeight"] = weight;
    }
    if (NodeRef ignore = args.Get("ignorePreferredTermsOfExistingPods"); ignore.Valid() && !ignore.IsNull()) {
      if (ignore.Text() != "true" && ignore.Text() != "false") {
        return Bad(ignore, "`ignorePreferredTermsOfExistingPods` is true or false");
      }
      profile.params["InterPodAffinity"]["existingPreferredTerms"] = ignore.Text() == "false";
    }
  }

  // PodTopologySpreadArgs: defaultingType System (kube-scheduler's own
  // defaults) or List (defaultConstraints, without selectors).
  void SpreadArgs(NodeRef args, Profile& profile) {
    if (!args.IsMapping()) return;
    NodeRef type = args.Get("defaultingType");
    NodeRef constraints = args.Get("defaultConstraints");
    bool has_constraints = constraints.Valid() && !constraints.IsNull() && !(constraints.IsSequence() && constraints.Size() == 0);
    std::string_view kind = type.Valid() ? type.Text() : "System";
    if (kind == "System") {
      if (has_constraints) Bad(constraints, "`defaultConstraints` must be empty when `defaultingType` is System");
      return;
    }
    if (kind != "List") return Bad(type, fmt::format("unknown defaultingType `{}`", kind), "use System or List");
    profile.spread_defaults.emplace();
    if (!has_constraints) return;
    std::optional<std::vector<k8s::TopologySpreadConstraint>> list = k8s::DecodeSpreadConstraints(constraints, diags_);
    if (!list) return;
    for (uint32_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].label_selector) {
        return Bad(constraints.At(i).Get("labelSelector"),
                   "a default constraint must not define a selector: it is derived for each pod");
      }
    }
    profile.spread_defaults = std::move(*list);
  }

  static std::vector<uint32_t> Indices(NodeRef list) {
    std::vector<uint32_t> out;
    for (uint32_t k = 0; list.IsSequence() && k < list.Size(); ++k) out.push_back(k);
    return out;
  }

  void ReadOne(NodeRef node) {
    Profile profile = DefaultProfile(minor_);
    if (NodeRef name = node.Get("schedulerName"); name.IsScalar()) profile.scheduler_name = name.Text();
    NodeRef plugins = node.Get("plugins");
    if (plugins.IsMapping()) {
      ApplySet(plugins.Get("multiPoint"), profile, true, true);
      ApplySet(plugins.Get("filter"), profile, true, false);
      ApplySet(plugins.Get("score"), profile, false, true);
      // postFilter: DefaultPreemption is the only one.
      NodeRef post = plugins.Get("postFilter");
      NodeRef off = post.IsMapping() ? post.Get("disabled") : NodeRef();
      for (uint32_t i = 0; off.IsSequence() && i < off.Size(); ++i) {
        NodeRef name = off.At(i).Get("name");
        if (Known(name) && (name.Text() == "*" || name.Text() == "DefaultPreemption")) profile.preemption = false;
      }
    }
    NodeRef config = node.Get("pluginConfig");
    for (uint32_t i = 0; config.IsSequence() && i < config.Size(); ++i) {
      NodeRef entry = config.At(i);
      NodeRef name = entry.Get("name");
      if (!Known(name)) continue;
      NodeRef args = entry.Get("args");
      if (name.Text() == "NodeResourcesFit") {
        FitArgs(args, profile);
      } else if (name.Text() == "NodeResourcesBalancedAllocation") {
        BalancedArgs(args, profile);
      } else if (name.Text() == "InterPodAffinity") {
        InterPodArgs(args, profile);
      } else if (name.Text() == "PodTopologySpread") {
        SpreadArgs(args, profile);
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
  profile.preemption = std::find(only.begin(), only.end(), "DefaultPreemption") != only.end();
  return profile;
}

}  // namespace policy::rt
