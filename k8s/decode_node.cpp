// Nodes, namespaces and object kinds.

#include <unordered_set>

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/decode_context.h"
#include "k8s/decode_selectors.h"
#include "support/decimal.h"

namespace policy::k8s {

std::string_view KindOf(NodeRef object, std::string_view default_kind) {
  NodeRef kind = object.Get("kind");
  if (kind.IsScalar() && kind.Type() == ScalarType::kString && !kind.Text().empty()) return kind.Text();
  return default_kind;
}

namespace {

void DecodeTaints(DecodeContext& cx, NodeRef list, std::vector<Taint>* out) {
  std::unordered_set<std::string> seen;  // key and effect: duplicates found in linear time
  for (uint32_t i = 0; i < list.Size(); ++i) {
    NodeRef node = list.At(i);
    if (!cx.ExpectMapping(node, "taint")) continue;
    Taint t;
    std::string effect;
    cx.String(node, "key", &t.key);
    cx.String(node, "value", &t.value);
    cx.String(node, "effect", &effect);
    if (t.key.empty()) {
      cx.Error(DiagCode::kBadTaint, node.Get("key").Valid() ? node.Get("key") : node, "a taint needs a `key`");
      continue;
    }
    if (effect.empty()) {
      Diagnostic& d = cx.Error(DiagCode::kBadTaint, node, fmt::format("taint `{}` has no `effect`", t.key));
      d.help = "use one of `NoSchedule`, `PreferNoSchedule`, `NoExecute`";
      continue;
    }
    std::optional<TaintEffect> e = DecodeTaintEffect(cx, node.Get("effect"), effect);
    if (!e) continue;
    t.effect = *e;
    // API validation (validateNodeTaints): one taint per key and effect.
    if (!seen.insert(t.key + '\0' + effect).second) {
      cx.Error(DiagCode::kBadTaint, node, fmt::format("the node has taint `{}` with effect {} twice", t.key, effect))
          .help = "taints must be unique by key and effect, as the API server requires";
      continue;
    }
    out->push_back(std::move(t));
  }
}

void CheckNonNegative(DecodeContext& cx, NodeRef map, const ResourceList& list, std::string_view what) {
  for (const auto& [name, q] : list) {
    if (q.IsNegative()) {
      cx.Error(DiagCode::kNegativeResource, map.Get(name),
               fmt::format("{} of `{}` must not be negative, found `{}`", what, name, map.Get(name).Text()));
    }
  }
}

}  // namespace

std::optional<Node> DecodeNode(NodeRef object, DiagnosticSink& diags) {
  DecodeContext cx(diags);
  Node node;
  NodeRef metadata = cx.Mapping(object, "metadata");
  if (metadata.Valid()) {
    cx.String(metadata, "name", &node.name);
    cx.StringMapField(metadata, "labels", &node.labels);
    cx.StringMapField(metadata, "annotations", &node.annotations);
  }
  NodeRef spec = cx.Mapping(object, "spec");
  if (spec.Valid()) {
    cx.Bool(spec, "unschedulable", &node.unschedulable);
    NodeRef taints = cx.Sequence(spec, "taints");
    if (taints.Valid()) DecodeTaints(cx, taints, &node.taints);
  }
  NodeRef status = cx.Mapping(object, "status");
  if (status.Valid()) {
    NodeRef capacity = cx.Resources(status, "capacity", &node.capacity);
    NodeRef allocatable = cx.Resources(status, "allocatable", &node.allocatable);
    if (capacity.Valid()) CheckNonNegative(cx, capacity, node.capacity, "the capacity");
    if (allocatable.Valid()) CheckNonNegative(cx, allocatable, node.allocatable, "the allocatable amount");
    NodeRef images = cx.Sequence(status, "images");
    for (uint32_t i = 0; images.Valid() && i < images.Size(); ++i) {
      NodeRef image = images.At(i);
      if (!cx.ExpectMapping(image, "a node image")) continue;
      std::vector<std::string> names;
      NodeRef list = cx.Sequence(image, "names");
      for (uint32_t k = 0; list.Valid() && k < list.Size(); ++k) {
        if (list.At(k).IsScalar()) names.emplace_back(list.At(k).Text());
      }
      std::optional<int64_t> size;
      NodeRef bytes = image.Get("sizeBytes");
      if (bytes.Valid() && bytes.IsScalar()) size = ParseDecimalInt(bytes.Text());
      if (!names.empty()) node.images.emplace_back(std::move(names), size.value_or(0));
    }
    // API defaulting: a node without allocatable offers its capacity.
    if (!status.Get("allocatable").Valid() || status.Get("allocatable").IsNull()) node.allocatable = node.capacity;
  }
  if (node.name.empty() && cx.Clean()) {
    cx.Error(DiagCode::kMissingField, metadata.Valid() ? metadata : object, "the node has no name").help =
        "set `metadata.name`";
  }
  if (!cx.Clean()) return std::nullopt;
  return node;
}

std::optional<Namespace> DecodeNamespace(NodeRef object, DiagnosticSink& diags) {
  DecodeContext cx(diags);
  Namespace ns;
  NodeRef metadata = cx.Mapping(object, "metadata");
  if (metadata.Valid()) {
    cx.String(metadata, "name", &ns.name);
    cx.StringMapField(metadata, "labels", &ns.labels);
  }
  if (ns.name.empty() && cx.Clean()) {
    cx.Error(DiagCode::kMissingField, metadata.Valid() ? metadata : object, "the namespace has no name");
  }
  if (!cx.Clean()) return std::nullopt;
  return ns;
}

}  // namespace policy::k8s
