#pragma once
/// Decoders for the selector-shaped parts of a pod spec (internal).

#include "k8s/decode_context.h"

namespace policy::k8s {

/// spec.affinity
void DecodeAffinity(DecodeContext& cx, NodeRef affinity, Affinity* out);
/// a labelSelector / namespaceSelector mapping
std::optional<LabelSelector> DecodeLabelSelector(DecodeContext& cx, NodeRef selector);
/// a nodeSelectorTerm (matchExpressions, matchFields)
NodeSelectorTerm DecodeNodeSelectorTerm(DecodeContext& cx, NodeRef node);
/// spec.tolerations
void DecodeTolerations(DecodeContext& cx, NodeRef list, std::vector<Toleration>* out);
/// spec.topologySpreadConstraints
void DecodeSpread(DecodeContext& cx, NodeRef list, std::vector<TopologySpreadConstraint>* out);
/// a taint effect string; reports and returns nullopt when unknown
std::optional<TaintEffect> DecodeTaintEffect(DecodeContext& cx, NodeRef at, std::string_view text);

}  // namespace policy::k8s
