#pragma once
/// The metadata every decoded object reads, and the skeleton of one
/// object's decoder (internal to the decoders of k8s/).

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "k8s/decode_context.h"

namespace policy::k8s {

// metadata.name (required), namespace, labels, annotations and whether the
// object is being deleted.
struct Meta {
  std::string name, namespace_name;
  StringMap labels, annotations;
  bool deleting = false;
};

inline Meta ReadMeta(DecodeContext& cx, NodeRef object, std::string_view kind) {
  Meta m;
  NodeRef metadata = cx.Mapping(object, "metadata");
  if (metadata.Valid()) {
    cx.String(metadata, "name", &m.name);
    cx.String(metadata, "namespace", &m.namespace_name);
    cx.StringMapField(metadata, "labels", &m.labels);
    cx.StringMapField(metadata, "annotations", &m.annotations);
    NodeRef deletion = metadata.Get("deletionTimestamp");
    m.deleting = deletion.Valid() && !deletion.IsNull();
  }
  if (m.name.empty() && cx.Clean()) {
    cx.Error(DiagCode::kMissingField, metadata.Valid() ? metadata : object, fmt::format("the {} has no name", kind))
        .help = "set `metadata.name`";
  }
  return m;
}

// One object of `kind`: its metadata (the name into `out.name`), then
// `read(cx, meta, out)` for the rest (it may take the metadata's maps). The object, or nullopt after an error.
template <typename Object, typename Read>
std::optional<Object> DecodeObject(NodeRef object, DiagnosticSink& diags, std::string_view kind, Read read) {
  DecodeContext cx(diags);
  Meta m = ReadMeta(cx, object, kind);
  Object out;
  out.name = m.name;
  read(cx, m, out);
  if (!cx.Clean()) return std::nullopt;
  return out;
}


}  // namespace policy::k8s
