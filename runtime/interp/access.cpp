// The interpreter's view of the pod and of NodeTable rows: field loads,
// map and resource lookups, iteration, membership and builtins.

#include <algorithm>
#include <charconv>

#include "compiler/ir/scalar.h"
#include "k8s/quantity.h"
#include "runtime/columnar/device_table.h"
#include "runtime/dra/selector_evaluator.h"
#include "runtime/interp/interpreter.h"

namespace policy::rt {
namespace {

using lang::FieldId;

// ImageLocality's scaledImageScore, in float64 as kube-scheduler computes it:
// the image's size on a node times the share of nodes that have it.
int64_t ScaledImageScore(int64_t size, int64_t nodes_with_image, size_t nodes) {
  if (size == 0 || nodes == 0) return 0;
  return static_cast<int64_t>(static_cast<double>(size) * static_cast<double>(nodes_with_image) / static_cast<double>(nodes));
}

// A string value, or nothing for none.
std::optional<std::string_view> StringOf(const Value& v) {
  if (v.IsNone()) return std::nullopt;
  return std::string_view(v.s);
}

// A pod-side value (compiler/binding's view of the pod) as an interpreter value.
Value FromPod(const binding::PodRef& r) {
  using Kind = binding::PodRef::Kind;
  switch (r.kind) {
    case Kind::kNone: return Value::None();
    case Kind::kBool: return Value::Bool(r.i != 0);
    case Kind::kInt: return Value::Int(r.i);
    case Kind::kString: return Value::String(r.s);
    case Kind::kRecord: return Value::PodSide(r.record, r.ptr);
    case Kind::kRecordList: {
      std::vector<Value> out;
      for (const void* p : r.records) out.push_back(Value::PodSide(r.record, p));
      return Value::List(std::move(out));
    }
    case Kind::kStringList: {
      std::vector<Value> out;
      for (const std::string& s : *static_cast<const std::vector<std::string>*>(r.ptr)) out.push_back(Value::String(s));
      return Value::List(std::move(out));
    }
    case Kind::kStringMap: return Value::Map(SourceKind::kStringMap, r.ptr);
    case Kind::kResources: return Value::Resources(SourceKind::kResourceList, r.ptr);
  }
  return Value::None();
}

// A device attribute as the policy language reads it: a string.
std::string AttributeText(const k8s::DeviceAttribute& a) {
  switch (a.kind) {
    case k8s::DeviceAttribute::Kind::kInt: return std::to_string(a.int_value);
    case k8s::DeviceAttribute::Kind::kBool: return a.bool_value ? "true" : "false";
    default: return a.text;
  }
}

const DeviceTable::Device& DeviceOf(const Value& v) {
  return static_cast<const DeviceTable*>(v.ptr)->Devices()[static_cast<size_t>(v.i)];
}

}  // namespace

Value Interpreter::Load(FieldId field, const Value& object) {
  if (object.IsNone()) return Value::None();
  RowId row = static_cast<RowId>(object.i);
  if (object.record == RecordKind::kPodSide) {
    binding::PodRef record{binding::PodRef::Kind::kRecord};
    record.record = object.pod_record;
    record.ptr = object.ptr;
    std::optional<binding::PodRef> value = pod_view_->Load(field, record);
    return value ? FromPod(*value) : Value::None();
  }
  switch (field) {
    case FieldId::kNodeName: return Value::String(std::string(table_.NodeName(row)));
    case FieldId::kNodeLabels: return Value::Map(SourceKind::kNodeLabels, nullptr, row);
    case FieldId::kNodeTaints: {
      std::vector<Value> taints;
      for (uint32_t id : table_.Taints(row)) taints.push_back(Value::Record(RecordKind::kTaint, nullptr, id));
      return Value::List(std::move(taints));
    }
    case FieldId::kNodeUnschedulable: return Value::Bool(table_.Unschedulable()[row] != 0);
    case FieldId::kNodeAllocatable: return Value::Resources(SourceKind::kNodeAllocatable, nullptr, row);
    case FieldId::kNodeRequested: return Value::Resources(SourceKind::kNodeRequested, nullptr, row);
    case FieldId::kNodeScoringRequested: return Value::Resources(SourceKind::kNodeScoringRequested, nullptr, row);
    case FieldId::kNodePods: return Value::Int(table_.PodCount()[row]);
    case FieldId::kNodeUsedPorts: {
      std::vector<Value> ports;
      for (const k8s::HostPort* p : table_.UsedPorts(row)) ports.push_back(Value::Record(RecordKind::kUsedPort, p, row));
      return Value::List(std::move(ports));
    }
    case FieldId::kNodeAttachedVolumes: {
      std::vector<Value> out;
      for (auto& [driver, handle] : table_.AttachedVolumes(row)) {
        Value v = Value::Record(RecordKind::kAttachedVolume, nullptr, static_cast<int64_t>(driver.size()));
        v.s = driver + "/" + handle;
        out.push_back(std::move(v));
      }
      return Value::List(std::move(out));
    }
    case FieldId::kAttachedDriver: return Value::String(object.s.substr(0, static_cast<size_t>(object.i)));
    case FieldId::kAttachedId: return Value::String(object.s);
    case FieldId::kNodeVolumeLimits: {
      std::vector<Value> out;
      for (auto& [driver, count] : table_.VolumeLimits(row)) {
        Value v = Value::Record(RecordKind::kVolumeLimit, nullptr, count);
        v.s = std::move(driver);
        out.push_back(std::move(v));
      }
      return Value::List(std::move(out));
    }
    case FieldId::kVolumeLimitDriver: return Value::String(object.s);
    case FieldId::kVolumeLimitCount: return Value::Int(object.i);
    case FieldId::kNodeDisks: {
      std::vector<Value> out;
      for (auto [id, read_only] : table_.Disks(row)) {
        Value v = Value::Record(RecordKind::kDisk, nullptr, read_only ? 1 : 0);
        v.s = *id;
        out.push_back(std::move(v));
      }
      return Value::List(std::move(out));
    }
    case FieldId::kNodeDevices: {
      std::shared_ptr<const DeviceTable> devices = table_.Devices();  // the same until slices, claims or nodes change
      if (devices != devices_ || row != devices_row_ || devices_list_.IsNone()) {  // a node's loops share one list
        std::vector<Value> out;
        for (uint32_t id : devices->DevicesOf(row)) out.push_back(Value::Record(RecordKind::kDevice, devices.get(), id));
        devices_ = std::move(devices);
        devices_row_ = row;
        devices_list_ = Value::List(std::move(out));
      }
      return devices_list_;
    }
    case FieldId::kDeviceDriver: return Value::String(DeviceOf(object).slice->driver);
    case FieldId::kDevicePool: return Value::String(DeviceOf(object).slice->pool.name);
    case FieldId::kDeviceName: return Value::String(DeviceOf(object).device->name);
    case FieldId::kDeviceAllocated:
      return Value::Bool(static_cast<const DeviceTable*>(object.ptr)->InUse(static_cast<uint32_t>(object.i)));
    case FieldId::kDeviceAttributes: return Value::Map(SourceKind::kDeviceAttributes, DeviceOf(object).device);
    case FieldId::kDeviceCapacity: return Value::Resources(SourceKind::kDeviceCapacity, DeviceOf(object).device);
    case FieldId::kDiskId: return Value::String(object.s);
    case FieldId::kDiskReadOnly: return Value::Bool(object.i != 0);
    case FieldId::kUsedPortPort: return Value::Int(static_cast<const k8s::HostPort*>(object.ptr)->port);
    case FieldId::kUsedPortProtocol: return Value::String(static_cast<const k8s::HostPort*>(object.ptr)->protocol);
    case FieldId::kUsedPortHostIP: return Value::String(static_cast<const k8s::HostPort*>(object.ptr)->host_ip);
    case FieldId::kTaintKey: return Value::String(std::string(table_.pool().Get(table_.TaintDictionary()[object.i].key)));
    case FieldId::kTaintValue:
      return Value::String(std::string(table_.pool().Get(table_.TaintDictionary()[object.i].value)));
    case FieldId::kTaintEffect: return Value::String(std::string(k8s::ToString(table_.TaintDictionary()[object.i].effect)));
    default: return Value::None();  // pod-side fields are read above
  }
}

// Every (name, milli) of a resources value; node sides list their non-zero columns.
static ResourceAmounts ResourcesOf(const Value& v, const NodeTable& table) {
  if (v.source == SourceKind::kResourceList) return *static_cast<const ResourceAmounts*>(v.ptr);
  if (v.source == SourceKind::kDeviceCapacity) {
    ResourceAmounts out;
    for (const auto& [name, q] : static_cast<const k8s::Device*>(v.ptr)->capacity) out.emplace_back(name, q.MilliValue());
    return out;
  }
  ResourceAmounts out;
  RowId row = static_cast<RowId>(v.i);
  for (const ResourceColumn& column : table.Resources()) {
    std::string_view name = table.pool().Get(column.name);
    int64_t units = v.source == SourceKind::kNodeAllocatable ? column.allocatable[row] : column.requested[row];
    if (v.source == SourceKind::kNodeScoringRequested) {
      if (name == "cpu") units = table.NonZeroMilliCpu()[row];
      if (name == "memory") units = table.NonZeroMemory()[row];
    }
    if (units != 0) out.emplace_back(std::string(name), k8s::SchedulerUnitsToMilli(name, units));
  }
  return out;
}

static std::optional<int64_t> ResourceAmount(const Value& v, std::string_view name, const NodeTable& table) {
  if (v.source == SourceKind::kResourceList) {
    for (const auto& [n, amount] : *static_cast<const ResourceAmounts*>(v.ptr)) {
      if (n == name) return amount;
    }
    return std::nullopt;
  }
  if (v.source == SourceKind::kDeviceCapacity) {
    for (const auto& [n, q] : static_cast<const k8s::Device*>(v.ptr)->capacity) {
      if (n == name) return q.MilliValue();
    }
    return std::nullopt;
  }
  RowId row = static_cast<RowId>(v.i);
  if (v.source == SourceKind::kNodeScoringRequested && (name == "cpu" || name == "memory")) {
    int64_t units = name == "cpu" ? table.NonZeroMilliCpu()[row] : table.NonZeroMemory()[row];
    return k8s::SchedulerUnitsToMilli(name, units);
  }
  const ResourceColumn* column = table.Resource(name);
  if (column == nullptr) return std::nullopt;
  int64_t units = v.source == SourceKind::kNodeAllocatable ? column->allocatable[row] : column->requested[row];
  return k8s::SchedulerUnitsToMilli(name, units);
}

static std::optional<std::string> MapLookup(const Value& v, std::string_view key, const NodeTable& table) {
  if (v.source == SourceKind::kStringMap) {
    const std::string* found = k8s::Find(*static_cast<const k8s::StringMap*>(v.ptr), key);
    return found ? std::optional<std::string>(*found) : std::nullopt;
  }
  if (v.source == SourceKind::kDeviceAttributes) {
    for (const auto& [name, a] : static_cast<const k8s::Device*>(v.ptr)->attributes) {
      if (name == key) return AttributeText(a);
    }
    return std::nullopt;
  }
  const LabelColumn* column = table.Label(key);
  if (column == nullptr) return std::nullopt;
  uint32_t domain = column->domain[static_cast<RowId>(v.i)];
  if (domain == 0) return std::nullopt;
  return std::string(table.pool().Get(column->value[domain]));
}

Value Interpreter::IndexOf(const Value& object, const Value& key) {
  if (object.IsNone() || key.IsNone()) return Value::None();
  switch (object.kind) {
    case Value::Kind::kMap: {
      std::optional<std::string> found = MapLookup(object, key.s, table_);
      return found ? Value::String(*found) : Value::None();
    }
    case Value::Kind::kResources: return Value::Int(ResourceAmount(object, key.s, table_).value_or(0));
    case Value::Kind::kList:
      if (key.i < 0 || static_cast<size_t>(key.i) >= object.list->size()) return Value::None();
      return (*object.list)[static_cast<size_t>(key.i)];
    default: return Value::None();
  }
}

std::vector<std::pair<Value, Value>> Interpreter::Elements(const Value& collection, bool indexed) {
  std::vector<std::pair<Value, Value>> out;
  switch (collection.kind) {
    case Value::Kind::kList:
      for (size_t i = 0; i < collection.list->size(); ++i) {
        const Value& v = (*collection.list)[i];
        if (indexed) out.emplace_back(Value::Int(static_cast<int64_t>(i)), v);
        else out.emplace_back(v, Value::None());
      }
      break;
    case Value::Kind::kResources:
      for (auto& [name, amount] : ResourcesOf(collection, table_)) out.emplace_back(Value::String(name), Value::Int(amount));
      break;
    case Value::Kind::kMap:
      if (collection.source == SourceKind::kStringMap) {
        for (const auto& [k, v] : *static_cast<const k8s::StringMap*>(collection.ptr)) {
          out.emplace_back(Value::String(k), Value::String(v));
        }
      } else if (collection.source == SourceKind::kDeviceAttributes) {
        for (const auto& [name, a] : static_cast<const k8s::Device*>(collection.ptr)->attributes) {
          out.emplace_back(Value::String(name), Value::String(AttributeText(a)));
        }
      } else {
        RowId row = static_cast<RowId>(collection.i);
        for (const LabelColumn& column : table_.Labels()) {
          uint32_t domain = column.domain[row];
          if (domain == 0) continue;
          out.emplace_back(Value::String(std::string(table_.pool().Get(column.key))),
                           Value::String(std::string(table_.pool().Get(column.value[domain]))));
        }
      }
      break;
    default: break;
  }
  return out;
}

bool Interpreter::Contains(const Value& collection, const Value& element) {
  if (element.IsNone()) return false;
  switch (collection.kind) {
    case Value::Kind::kList:
      for (const Value& v : *collection.list) {
        if (v.kind == element.kind && (v.kind == Value::Kind::kString ? v.s == element.s : v.i == element.i)) return true;
      }
      return false;
    case Value::Kind::kMap: return MapLookup(collection, element.s, table_).has_value();
    case Value::Kind::kResources: return ResourceAmount(collection, element.s, table_).has_value();
    default: return false;
  }
}

Value Interpreter::Builtin(const ir::CallBuiltin& call) {
  if (call.builtin == lang::BuiltinId::kCel) {  // the text is read where it is, not copied
    Value device = Eval(call.args[0]);
    return Value::Bool(!device.IsNone() && CelMatches(device, call.args[1]));
  }
  std::vector<Value> args;
  for (ir::NodeId a : call.args) args.push_back(Eval(a));
  switch (call.builtin) {
    case lang::BuiltinId::kMax: return Value::Int(std::max(args[0].i, args[1].i));
    case lang::BuiltinId::kMin: return Value::Int(std::min(args[0].i, args[1].i));
    case lang::BuiltinId::kMulDiv: return Value::Int(ir::scalar::MulDiv(args[0].i, args[1].i, args[2].i));
    case lang::BuiltinId::kInterpolate: {
      std::vector<int64_t> xs, ys;
      for (const Value& v : *args[0].list) xs.push_back(v.i);
      for (const Value& v : *args[1].list) ys.push_back(v.i);
      return Value::Int(ir::scalar::Interpolate(xs.data(), ys.data(), std::min(xs.size(), ys.size()), args[2].i));
    }
    case lang::BuiltinId::kLen:
      if (args[0].kind == Value::Kind::kList) return Value::Int(static_cast<int64_t>(args[0].list->size()));
      return Value::Int(static_cast<int64_t>(Elements(args[0]).size()));
    case lang::BuiltinId::kToInt:
    case lang::BuiltinId::kToQuantity: {
      if (args[0].IsNone()) return Value::None();
      std::optional<int64_t> v = call.builtin == lang::BuiltinId::kToInt ? ir::scalar::ToInt(args[0].s)
                                                                        : ir::scalar::ToQuantity(args[0].s);
      return v ? Value::Int(*v) : Value::None();
    }
    case lang::BuiltinId::kUnits: return Value::Int(ir::scalar::Units(args[0].i));
    case lang::BuiltinId::kMillis: return Value::Int(args[0].i);
    case lang::BuiltinId::kStartsWith: return Value::Bool(ir::scalar::StartsWith(StringOf(args[0]), StringOf(args[1])));
    case lang::BuiltinId::kContains: return Value::Bool(ir::scalar::Contains(StringOf(args[0]), StringOf(args[1])));
    case lang::BuiltinId::kHas: return Value::Bool(Contains(args[0], args[1]));
    default: return ClusterBuiltin(call.builtin, args);
  }
}

// A `cel "..."` selector on one device: the table's answer for every device,
// decided at the first ask (by the selector's native kernel when it
// compiles, device_columns.h) and kept per call site while the columns stay.
bool Interpreter::CelMatches(const Value& device, ir::NodeId text) {
  const auto* devices = static_cast<const DeviceTable*>(device.ptr);
  if (devices->Columns().get() != cel_columns_) {
    cel_.clear();
    cel_columns_ = devices->Columns().get();
  }
  auto it = std::find_if(cel_.begin(), cel_.end(), [&](const auto& e) { return e.first == text; });
  if (it == cel_.end()) {
    const auto* literal = std::get_if<ir::StringConst>(&program_.nodes[text]);
    if (literal == nullptr) return false;  // lowering makes it a constant; nothing else reaches here
    it = cel_.emplace(cel_.end(), text, devices->Selector(literal->value, dra::Evaluator()));
  }
  size_t i = static_cast<size_t>(device.i);
  return i < it->second->match.size() && it->second->match[i] == 1;
}

// A list of the pod's PodAffinityTerm records.
static std::vector<const k8s::PodAffinityTerm*> Terms(const Value& list) {
  std::vector<const k8s::PodAffinityTerm*> terms;
  for (const Value& v : *list.list) {
    if (!v.IsNone()) terms.push_back(static_cast<const k8s::PodAffinityTerm*>(v.ptr));
  }
  return terms;
}

void Interpreter::ClusterValues(size_t f, ir::NodeId call_id, int64_t* out) {
  const auto& call = std::get<ir::CallBuiltin>(program_.nodes[call_id]);
  Begin(f, 0);
  std::vector<Value> args;
  for (ir::NodeId a : call.args) args.push_back(Eval(a));  // pod-side: the same on every row
  size_t rows = table_.RowCount();
  if (call.builtin == lang::BuiltinId::kPodsInDomain) {  // one lookup, then O(1) a row
    DomainView view = Cluster().Domains(Terms(args[0]), args[1].s);
    for (RowId row = 0; row < rows; ++row) out[row] = view.At(row);
    return;
  }
  ClusterView& cluster = Cluster();
  const auto* constraint = args.empty() || args[0].IsNone() || args[0].kind != Value::Kind::kRecord
                               ? nullptr
                               : static_cast<const k8s::TopologySpreadConstraint*>(args[0].ptr);
  switch (call.builtin) {
    case lang::BuiltinId::kPodsWithKey:  // the same on every row
    case lang::BuiltinId::kPodMatches:
    case lang::BuiltinId::kSpreadMin:
    case lang::BuiltinId::kSpreadWeight:
    case lang::BuiltinId::kNodesWithLabel: {
      Value v = ClusterBuiltin(call.builtin, args);
      std::fill(out, out + rows, v.kind == Value::Kind::kBool ? (v.Truthy() ? 1 : 0) : v.i);
      return;
    }
    case lang::BuiltinId::kExistingAntiAffinity: cluster.ExistingAntiAffinityColumn(out, rows); return;
    case lang::BuiltinId::kClaimsFit: cluster.Claims().FitColumn(out, rows); return;
    case lang::BuiltinId::kExistingAffinityWeight:
      cluster.ExistingAffinityWeightColumn(args[0].i, args[1].Truthy(), out, rows);
      return;
    case lang::BuiltinId::kSpreadCount:
    case lang::BuiltinId::kSpreadSkew:
    case lang::BuiltinId::kSpreadScoreCount:
      if (constraint == nullptr) {
        std::fill(out, out + rows, 0);
      } else if (call.builtin == lang::BuiltinId::kSpreadCount) {
        cluster.SpreadCountColumn(*constraint, out, rows);
      } else if (call.builtin == lang::BuiltinId::kSpreadSkew) {
        cluster.SpreadSkewColumn(*constraint, out, rows);
      } else {
        cluster.SpreadScoreCountColumn(*constraint, out, rows);
      }
      return;
    case lang::BuiltinId::kImageScore: {  // the image's id and node count once, its size per row
      std::optional<uint32_t> image = args[0].IsNone() ? std::nullopt : table_.ImageId(args[0].s);
      int64_t with_image = image ? table_.NodesWithImage(args[0].s) : 0;
      for (RowId row = 0; row < rows; ++row) {
        out[row] = image ? ScaledImageScore(table_.ImageSize(row, *image), with_image, table_.NodeCount()) : 0;
      }
      return;
    }
    default:
      for (RowId row = 0; row < rows; ++row) {
        row_ = row;
        Value v = ClusterBuiltin(call.builtin, args);
        out[row] = v.kind == Value::Kind::kBool ? (v.Truthy() ? 1 : 0) : v.i;
      }
  }
}

std::optional<uint64_t> Interpreter::ClusterVersion(size_t f, ir::NodeId call_id) {
  const auto& call = std::get<ir::CallBuiltin>(program_.nodes[call_id]);
  Begin(f, 0);
  std::vector<Value> args;
  for (ir::NodeId a : call.args) args.push_back(Eval(a));
  ClusterView& cluster = Cluster();
  const auto* constraint = args.empty() || args[0].IsNone() || args[0].kind != Value::Kind::kRecord
                               ? nullptr
                               : static_cast<const k8s::TopologySpreadConstraint*>(args[0].ptr);
  switch (call.builtin) {
    case lang::BuiltinId::kSpreadCount:
    case lang::BuiltinId::kSpreadSkew:
    case lang::BuiltinId::kSpreadMin:
    case lang::BuiltinId::kSpreadScoreCount:
      // The constraint's counts over its eligible nodes (which change only
      // with the nodes, and then nothing kept is used).
      return constraint ? table_.PodSetVersion(cluster.SpreadSet(*constraint)) : 0;
    case lang::BuiltinId::kPodsInDomain:
    case lang::BuiltinId::kPodsWithKey: return table_.PodSetVersion(cluster.TermsSet(Terms(args[0])));
    case lang::BuiltinId::kExistingAntiAffinity:
    case lang::BuiltinId::kExistingAffinityWeight: return table_.TermGroupsVersion();
    case lang::BuiltinId::kPodMatches:  // the pod's own labels
    case lang::BuiltinId::kNodesWithLabel:  // the nodes' labels
    case lang::BuiltinId::kImageScore:  // the nodes' images
      return 0;
    default: return std::nullopt;  // spreadWeight (the feasible rows), and any other
  }
}

std::optional<dra::FitVersion> Interpreter::ClusterRowsVersion(size_t f, ir::NodeId call_id) {
  const auto& call = std::get<ir::CallBuiltin>(program_.nodes[call_id]);
  if (call.builtin != lang::BuiltinId::kClaimsFit) return std::nullopt;
  Begin(f, 0);
  return Cluster().Claims().Version();
}

bool Interpreter::ClusterRowsMoved(size_t f, ir::NodeId call_id, const dra::FitVersion& since, std::vector<RowId>& rows) {
  const auto& call = std::get<ir::CallBuiltin>(program_.nodes[call_id]);
  if (call.builtin != lang::BuiltinId::kClaimsFit) return false;
  Begin(f, 0);
  return Cluster().Claims().RowsMoved(since, rows);
}

void Interpreter::KnowClusterValues(size_t f, ir::NodeId call_id, const int64_t* values) {
  const auto& call = std::get<ir::CallBuiltin>(program_.nodes[call_id]);
  if (call.builtin != lang::BuiltinId::kClaimsFit) return;
  Begin(f, 0);
  Cluster().Claims().KnowFits(values, table_.RowCount());
}

int64_t Interpreter::ClusterValueAt(size_t f, ir::NodeId call_id, RowId row) {
  const auto& call = std::get<ir::CallBuiltin>(program_.nodes[call_id]);
  Begin(f, row);
  std::vector<Value> args;
  for (ir::NodeId a : call.args) args.push_back(Eval(a));
  Value v = ClusterBuiltin(call.builtin, args);
  return v.kind == Value::Kind::kBool ? (v.Truthy() ? 1 : 0) : v.i;
}

Value Interpreter::ClusterBuiltin(lang::BuiltinId id, const std::vector<Value>& args) {
  ClusterView& cluster = Cluster();
  const auto* constraint = args.empty() || args[0].IsNone() || args[0].kind != Value::Kind::kRecord
                               ? nullptr
                               : static_cast<const k8s::TopologySpreadConstraint*>(args[0].ptr);
  switch (id) {
    case lang::BuiltinId::kPodsInDomain: return Value::Int(cluster.PodsInDomain(Terms(args[0]), args[1].s, row_));
    case lang::BuiltinId::kPodsWithKey: return Value::Int(cluster.PodsWithKey(Terms(args[0]), args[1].s));
    case lang::BuiltinId::kPodMatches: return Value::Bool(cluster.PodMatches(Terms(args[0])));
    case lang::BuiltinId::kExistingAntiAffinity: return Value::Int(cluster.ExistingAntiAffinity(row_));
    case lang::BuiltinId::kExistingAffinityWeight: return Value::Int(cluster.ExistingAffinityWeight(args[0].i, args[1].Truthy(), row_));
    case lang::BuiltinId::kSpreadCount: return Value::Int(constraint ? cluster.SpreadCount(*constraint, row_) : 0);
    case lang::BuiltinId::kSpreadMin: return Value::Int(constraint ? cluster.SpreadMin(*constraint) : 0);
    case lang::BuiltinId::kSpreadSkew: return Value::Int(constraint ? cluster.SpreadSkew(*constraint, row_) : 0);
    case lang::BuiltinId::kSpreadScoreCount: return Value::Int(constraint ? cluster.SpreadScoreCount(*constraint, row_) : 0);
    case lang::BuiltinId::kSpreadWeight: return Value::Int(constraint ? cluster.SpreadWeight(*constraint) : 0);
    case lang::BuiltinId::kNodesWithLabel: return Value::Int(args[0].IsNone() ? 0 : cluster.NodesWithLabel(args[0].s));
    case lang::BuiltinId::kClaimsFit: return Value::Int(static_cast<int64_t>(cluster.Claims().FitOf(row_)));
    case lang::BuiltinId::kClaimsError: return Value::String(cluster.Claims().Check(row_).error);
    case lang::BuiltinId::kClaimsDetail: return Value::String(cluster.Claims().Explain(row_));
    case lang::BuiltinId::kClosestLabelKey:
      return Value::String(args[0].IsNone() ? std::string() : std::string(cluster.ClosestLabelKey(args[0].s)));
    case lang::BuiltinId::kImageScore: {
      std::optional<uint32_t> image = args[0].IsNone() ? std::nullopt : table_.ImageId(args[0].s);
      if (!image) return Value::Int(0);
      return Value::Int(ScaledImageScore(table_.ImageSize(row_, *image), table_.NodesWithImage(args[0].s), table_.NodeCount()));
    }
    default: break;  // not a cluster builtin
  }
  return Value::None();
}

}  // namespace policy::rt
