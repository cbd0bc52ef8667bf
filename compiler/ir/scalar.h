#pragma once
/// The meaning of the IR's scalar operations, written once: constant
/// folding (passes/fold.cpp) and the interpreter (runtime/interp) both call
/// these. The LLVM back end emits the same rules as machine code
/// (codegen/arith_emitter.cpp, kernel_emitter.cpp); the differential tests
/// hold it to these.
///
/// Numbers are int64: ints as they are, quantities in milli-units.
/// Arithmetic saturates at the int64 limits; division and remainder by zero
/// give 0. None compares equal only to none, and orders with nothing.

#include <cstdint>
#include <optional>
#include <string_view>

#include "compiler/ir/ir.h"

namespace policy::ir::scalar {

/// `v` clamped to [INT64_MIN, INT64_MAX].
int64_t Saturate(__int128 v);
/// a op b, saturating; x / 0 and x % 0 are 0.
int64_t Arith(ArithOp op, int64_t a, int64_t b);
/// -a, saturating.
int64_t Negate(int64_t a);
/// An int used as a quantity: a * 1000 milli-units, saturating.
int64_t IntToQuantity(int64_t a);
/// floor(a * b / c) without overflow in between, saturating; 0 when c is 0.
int64_t MulDiv(int64_t a, int64_t b, int64_t c);
/// q.units(): milli-units to whole units, rounded up as Quantity.Value() does.
int64_t Units(int64_t milli);
/// s.int(): Go's strconv.ParseInt(s, 10, 64); none when it is not one.
std::optional<int64_t> ToInt(std::string_view s);
/// s.quantity(): a Kubernetes quantity in milli-units; none when it is not one.
std::optional<int64_t> ToQuantity(std::string_view s);
/// s.startsWith(p) and s.contains(p); false when either is none.
bool StartsWith(std::optional<std::string_view> s, std::optional<std::string_view> prefix);
bool Contains(std::optional<std::string_view> s, std::optional<std::string_view> part);
/// interpolate(xs, ys, x): kube-scheduler's helper.BuildBrokenLinearFunction
/// over the points (xs[i], ys[i]), xs ascending (the shorter list counts).
int64_t Interpolate(const int64_t* xs, const int64_t* ys, size_t n, int64_t x);

/// A scalar operand of a comparison: none, an int/bool/quantity, or a string.
struct Scalar {
  enum class Kind : uint8_t { kNone, kNumber, kString };
  Kind kind = Kind::kNone;
  int64_t number = 0;
  std::string_view text;
};
/// a op b: == and != with none equal only to none; the orderings false when
/// either side is none.
bool Compare(CompareOp op, const Scalar& a, const Scalar& b);

}  // namespace policy::ir::scalar
