// The worst-case cost of a DRA selector (cost.h), one bottom-up walk as
// cel-go's coster: each node's cost range and, where the result is a string,
// bytes, list or map, its size range. Sizes of what `device` reaches are the
// DRA environment's declared maxima (k8s.io/dynamic-resource-allocation/cel's
// sizeEstimator: every size from 0 to the declared maximum); a literal's is
// exact; anything else is unknown (0 to UINT64_MAX), which makes any cost
// that depends on it the maximum, as in cel-go. Macros are costed as cel-go
// expands them (the loop condition and step around the body), each
// function as cel-go's or the apiserver library's estimator costs it.

#include "compiler/cel/cost.h"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace policy::cel {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

uint64_t Add(uint64_t a, uint64_t b) { return b > 0 && a > kMax - b ? kMax : a + b; }
uint64_t Mul(uint64_t a, uint64_t b) { return b != 0 && a > kMax / b ? kMax : a * b; }

struct Size {
  uint64_t min = 0, max = kMax;
};
constexpr Size kUnknown{0, kMax};
Size Fixed(uint64_t n) { return {n, n}; }
Size UpTo(uint64_t n) { return {0, n}; }
Size Union(Size a, Size b) { return {std::min(a.min, b.min), std::max(a.max, b.max)}; }

CostEstimate Cost(uint64_t n) { return {n, n}; }
CostEstimate Plus(CostEstimate a, CostEstimate b) { return {Add(a.min, b.min), Add(a.max, b.max)}; }
CostEstimate Times(Size s, CostEstimate c) { return {Mul(s.min, c.min), Mul(s.max, c.max)}; }
CostEstimate Times(CostEstimate a, CostEstimate b) { return {Mul(a.min, b.min), Mul(a.max, b.max)}; }
CostEstimate Factor(Size s, double f) { return {CostOf(s.min, f), CostOf(s.max, f)}; }
CostEstimate Union(CostEstimate a, CostEstimate b) { return {std::min(a.min, b.min), std::max(a.max, b.max)}; }

// What the estimate knows of a value: whether it is a container (whose
// member selection costs one more), its size, and its entries' shapes.
struct Shape {
  enum class Kind : uint8_t { kScalar, kString, kList, kMap, kDevice, kDyn };
  Kind kind = Kind::kDyn;
  std::optional<Size> size;  ///< none: unknown
  std::shared_ptr<const Shape> key, elem;
};
using ShapePtr = std::shared_ptr<const Shape>;
using SK = Shape::Kind;

ShapePtr Make(SK kind, std::optional<Size> size, ShapePtr key = nullptr, ShapePtr elem = nullptr) {
  return std::make_shared<const Shape>(Shape{kind, size, std::move(key), std::move(elem)});
}
const ShapePtr& Dyn() {
  static const ShapePtr s = Make(SK::kDyn, std::nullopt);
  return s;
}
const ShapePtr& Scalar() {
  static const ShapePtr s = Make(SK::kScalar, Fixed(1));
  return s;
}

// resourceapi's limits: DriverNameMaxLength and DeviceMaxDomainLength 63,
// DeviceMaxIDLength 32, DeviceAttributeMaxValueLength 64,
// ResourceSliceMaxAttributesAndCapacitiesPerDevice 32.
const ShapePtr& DeviceShape() { static const ShapePtr s = Make(SK::kDevice, std::nullopt); return s; }
ShapePtr DeviceField(const std::string& field) {
  static const ShapePtr domain = Make(SK::kString, UpTo(63)), id = Make(SK::kString, UpTo(32));
  static const ShapePtr driver = Make(SK::kString, UpTo(63));
  static const ShapePtr attributes =
      Make(SK::kMap, UpTo(32), domain, Make(SK::kMap, UpTo(32), id, Make(SK::kDyn, UpTo(64))));
  static const ShapePtr capacity =
      Make(SK::kMap, UpTo(32), domain, Make(SK::kMap, UpTo(32), id, Make(SK::kScalar, UpTo(0))));
  if (field == "driver") return driver;
  if (field == "attributes") return attributes;
  if (field == "capacity") return capacity;
  return Dyn();
}

Size SizeOf(const ShapePtr& s) { return s && s->size ? *s->size : kUnknown; }
bool IsContainer(const ShapePtr& s) { return s->kind == SK::kMap || s->kind == SK::kDevice || s->kind == SK::kDyn; }

struct Estimate {
  CostEstimate cost;
  ShapePtr shape;
};

