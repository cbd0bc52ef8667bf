#include "runtime/sched/plugin_args.h"

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/document.h"

namespace policy::rt {
namespace {

using k8s::NodeRef;

void Bad(DiagnosticSink& diags, NodeRef at, std::string message, std::string help = {}) {
  diags.Error(DiagCode::kBadProfile, at.GetSpan(), std::move(message)).help = std::move(help);
}

std::vector<uint32_t> Indices(NodeRef list) {
  std::vector<uint32_t> out;
  for (uint32_t k = 0; list.IsSequence() && k < list.Size(); ++k) out.push_back(k);
  return out;
}

// requestedToCapacityRatio.shape: points {utilization 0..100 ascending, score 0..10}.
void Shape(NodeRef shape, Profile& profile, DiagnosticSink& diags) {
  if (!shape.IsSequence() || shape.Size() == 0) {
    return Bad(diags, shape.Valid() ? shape : NodeRef(), "RequestedToCapacityRatio needs `requestedToCapacityRatio.shape`",
               "give points such as [{utilization: 0, score: 0}, {utilization: 100, score: 10}]");
  }
  std::vector<int64_t> utilization, scores;
  for (uint32_t i = 0; i < shape.Size(); ++i) {
    NodeRef u = shape.At(i).Get("utilization");
    NodeRef s = shape.At(i).Get("score");
    if (!u.IsScalar() || u.Type() != k8s::ScalarType::kInt || !s.IsScalar() || s.Type() != k8s::ScalarType::kInt) {
      return Bad(diags, shape.At(i), "a shape point needs integer `utilization` and `score`");
    }
    int64_t uv = std::stoll(std::string(u.Text())), sv = std::stoll(std::string(s.Text()));
    if (uv < 0 || uv > 100 || (!utilization.empty() && uv <= utilization.back())) {
      return Bad(diags, u, "utilizations must rise strictly, within 0..100");
    }
    if (sv < 0 || sv > 10) return Bad(diags, s, "a shape score is within 0..10");
    utilization.push_back(uv);
    scores.push_back(sv * 10);  // kube-scheduler scales shape scores to 0..100
  }
  profile.params["RequestedToCapacityRatio"]["utilization"] = utilization;
  profile.params["RequestedToCapacityRatio"]["scores"] = scores;
}

// A `resources` list of ResourceSpecs: names and weights (an absent or 0
// weight is 1, as kube-scheduler defaults it); false after a diagnostic.
bool Resources(NodeRef list, int64_t max_weight, std::vector<std::string>& names, std::vector<int64_t>& weights,
               DiagnosticSink& diags) {
  if (!list.IsSequence()) {
    Bad(diags, list, "`resources` must be a list of {name, weight}");
    return false;
  }
  for (uint32_t r = 0; r < list.Size(); ++r) {
    NodeRef res = list.At(r);
    NodeRef name = res.Get("name");
    if (!name.IsScalar() || name.Text().empty()) {
      Bad(diags, res, "a scoring resource needs a `name`");
      return false;
    }
    int64_t weight = 1;
    if (NodeRef w = res.Get("weight"); w.Valid() && !w.IsNull()) {
      if (!w.IsScalar() || w.Type() != k8s::ScalarType::kInt) {
        Bad(diags, w, "a resource weight is an integer");
        return false;
      }
      weight = std::stoll(std::string(w.Text()));
      if (weight == 0) weight = 1;
    }
    if (weight < 1 || weight > max_weight) {
      Bad(diags, res.Get("weight"), max_weight == 1 ? fmt::format("resource weight of {} must be 1", name.Text())
                                             : fmt::format("resource weight of {} not in valid range [1, {}]",
                                                           name.Text(), max_weight));
      return false;
    }
    names.emplace_back(name.Text());
    weights.push_back(weight);
  }
  return true;
}

}  // namespace

// NodeResourcesFitArgs: scoringStrategy (type, resources, shape),
// ignoredResources, ignoredResourceGroups.
void FitArgs(const InTreePlugin& plugin, NodeRef args, Profile& profile, DiagnosticSink& diags) {
  if (!args.IsMapping()) return;
  std::vector<std::string> ignored, prefixes;
  for (NodeRef r = args.Get("ignoredResources"); uint32_t k : Indices(r)) ignored.emplace_back(r.At(k).Text());
  for (NodeRef g = args.Get("ignoredResourceGroups"); uint32_t k : Indices(g)) {
    prefixes.push_back(std::string(g.At(k).Text()) + "/");
  }
  if (!ignored.empty()) profile.params[std::string(plugin.name)]["ignoredResources"] = ignored;
  if (!prefixes.empty()) profile.params[std::string(plugin.name)]["ignoredPrefixes"] = prefixes;
  NodeRef strategy = args.Get("scoringStrategy");
  if (!strategy.IsMapping()) return;
  NodeRef type = strategy.Get("type");
  if (type.Valid()) {
    // Each strategy is a stdlib score of its own.
    if (type.Text() == "LeastAllocated") {
      profile.score_files.erase(std::string(plugin.name));
    } else if (type.Text() == "MostAllocated") {
      profile.score_files[std::string(plugin.name)] = "stdlib/most_allocated.policy";
    } else if (type.Text() == "RequestedToCapacityRatio") {
      profile.score_files[std::string(plugin.name)] = "stdlib/requested_to_capacity_ratio.policy";
      Shape(strategy.Get("requestedToCapacityRatio").Get("shape"), profile, diags);
    } else {
      Bad(diags, type, fmt::format("unknown scoring strategy `{}`", type.Text()),
          "use LeastAllocated, MostAllocated or RequestedToCapacityRatio");
    }
  }
  NodeRef resources = strategy.Get("resources");
  if (!resources.Valid() || resources.IsNull() || (resources.IsSequence() && resources.Size() == 0)) return;
  std::vector<std::string> names;
  std::vector<int64_t> weights;
  if (!Resources(resources, 100, names, weights, diags)) return;
  for (const char* policy : {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"}) {
    profile.params[policy]["resources"] = names;
    profile.params[policy]["weights"] = weights;
  }
}

// NodeResourcesBalancedAllocationArgs: resources (weights must be 1).
void BalancedArgs(const InTreePlugin& plugin, NodeRef args, Profile& profile, DiagnosticSink& diags) {
  if (!args.IsMapping()) return;
  NodeRef resources = args.Get("resources");
  if (!resources.Valid() || resources.IsNull() || (resources.IsSequence() && resources.Size() == 0)) return;
  std::vector<std::string> names;
  std::vector<int64_t> weights;
  if (!Resources(resources, 1, names, weights, diags)) return;
  if (names.size() == 2 && names[0] == names[1]) {
    Bad(diags, resources.At(1).Get("name"), fmt::format("duplicate resource `{}`", names[1]));
    return;
  }
  if (names.size() > 2) {
    Bad(diags, resources, "balanced allocation over more than two resources is not implemented in this build",
        "list at most two resources");
    return;
  }
  profile.params[std::string(plugin.name)]["resources"] = names;
}

// InterPodAffinityArgs: hardPodAffinityWeight (0..100),
// ignorePreferredTermsOfExistingPods.
void InterPodArgs(const InTreePlugin& plugin, NodeRef args, Profile& profile, DiagnosticSink& diags) {
  if (!args.IsMapping()) return;
  if (NodeRef w = args.Get("hardPodAffinityWeight"); w.Valid() && !w.IsNull()) {
    if (!w.IsScalar() || w.Type() != k8s::ScalarType::kInt) return Bad(diags, w, "`hardPodAffinityWeight` is an integer");
    int64_t weight = std::stoll(std::string(w.Text()));
    if (weight < 0 || weight > 100) return Bad(diags, w, "`hardPodAffinityWeight` must be within 0..100");
    profile.params[std::string(plugin.name)]["hardPodAffinityWeight"] = weight;
  }
  if (NodeRef ignore = args.Get("ignorePreferredTermsOfExistingPods"); ignore.Valid() && !ignore.IsNull()) {
    if (ignore.Text() != "true" && ignore.Text() != "false") {
      return Bad(diags, ignore, "`ignorePreferredTermsOfExistingPods` is true or false");
    }
    profile.params[std::string(plugin.name)]["existingPreferredTerms"] = ignore.Text() == "false";
  }
}

// PodTopologySpreadArgs: defaultingType System (kube-scheduler's own
// defaults) or List (defaultConstraints, without selectors).
void SpreadArgs(const InTreePlugin&, NodeRef args, Profile& profile, DiagnosticSink& diags) {
  if (!args.IsMapping()) return;
  NodeRef type = args.Get("defaultingType");
  NodeRef constraints = args.Get("defaultConstraints");
  bool has_constraints = constraints.Valid() && !constraints.IsNull() && !(constraints.IsSequence() && constraints.Size() == 0);
  std::string_view kind = type.Valid() ? type.Text() : "System";
  if (kind == "System") {
    if (has_constraints) Bad(diags, constraints, "`defaultConstraints` must be empty when `defaultingType` is System");
    return;
  }
  if (kind != "List") return Bad(diags, type, fmt::format("unknown defaultingType `{}`", kind), "use System or List");
  profile.spread_defaults.emplace();
  if (!has_constraints) return;
  std::optional<std::vector<k8s::TopologySpreadConstraint>> list = k8s::DecodeSpreadConstraints(constraints, diags);
  if (!list) return;
  for (uint32_t i = 0; i < list->size(); ++i) {
    if ((*list)[i].label_selector) {
      return Bad(diags, constraints.At(i).Get("labelSelector"),
                 "a default constraint must not define a selector: it is derived for each pod");
    }
  }
  profile.spread_defaults = std::move(*list);
}

}  // namespace policy::rt
