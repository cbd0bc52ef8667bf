#include "k8s/decode_selectors.h"

#include <fmt/format.h>

#include "k8s/node_match.h"

namespace policy::k8s {
namespace {

std::optional<SelectorOp> ParseOp(std::string_view s, bool node_selector) {
  if (s == "In") return SelectorOp::kIn;
  if (s == "NotIn") return SelectorOp::kNotIn;
  if (s == "Exists") return SelectorOp::kExists;
  if (s == "DoesNotExist") return SelectorOp::kDoesNotExist;
  if (node_selector && s == "Gt") return SelectorOp::kGt;
  if (node_selector && s == "Lt") return SelectorOp::kLt;
  return std::nullopt;
}

enum class RequirementKind { kNodeLabel, kNodeField, kPodLabel };

// One requirement of matchExpressions / matchFields, validated as
// ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement and
// ValidateLabelSelectorRequirement do.
std::optional<SelectorRequirement> DecodeRequirement(DecodeContext& cx, NodeRef node, RequirementKind kind) {
  if (!cx.ExpectMapping(node, "requirement")) return std::nullopt;
  SelectorRequirement req;
  req.span = node.GetSpan();
  cx.String(node, "key", &req.key);
  std::string op;
  cx.String(node, "operator", &op);
  cx.StringList(node, "values", &req.values);
  NodeRef op_node = node.Get("operator").Valid() ? node.Get("operator") : node;
  NodeRef values_node = node.Get("values").Valid() ? node.Get("values") : node;
  if (req.key.empty()) {
    cx.Error(DiagCode::kMissingField, node.Get("key").Valid() ? node.Get("key") : node,
             "a selector requirement needs a `key`");
    return std::nullopt;
  }
  std::optional<SelectorOp> parsed = ParseOp(op, kind != RequirementKind::kPodLabel);
  if (kind == RequirementKind::kNodeField && parsed && *parsed != SelectorOp::kIn && *parsed != SelectorOp::kNotIn) {
    parsed.reset();
  }
  if (!parsed) {
    if (kind == RequirementKind::kNodeField) {
      cx.BadEnum(op_node, "operator", op, {"In", "NotIn"}, DiagCode::kUnknownOperator);
    } else if (kind == RequirementKind::kNodeLabel) {
      cx.BadEnum(op_node, "operator", op, {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"},
                 DiagCode::kUnknownOperator);
    } else {
      cx.BadEnum(op_node, "operator", op, {"In", "NotIn", "Exists", "DoesNotExist"}, DiagCode::kUnknownOperator);
    }
    return std::nullopt;
  }
  req.op = *parsed;
  if (kind == RequirementKind::kNodeField) {
    if (req.key != "metadata.name") {
      Diagnostic& d = cx.Error(DiagCode::kBadFieldSelector, node.Get("key"),
                               fmt::format("`matchFields` cannot select on `{}`", req.key),
                               "not a supported field");
      d.help = "the only field a node selector may match is `metadata.name`; use `matchExpressions` for labels";
      return std::nullopt;
    }
    if (req.values.size() != 1) {
      cx.Error(DiagCode::kBadOperatorValues, values_node,
               fmt::format("a `matchFields` requirement with `{}` needs exactly one value, found {}", op,
                           req.values.size()));
      return std::nullopt;
    }
    return req;
  }
  switch (req.op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (req.values.empty()) {
        Diagnostic& d = cx.Error(DiagCode::kBadOperatorValues, values_node,
                                 fmt::format("`values` must not be empty when `operator` is `{}`", op));
        d.help = "list at least one value, or use `Exists` to match any value";
        return std::nullopt;
      }
      for (uint32_t i = 0; i < req.values.size(); ++i) {
        if (IsLabelValue(req.values[i])) continue;
        // The API server accepts it; kube-scheduler's labels.NewRequirement
        // does not, and the whole term then matches no node.
        NodeRef at = values_node.IsSequence() && i < values_node.Size() ? values_node.At(i) : values_node;
        Diagnostic& d = cx.diags().Warning(
            DiagCode::kNeverMatches, at.GetSpan(),
            fmt::format("`{}` is not a valid label value: kube-scheduler refuses this requirement, and its term "
                        "matches no node",
                        req.values[i]),
            "not a label value");
        d.help = "a label value is at most 63 characters: letters, digits, `-`, `_` and `.`, starting and ending "
                 "with a letter or digit";
        break;
      }
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (!req.values.empty()) {
        Diagnostic& d = cx.Error(DiagCode::kBadOperatorValues, values_node,
                                 fmt::format("`values` must be empty when `operator` is `{}`", op),
                                 "remove these values");
        d.help = "use `In` to match particular values";
        return std::nullopt;
      }
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt:
      if (req.values.size() != 1) {
        cx.Error(DiagCode::kBadOperatorValues, values_node,
                 fmt::format("`{}` needs exactly one value, found {}", op, req.values.size()));
        return std::nullopt;
      }
      if (!ParseGoInt(req.values[0]) || req.values[0].find_first_not_of("+-0123456789") != std::string::npos ||
          req.values[0].find('_') != std::string::npos) {
        // The API server accepts this (it checks only the count); the
        // requirement then matches no node. Warn, and keep Kubernetes' meaning.
        NodeRef at = values_node.IsSequence() ? values_node.At(0) : values_node;
        Diagnostic& d = cx.diags().Warning(DiagCode::kNeverMatches, at.GetSpan(),
                                           fmt::format("`{}` compares with an integer, but `{}` is not one: this "
                                                       "requirement matches no node",
                                                       op, req.values[0]),
                                           "not an integer");
        d.help = "`Gt` and `Lt` read the node label as an integer and compare it with this integer";
      }
      break;
  }
  return req;
}

void DecodeRequirements(DecodeContext& cx, NodeRef parent, std::string_view key, RequirementKind kind,
                        std::vector<SelectorRequirement>* out) {
  NodeRef list = cx.Sequence(parent, key);
  if (!list.Valid()) return;
  for (uint32_t i = 0; i < list.Size(); ++i) {
    if (auto req = DecodeRequirement(cx, list.At(i), kind)) out->push_back(std::move(*req));
  }
}

int32_t DecodeWeight(DecodeContext& cx, NodeRef node) {
  std::optional<int32_t> weight;
  cx.Int32(node, "weight", &weight);
  if (!weight || *weight < 1 || *weight > 100) {
    NodeRef at = node.Get("weight").Valid() ? node.Get("weight") : node;
    if (weight || !node.Get("weight").Valid()) {
      Diagnostic& d = cx.Error(DiagCode::kBadWeight, at,
                               weight ? fmt::format("`weight` must be in 1..100, found {}", *weight)
                                      : std::string("a preferred term needs a `weight` in 1..100"));
      d.help = "kube-scheduler adds the weight of every preferred term a node matches";
    }
    return 0;
  }
  return *weight;
}

std::optional<NodeAffinity> DecodeNodeAffinity(DecodeContext& cx, NodeRef node) {
  NodeAffinity out;
  NodeRef required = cx.Mapping(node, "requiredDuringSchedulingIgnoredDuringExecution");
  if (required.Valid()) {
    out.required.emplace();
    NodeRef terms = cx.Sequence(required, "nodeSelectorTerms");
    if (!terms.Valid() || terms.Size() == 0) {
      Diagnostic& d = cx.Error(DiagCode::kMissingField, terms.Valid() ? terms : required,
                               "a required node affinity needs at least one term in `nodeSelectorTerms`");
      d.help = "Kubernetes refuses `nodeSelectorTerms` that is empty";
    } else {
      for (uint32_t i = 0; i < terms.Size(); ++i) out.required->push_back(DecodeNodeSelectorTerm(cx, terms.At(i)));
    }
  }
  NodeRef preferred = cx.Sequence(node, "preferredDuringSchedulingIgnoredDuringExecution");
  if (preferred.Valid()) {
    for (uint32_t i = 0; i < preferred.Size(); ++i) {
      NodeRef p = preferred.At(i);
      if (!cx.ExpectMapping(p, "preferred term")) continue;
      PreferredSchedulingTerm term;
      term.weight = DecodeWeight(cx, p);
      NodeRef preference = cx.Mapping(p, "preference");
      if (preference.Valid()) term.preference = DecodeNodeSelectorTerm(cx, preference);
      out.preferred.push_back(std::move(term));
    }
  }
  return out;
}

std::optional<PodAffinityTerm> DecodePodAffinityTerm(DecodeContext& cx, NodeRef node) {
  if (!cx.ExpectMapping(node, "pod affinity term")) return std::nullopt;
  PodAffinityTerm term;
  term.span = node.GetSpan();
  NodeRef selector = cx.Mapping(node, "labelSelector");
  if (selector.Valid()) term.label_selector = DecodeLabelSelector(cx, selector);
  cx.StringList(node, "namespaces", &term.namespaces);
  NodeRef ns_selector = node.Get("namespaceSelector");
  if (ns_selector.Valid() && !ns_selector.IsNull()) {
    if (cx.ExpectMapping(ns_selector, "namespaceSelector")) term.namespace_selector = DecodeLabelSelector(cx, ns_selector);
  }
  cx.String(node, "topologyKey", &term.topology_key);
  cx.StringList(node, "matchLabelKeys", &term.match_label_keys);
  cx.StringList(node, "mismatchLabelKeys", &term.mismatch_label_keys);
  if (term.topology_key.empty()) {
    Diagnostic& d = cx.Error(DiagCode::kBadAffinityTerm, node.Get("topologyKey").Valid() ? node.Get("topologyKey") : node,
                             "a pod affinity term needs a `topologyKey`");
    d.help = "name the node label that defines the domain, e.g. `kubernetes.io/hostname` or "
             "`topology.kubernetes.io/zone`";
  }
  for (const std::string& key : term.match_label_keys) {
    for (const std::string& other : term.mismatch_label_keys) {
      if (key == other) {
        cx.Error(DiagCode::kBadAffinityTerm, node.Get("mismatchLabelKeys"),
                 fmt::format("`{}` is in both `matchLabelKeys` and `mismatchLabelKeys`", key));
      }
    }
  }
  return term;
}

std::optional<PodAffinity> DecodePodAffinity(DecodeContext& cx, NodeRef node) {
  PodAffinity out;
  NodeRef required = cx.Sequence(node, "requiredDuringSchedulingIgnoredDuringExecution");
  if (required.Valid()) {
    for (uint32_t i = 0; i < required.Size(); ++i) {
      if (auto term = DecodePodAffinityTerm(cx, required.At(i))) out.required.push_back(std::move(*term));
    }
  }
  NodeRef preferred = cx.Sequence(node, "preferredDuringSchedulingIgnoredDuringExecution");
  if (preferred.Valid()) {
    for (uint32_t i = 0; i < preferred.Size(); ++i) {
      NodeRef p = preferred.At(i);
      if (!cx.ExpectMapping(p, "preferred term")) continue;
      WeightedPodAffinityTerm weighted;
      weighted.weight = DecodeWeight(cx, p);
      NodeRef term = p.Get("podAffinityTerm");
      if (!term.Valid() || term.IsNull()) {
        cx.Error(DiagCode::kMissingField, p, "a preferred pod affinity term needs a `podAffinityTerm`");
        continue;
      }
      if (auto t = DecodePodAffinityTerm(cx, term)) {
        weighted.term = std::move(*t);
        out.preferred.push_back(std::move(weighted));
      }
    }
  }
  return out;
}

}  // namespace

NodeSelectorTerm DecodeNodeSelectorTerm(DecodeContext& cx, NodeRef node) {
  NodeSelectorTerm term;
  if (!cx.ExpectMapping(node, "nodeSelectorTerm")) return term;
  DecodeRequirements(cx, node, "matchExpressions", RequirementKind::kNodeLabel, &term.match_expressions);
  DecodeRequirements(cx, node, "matchFields", RequirementKind::kNodeField, &term.match_fields);
  return term;
}

std::optional<LabelSelector> DecodeLabelSelector(DecodeContext& cx, NodeRef selector) {
  LabelSelector out;
  cx.StringMapField(selector, "matchLabels", &out.match_labels);
  DecodeRequirements(cx, selector, "matchExpressions", RequirementKind::kPodLabel, &out.match_expressions);
  return out;
}

void DecodeAffinity(DecodeContext& cx, NodeRef affinity, Affinity* out) {
  NodeRef node = cx.Mapping(affinity, "nodeAffinity");
  if (node.Valid()) out->node_affinity = DecodeNodeAffinity(cx, node);
  NodeRef pod = cx.Mapping(affinity, "podAffinity");
  if (pod.Valid()) out->pod_affinity = DecodePodAffinity(cx, pod);
  NodeRef anti = cx.Mapping(affinity, "podAntiAffinity");
  if (anti.Valid()) out->pod_anti_affinity = DecodePodAffinity(cx, anti);
}

std::optional<TaintEffect> DecodeTaintEffect(DecodeContext& cx, NodeRef at, std::string_view text) {
  if (text == "NoSchedule") return TaintEffect::kNoSchedule;
  if (text == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (text == "NoExecute") return TaintEffect::kNoExecute;
  cx.BadEnum(at, "effect", text, {"NoSchedule", "PreferNoSchedule", "NoExecute"});
  return std::nullopt;
}

void DecodeTolerations(DecodeContext& cx, NodeRef list, std::vector<Toleration>* out) {
  for (uint32_t i = 0; i < list.Size(); ++i) {
    NodeRef node = list.At(i);
    if (!cx.ExpectMapping(node, "toleration")) continue;
    Toleration t;
    std::string op;
    std::string effect;
    cx.String(node, "key", &t.key);
    cx.String(node, "operator", &op);
    cx.String(node, "value", &t.value);
    cx.String(node, "effect", &effect);
    cx.Int64(node, "tolerationSeconds", &t.toleration_seconds);
    bool ok = true;
    if (op.empty() || op == "Equal") {
      t.op = TolerationOp::kEqual;
    } else if (op == "Exists") {
      t.op = TolerationOp::kExists;
    } else {
      ok = cx.BadEnum(node.Get("operator"), "toleration operator", op, {"Equal", "Exists"}, DiagCode::kBadToleration);
    }
    if (ok && t.op == TolerationOp::kExists && !t.value.empty()) {
      Diagnostic& d = cx.Error(DiagCode::kBadToleration, node.Get("value"),
                               "a toleration with `operator: Exists` must not have a `value`", "remove this value");
      d.help = "`Exists` matches any value; use `operator: Equal` to match this one";
      ok = false;
    }
    if (ok && t.key.empty() && t.op != TolerationOp::kExists) {
      Diagnostic& d = cx.Error(DiagCode::kBadToleration, node.Get("operator").Valid() ? node.Get("operator") : node,
                               "a toleration without a `key` must have `operator: Exists`");
      d.help = "an empty key with `Exists` tolerates every taint";
      ok = false;
    }
    if (!effect.empty()) {
      std::optional<TaintEffect> e = DecodeTaintEffect(cx, node.Get("effect"), effect);
      if (!e) ok = false;
      t.effect = e;
    }
    if (ok && t.toleration_seconds && t.effect != TaintEffect::kNoExecute) {
      cx.Error(DiagCode::kBadToleration, node.Get("tolerationSeconds"),
               "`tolerationSeconds` needs `effect: NoExecute`");
      ok = false;
    }
    if (ok) out->push_back(std::move(t));
  }
}

void DecodeSpread(DecodeContext& cx, NodeRef list, std::vector<TopologySpreadConstraint>* out) {
  for (uint32_t i = 0; i < list.Size(); ++i) {
    NodeRef node = list.At(i);
    if (!cx.ExpectMapping(node, "topology spread constraint")) continue;
    TopologySpreadConstraint c;
    c.span = node.GetSpan();
    std::optional<int32_t> max_skew;
    cx.Int32(node, "maxSkew", &max_skew);
    cx.String(node, "topologyKey", &c.topology_key);
    std::string when, affinity_policy, taints_policy;
    cx.String(node, "whenUnsatisfiable", &when);
    cx.String(node, "nodeAffinityPolicy", &affinity_policy);
    cx.String(node, "nodeTaintsPolicy", &taints_policy);
    cx.Int32(node, "minDomains", &c.min_domains);
    cx.StringList(node, "matchLabelKeys", &c.match_label_keys);
    NodeRef selector = cx.Mapping(node, "labelSelector");
    if (selector.Valid()) c.label_selector = DecodeLabelSelector(cx, selector);
    bool ok = true;
    if (!max_skew || *max_skew <= 0) {
      Diagnostic& d = cx.Error(DiagCode::kBadSpread, node.Get("maxSkew").Valid() ? node.Get("maxSkew") : node,
                               max_skew ? fmt::format("`maxSkew` must be greater than zero, found {}", *max_skew)
                                        : std::string("a topology spread constraint needs `maxSkew`"));
      d.help = "`maxSkew: 1` keeps the domains within one pod of each other";
      ok = false;
    } else {
      c.max_skew = *max_skew;
    }
    if (c.topology_key.empty()) {
      cx.Error(DiagCode::kBadSpread, node.Get("topologyKey").Valid() ? node.Get("topologyKey") : node,
               "a topology spread constraint needs a `topologyKey`");
      ok = false;
    }
    if (when == "DoNotSchedule") {
      c.when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
    } else if (when == "ScheduleAnyway") {
      c.when_unsatisfiable = WhenUnsatisfiable::kScheduleAnyway;
    } else {
      ok = cx.BadEnum(node.Get("whenUnsatisfiable").Valid() ? node.Get("whenUnsatisfiable") : node,
                      "whenUnsatisfiable", when, {"DoNotSchedule", "ScheduleAnyway"}, DiagCode::kBadSpread);
    }
    if (c.min_domains) {
      if (*c.min_domains <= 0) {
        cx.Error(DiagCode::kBadSpread, node.Get("minDomains"),
                 fmt::format("`minDomains` must be greater than zero, found {}", *c.min_domains));
        ok = false;
      } else if (c.when_unsatisfiable != WhenUnsatisfiable::kDoNotSchedule) {
        cx.Error(DiagCode::kBadSpread, node.Get("minDomains"),
                 "`minDomains` can be set only with `whenUnsatisfiable: DoNotSchedule`");
        ok = false;
      }
    }
    auto policy = [&](const std::string& text, std::string_view field, InclusionPolicy* out_policy) {
      if (text.empty()) return;
      if (text == "Honor") {
        *out_policy = InclusionPolicy::kHonor;
      } else if (text == "Ignore") {
        *out_policy = InclusionPolicy::kIgnore;
      } else {
        ok = cx.BadEnum(node.Get(field), field, text, {"Honor", "Ignore"}, DiagCode::kBadSpread);
      }
    };
    policy(affinity_policy, "nodeAffinityPolicy", &c.node_affinity_policy);
    policy(taints_policy, "nodeTaintsPolicy", &c.node_taints_policy);
    for (const TopologySpreadConstraint& prev : *out) {
      if (ok && prev.topology_key == c.topology_key && prev.when_unsatisfiable == c.when_unsatisfiable) {
        Diagnostic& d = cx.Error(DiagCode::kBadSpread, node,
                                 fmt::format("two spread constraints on `{}` with the same `whenUnsatisfiable`",
                                             c.topology_key));
        d.secondary.push_back({prev.span, "the first one"});
        ok = false;
      }
    }
    if (ok) out->push_back(std::move(c));
  }
}

}  // namespace policy::k8s
