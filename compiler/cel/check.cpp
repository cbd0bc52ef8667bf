// CEL type checking for DRA selectors (check.h): one bottom-up pass with
// `dyn` where the environment does not know a type, overloads resolved per
// operator and function as cel-go's checker reports them.

#include "compiler/cel/check.h"

#include <memory>
#include <optional>

#include <fmt/format.h>

namespace policy::cel {
namespace {

struct Type {
  enum class Kind : uint8_t { kDyn, kNull, kBool, kInt, kUint, kDouble, kString, kBytes, kList, kMap, kQuantity, kSemver, kType, kDevice, kError };
  Kind kind = Kind::kDyn;
  std::shared_ptr<const Type> key, elem;  ///< map key / list or map element
};
using K = Type::Kind;

Type Simple(K kind) { return Type{kind, nullptr, nullptr}; }
Type ListOf(Type elem) { return Type{K::kList, nullptr, std::make_shared<const Type>(std::move(elem))}; }
Type MapOf(Type key, Type elem) {
  return Type{K::kMap, std::make_shared<const Type>(std::move(key)), std::make_shared<const Type>(std::move(elem))};
}

std::string Name(const Type& t) {
  switch (t.kind) {
    case K::kDyn: return "dyn";
    case K::kNull: return "null_type";
    case K::kBool: return "bool";
    case K::kInt: return "int";
    case K::kUint: return "uint";
    case K::kDouble: return "double";
    case K::kString: return "string";
    case K::kBytes: return "bytes";
    case K::kList: return fmt::format("list({})", Name(*t.elem));
    case K::kMap: return fmt::format("map({}, {})", Name(*t.key), Name(*t.elem));
    case K::kQuantity: return "kubernetes.Quantity";
    case K::kSemver: return "kubernetes.Semver";
    case K::kType: return "type";
    case K::kDevice: return "kubernetes.DRADevice";
    case K::kError: return "*error*";
  }
  return "dyn";
}

bool IsDyn(const Type& t) { return t.kind == K::kDyn || t.kind == K::kError; }
bool Is(const Type& t, K kind) { return t.kind == kind || IsDyn(t); }
bool IsNumber(const Type& t) { return t.kind == K::kInt || t.kind == K::kUint || t.kind == K::kDouble; }

class Checker {
 public:
  std::vector<Problem> problems;

  Type Check(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kNull: return Simple(K::kNull);
      case ExprKind::kBool: return Simple(K::kBool);
      case ExprKind::kInt: return Simple(K::kInt);
      case ExprKind::kUint: return Simple(K::kUint);
      case ExprKind::kDouble: return Simple(K::kDouble);
      case ExprKind::kString: return Simple(K::kString);
      case ExprKind::kBytes: return Simple(K::kBytes);
      case ExprKind::kIdent: return Ident(e);
      case ExprKind::kSelect:
      case ExprKind::kPresence: {
        Type t = Select(e, Check(*e.args[0]));
        return e.kind == ExprKind::kPresence ? Simple(K::kBool) : t;
      }
      case ExprKind::kIndex: return Index(e, Check(*e.args[0]), Check(*e.args[1]));
      case ExprKind::kList: {
        std::optional<Type> elem;
        for (const auto& a : e.args) {
          Type t = Check(*a);
          if (!elem) elem = t;
          else if (elem->kind != t.kind) elem = Simple(K::kDyn);
        }
        return ListOf(elem.value_or(Simple(K::kDyn)));
      }
      case ExprKind::kMap: {
        std::optional<Type> key, value;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Type k = Check(*e.args[i]), v = Check(*e.args[i + 1]);
          if (!IsDyn(k) && k.kind != K::kString && k.kind != K::kInt && k.kind != K::kUint && k.kind != K::kBool) {
            Error(*e.args[i], fmt::format("unsupported map key type: {}", Name(k)));
          }
          key = !key || key->kind == k.kind ? k : Simple(K::kDyn);
          value = !value || value->kind == v.kind ? v : Simple(K::kDyn);
        }
        return MapOf(key.value_or(Simple(K::kDyn)), value.value_or(Simple(K::kDyn)));
      }
      case ExprKind::kComprehension: return Comprehension(e);
      case ExprKind::kBind: {
        scopes_.emplace_back(e.var, Check(*e.args[0]));
        Type t = Check(*e.args[1]);
        scopes_.pop_back();
        return t;
      }
      case ExprKind::kCall: return Call(e);
    }
    return Simple(K::kDyn);
  }

