#include "compiler/ir/scalar.h"

#include <limits>

#include "k8s/quantity.h"
#include "support/decimal.h"

namespace policy::ir::scalar {

int64_t Saturate(__int128 v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int64_t Arith(ArithOp op, int64_t a, int64_t b) {
  __int128 x = a, y = b;
  switch (op) {
    case ArithOp::kAdd: return Saturate(x + y);
    case ArithOp::kSub: return Saturate(x - y);
    case ArithOp::kMul: return Saturate(x * y);
    case ArithOp::kDiv: return y == 0 ? 0 : Saturate(x / y);
    case ArithOp::kMod: return y == 0 ? 0 : Saturate(x % y);
  }
  return 0;
}

int64_t Negate(int64_t a) { return Saturate(-static_cast<__int128>(a)); }

int64_t IntToQuantity(int64_t a) { return Saturate(static_cast<__int128>(a) * 1000); }

int64_t MulDiv(int64_t a, int64_t b, int64_t c) {
  if (c == 0) return 0;
  __int128 q = static_cast<__int128>(a) * b;
  __int128 r = q / c;
  if (q % c != 0 && ((q < 0) != (c < 0))) --r;  // round down
  return Saturate(r);
}

int64_t Units(int64_t milli) { return milli / 1000 + (milli % 1000 > 0 ? 1 : 0); }

std::optional<int64_t> ToInt(std::string_view s) { return ParseDecimalInt(s); }

std::optional<int64_t> ToQuantity(std::string_view s) {
  std::optional<k8s::Quantity> q = k8s::Quantity::Parse(s);
  if (!q) return std::nullopt;
  return q->MilliValue();
}

bool StartsWith(std::optional<std::string_view> s, std::optional<std::string_view> prefix) {
  return s && prefix && s->starts_with(*prefix);
}

bool Contains(std::optional<std::string_view> s, std::optional<std::string_view> part) {
  return s && part && s->find(*part) != std::string_view::npos;
}

int64_t Interpolate(const int64_t* xs, const int64_t* ys, size_t n, int64_t x) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; ++i) {
    if (x > xs[i]) continue;
    if (i == 0) return ys[0];
    int64_t dx = xs[i] - xs[i - 1];
    if (dx == 0) return ys[i];
    return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / dx;
  }
  return ys[n - 1];
}

bool Compare(CompareOp op, const Scalar& a, const Scalar& b) {
  bool a_none = a.kind == Scalar::Kind::kNone, b_none = b.kind == Scalar::Kind::kNone;
  auto equal = [&] {
    if (a_none || b_none) return a_none && b_none;
    if (a.kind == Scalar::Kind::kString) return b.kind == Scalar::Kind::kString && a.text == b.text;
    return a.number == b.number;
  };
  if (op == CompareOp::kEq) return equal();
  if (op == CompareOp::kNe) return !equal();
  if (a_none || b_none) return false;
  switch (op) {
    case CompareOp::kLt: return a.number < b.number;
    case CompareOp::kLe: return a.number <= b.number;
    case CompareOp::kGt: return a.number > b.number;
    default: return a.number >= b.number;
  }
}

}  // namespace policy::ir::scalar
