// Dynamic Resource Allocation objects (resource.k8s.io/v1): DeviceClass,
// ResourceSlice, ResourceClaim, ResourceClaimTemplate, with the API's
// defaults (allocationMode ExactCount, count 1) and the validation the
// allocator relies on.

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/decode_context.h"
#include "k8s/decode_object.h"
#include "k8s/decode_selectors.h"
#include "k8s/dra.h"

namespace policy::k8s {
namespace {

// `selectors[]`: each a `cel.expression`, remembered with where it was written.
std::vector<CelSelector> ReadSelectors(DecodeContext& cx, NodeRef parent) {
  std::vector<CelSelector> out;
  NodeRef list = cx.Sequence(parent, "selectors");
  for (uint32_t i = 0; list.Valid() && i < list.Size(); ++i) {
    NodeRef item = list.At(i);
    if (!cx.ExpectMapping(item, "a device selector")) continue;
    NodeRef cel = cx.Mapping(item, "cel");
    if (!cel.Valid()) {
      cx.Error(DiagCode::kBadDra, item, "a device selector without `cel`").help = "write `cel: {expression: ...}`";
      continue;
    }
    CelSelector selector;
    cx.String(cel, "expression", &selector.expression);
    if (selector.expression.empty()) {
      cx.Error(DiagCode::kMissingField, cel, "a CEL selector without an expression").help = "set `expression`";
      continue;
    }
    Span span = cel.Get("expression").GetSpan();
    if (span.Valid()) {
      LineCol at = span.source->Locate(span.begin);
      selector.file = span.source->Name();
      selector.line = at.line;
      selector.column = at.column;
      char first = span.begin < span.source->Size() ? span.source->Text()[span.begin] : 0;
      if (first == '"' || first == '\'') ++selector.column;  // the text starts after the quote
    }
    out.push_back(std::move(selector));
  }
  return out;
}

// `exactly` or one `firstAvailable` entry.
DeviceSubRequest ReadSubRequest(DecodeContext& cx, NodeRef node, std::string name, bool exactly) {
  DeviceSubRequest sub;
  sub.name = std::move(name);
  cx.String(node, "deviceClassName", &sub.class_name);
  if (sub.class_name.empty()) {
    cx.Error(DiagCode::kMissingField, node, fmt::format("device request `{}` names no device class", sub.name)).help =
        "set `deviceClassName`";
  }
  sub.selectors = ReadSelectors(cx, node);
  std::string mode = "ExactCount";
  cx.String(node, "allocationMode", &mode);
  std::optional<int64_t> count;
  cx.Int64(node, "count", &count);
  if (mode == "All") {
    sub.mode = AllocationMode::kAll;
    if (count) cx.Error(DiagCode::kBadDra, node.Get("count"), "`count` must not be set when allocationMode is All");
  } else if (mode == "ExactCount") {
    sub.count = count.value_or(1);
    if (sub.count <= 0) cx.Error(DiagCode::kBadDra, node.Get("count"), fmt::format("count must be greater than zero, found {}", sub.count));
  } else {
    cx.BadEnum(node.Get("allocationMode"), "allocationMode", mode, {"ExactCount", "All"});
  }
  if (exactly) cx.Bool(node, "adminAccess", &sub.admin_access);
  return sub;
}

DeviceClaimSpec ReadClaimSpec(DecodeContext& cx, NodeRef spec) {
  DeviceClaimSpec out;
  NodeRef devices = spec.Valid() ? cx.Mapping(spec, "devices") : NodeRef();
  if (!devices.Valid()) return out;
  NodeRef requests = cx.Sequence(devices, "requests");
  for (uint32_t i = 0; requests.Valid() && i < requests.Size(); ++i) {
    NodeRef item = requests.At(i);
    if (!cx.ExpectMapping(item, "a device request")) continue;
    DeviceRequest request;
    cx.String(item, "name", &request.name);
    if (request.name.empty()) cx.Error(DiagCode::kMissingField, item, "a device request has no name").help = "set `name`";
    for (const DeviceRequest& earlier : out.requests) {
      if (earlier.name == request.name) {
        cx.Error(DiagCode::kBadDra, item.Get("name"), fmt::format("duplicate device request `{}`", request.name));
      }
    }
    NodeRef exactly = cx.Mapping(item, "exactly");
    NodeRef first = cx.Sequence(item, "firstAvailable");
    // resource.k8s.io/v1beta1 writes `exactly`'s fields in the request itself.
    if (!exactly.Valid() && !first.Valid() && item.Get("deviceClassName").Valid()) exactly = item;
    if (exactly.Valid() == first.Valid()) {
      cx.Error(DiagCode::kBadDra, item,
               fmt::format("device request `{}` must have exactly one of `exactly` and `firstAvailable`", request.name));
    } else if (exactly.Valid()) {
      request.alternatives.push_back(ReadSubRequest(cx, exactly, request.name, true));
    } else {
      request.first_available = true;
      for (uint32_t j = 0; j < first.Size(); ++j) {
        NodeRef sub = first.At(j);
        if (!cx.ExpectMapping(sub, "a device sub-request")) continue;
        std::string name;
        cx.String(sub, "name", &name);
        if (name.empty()) cx.Error(DiagCode::kMissingField, sub, "a device sub-request has no name").help = "set `name`";
        request.alternatives.push_back(ReadSubRequest(cx, sub, name, false));
      }
      if (request.alternatives.empty()) {
        cx.Error(DiagCode::kBadDra, first, fmt::format("device request `{}` lists no alternative", request.name));
      }
    }
    out.requests.push_back(std::move(request));
  }
  NodeRef constraints = cx.Sequence(devices, "constraints");
  for (uint32_t i = 0; constraints.Valid() && i < constraints.Size(); ++i) {
    NodeRef item = constraints.At(i);
    if (!cx.ExpectMapping(item, "a device constraint")) continue;
    DeviceConstraint constraint;
    cx.StringList(item, "requests", &constraint.requests);
    cx.String(item, "matchAttribute", &constraint.match_attribute);
    for (const std::string& name : constraint.requests) {
      std::string_view base = std::string_view(name).substr(0, name.find('/'));
      bool known = false;
      for (const DeviceRequest& r : out.requests) known |= r.name == base;
      if (!known) cx.Error(DiagCode::kBadDra, item.Get("requests"), fmt::format("a constraint names request `{}`, which the claim lacks", name));
    }
    if (!constraint.match_attribute.empty() && constraint.match_attribute.find('/') == std::string::npos) {
      cx.Error(DiagCode::kBadDra, item.Get("matchAttribute"),
               fmt::format("matchAttribute `{}` must be fully qualified (`domain/name`)", constraint.match_attribute));
    }
    out.constraints.push_back(std::move(constraint));
  }
  return out;
}

std::optional<std::vector<NodeSelectorTerm>> ReadNodeSelector(DecodeContext& cx, NodeRef parent) {
  NodeRef selector = cx.Mapping(parent, "nodeSelector");
  if (!selector.Valid()) return std::nullopt;
  std::vector<NodeSelectorTerm> terms;
  NodeRef list = cx.Sequence(selector, "nodeSelectorTerms");
  for (uint32_t i = 0; list.Valid() && i < list.Size(); ++i) terms.push_back(DecodeNodeSelectorTerm(cx, list.At(i)));
  return terms;
}

DeviceAttribute ReadAttribute(DecodeContext& cx, NodeRef value, std::string_view name) {
  DeviceAttribute a;
  int kinds = 0;
  if (value.Get("int").Valid()) {
    std::optional<int64_t> v;
    cx.Int64(value, "int", &v);
    a.kind = DeviceAttribute::Kind::kInt;
    a.int_value = v.value_or(0);
    ++kinds;
  }
  if (value.Get("bool").Valid()) {
    a.kind = DeviceAttribute::Kind::kBool;
    cx.Bool(value, "bool", &a.bool_value);
    ++kinds;
  }
  if (value.Get("string").Valid()) {
    a.kind = DeviceAttribute::Kind::kString;
    cx.String(value, "string", &a.text);
    ++kinds;
  }
  if (value.Get("version").Valid()) {
    a.kind = DeviceAttribute::Kind::kVersion;
    cx.String(value, "version", &a.text);
    ++kinds;
  }
  if (kinds != 1) {
    cx.Error(DiagCode::kBadDra, value,
             fmt::format("device attribute `{}` must have exactly one of int, bool, string and version", name));
  }
  return a;
}

Device ReadDevice(DecodeContext& cx, NodeRef item, const std::string& driver) {
  Device d;
  cx.String(item, "name", &d.name);
  if (d.name.empty()) cx.Error(DiagCode::kMissingField, item, "a device has no name").help = "set `name`";
  NodeRef attributes = cx.Mapping(item, "attributes");
  for (uint32_t i = 0; attributes.Valid() && i < attributes.Size(); ++i) {
    NodeRef value = attributes.ValueAt(i);
    std::string_view name = attributes.KeyAt(i).Text();
    if (!cx.ExpectMapping(value, "a device attribute")) continue;
    d.attributes.emplace_back(QualifiedName(name, driver), ReadAttribute(cx, value, name));
  }
  NodeRef capacity = cx.Mapping(item, "capacity");
  for (uint32_t i = 0; capacity.Valid() && i < capacity.Size(); ++i) {
    NodeRef value = capacity.ValueAt(i);
    std::string_view name = capacity.KeyAt(i).Text();
    if (!cx.ExpectMapping(value, "a device capacity")) continue;
    NodeRef amount = value.Get("value");
    std::optional<Quantity> q = amount.Valid() ? cx.QuantityValue(amount, name) : std::nullopt;
    if (!amount.Valid()) cx.Error(DiagCode::kMissingField, value, fmt::format("capacity `{}` has no value", name));
    if (q) d.capacity.emplace_back(QualifiedName(name, driver), *q);
  }
  return d;
}

}  // namespace

std::string QualifiedName(std::string_view name, std::string_view driver) {
  if (name.find('/') != std::string_view::npos) return std::string(name);
  return fmt::format("{}/{}", driver, name);
}

std::string CelSelector::Where() const {
  if (file.empty()) return {};
  return fmt::format("{}:{}:{}", file, line, column);
}

std::optional<DeviceClass> DecodeDeviceClass(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<DeviceClass>(object, diags, "DeviceClass", [&](DecodeContext& cx, Meta&, DeviceClass& dc) {
    NodeRef spec = cx.Mapping(object, "spec");
    if (spec.Valid()) dc.selectors = ReadSelectors(cx, spec);
  });
}

std::optional<ResourceSlice> DecodeResourceSlice(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<ResourceSlice>(object, diags, "ResourceSlice", [&](DecodeContext& cx, Meta&, ResourceSlice& rs) {
    NodeRef spec = cx.Mapping(object, "spec");
    if (!spec.Valid()) {
      cx.Error(DiagCode::kMissingField, object, "the ResourceSlice has no spec");
      return;
    }
    cx.String(spec, "driver", &rs.driver);
    if (rs.driver.empty()) cx.Error(DiagCode::kMissingField, spec, "the ResourceSlice names no driver").help = "set `driver`";
    NodeRef pool = cx.Mapping(spec, "pool");
    if (pool.Valid()) {
      cx.String(pool, "name", &rs.pool.name);
      std::optional<int64_t> generation, count;
      cx.Int64(pool, "generation", &generation);
      cx.Int64(pool, "resourceSliceCount", &count);
      rs.pool.generation = generation.value_or(0);
      rs.pool.slice_count = count.value_or(0);
    }
    if (rs.pool.name.empty()) cx.Error(DiagCode::kMissingField, pool.Valid() ? pool : spec, "the ResourceSlice's pool has no name");
    cx.String(spec, "nodeName", &rs.node_name);
    rs.node_selector = ReadNodeSelector(cx, spec);
    cx.Bool(spec, "allNodes", &rs.all_nodes);
    bool per_device = false;
    cx.Bool(spec, "perDeviceNodeSelection", &per_device);
    int where = !rs.node_name.empty() + rs.node_selector.has_value() + rs.all_nodes + per_device;
    if (where != 1) {
      cx.Error(DiagCode::kBadDra, spec,
               "a ResourceSlice must set exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection");
    }
    NodeRef devices = cx.Sequence(spec, "devices");
    for (uint32_t i = 0; devices.Valid() && i < devices.Size(); ++i) {
      NodeRef item = devices.At(i);
      if (!cx.ExpectMapping(item, "a device")) continue;
      rs.devices.push_back(ReadDevice(cx, item, rs.driver));
    }
  });
}

std::optional<ResourceClaim> DecodeResourceClaim(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<ResourceClaim>(object, diags, "ResourceClaim", [&](DecodeContext& cx, Meta& m, ResourceClaim& rc) {
    if (!m.namespace_name.empty()) rc.namespace_name = m.namespace_name;
    rc.deleting = m.deleting;
    NodeRef metadata = object.Get("metadata");
    if (metadata.IsMapping()) {
      cx.String(metadata, "uid", &rc.uid);
      NodeRef owners = cx.Sequence(metadata, "ownerReferences");
      for (uint32_t i = 0; owners.Valid() && i < owners.Size(); ++i) {
        NodeRef owner = owners.At(i);
        if (!owner.IsMapping() || owner.Get("controller").Text() != "true") continue;
        cx.String(owner, "kind", &rc.controller_kind);
        cx.String(owner, "uid", &rc.controller_uid);
      }
    }
    rc.spec = ReadClaimSpec(cx, cx.Mapping(object, "spec"));
    NodeRef status = cx.Mapping(object, "status");
    if (!status.Valid()) return;
    NodeRef allocation = cx.Mapping(status, "allocation");
    if (allocation.Valid()) {
      AllocationResult result;
      NodeRef devices = cx.Mapping(allocation, "devices");
      NodeRef results = devices.Valid() ? cx.Sequence(devices, "results") : NodeRef();
      for (uint32_t i = 0; results.Valid() && i < results.Size(); ++i) {
        NodeRef item = results.At(i);
        if (!cx.ExpectMapping(item, "an allocated device")) continue;
        DeviceResult r;
        cx.String(item, "request", &r.request);
        cx.String(item, "driver", &r.driver);
        cx.String(item, "pool", &r.pool);
        cx.String(item, "device", &r.device);
        cx.Bool(item, "adminAccess", &r.admin_access);
        result.devices.push_back(std::move(r));
      }
      result.node_selector = ReadNodeSelector(cx, allocation);
      rc.allocation = std::move(result);
    }
    NodeRef reserved = cx.Sequence(status, "reservedFor");
    for (uint32_t i = 0; reserved.Valid() && i < reserved.Size(); ++i) {
      NodeRef item = reserved.At(i);
      if (!cx.ExpectMapping(item, "a claim consumer")) continue;
      ClaimConsumer c;
      cx.String(item, "resource", &c.resource);
      cx.String(item, "name", &c.name);
      cx.String(item, "uid", &c.uid);
      rc.reserved_for.push_back(std::move(c));
    }
  });
}

std::optional<ResourceClaimTemplate> DecodeResourceClaimTemplate(NodeRef object, DiagnosticSink& diags) {
  return DecodeObject<ResourceClaimTemplate>(object, diags, "ResourceClaimTemplate",
                                             [&](DecodeContext& cx, Meta& m, ResourceClaimTemplate& t) {
    if (!m.namespace_name.empty()) t.namespace_name = m.namespace_name;
    NodeRef spec = cx.Mapping(object, "spec");
    if (spec.Valid()) t.spec = ReadClaimSpec(cx, cx.Mapping(spec, "spec"));
  });
}

}  // namespace policy::k8s