 private:
  void Error(const Expr& at, std::string message) { problems.push_back({at.at, at.end, std::move(message)}); }
  Type Fail(const Expr& at, std::string message) {
    Error(at, std::move(message));
    return Simple(K::kError);
  }

  Type Ident(const Expr& e) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == e.text) return it->second;
    }
    if (e.text == "device") return Simple(K::kDevice);
    static constexpr std::string_view kTypes[] = {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"};
    for (std::string_view t : kTypes) {
      if (e.text == t) return Simple(K::kType);
    }
    return Fail(e, fmt::format("undeclared reference to '{}' (in container '')", e.text));
  }

  Type Select(const Expr& e, const Type& operand) {
    if (IsDyn(operand)) return Simple(K::kDyn);
    if (operand.kind == K::kDevice) {
      if (e.text == "driver") return Simple(K::kString);
      if (e.text == "attributes") return MapOf(Simple(K::kString), MapOf(Simple(K::kString), Simple(K::kDyn)));
      if (e.text == "capacity") return MapOf(Simple(K::kString), MapOf(Simple(K::kString), Simple(K::kQuantity)));
      return Fail(e, fmt::format("undefined field '{}'", e.text));
    }
    if (operand.kind == K::kMap) {
      if (!Is(*operand.key, K::kString)) return Fail(e, fmt::format("type '{}' does not support field selection", Name(operand)));
      return *operand.elem;
    }
    return Fail(e, fmt::format("type '{}' does not support field selection", Name(operand)));
  }

  Type Index(const Expr& e, const Type& operand, const Type& key) {
    if (IsDyn(operand)) return Simple(K::kDyn);
    if (operand.kind == K::kList) {
      if (!Is(key, K::kInt) && key.kind != K::kUint) return NoOverload(e, "_[_]", {operand, key});
      return *operand.elem;
    }
    if (operand.kind == K::kMap) {
      if (!IsDyn(key) && !IsDyn(*operand.key) && key.kind != operand.key->kind) return NoOverload(e, "_[_]", {operand, key});
      return *operand.elem;
    }
    return NoOverload(e, "_[_]", {operand, key});
  }

  Type TwoVarComprehension(const Expr& e, const Type& range) {
    Type first = Simple(K::kDyn), second = Simple(K::kDyn);
    if (range.kind == K::kList) {
      first = Simple(K::kInt);
      second = *range.elem;
    } else if (range.kind == K::kMap) {
      first = *range.key;
      second = *range.elem;
    } else if (!IsDyn(range)) {
      return Fail(*e.args[0], fmt::format("expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)", Name(range)));
    }
    scopes_.emplace_back(e.var, first);
    scopes_.emplace_back(e.var2, second);
    std::vector<Type> parts;
    for (size_t i = 1; i < e.args.size(); ++i) parts.push_back(Check(*e.args[i]));
    scopes_.pop_back();
    scopes_.pop_back();
    const std::string& m = e.text;
    bool predicate = m == "all" || m == "exists" || m == "exists_one" || e.args.size() == 3;  // or a filter
    if (predicate && !Is(parts[0], K::kBool)) Error(*e.args[1], fmt::format("expected type 'bool' but found '{}'", Name(parts[0])));
    if (m == "transformList") return ListOf(parts.back());
    if (m == "transformMap") return MapOf(first, parts.back());
    if (m == "transformMapEntry") {
      const Type& entry = parts.back();
      if (entry.kind == K::kMap) return entry;
      if (!IsDyn(entry)) Error(*e.args.back(), fmt::format("expected type 'map' but found '{}'", Name(entry)));
      return MapOf(Simple(K::kDyn), Simple(K::kDyn));
    }
    return Simple(K::kBool);
  }

  Type Comprehension(const Expr& e) {
    Type range = Check(*e.args[0]);
    if (!e.var2.empty()) return TwoVarComprehension(e, range);
    Type var = Simple(K::kDyn);
    if (range.kind == K::kList) var = *range.elem;
    else if (range.kind == K::kMap) var = *range.key;
    else if (!IsDyn(range)) Error(*e.args[0], fmt::format("expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)", Name(range)));
    scopes_.emplace_back(e.var, var);
    std::vector<Type> parts;
    for (size_t i = 1; i < e.args.size(); ++i) parts.push_back(Check(*e.args[i]));
    scopes_.pop_back();
    bool predicate = e.text != "map" || e.args.size() == 3;
    if (predicate && !Is(parts[0], K::kBool)) Error(*e.args[1], fmt::format("expected type 'bool' but found '{}'", Name(parts[0])));
    if (e.text == "map") return ListOf(parts.back());
    if (e.text == "filter") return range.kind == K::kList ? range : ListOf(var);
    return Simple(K::kBool);
  }

  Type NoOverload(const Expr& e, std::string_view f, std::vector<Type> args) {
    std::string list;
    for (size_t i = 0; i < args.size(); ++i) list += (i ? ", " : "") + Name(args[i]);
    return Fail(e, fmt::format("found no matching overload for '{}' applied to '({})'", f, list));
  }

  // `strings.quote(s)`: a function of the strings extension, written
  // qualified (the parser reads it as a method of `strings`).
  bool Qualified(const Expr& e, std::string_view space) const {
    if (!e.has_target || e.args[0]->kind != ExprKind::kIdent || e.args[0]->text != space) return false;
    for (const auto& [name, type] : scopes_) {
      if (name == space) return false;
    }
    return true;
  }

  Type Call(const Expr& e) {
    if (Qualified(e, "strings") && e.text == "quote") {
      if (e.args.size() != 2) return Fail(e, "found no matching overload for 'strings.quote'");
      Type t = Check(*e.args[1]);
      if (t.kind == K::kError) return t;
      if (!Is(t, K::kString)) return Fail(e, fmt::format("found no matching overload for 'strings.quote' applied to '({})'", Name(t)));
      return Simple(K::kString);
    }
    std::vector<Type> a;
    for (const auto& arg : e.args) a.push_back(Check(*arg));
    for (const Type& t : a) {
      if (t.kind == K::kError) return Simple(K::kError);  // already reported
    }
    const std::string& f = e.text;
    auto any_dyn = [&] {
      for (const Type& t : a) {
        if (IsDyn(t)) return true;
      }
      return false;
    };
    auto want = [&](std::initializer_list<K> kinds, Type result) {
      if (a.size() != kinds.size()) return NoOverload(e, f, a);
      size_t i = 0;
      for (K k : kinds) {
        if (k != K::kDyn && !Is(a[i], k)) return NoOverload(e, f, a);
        ++i;
      }
      return result;
    };
    if (f == "_&&_" || f == "_||_") return want({K::kBool, K::kBool}, Simple(K::kBool));
    if (f == "!_") return want({K::kBool}, Simple(K::kBool));
    if (f == "_?_:_") {
      if (!Is(a[0], K::kBool)) return NoOverload(e, f, a);
      return a[1].kind == a[2].kind ? a[1] : Simple(K::kDyn);
    }
    if (f == "-_") {
      if (IsDyn(a[0]) || a[0].kind == K::kInt || a[0].kind == K::kDouble) return a[0];
      return NoOverload(e, f, a);
    }
    if (f == "_==_" || f == "_!=_") {
      bool ok = any_dyn() || a[0].kind == a[1].kind || (IsNumber(a[0]) && IsNumber(a[1])) || a[0].kind == K::kNull ||
                a[1].kind == K::kNull;
      return ok ? Simple(K::kBool) : NoOverload(e, f, a);
    }
    if (f == "_<_" || f == "_<=_" || f == "_>_" || f == "_>=_") {
      bool ok = any_dyn() || (IsNumber(a[0]) && IsNumber(a[1])) ||
                (a[0].kind == a[1].kind && (a[0].kind == K::kString || a[0].kind == K::kBytes || a[0].kind == K::kBool));
      if (!ok && (a[0].kind == K::kQuantity || a[0].kind == K::kSemver)) {
        Type t = NoOverload(e, f, a);
        problems.back().message += "; compare with compareTo(): `x.compareTo(y) >= 0`";
        return t;
      }
      return ok ? Simple(K::kBool) : NoOverload(e, f, a);
    }
    if (f == "@in") {
      if (IsDyn(a[1]) || a[1].kind == K::kList || a[1].kind == K::kMap) return Simple(K::kBool);
      return NoOverload(e, "@in", a);
    }
    if (f == "_+_" || f == "_-_" || f == "_*_" || f == "_/_" || f == "_%_") {
      if (any_dyn()) return IsDyn(a[0]) ? a[1] : a[0];
      bool numeric = a[0].kind == a[1].kind && IsNumber(a[0]) && !(f == "_%_" && a[0].kind == K::kDouble);
      bool concat = f == "_+_" && a[0].kind == a[1].kind &&
                    (a[0].kind == K::kString || a[0].kind == K::kBytes || a[0].kind == K::kList);
      return numeric || concat ? a[0] : NoOverload(e, f, a);
    }
    if (!e.has_target) {
      if (f == "size") return a.size() == 1 ? Simple(K::kInt) : NoOverload(e, f, a);
      if (f == "int") return want({K::kDyn}, Simple(K::kInt));
      if (f == "uint") return want({K::kDyn}, Simple(K::kUint));
      if (f == "double") return want({K::kDyn}, Simple(K::kDouble));
      if (f == "string") return want({K::kDyn}, Simple(K::kString));
      if (f == "bytes") return want({K::kDyn}, Simple(K::kBytes));
      if (f == "bool") return want({K::kDyn}, Simple(K::kBool));
      if (f == "dyn") return want({K::kDyn}, Simple(K::kDyn));
      if (f == "type") return want({K::kDyn}, Simple(K::kType));
      if (f == "quantity") return want({K::kString}, Simple(K::kQuantity));
      if (f == "isQuantity" || f == "isSemver") return want({K::kString}, Simple(K::kBool));
      if (f == "semver") return want({K::kString}, Simple(K::kSemver));
      if (f == "matches") return want({K::kString, K::kString}, Simple(K::kBool));
      return Fail(e, fmt::format("undeclared reference to '{}' (in container '')", f));
    }
    // Methods: a[0] is the target.
    const Type& t = a[0];
    K tk = IsDyn(t) ? K::kDyn : t.kind;
    auto method = [&](std::initializer_list<K> targets, std::initializer_list<K> args, Type result) -> std::optional<Type> {
      bool target_ok = tk == K::kDyn;
      for (K k : targets) target_ok |= k == tk;
      if (!target_ok || a.size() != args.size() + 1) return std::nullopt;
      size_t i = 1;
      for (K k : args) {
        if (!Is(a[i++], k)) return std::nullopt;
      }
      return result;
    };
    struct Sig {
      std::string_view name;
      std::initializer_list<K> targets, args;
      K result;
    };
    static const Sig kMethods[] = {
        {"contains", {K::kString}, {K::kString}, K::kBool},
        {"startsWith", {K::kString}, {K::kString}, K::kBool},
        {"endsWith", {K::kString}, {K::kString}, K::kBool},
        {"matches", {K::kString}, {K::kString}, K::kBool},
        {"find", {K::kString}, {K::kString}, K::kString},
        {"findAll", {K::kString}, {K::kString}, K::kList},
        {"findAll", {K::kString}, {K::kString, K::kInt}, K::kList},
        {"indexOf", {K::kString}, {K::kString}, K::kInt},
        {"indexOf", {K::kString}, {K::kString, K::kInt}, K::kInt},
        {"lastIndexOf", {K::kString}, {K::kString}, K::kInt},
        {"lastIndexOf", {K::kString}, {K::kString, K::kInt}, K::kInt},
        {"charAt", {K::kString}, {K::kInt}, K::kString},
        {"substring", {K::kString}, {K::kInt}, K::kString},
        {"substring", {K::kString}, {K::kInt, K::kInt}, K::kString},
        {"lowerAscii", {K::kString}, {}, K::kString},
        {"upperAscii", {K::kString}, {}, K::kString},
        {"trim", {K::kString}, {}, K::kString},
        {"replace", {K::kString}, {K::kString, K::kString}, K::kString},
        {"replace", {K::kString}, {K::kString, K::kString, K::kInt}, K::kString},
        {"split", {K::kString}, {K::kString}, K::kList},
        {"split", {K::kString}, {K::kString, K::kInt}, K::kList},
        {"size", {K::kString, K::kBytes, K::kList, K::kMap}, {}, K::kInt},
        {"format", {K::kString}, {K::kList}, K::kString},
        {"join", {K::kList}, {}, K::kString},
        {"join", {K::kList}, {K::kString}, K::kString},
        {"compareTo", {K::kQuantity}, {K::kQuantity}, K::kInt},
        {"isGreaterThan", {K::kQuantity}, {K::kQuantity}, K::kBool},
        {"isLessThan", {K::kQuantity}, {K::kQuantity}, K::kBool},
        {"add", {K::kQuantity}, {K::kQuantity}, K::kQuantity},
        {"add", {K::kQuantity}, {K::kInt}, K::kQuantity},
        {"sub", {K::kQuantity}, {K::kQuantity}, K::kQuantity},
        {"sub", {K::kQuantity}, {K::kInt}, K::kQuantity},
        {"sign", {K::kQuantity}, {}, K::kInt},
        {"isInteger", {K::kQuantity}, {}, K::kBool},
        {"asInteger", {K::kQuantity}, {}, K::kInt},
        {"asApproximateFloat", {K::kQuantity}, {}, K::kDouble},
        {"compareTo", {K::kSemver}, {K::kSemver}, K::kInt},
        {"isGreaterThan", {K::kSemver}, {K::kSemver}, K::kBool},
        {"isLessThan", {K::kSemver}, {K::kSemver}, K::kBool},
        {"major", {K::kSemver}, {}, K::kInt},
        {"minor", {K::kSemver}, {}, K::kInt},
        {"patch", {K::kSemver}, {}, K::kInt},
    };
    bool known = false;
    for (const Sig& s : kMethods) {
      if (s.name != f) continue;
      known = true;
      if (auto r = method(s.targets, s.args, s.result == K::kList ? ListOf(Simple(K::kString)) : Simple(s.result))) {
        return *r;
      }
    }
    if (!known) return Fail(e, fmt::format("undeclared reference to '{}' (in container '')", f));
    return NoOverload(e, f, a);
  }

  std::vector<std::pair<std::string, Type>> scopes_;
};

}  // namespace

std::vector<Problem> Check(const Expr& expr) {
  Checker checker;
  Type t = checker.Check(expr);
  if (checker.problems.empty() && t.kind != K::kBool && t.kind != K::kDyn) {
    checker.problems.push_back(
        {expr.begin, expr.end, fmt::format("must evaluate to bool or the unknown type, not {}", Name(t))});
  }
  return checker.problems;
}

}  // namespace policy::cel