class Coster {
 public:
  Estimate Of(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kNull:
      case ExprKind::kBool:
      case ExprKind::kInt:
      case ExprKind::kUint:
      case ExprKind::kDouble: return {Cost(0), Scalar()};
      case ExprKind::kString: return {Cost(0), Make(SK::kString, Fixed(Characters(e.text)))};
      case ExprKind::kBytes: return {Cost(0), Make(SK::kString, Fixed(e.text.size()))};
      case ExprKind::kIdent: return {Cost(1), Ident(e.text)};
      case ExprKind::kSelect: {
        Estimate operand = Of(*e.args[0]);
        CostEstimate c = Plus(operand.cost, Cost(IsContainer(operand.shape) ? 1 : 0));
        return {c, Member(operand.shape, e.text)};
      }
      case ExprKind::kPresence: return {Plus(Of(*e.args[0]).cost, Cost(1)), Scalar()};
      case ExprKind::kIndex: {
        Estimate operand = Of(*e.args[0]), key = Of(*e.args[1]);
        ShapePtr elem = operand.shape->elem ? operand.shape->elem : Dyn();
        if (operand.shape->kind == SK::kDevice) elem = Dyn();
        return {Plus(Plus(operand.cost, key.cost), Cost(1)), elem};
      }
      case ExprKind::kList: {
        CostEstimate c = Cost(10);
        std::optional<Size> item;
        ShapePtr elem;
        for (const auto& a : e.args) {
          Estimate x = Of(*a);
          c = Plus(c, x.cost);
          item = item ? Union(*item, SizeOf(x.shape)) : SizeOf(x.shape);
          elem = x.shape;
        }
        return {c, Make(SK::kList, Fixed(e.args.size()), Scalar(), elem ? Make(elem->kind, item) : Dyn())};
      }
      case ExprKind::kMap: {
        CostEstimate c = Cost(30);
        std::optional<Size> keys, values;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Estimate k = Of(*e.args[i]), v = Of(*e.args[i + 1]);
          c = Plus(Plus(c, k.cost), v.cost);
          keys = keys ? Union(*keys, SizeOf(k.shape)) : SizeOf(k.shape);
          values = values ? Union(*values, SizeOf(v.shape)) : SizeOf(v.shape);
        }
        return {c, Make(SK::kMap, Fixed(e.args.size() / 2), Make(SK::kDyn, keys), Make(SK::kDyn, values))};
      }
      case ExprKind::kComprehension: return Comprehension(e);
      case ExprKind::kBind: {
        Estimate init = Of(*e.args[0]);
        scopes_.emplace_back(e.var, init.shape);
        Estimate result = Of(*e.args[1]);
        scopes_.pop_back();
        // An empty range list (10) around a lazily bound variable.
        return {Plus(Plus(Cost(10), init.cost), result.cost), result.shape};
      }
      case ExprKind::kCall: return Call(e);
    }
    return {Cost(0), Dyn()};
  }

 private:
  static uint64_t Characters(const std::string& s) {
    uint64_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }

  ShapePtr Ident(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    if (name == "device") return DeviceShape();
    return Scalar();  // a type name
  }

  static ShapePtr Member(const ShapePtr& operand, const std::string& field) {
    if (operand->kind == SK::kDevice) return DeviceField(field);
    if (operand->kind == SK::kMap && operand->elem) return operand->elem;
    return Dyn();
  }

  Estimate Comprehension(const Expr& e) {
    Estimate range = Of(*e.args[0]);
    Size count = SizeOf(range.shape);
    ShapePtr item = range.shape->kind == SK::kMap ? range.shape->key : range.shape->elem;
    if (!e.var2.empty()) {  // an index or key, then the element or value
      ShapePtr value = range.shape->elem;
      scopes_.emplace_back(e.var, range.shape->kind == SK::kMap && item ? item : Scalar());
      item = value;
      scopes_.emplace_back(e.var2, item ? item : Dyn());
    } else {
      scopes_.emplace_back(e.var, item ? item : Dyn());
    }
    const std::string& m = e.text;
    // The body (map's filter and transform both, when it has three).
    CostEstimate body;
    ShapePtr mapped;
    for (size_t i = 1; i < e.args.size(); ++i) {
      Estimate x = Of(*e.args[i]);
      body = Plus(body, x.cost);
      mapped = x.shape;
    }
    scopes_.pop_back();
    if (!e.var2.empty()) scopes_.pop_back();
    // cel-go's expansion: init, result and the per-item loop condition
    // plus step around the body (parser/macro.go).
    CostEstimate base, step;
    ShapePtr shape = Scalar();
    if (m == "all") base = Cost(1), step = Plus(body, Cost(3));
    else if (m == "exists") base = Cost(1), step = Plus(body, Cost(4));
    else if (m == "exists_one") base = Cost(2), step = Plus(body, Cost(2));
    else if (m == "map" || m == "transformList") base = Cost(11), step = Plus(body, Cost(12)), shape = Make(SK::kList, count, Scalar(), mapped);
    else if (m == "transformMap" || m == "transformMapEntry") base = Cost(11), step = Plus(body, Cost(12)), shape = Make(SK::kMap, count, Scalar(), mapped);
    else base = Cost(11), step = Plus(body, Cost(13)), shape = Make(SK::kList, count, Scalar(), range.shape->elem);
    return {Plus(Plus(range.cost, base), Times(count, step)), shape};
  }

  Estimate Call(const Expr& e) {
    const std::string& f = e.text;
    std::vector<Estimate> a;
    a.reserve(e.args.size());
    for (const auto& arg : e.args) a.push_back(Of(*arg));
    CostEstimate args;
    for (const Estimate& x : a) args = Plus(args, x.cost);
    auto size = [&](size_t i) { return SizeOf(a[i].shape); };
    if (f == "_&&_" || f == "_||_") return {{a[0].cost.min, Add(a[0].cost.max, a[1].cost.max)}, Scalar()};
    if (f == "_?_:_") {
      ShapePtr s = Make(a[1].shape->kind, Union(size(1), size(2)), a[1].shape->key, a[1].shape->elem);
      return {Plus(a[0].cost, Union(a[1].cost, a[2].cost)), s};
    }
    if (f == "dyn" && a.size() == 1) return {Plus(a[0].cost, Cost(1)), a[0].shape};
    CostEstimate own = Cost(1);
    ShapePtr result = Scalar();
    if (f == "_==_" || f == "_!=_" || f == "_<_" || f == "_<=_" || f == "_>_" || f == "_>=_") {
      uint64_t smallest = std::min(size(0).max, size(1).max);
      own = Factor(Size{smallest > 0 ? 1u : 0u, smallest}, kStringTraversalCostFactor);
    } else if (f == "@in") {
      own = a[1].shape->kind == SK::kList ? Factor(size(1), 1) : Cost(1);
    } else if (f == "_+_" && (a[0].shape->kind == SK::kString || a[0].shape->kind == SK::kList)) {
      Size sum{Add(size(0).min, size(1).min), Add(size(0).max, size(1).max)};
      bool list = a[0].shape->kind == SK::kList;
      own = list ? Cost(1) : Factor(sum, kStringTraversalCostFactor);
      result = Make(a[0].shape->kind, sum, a[0].shape->key, a[0].shape->elem);
    } else if (e.has_target) {
      return {Plus(args, Method(f, a, &result)), result};
    } else if (f == "string" || f == "bytes") {
      result = Make(SK::kString, std::nullopt);
    }
    return {Plus(args, own), result};
  }

  // A method's own cost (cel-go's, then the apiserver library's), its
  // arguments' costs apart; sets the result's shape.
  static CostEstimate Method(const std::string& f, const std::vector<Estimate>& a, ShapePtr* result) {
    Size target = SizeOf(a[0].shape);
    auto arg = [&](size_t i) { return i < a.size() ? SizeOf(a[i].shape) : Fixed(0); };
    constexpr double t = kStringTraversalCostFactor;
    if (f == "matches" || f == "find" || f == "findAll") {
      Size plus_one{Add(target.min, 1), Add(target.max, 1)};
      if (f == "find") *result = Make(SK::kString, UpTo(target.max));
      if (f == "findAll") *result = Make(SK::kList, UpTo(target.max), Scalar(), Make(SK::kString, UpTo(target.max)));
      return Times(Factor(plus_one, t), Factor(arg(1), kRegexStringLengthCostFactor));
    }
    if (f == "contains") return Times(Factor(target, t), Factor(arg(1), t));
    if (f == "startsWith" || f == "endsWith") return Factor(arg(1), t);
    if (f == "lowerAscii" || f == "upperAscii" || f == "trim") {
      *result = Make(SK::kString, target);
      return Factor(target, t);
    }
    if (f == "indexOf" || f == "lastIndexOf") return Factor(target, t);
    if (f == "replace") {
      *result = Make(SK::kString, std::nullopt);
      return Factor(target, 2 * t);
    }
    if (f == "split") {
      *result = Make(SK::kList, UpTo(target.max), Scalar(), Make(SK::kString, UpTo(target.max)));
      return Factor(target, 2 * t);
    }
    if (f == "join") {
      Size elem = a[0].shape->elem ? SizeOf(a[0].shape->elem) : kUnknown;
      Size joined{Mul(target.min, elem.min), Mul(target.max, elem.max)};
      if (a.size() > 1) {
        Size sep = arg(1);
        joined = {Add(joined.min, Mul(sep.min, target.min > 0 ? target.min - 1 : 0)),
                  Add(joined.max, Mul(sep.max, target.max > 0 ? target.max - 1 : 0))};
      }
      *result = Make(SK::kString, joined);
      return Factor(joined, t);
    }
    return Cost(1);
  }

  std::vector<std::pair<std::string, ShapePtr>> scopes_;
};

}  // namespace

uint64_t CostOf(uint64_t size, double factor) {
  double x = static_cast<double>(size);
  if (x > 0 && factor > 0 && x > static_cast<double>(kMax) / factor) return kMax;
  double c = std::ceil(x * factor);
  if (c >= std::ldexp(1.0, 64)) return kMax;
  return static_cast<uint64_t>(c);
}

CostEstimate EstimateCost(const Expr& expr) { return Coster().Of(expr).cost; }

std::string TooComplexMessage(const CostEstimate& cost) {
  return fmt::format("too complex, exceeds cost limit (estimated worst-case cost {}, limit {})",
                     cost.max == kMax ? std::string("unbounded") : fmt::format("{}", cost.max), kCostLimit);
}

}  // namespace policy::cel
