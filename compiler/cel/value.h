#pragma once
/// CEL's run-time values for DRA device selectors: CEL's own kinds, the
/// Kubernetes library's quantity and semver, errors, and lazy views of one
/// device (its attributes and capacity by domain), so that evaluating a
/// selector builds no maps.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/dra.h"
#include "k8s/quantity.h"

namespace policy::cel {

/// A semantic version as blang/semver parses it (Kubernetes' semver()).
struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> pre;  ///< pre-release identifiers
  std::string text;              ///< as written
};
/// Strict parse (MAJOR.MINOR.PATCH[-PRE][+BUILD]); nullopt when it is not one.
std::optional<Semver> ParseSemver(std::string_view text);
/// -1, 0 or 1, by SemVer 2.0.0 precedence.
int Compare(const Semver& a, const Semver& b);

/// What a selector is evaluated against: one device of a driver.
struct DeviceInput {
  std::string_view driver;
  const k8s::Device* device = nullptr;
};

struct Value {
  enum class Kind : uint8_t {
    kNull,
    kBool,
    kInt,
    kUint,
    kDouble,
    kString,
    kBytes,
    kList,
    kMap,
    kQuantity,
    kSemver,
    kType,   ///< a type name (type(x), int, string, ...): text
    kError,  ///< text is the message
    kDevice,       ///< the `device` variable
    kAttributes,   ///< device.attributes: domain -> kAttributeDomain
    kDomain,       ///< device.attributes[text]: name -> attribute value
    kCapacities,   ///< device.capacity: domain -> kCapacityDomain
    kCapacityDomain,  ///< device.capacity[text]: name -> quantity
  };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string text;
  std::shared_ptr<const std::vector<Value>> list;                   ///< kList
  std::shared_ptr<const std::vector<std::pair<Value, Value>>> map;  ///< kMap
  k8s::Quantity quantity;
  std::shared_ptr<const Semver> semver;
  const DeviceInput* device = nullptr;  ///< the device views

  static Value Bool(bool v) { Value x; x.kind = Kind::kBool; x.b = v; return x; }
  static Value Int(int64_t v) { Value x; x.kind = Kind::kInt; x.i = v; return x; }
  static Value Uint(uint64_t v) { Value x; x.kind = Kind::kUint; x.u = v; return x; }
  static Value Double(double v) { Value x; x.kind = Kind::kDouble; x.d = v; return x; }
  static Value String(std::string v) { Value x; x.kind = Kind::kString; x.text = std::move(v); return x; }
  static Value Error(std::string why) { Value x; x.kind = Kind::kError; x.text = std::move(why); return x; }
  static Value Quantity(k8s::Quantity q) { Value x; x.kind = Kind::kQuantity; x.quantity = q; return x; }
  static Value Type(std::string name) { Value x; x.kind = Kind::kType; x.text = std::move(name); return x; }

  bool IsError() const { return kind == Kind::kError; }
};

/// A double as Go's strconv.ParseFloat reads it (what cel-go's double()
/// and double literals use): the whole text, no surrounding space; a value
/// too small for a double is 0 or subnormal, one too large has none.
std::optional<double> ParseDouble(std::string_view text);

/// CEL's name of a value's type (`int`, `string`, `map`, `Quantity`, ...).
std::string TypeName(const Value& v);
/// A short rendering for explanations: `40Gi`, `"Ampere"`, `12`, `true`.
std::string Show(const Value& v);

}  // namespace policy::cel
