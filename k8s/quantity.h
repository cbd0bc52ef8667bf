#pragma once
/// resource.Quantity with Kubernetes' exact semantics.
///
/// A quantity is held exactly in nanounits (1e-9) as a 128-bit integer, the
/// resolution Kubernetes keeps: values finer than that round up (away from
/// zero), magnitudes above 2^63-1 units clamp to it, as ParseQuantity does.
/// Value() and MilliValue() round up like Quantity.Value()/MilliValue().

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace policy::k8s {

/// How a quantity was written: decides the suffixes ToString() uses.
enum class QuantityFormat : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

class Quantity {
 public:
  using Nanos = __int128;

  /// Largest magnitude, in nanounits: (2^63-1) units.
  static constexpr Nanos kMaxNanos = static_cast<Nanos>(INT64_MAX) * 1000000000;

  Quantity() = default;
  static Quantity FromNanos(Nanos nanos, QuantityFormat format = QuantityFormat::kDecimalSI);
  static Quantity FromMilli(int64_t milli) { return FromNanos(static_cast<Nanos>(milli) * 1000000); }
  static Quantity FromUnits(int64_t units) { return FromNanos(static_cast<Nanos>(units) * 1000000000); }

  /// Parses `text` exactly as k8s.io/apimachinery's ParseQuantity does (no
  /// surrounding spaces). On failure returns nullopt and says why in `why`.
  static std::optional<Quantity> Parse(std::string_view text, std::string* why = nullptr);

  Nanos nanos() const { return nanos_; }
  QuantityFormat format() const { return format_; }
  bool IsZero() const { return nanos_ == 0; }
  bool IsNegative() const { return nanos_ < 0; }

  /// Whole units, rounded up away from zero, saturating at int64 limits.
  int64_t Value() const;
  /// Thousandths, rounded up away from zero, saturating at int64 limits.
  int64_t MilliValue() const;

  /// A canonical spelling: `500m`, `4`, `16Gi`, `1500k`.
  std::string ToString() const;

  Quantity& operator+=(const Quantity& other);
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }
  friend auto operator<=>(const Quantity& a, const Quantity& b) { return a.nanos_ <=> b.nanos_; }

 private:
  Nanos nanos_ = 0;
  QuantityFormat format_ = QuantityFormat::kDecimalSI;
};

/// The int64 amount kube-scheduler computes with for resource `name`:
/// milli-units for `cpu`, whole units for everything else.
int64_t SchedulerUnits(std::string_view name, const Quantity& quantity);
/// The policy language's value of `units` of resource `name` (a quantity,
/// in milli-units): cpu's units already are; others times 1000, saturated.
int64_t SchedulerUnitsToMilli(std::string_view name, int64_t units);
/// units * 1000, saturated to int64.
int64_t SaturatedMilli(int64_t units);

/// Whether resource `name` counts bytes (memory, ephemeral-storage, hugepages-*).
bool BytesResource(std::string_view name);
/// `units` of resource `name` (kube-scheduler's units) as written back:
/// `1500m`, `30Gi`, `4` (exact; binary suffixes for bytes).
std::string WrittenAmount(std::string_view name, int64_t units);
/// The same as a person reads it in a table or a sentence (JSON and YAML
/// fields keep WrittenAmount's): cpu in cores to the hundredth (`47.91`),
/// bytes with the binary suffix that leaves 1 to 1023, to a tenth
/// (`190.6Gi`), anything else as it is. Rounded: never a value to write back.
std::string ReadableAmount(std::string_view name, int64_t units);

}  // namespace policy::k8s
