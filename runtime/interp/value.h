#pragma once
/// Runtime values of the reference interpreter.
///
/// Scalars are held directly (ints and quantities as int64, quantities in
/// milli-units). Collections and records are views: of the pod being placed
/// (pointers into its k8s objects and precomputed requests) or of one row of
/// the NodeTable; lists built by the policy itself are owned.

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "k8s/objects.h"
#include "compiler/binding/pod_values.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

/// Which record a record value is: one of the pod's (which one: pod_record,
/// the list compiler/binding keeps), the node, or a taint of the dictionary.
/// Node-side records computed per row hold their fields in the value itself:
/// kAttachedVolume `s` = DRIVER/HANDLE and `i` = the driver's length;
/// kVolumeLimit `s` = driver, `i` = count; kDisk `s` = identity, `i` = read-only;
/// kDevice `ptr` = the DeviceTable, `i` = the device's index in it.
enum class RecordKind : uint8_t { kPodSide, kNode, kTaint, kUsedPort, kAttachedVolume, kVolumeLimit, kDisk, kDevice };
/// Where a map or resources value reads from.
enum class SourceKind : uint8_t {
  kStringMap,        ///< a k8s::StringMap (pod labels, nodeSelector)
  kNodeLabels,       ///< the labels of node `row`
  kResourceList,     ///< a precomputed list of (name, milli) pairs
  kNodeAllocatable,  ///< resource columns of node `row`
  kNodeRequested,
  kNodeScoringRequested,
  kDeviceAttributes,  ///< the attributes of the k8s::Device `ptr`
  kDeviceCapacity,    ///< the capacities of the k8s::Device `ptr`
};

using ResourceAmounts = binding::ResourceAmounts;

struct Value {
  enum class Kind : uint8_t { kNone, kBool, kInt, kString, kList, kRecord, kMap, kResources };
  Kind kind = Kind::kNone;
  int64_t i = 0;  ///< bool, int, quantity; node rows and taint ids for views
  std::string s;
  std::shared_ptr<const std::vector<Value>> list;
  RecordKind record = RecordKind::kPodSide;
  binding::PodRecord pod_record = binding::PodRecord::kPod;  ///< kPodSide records
  SourceKind source = SourceKind::kStringMap;
  const void* ptr = nullptr;  ///< the viewed object (pod side)

  static Value None() { return {}; }
  static Value Bool(bool b) { Value v; v.kind = Kind::kBool; v.i = b; return v; }
  static Value Int(int64_t n) { Value v; v.kind = Kind::kInt; v.i = n; return v; }
  static Value String(std::string text) { Value v; v.kind = Kind::kString; v.s = std::move(text); return v; }
  static Value List(std::vector<Value> elements) {
    Value v;
    v.kind = Kind::kList;
    v.list = std::make_shared<const std::vector<Value>>(std::move(elements));
    return v;
  }
  static Value Record(RecordKind kind, const void* ptr, int64_t row = 0) {
    Value v; v.kind = Kind::kRecord; v.record = kind; v.ptr = ptr; v.i = row; return v;
  }
  static Value PodSide(binding::PodRecord which, const void* ptr) {
    Value v = Record(RecordKind::kPodSide, ptr);
    v.pod_record = which;
    return v;
  }
  static Value Map(SourceKind source, const void* ptr, int64_t row = 0) {
    Value v; v.kind = Kind::kMap; v.source = source; v.ptr = ptr; v.i = row; return v;
  }
  static Value Resources(SourceKind source, const void* ptr, int64_t row = 0) {
    Value v; v.kind = Kind::kResources; v.source = source; v.ptr = ptr; v.i = row; return v;
  }
  bool IsNone() const { return kind == Kind::kNone; }
  bool Truthy() const { return kind == Kind::kBool && i != 0; }
};


/// A quantity in milli-units for people: `500m`, `4`, `16Gi`, `1500k`.
std::string FormatQuantity(int64_t milli);

}  // namespace policy::rt
