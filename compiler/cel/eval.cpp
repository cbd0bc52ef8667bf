// The CEL tree-walking evaluator (eval.h). Messages follow cel-go's where
// kube-scheduler shows them (`no such key: NAME`, `no such overload`,
// `division by zero`).

#include "compiler/cel/eval.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include <span>

#include <fmt/format.h>

#include "compiler/cel/cost.h"
#include "compiler/cel/regex.h"
#include "support/utf8.h"

namespace policy::cel {
namespace {

using Kind = Value::Kind;

// policyc's own bounds on one evaluation, beside kube's cost limit: the work
// of this evaluator (nodes visited, elements copied or compared) and the
// bytes of the values it makes. kube's cost model charges a list
// concatenation 1 however long the lists (cel-go shares them); these keep
// such a selector from taking more than about a second or 64 MiB here.
constexpr uint64_t kMaxWork = 50'000'000;
constexpr uint64_t kMaxBytes = uint64_t{64} << 20;
// Elements compared by Equal on this thread (lists and maps compare deeply).
thread_local uint64_t equal_steps = 0;

uint64_t Characters(const std::string& s) {
  uint64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Value ListValue(std::shared_ptr<const std::vector<Value>> items) {
  Value v;
  v.kind = Value::Kind::kList;
  v.list = std::move(items);
  return v;
}

Value MapValue(std::shared_ptr<const std::vector<std::pair<Value, Value>>> entries) {
  Value v;
  v.kind = Value::Kind::kMap;
  v.map = std::move(entries);
  return v;
}

// A valid UTF-8 string's code points, and back; an invalid byte reads as
// U+FFFD (as Go's range over a string).
std::vector<char32_t> Runes(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
    char32_t c = n == 1 ? b(0)
                 : n == 2 ? ((b(0) & 0x1F) << 6) | (b(1) & 0x3F)
                 : n == 3 ? ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F)
                          : ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    out.push_back(c);
    i += n;
  }
  return out;
}

std::string Utf8(std::span<const char32_t> runes) {
  std::string out;
  for (char32_t c : runes) AppendUtf8(out, c);
  return out;
}

Value OutOfRange(int64_t i) { return Value::Error(fmt::format("index out of range: {}", i)); }

// The strings extension (cel-go ext/strings.go, version 2 as kube declares
// it): positions count code points, not bytes.
Value IndexOf(const std::string& s, const std::string& p, int64_t offset) {
  if (p.empty()) return Value::Int(offset);
  std::vector<char32_t> r = Runes(s), q = Runes(p);
  if (offset < 0 || offset >= static_cast<int64_t>(r.size())) return OutOfRange(offset);
  for (size_t i = static_cast<size_t>(offset); i + q.size() <= r.size(); ++i) {
    if (std::equal(q.begin(), q.end(), r.begin() + static_cast<ptrdiff_t>(i))) return Value::Int(static_cast<int64_t>(i));
  }
  return Value::Int(-1);
}

Value LastIndexOf(const std::string& s, const std::string& p, std::optional<int64_t> offset) {
  std::vector<char32_t> r = Runes(s), q = Runes(p);
  if (!offset) {
    if (p.empty()) return Value::Int(static_cast<int64_t>(r.size()));
    offset = static_cast<int64_t>(r.size()) - 1;
  }
  if (p.empty()) return Value::Int(*offset);
  if (*offset < 0 || *offset >= static_cast<int64_t>(r.size())) return OutOfRange(*offset);
  int64_t last = static_cast<int64_t>(r.size()) - static_cast<int64_t>(q.size());
  for (int64_t i = std::min(*offset, last); i >= 0; --i) {
    if (std::equal(q.begin(), q.end(), r.begin() + i)) return Value::Int(i);
  }
  return Value::Int(-1);
}

// Go's strings.Replace: at most n replacements (all when n < 0); an empty
// `from` matches before every code point and at the end.
std::string ReplaceN(const std::string& s, const std::string& from, const std::string& to, int64_t n) {
  if (n == 0 || from == to) return s;
  std::string out;
  size_t start = 0;
  for (int64_t done = 0; n < 0 || done < n; ++done) {
    size_t at;
    if (from.empty()) {
      if (done > 0) {  // past the next code point
        if (start >= s.size()) break;
        size_t len = std::max<size_t>(1, Utf8SequenceLength(s, start));
        out.append(s, start, len);
        start += len;
      }
      at = start;
    } else {
      at = s.find(from, start);
      if (at == std::string::npos) break;
    }
    out += s.substr(start, at - start) + to;
    start = at + from.size();
  }
  return out + s.substr(std::min(start, s.size()));
}

// Go's strings.SplitN: n == 0 none, n < 0 all; an empty separator splits
// between code points.
std::vector<std::string> SplitN(const std::string& s, const std::string& sep, int64_t n) {
  std::vector<std::string> out;
  if (n == 0) return out;
  if (sep.empty()) {
    std::vector<char32_t> r = Runes(s);
    size_t count = n < 0 || static_cast<size_t>(n) > r.size() ? r.size() : static_cast<size_t>(n);
    for (size_t i = 0; i < count; ++i) {
      if (i + 1 == count) {
        out.push_back(Utf8(std::span<const char32_t>(r).subspan(i)));
      } else {
        out.push_back(Utf8(std::span<const char32_t>(&r[i], 1)));
      }
    }
    return out;
  }
  size_t start = 0;
  while (n < 0 || static_cast<int64_t>(out.size()) < n - 1) {
    size_t at = s.find(sep, start);
    if (at == std::string::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

// Unicode's White_Space, as Go's strings.TrimSpace reads it.
bool IsSpace(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string TrimSpace(const std::string& s) {
  std::vector<char32_t> r = Runes(s);
  size_t b = 0, e = r.size();
  while (b < e && IsSpace(r[b])) ++b;
  while (e > b && IsSpace(r[e - 1])) --e;
  return Utf8(std::span<const char32_t>(r).subspan(b, e - b));
}

// strings.quote: in double quotes, CEL's escapes written out.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char32_t c : Runes(s)) {
    switch (c) {
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      default: AppendUtf8(out, c);
    }
  }
  return out + "\"";
}

// A double as Go's strconv.FormatFloat(f, 'g', -1, 64) writes it (the
// shortest digits; an exponent below -4 or from 21 on in e form), with
// NaN and the infinities as CEL's format writes them.
std::string GoDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // d[.ddd]e[+-]XX
  size_t e = sci.find('e');
  int exp = std::stoi(sci.substr(e + 1));
  std::string mantissa = sci.substr(0, e);
  bool negative = mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa) {
    if (c >= '0' && c <= '9') digits += c;
  }
  if (exp < -4 || exp >= 21) {
    std::string out = (negative ? "-" : "") + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  }
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0');
  } else {
    out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
  }
  return (negative ? "-" : "") + out;
}

// `%s`: what cel-go's string clause writes (lists and maps in brackets,
// map entries by their key's text); nullopt for a value it refuses.
std::optional<std::string> FormatText(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kString:
    case Value::Kind::kBytes:
    case Value::Kind::kType: return v.text;
    case Value::Kind::kNull: return "null";
    case Value::Kind::kBool: return v.b ? "true" : "false";
    case Value::Kind::kInt: return fmt::format("{}", v.i);
    case Value::Kind::kUint: return fmt::format("{}", v.u);
    case Value::Kind::kDouble: return GoDouble(v.d);
    case Value::Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.list->size(); ++i) {
        std::optional<std::string> item = FormatText((*v.list)[i]);
        if (!item) return std::nullopt;
        out += (i ? ", " : "") + *item;
      }
      return out + "]";
    }
    case Value::Kind::kMap: {
      std::vector<std::pair<std::string, std::string>> entries;
      for (const auto& [key, value] : *v.map) {
        std::optional<std::string> k = FormatText(key), x = FormatText(value);
        if (!k || !x) return std::nullopt;
        entries.emplace_back(std::move(*k), std::move(*x));
      }
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string out = "{";
      for (size_t i = 0; i < entries.size(); ++i) out += (i ? ", " : "") + entries[i].first + ": " + entries[i].second;
      return out + "}";
    }
    default: return std::nullopt;
  }
}

std::string InBase(uint64_t magnitude, bool negative, int base, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  do {
    out += digits[magnitude % static_cast<uint64_t>(base)];
    magnitude /= static_cast<uint64_t>(base);
  } while (magnitude != 0);
  if (negative) out += '-';
  return std::string(out.rbegin(), out.rend());
}

// string.format(list): the strings extension's printf-style clauses.
Value Format(const std::string& pattern, const std::vector<Value>& args) {
  std::string out;
  size_t next = 0;
  auto special = [](const Value& v) -> std::optional<std::string> {  // NaN and the infinities
    if (v.kind == Value::Kind::kDouble && (std::isnan(v.d) || std::isinf(v.d))) return GoDouble(v.d);
    if (v.kind == Value::Kind::kString && (v.text == "NaN" || v.text == "Infinity" || v.text == "-Infinity")) return v.text;
    return std::nullopt;
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (++i >= pattern.size()) return Value::Error("could not parse formatting clause: unexpected end of string");
    if (pattern[i] == '%') {
      out += '%';
      continue;
    }
    std::optional<int> precision;
    if (pattern[i] == '.') {
      size_t start = ++i;
      while (i < pattern.size() && pattern[i] >= '0' && pattern[i] <= '9') ++i;
      if (i == start || i - start > 3 || i >= pattern.size()) {
        return Value::Error("could not parse formatting clause: error while parsing precision");
      }
      precision = std::stoi(pattern.substr(start, i - start));
    }
    char clause = pattern[i];
    if (next >= args.size()) return Value::Error(fmt::format("index {} out of range", next));
    const Value& v = args[next++];
    std::string type = TypeName(v);
    switch (clause) {
      case 's': {
        std::optional<std::string> text = FormatText(v);
        if (!text) {
          return Value::Error(fmt::format("error during formatting: string clause can only be used on strings, bools, "
                                          "bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                                          type));
        }
        out += *text;
        break;
      }
      case 'd':
        if (v.kind == Value::Kind::kInt) out += fmt::format("{}", v.i);
        else if (v.kind == Value::Kind::kUint) out += fmt::format("{}", v.u);
        else if (auto s = special(v); s && v.kind == Value::Kind::kDouble) out += *s;
        else return Value::Error(fmt::format("error during formatting: decimal clause can only be used on integers, was given {}", type));
        break;
      case 'f':
      case 'e': {
        if (auto s = special(v)) {
          out += *s;
          break;
        }
        if (v.kind != Value::Kind::kDouble) {
          return Value::Error(fmt::format("error during formatting: {} clause can only be used on doubles, was given {}",
                                          clause == 'f' ? "fixed-point" : "scientific", type));
        }
        char buf[512];
        std::snprintf(buf, sizeof(buf), clause == 'f' ? "%.*f" : "%.*e", precision.value_or(6), v.d);
        out += buf;
        break;
      }
      case 'b':
      case 'o':
      case 'x':
      case 'X': {
        int base = clause == 'b' ? 2 : clause == 'o' ? 8 : 16;
        if (v.kind == Value::Kind::kInt) {
          uint64_t magnitude = v.i < 0 ? uint64_t{0} - static_cast<uint64_t>(v.i) : static_cast<uint64_t>(v.i);
          out += InBase(magnitude, v.i < 0, base, clause == 'X');
        } else if (v.kind == Value::Kind::kUint) {
          out += InBase(v.u, false, base, clause == 'X');
        } else if (clause == 'b' && v.kind == Value::Kind::kBool) {
          out += v.b ? "1" : "0";
        } else if (base == 16 && (v.kind == Value::Kind::kString || v.kind == Value::Kind::kBytes)) {
          for (unsigned char c : v.text) out += clause == 'X' ? fmt::format("{:02X}", c) : fmt::format("{:02x}", c);
        } else if (clause == 'b') {
          return Value::Error(fmt::format("error during formatting: only integers and bools can be formatted as binary, was given {}", type));
        } else if (clause == 'o') {
          return Value::Error(fmt::format("error during formatting: octal clause can only be used on integers, was given {}", type));
        } else {
          return Value::Error(fmt::format(
              "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given {}", type));
        }
        break;
      }
      default:
        return Value::Error(fmt::format("could not parse formatting clause: unrecognized formatting clause \"{}\"", clause));
    }
  }
  return Value::String(std::move(out));
}

Value NoOverload(std::string_view function) { return Value::Error(fmt::format("no such overload: {}", function)); }
Value NoSuchKey(std::string_view key) { return Value::Error(fmt::format("no such key: {}", key)); }

Value Attribute(const k8s::DeviceAttribute& a) {
  switch (a.kind) {
    case k8s::DeviceAttribute::Kind::kInt: return Value::Int(a.int_value);
    case k8s::DeviceAttribute::Kind::kBool: return Value::Bool(a.bool_value);
    case k8s::DeviceAttribute::Kind::kString: return Value::String(a.text);
    case k8s::DeviceAttribute::Kind::kVersion: {
      std::optional<Semver> v = ParseSemver(a.text);
      if (!v) return Value::Error(fmt::format("parse semantic version: {}", a.text));
      Value x;
      x.kind = Kind::kSemver;
      x.semver = std::make_shared<const Semver>(std::move(*v));
      return x;
    }
  }
  return Value();
}

// The attribute or capacity `name` of a domain view, or nullopt.
std::optional<Value> DomainLookup(const Value& domain, std::string_view name) {
  const k8s::Device& d = *domain.device->device;
  std::string qualified = domain.text + "/" + std::string(name);
  if (domain.kind == Kind::kDomain) {
    for (const auto& [key, a] : d.attributes) {
      if (key == qualified) return Attribute(a);
    }
  } else {
    for (const auto& [key, q] : d.capacity) {
      if (key == qualified) return Value::Quantity(q);
    }
  }
  return std::nullopt;
}

std::vector<std::string> DomainKeys(const Value& domain) {
  std::vector<std::string> out;
  std::string prefix = domain.text + "/";
  auto add = [&](const std::string& key) {
    if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0) out.push_back(key.substr(prefix.size()));
  };
  const k8s::Device& d = *domain.device->device;
  if (domain.kind == Kind::kDomain) {
    for (const auto& entry : d.attributes) add(entry.first);
  } else {
    for (const auto& entry : d.capacity) add(entry.first);
  }
  return out;
}

bool IsNumber(const Value& v) { return v.kind == Kind::kInt || v.kind == Kind::kUint || v.kind == Kind::kDouble; }

// Numeric comparison across int, uint and double, as cel-go's heterogeneous
// equality and ordering do.
int CompareNumbers(const Value& a, const Value& b) {
  auto sign = [](auto x, auto y) { return x < y ? -1 : x > y ? 1 : 0; };
  if (a.kind == Kind::kDouble || b.kind == Kind::kDouble) {
    double x = a.kind == Kind::kDouble ? a.d : a.kind == Kind::kInt ? static_cast<double>(a.i) : static_cast<double>(a.u);
    double y = b.kind == Kind::kDouble ? b.d : b.kind == Kind::kInt ? static_cast<double>(b.i) : static_cast<double>(b.u);
    return sign(x, y);
  }
  if (a.kind == Kind::kInt && b.kind == Kind::kInt) return sign(a.i, b.i);
  if (a.kind == Kind::kUint && b.kind == Kind::kUint) return sign(a.u, b.u);
  if (a.kind == Kind::kInt) return a.i < 0 ? -1 : sign(static_cast<uint64_t>(a.i), b.u);
  return b.i < 0 ? 1 : sign(a.u, static_cast<uint64_t>(b.i));
}

bool Equal(const Value& a, const Value& b);

bool EqualLists(const Value& a, const Value& b) {
  if (a.list->size() != b.list->size()) return false;
  equal_steps += a.list->size();
  for (size_t i = 0; i < a.list->size(); ++i) {
    if (!Equal((*a.list)[i], (*b.list)[i])) return false;
  }
  return true;
}

bool Equal(const Value& a, const Value& b) {
  if (IsNumber(a) && IsNumber(b)) return CompareNumbers(a, b) == 0 && !(std::isnan(a.d) || std::isnan(b.d));
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kNull: return true;
    case Kind::kBool: return a.b == b.b;
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kType: return a.text == b.text;
    case Kind::kQuantity: return a.quantity == b.quantity;
    case Kind::kSemver: return Compare(*a.semver, *b.semver) == 0;
    case Kind::kList: return EqualLists(a, b);
    case Kind::kMap: {
      if (a.map->size() != b.map->size()) return false;
      equal_steps += a.map->size() * a.map->size();
      for (const auto& entry : *a.map) {
        auto it = std::find_if(b.map->begin(), b.map->end(), [&](const auto& e) { return Equal(e.first, entry.first); });
        if (it == b.map->end() || !Equal(it->second, entry.second)) return false;
      }
      return true;
    }
    default: return false;
  }
}

class Evaluator {
 public:
  explicit Evaluator(const DeviceInput& device) : device_(device) {}

  /// The value of `e`; once a bound is passed, every value is the error
  /// that says so, which no operator absorbs.
  Value Eval(const Expr& e) {
    if (!cancelled_.empty() || !Work(1)) return Value::Error(cancelled_);
    Value v = Node(e);
    if (!cancelled_.empty()) return Value::Error(cancelled_);
    return v;
  }

 private:
  // kube's cost: cel-go's runtime cost, cancelled past the limit.
  bool Charge(uint64_t cost) {
    cost_ = cost_ > kCostLimit ? cost_ : cost_ + std::min<uint64_t>(cost, kCostLimit + 1);
    if (cost_ > kCostLimit && cancelled_.empty()) cancelled_ = "operation cancelled: actual cost limit exceeded";
    return cancelled_.empty();
  }
  bool Work(uint64_t steps) {
    work_ += std::min<uint64_t>(steps, kMaxWork + 1);
    if (work_ > kMaxWork && cancelled_.empty()) {
      cancelled_ = fmt::format("operation cancelled: evaluation exceeds policyc's bound of {} steps", kMaxWork);
    }
    return cancelled_.empty();
  }
  bool Allocate(uint64_t bytes) {
    bytes_ += std::min<uint64_t>(bytes, kMaxBytes + 1);
    if (bytes_ > kMaxBytes && cancelled_.empty()) {
      cancelled_ = fmt::format("operation cancelled: evaluation exceeds policyc's bound of {} MiB of values", kMaxBytes >> 20);
    }
    return cancelled_.empty();
  }
  static bool IsContainer(const Value& v) {
    return v.kind == Kind::kMap || v.kind == Kind::kDevice || v.kind == Kind::kAttributes || v.kind == Kind::kDomain ||
           v.kind == Kind::kCapacities || v.kind == Kind::kCapacityDomain;
  }

  Value Node(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kNull: return Value();
      case ExprKind::kBool: return Value::Bool(e.bool_value);
      case ExprKind::kInt: return Value::Int(e.int_value);
      case ExprKind::kUint: return Value::Uint(e.uint_value);
      case ExprKind::kDouble: return Value::Double(e.double_value);
      case ExprKind::kString: return Value::String(e.text);
      case ExprKind::kBytes: {
        Value v = Value::String(e.text);
        v.kind = Kind::kBytes;
        return v;
      }
      case ExprKind::kIdent: Charge(1); return Ident(e.text);
      case ExprKind::kSelect: {
        Value operand = Eval(*e.args[0]);
        if (IsContainer(operand)) Charge(1);
        return Select(operand, e.text, false);
      }
      case ExprKind::kPresence: Charge(1); return Select(Eval(*e.args[0]), e.text, true);
      case ExprKind::kIndex: {
        Value operand = Eval(*e.args[0]);
        Value key = Eval(*e.args[1]);
        Charge(1);
        return Index(operand, key);
      }
      case ExprKind::kList: {
        if (!Charge(10) || !Allocate(e.args.size() * sizeof(Value))) return Value::Error(cancelled_);
        auto items = std::make_shared<std::vector<Value>>();
        for (const auto& a : e.args) {
          Value v = Eval(*a);
          if (v.IsError()) return v;
          items->push_back(std::move(v));
        }
        return ListValue(std::move(items));
      }
      case ExprKind::kMap: {
        if (!Charge(30) || !Allocate(e.args.size() * sizeof(Value))) return Value::Error(cancelled_);
        auto entries = std::make_shared<std::vector<std::pair<Value, Value>>>();
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Value k = Eval(*e.args[i]), v = Eval(*e.args[i + 1]);
          if (k.IsError()) return k;
          if (v.IsError()) return v;
          if (!Work(entries->size())) return Value::Error(cancelled_);
          for (const auto& entry : *entries) {
            if (Equal(entry.first, k)) return Value::Error(fmt::format("Failed with repeated key: {}", Show(k)));
          }
          entries->emplace_back(std::move(k), std::move(v));
        }
        return MapValue(std::move(entries));
      }
      case ExprKind::kComprehension: return Comprehension(e);
      case ExprKind::kBind: {
        Charge(10);
        scopes_.emplace_back(e.var, Eval(*e.args[0]));
        Value v = Eval(*e.args[1]);
        scopes_.pop_back();
        return v;
      }
      case ExprKind::kCall: return Call(e);
    }
    return Value::Error("unknown expression");
  }

  Value Ident(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    if (name == "device") {
      Value v;
      v.kind = Kind::kDevice;
      v.device = &device_;
      return v;
    }
    static constexpr std::string_view kTypes[] = {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"};
    for (std::string_view t : kTypes) {
      if (name == t) return Value::Type(name);
    }
    return Value::Error(fmt::format("no such attribute: {}", name));
  }

  Value Select(const Value& operand, const std::string& field, bool test_only) {
    if (operand.IsError()) return operand;
    auto found = [&](std::optional<Value> v) {
      if (test_only) return Value::Bool(v.has_value());
      return v ? *v : NoSuchKey(field);
    };
    switch (operand.kind) {
      case Kind::kDevice: {
        Value v;
        v.device = operand.device;
        if (field == "driver") return test_only ? Value::Bool(true) : Value::String(std::string(operand.device->driver));
        if (field == "attributes") v.kind = Kind::kAttributes;
        else if (field == "capacity") v.kind = Kind::kCapacities;
        else return found(std::nullopt);
        return test_only ? Value::Bool(true) : v;
      }
      case Kind::kAttributes:
      case Kind::kCapacities: {
        // An unknown domain reads as an empty map (kube's mapper default).
        if (test_only) return Value::Bool(true);
        Value v;
        v.kind = operand.kind == Kind::kAttributes ? Kind::kDomain : Kind::kCapacityDomain;
        v.device = operand.device;
        v.text = field;
        return v;
      }
      case Kind::kDomain:
      case Kind::kCapacityDomain: return found(DomainLookup(operand, field));
      case Kind::kMap: {
        for (const auto& [k, v] : *operand.map) {
          if (k.kind == Kind::kString && k.text == field) return test_only ? Value::Bool(true) : v;
        }
        return found(std::nullopt);
      }
      default:
        return Value::Error(fmt::format("type '{}' does not support field selection", TypeName(operand)));
    }
  }

  Value Index(const Value& operand, const Value& key) {
    if (operand.IsError()) return operand;
    if (key.IsError()) return key;
    switch (operand.kind) {
      case Kind::kAttributes:
      case Kind::kCapacities:
      case Kind::kDomain:
      case Kind::kCapacityDomain:
        if (key.kind != Kind::kString) return NoOverload("_[_]");
        return Select(operand, key.text, false);
      case Kind::kMap: {
        for (const auto& [k, v] : *operand.map) {
          if (Equal(k, key)) return v;
        }
        return NoSuchKey(key.kind == Kind::kString ? key.text : Show(key));
      }
      case Kind::kList: {
        int64_t i = 0;
        if (key.kind == Kind::kInt) i = key.i;
        else if (key.kind == Kind::kUint) i = static_cast<int64_t>(std::min<uint64_t>(key.u, INT64_MAX));
        else if (key.kind == Kind::kDouble && key.d == std::floor(key.d)) i = static_cast<int64_t>(key.d);
        else return NoOverload("_[_]");
        if (i < 0 || static_cast<size_t>(i) >= operand.list->size()) {
          return Value::Error(fmt::format("index out of range: {}", i));
        }
        return (*operand.list)[static_cast<size_t>(i)];
      }
      default: return NoOverload("_[_]");
    }
  }

  // The elements a macro ranges over: a list's items, a map's keys.
  std::optional<std::vector<Value>> Range(const Value& v) {
    if (v.kind == Kind::kList) {
      if (!Allocate(v.list->size() * sizeof(Value)) || !Work(v.list->size())) return std::vector<Value>{};
      return *v.list;
    }
    std::vector<Value> keys;
    if (v.kind == Kind::kMap) {
      for (const auto& entry : *v.map) keys.push_back(entry.first);
      return keys;
    }
    if (v.kind == Kind::kDomain || v.kind == Kind::kCapacityDomain) {
      for (std::string& k : DomainKeys(v)) keys.push_back(Value::String(std::move(k)));
      return keys;
    }
    return std::nullopt;
  }

  // (index, element) of a list, (key, value) of a map.
  std::optional<std::vector<std::pair<Value, Value>>> Pairs(const Value& v) {
    std::vector<std::pair<Value, Value>> out;
    size_t n = v.kind == Kind::kList ? v.list->size() : v.kind == Kind::kMap ? v.map->size() : 0;
    if (!Allocate(n * 2 * sizeof(Value)) || !Work(n)) return out;
    if (v.kind == Kind::kList) {
      for (size_t i = 0; i < v.list->size(); ++i) out.emplace_back(Value::Int(static_cast<int64_t>(i)), (*v.list)[i]);
      return out;
    }
    if (v.kind == Kind::kMap) return *v.map;
    if (v.kind == Kind::kDomain || v.kind == Kind::kCapacityDomain) {
      for (std::string& k : DomainKeys(v)) {
        std::optional<Value> value = DomainLookup(v, k);
        if (value) out.emplace_back(Value::String(std::move(k)), std::move(*value));
      }
      return out;
    }
    return std::nullopt;
  }

  // all/exists/exists_one over (index or key, element or value), and the
  // transforms, as cel-go's TwoVarComprehensions expand them.
  Value TwoVarComprehension(const Expr& e, const Value& range) {
    std::optional<std::vector<std::pair<Value, Value>>> pairs = Pairs(range);
    if (!pairs) return Value::Error(fmt::format("expression of type '{}' cannot be range of a comprehension", TypeName(range)));
    const std::string& macro = e.text;
    bool transform = macro.starts_with("transform");
    bool filtered = transform && e.args.size() == 3;  // range, filter, body
    uint64_t per_item = macro == "all" ? 3 : macro == "exists" ? 4 : macro == "exists_one" ? 2 : 12;
    Charge(macro == "exists_one" ? 2 : transform ? 11 : 1);
    std::optional<Value> error;
    size_t trues = 0;
    auto list = std::make_shared<std::vector<Value>>();
    auto map = std::make_shared<std::vector<std::pair<Value, Value>>>();
    for (const auto& [first, second] : *pairs) {
      if (!Charge(per_item) || (transform && !Allocate(2 * sizeof(Value)))) return Value::Error(cancelled_);
      scopes_.emplace_back(e.var, first);
      scopes_.emplace_back(e.var2, second);
      Value keep = filtered ? Eval(*e.args[1]) : Value::Bool(true);
      Value v = keep.kind == Kind::kBool && keep.b ? Eval(*e.args.back()) : keep;
      scopes_.pop_back();
      scopes_.pop_back();
      if (transform) {
        if (v.IsError()) return v;
        if (v.kind != Kind::kBool && keep.kind != Kind::kBool) return NoOverload(macro);
        if (!(keep.kind == Kind::kBool && keep.b)) continue;
        if (macro == "transformList") {
          list->push_back(std::move(v));
        } else if (macro == "transformMap") {
          map->emplace_back(first, std::move(v));
        } else {  // transformMapEntry: the body's entries, each key once
          if (v.kind != Kind::kMap) return NoOverload(macro);
          if (!Work(map->size() * v.map->size())) return Value::Error(cancelled_);
          for (const auto& entry : *v.map) {
            for (const auto& kept : *map) {
              if (Equal(kept.first, entry.first)) {
                return Value::Error(fmt::format("insert failed: key {} already exists", Show(entry.first)));
              }
            }
            map->push_back(entry);
          }
        }
        continue;
      }
      if (v.IsError()) {
        if (macro == "exists_one") return v;
        if (!error) error = v;
        continue;
      }
      if (v.kind != Kind::kBool) return NoOverload(macro);
      if (macro == "all" && !v.b) return Value::Bool(false);
      if (macro == "exists" && v.b) return Value::Bool(true);
      trues += v.b;
    }
    if (macro == "transformList") {
      return ListValue(std::move(list));
    }
    if (transform) {
      return MapValue(std::move(map));
    }
    if (error) return *error;
    if (macro == "all") return Value::Bool(true);
    if (macro == "exists") return Value::Bool(false);
    return Value::Bool(trues == 1);
  }

  Value Comprehension(const Expr& e) {
    Value range = Eval(*e.args[0]);
    if (range.IsError()) return range;
    if (!e.var2.empty()) return TwoVarComprehension(e, range);
    std::optional<std::vector<Value>> items = Range(range);
    if (!items) return Value::Error(fmt::format("expression of type '{}' cannot be range of a comprehension", TypeName(range)));
    const std::string& macro = e.text;
    // cel-go's expansion around the body: result and accumulator once,
    // loop condition and step per item (cost.cpp says which).
    bool lists = macro == "map" || macro == "filter";
    uint64_t per_item = macro == "all" ? 3 : macro == "exists" ? 4 : macro == "exists_one" ? 2 : macro == "map" ? 12 : 13;
    Charge(macro == "exists_one" ? 2 : lists ? 11 : 1);
    std::optional<Value> error;
    size_t trues = 0;
    auto results = std::make_shared<std::vector<Value>>();
    for (const Value& item : *items) {
      if (!Charge(per_item) || (lists && !Allocate(sizeof(Value)))) return Value::Error(cancelled_);
      scopes_.emplace_back(e.var, item);
      Value v;
      if (macro == "map" && e.args.size() == 3) {
        Value keep = Eval(*e.args[1]);
        if (keep.kind == Kind::kBool && !keep.b) {
          scopes_.pop_back();
          continue;
        }
        v = keep.kind == Kind::kBool ? Eval(*e.args[2]) : (keep.IsError() ? keep : NoOverload("map"));
      } else {
        v = Eval(*e.args[1]);
      }
      scopes_.pop_back();
      if (macro == "map") {
        if (v.IsError()) return v;
        results->push_back(std::move(v));
        continue;
      }
      if (v.IsError()) {
        if (macro == "exists_one" || macro == "filter") return v;
        if (!error) error = v;
        continue;
      }
      if (v.kind != Kind::kBool) return NoOverload(macro);
      if (macro == "all" && !v.b) return Value::Bool(false);
      if (macro == "exists" && v.b) return Value::Bool(true);
      if (macro == "filter" && v.b) results->push_back(item);
      trues += v.b;
    }
    if (macro == "map" || macro == "filter") {
      return ListValue(std::move(results));
    }
    if (error) return *error;
    if (macro == "all") return Value::Bool(true);
    if (macro == "exists") return Value::Bool(false);
    return Value::Bool(trues == 1);
  }

  // `strings.quote(s)`: a qualified function the parser reads as a method.
  bool Qualified(const Expr& e, std::string_view space) const {
    if (!e.has_target || e.args[0]->kind != ExprKind::kIdent || e.args[0]->text != space) return false;
    for (const auto& [name, value] : scopes_) {
      if (name == space) return false;
    }
    return true;
  }

  Value Call(const Expr& e) {
    const std::string& f = e.text;
    // Short-circuiting operators first: an error on one side may be absorbed.
    if (f == "_&&_" || f == "_||_") {
      bool is_and = f == "_&&_";
      Value a = Eval(*e.args[0]);
      if (a.kind == Kind::kBool && a.b != is_and) return a;
      Value b = Eval(*e.args[1]);
      if (b.kind == Kind::kBool && b.b != is_and) return b;
      if (a.IsError()) return a;
      if (b.IsError()) return b;
      if (a.kind != Kind::kBool || b.kind != Kind::kBool) return NoOverload(f);
      return Value::Bool(is_and);
    }
    if (f == "_?_:_") {
      Value c = Eval(*e.args[0]);
      if (c.IsError()) return c;
      if (c.kind != Kind::kBool) return NoOverload(f);
      return Eval(*e.args[c.b ? 1 : 2]);
    }
    if (f == "quote" && Qualified(e, "strings") && e.args.size() == 2) {
      Value x = Eval(*e.args[1]);
      if (x.IsError()) return x;
      if (x.kind != Kind::kString) return NoOverload("strings.quote");
      if (!Charge(CostOf(Characters(x.text), kStringTraversalCostFactor)) || !Allocate(2 * x.text.size() + 2)) {
        return Value::Error(cancelled_);
      }
      return Value::String(Quote(x.text));
    }
    std::vector<Value> args;
    args.reserve(e.args.size());
    for (const auto& a : e.args) {
      args.push_back(Eval(*a));
      if (args.back().IsError()) return args.back();
    }
    if (!Budget(f, e.has_target, args)) return Value::Error(cancelled_);
    equal_steps = 0;
    Value v = e.has_target ? Method(f, args) : Function(f, args);
    Work(equal_steps);
    return v;
  }

  // Charges a call's cost as cel-go's runtime cost tracker (with the
  // apiserver library's function costs) before it runs, and the bytes and
  // work of what it will make; false once a bound is passed.
  bool Budget(const std::string& f, bool method, const std::vector<Value>& a) {
    auto size = [&](size_t i) -> uint64_t {
      const Value& v = a[i];
      if (v.kind == Kind::kString) return Characters(v.text);
      if (v.kind == Kind::kBytes) return v.text.size();
      if (v.kind == Kind::kList) return v.list->size();
      if (v.kind == Kind::kMap) return v.map->size();
      return 1;
    };
    constexpr double t = kStringTraversalCostFactor;
    bool strings = !a.empty() && (a[0].kind == Kind::kString || a[0].kind == Kind::kBytes);
    if (f == "_==_" || f == "_!=_" || f == "_<_" || f == "_<=_" || f == "_>_" || f == "_>=_") {
      return Charge(CostOf(std::min(size(0), size(1)), t)) && Work(std::min(size(0), size(1)));
    }
    if (f == "@in") return Charge(a[1].kind == Kind::kList ? size(1) : 1) && Work(size(1));
    if (f == "_+_" && a.size() == 2 && a[0].kind == a[1].kind && (strings || a[0].kind == Kind::kList)) {
      uint64_t n = a[0].kind == Kind::kList ? (a[0].list->size() + a[1].list->size()) * sizeof(Value)
                                            : a[0].text.size() + a[1].text.size();
      return Charge(a[0].kind == Kind::kList ? 1 : CostOf(size(0) + size(1), t)) && Allocate(n) && Work(n / 8 + 1);
    }
    if (!method || !strings) return Charge(1);
    uint64_t n = size(0);
    if (f == "matches" || f == "find" || f == "findAll") {
      return Charge(CostOf(1 + n, t) * CostOf(a.size() > 1 ? size(1) : 0, kRegexStringLengthCostFactor)) &&
             Work(a[0].text.size()) && Allocate(f == "findAll" ? a[0].text.size() * (1 + sizeof(Value)) : 0);
    }
    if (f == "contains") return Charge(CostOf(n, t) * CostOf(size(1), t)) && Work(n);
    if (f == "startsWith" || f == "endsWith") return Charge(CostOf(size(1), t));
    if (f == "lowerAscii" || f == "upperAscii" || f == "trim") return Charge(CostOf(n, t)) && Allocate(a[0].text.size());
    if (f == "indexOf" || f == "lastIndexOf") {
      return Charge(static_cast<uint64_t>(static_cast<double>(n) * t)) && Work(n * (a.size() > 1 ? size(1) : 1)) &&
             Allocate(a[0].text.size() * sizeof(char32_t));
    }
    if (f == "charAt" || f == "substring") return Charge(CostOf(n, t)) && Allocate(a[0].text.size() * (1 + sizeof(char32_t)));
    if (f == "split") return Charge(CostOf(n, 2 * t)) && Allocate(a[0].text.size() * (1 + sizeof(Value)));
    if (f == "replace" && a.size() >= 3 && a[1].kind == Kind::kString && a[2].kind == Kind::kString) {
      // The result's length, counted before it is made (an empty `from`
      // matches at every code point and the end).
      const std::string& s = a[0].text;
      const std::string& from = a[1].text;
      uint64_t found = from.empty() ? n + 1 : 0;
      for (size_t at = 0; !from.empty() && (at = s.find(from, at)) != std::string::npos; at += from.size()) ++found;
      return Charge(CostOf(n, 2 * t)) && Work(s.size()) && Allocate(s.size() + found * a[2].text.size());
    }
    return Charge(1);
  }

  Value Function(const std::string& f, std::vector<Value>& a) {
    if (a.size() == 1) {
      const Value& x = a[0];
      if (f == "!_") return x.kind == Kind::kBool ? Value::Bool(!x.b) : NoOverload(f);
      if (f == "-_") {
        if (x.kind == Kind::kInt) return x.i == INT64_MIN ? Value::Error("integer overflow") : Value::Int(-x.i);
        if (x.kind == Kind::kDouble) return Value::Double(-x.d);
        return NoOverload(f);
      }
      if (f == "size") return Size(x);
      if (f == "int") return ToInt(x);
      if (f == "uint") return ToUint(x);
      if (f == "double") return ToDouble(x);
      if (f == "string") return ToString(x);
      if (f == "bytes") {
        if (x.kind == Kind::kBytes) return x;
        if (x.kind != Kind::kString) return NoOverload(f);
        Value v = x;
        v.kind = Kind::kBytes;
        return v;
      }
      if (f == "bool") {
        if (x.kind == Kind::kBool) return x;
        if (x.kind == Kind::kString) {
          if (x.text == "true" || x.text == "True" || x.text == "TRUE" || x.text == "t" || x.text == "1") return Value::Bool(true);
          if (x.text == "false" || x.text == "False" || x.text == "FALSE" || x.text == "f" || x.text == "0") return Value::Bool(false);
          return Value::Error(fmt::format("type conversion error from 'string' to 'bool'"));
        }
        return NoOverload(f);
      }
      if (f == "dyn") return x;
      if (f == "type") return Value::Type(TypeName(x));
      if (f == "quantity" || f == "isQuantity") {
        if (x.kind != Kind::kString) return NoOverload(f);
        std::string why;
        std::optional<k8s::Quantity> q = k8s::Quantity::Parse(x.text, &why);
        if (f == "isQuantity") return Value::Bool(q.has_value());
        if (!q) return Value::Error(fmt::format("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
        return Value::Quantity(*q);
      }
      if (f == "semver" || f == "isSemver") {
        if (x.kind != Kind::kString) return NoOverload(f);
        std::optional<Semver> v = ParseSemver(x.text);
        if (f == "isSemver") return Value::Bool(v.has_value());
        if (!v) return Value::Error("Semver parse error: " + x.text);
        Value out;
        out.kind = Kind::kSemver;
        out.semver = std::make_shared<const Semver>(std::move(*v));
        return out;
      }
    }
    if (a.size() == 2) {
      const Value& x = a[0];
      const Value& y = a[1];
      if (f == "_==_") return Value::Bool(Equal(x, y));
      if (f == "_!=_") return Value::Bool(!Equal(x, y));
      if (f == "_<_" || f == "_<=_" || f == "_>_" || f == "_>=_") return Order(f, x, y);
      if (f == "@in") return In(x, y);
      if (f == "_+_" || f == "_-_" || f == "_*_" || f == "_/_" || f == "_%_") return Arith(f, x, y);
      if (f == "matches") return Method(f, a);
    }
    return Value::Error(fmt::format("no matching overload for '{}' with {} argument{}", f, a.size(), a.size() == 1 ? "" : "s"));
  }

  static Value Size(const Value& x) {
    if (x.kind == Kind::kString) {
      int64_t n = 0;
      for (char c : x.text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      return Value::Int(n);
    }
    if (x.kind == Kind::kBytes) return Value::Int(static_cast<int64_t>(x.text.size()));
    if (x.kind == Kind::kList) return Value::Int(static_cast<int64_t>(x.list->size()));
    if (x.kind == Kind::kMap) return Value::Int(static_cast<int64_t>(x.map->size()));
    if (x.kind == Kind::kDomain || x.kind == Kind::kCapacityDomain) return Value::Int(static_cast<int64_t>(DomainKeys(x).size()));
    return NoOverload("size");
  }

  static Value ToInt(const Value& x) {
    switch (x.kind) {
      case Kind::kInt: return x;
      case Kind::kUint: return x.u > INT64_MAX ? Value::Error("range error") : Value::Int(static_cast<int64_t>(x.u));
      case Kind::kDouble:
        if (!(x.d > -9.2233720368547758e18 && x.d < 9.2233720368547758e18)) return Value::Error("range error");
        return Value::Int(static_cast<int64_t>(x.d));
      case Kind::kString: {
        int64_t v = 0;
        auto r = std::from_chars(x.text.data(), x.text.data() + x.text.size(), v);
        if (r.ec != std::errc() || r.ptr != x.text.data() + x.text.size()) {
          return Value::Error(fmt::format("cannot convert '{}' to int", x.text));
        }
        return Value::Int(v);
      }
      default: return NoOverload("int");
    }
  }
  static Value ToUint(const Value& x) {
    switch (x.kind) {
      case Kind::kUint: return x;
      case Kind::kInt: return x.i < 0 ? Value::Error("range error") : Value::Uint(static_cast<uint64_t>(x.i));
      case Kind::kDouble:
        if (!(x.d >= 0 && x.d < 1.8446744073709552e19)) return Value::Error("range error");
        return Value::Uint(static_cast<uint64_t>(x.d));
      case Kind::kString: {
        uint64_t v = 0;
        auto r = std::from_chars(x.text.data(), x.text.data() + x.text.size(), v);
        if (r.ec != std::errc() || r.ptr != x.text.data() + x.text.size()) {
          return Value::Error(fmt::format("cannot convert '{}' to uint", x.text));
        }
        return Value::Uint(v);
      }
      default: return NoOverload("uint");
    }
  }
  static Value ToDouble(const Value& x) {
    switch (x.kind) {
      case Kind::kDouble: return x;
      case Kind::kInt: return Value::Double(static_cast<double>(x.i));
      case Kind::kUint: return Value::Double(static_cast<double>(x.u));
      case Kind::kString: {
        std::optional<double> d = ParseDouble(x.text);
        if (!d) return Value::Error(fmt::format("cannot convert '{}' to double", x.text));
        return Value::Double(*d);
      }
      default: return NoOverload("double");
    }
  }
  static Value ToString(const Value& x) {
    switch (x.kind) {
      case Kind::kString: return x;
      case Kind::kBytes:
        if (FirstInvalidUtf8(x.text) != x.text.size()) return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
        return Value::String(x.text);
      case Kind::kInt: return Value::String(fmt::format("{}", x.i));
      case Kind::kUint: return Value::String(fmt::format("{}", x.u));
      case Kind::kDouble: return Value::String(fmt::format("{}", x.d));
      case Kind::kBool: return Value::String(x.b ? "true" : "false");
      case Kind::kQuantity: return Value::String(x.quantity.ToString());
      case Kind::kSemver: return Value::String(x.semver->text);
      default: return NoOverload("string");
    }
  }

  static Value Order(const std::string& f, const Value& x, const Value& y) {
    int c = 0;
    if (IsNumber(x) && IsNumber(y)) {
      if ((x.kind == Kind::kDouble && std::isnan(x.d)) || (y.kind == Kind::kDouble && std::isnan(y.d))) return Value::Bool(false);
      c = CompareNumbers(x, y);
    } else if (x.kind == y.kind && (x.kind == Kind::kString || x.kind == Kind::kBytes)) {
      c = x.text < y.text ? -1 : x.text > y.text ? 1 : 0;
    } else if (x.kind == Kind::kBool && y.kind == Kind::kBool) {
      c = x.b == y.b ? 0 : x.b ? 1 : -1;
    } else {
      return NoOverload(f);
    }
    if (f == "_<_") return Value::Bool(c < 0);
    if (f == "_<=_") return Value::Bool(c <= 0);
    if (f == "_>_") return Value::Bool(c > 0);
    return Value::Bool(c >= 0);
  }

  static Value In(const Value& x, const Value& y) {
    if (y.kind == Kind::kList) {
      for (const Value& v : *y.list) {
        if (Equal(v, x)) return Value::Bool(true);
      }
      return Value::Bool(false);
    }
    if (y.kind == Kind::kMap) {
      for (const auto& entry : *y.map) {
        if (Equal(entry.first, x)) return Value::Bool(true);
      }
      return Value::Bool(false);
    }
    if ((y.kind == Kind::kDomain || y.kind == Kind::kCapacityDomain) && x.kind == Kind::kString) {
      return Value::Bool(DomainLookup(y, x.text).has_value());
    }
    if ((y.kind == Kind::kAttributes || y.kind == Kind::kCapacities) && x.kind == Kind::kString) {
      const k8s::Device& d = *y.device->device;
      std::string prefix = x.text + "/";
      bool found = false;
      if (y.kind == Kind::kAttributes) {
        for (const auto& entry : d.attributes) found |= entry.first.compare(0, prefix.size(), prefix) == 0;
      } else {
        for (const auto& entry : d.capacity) found |= entry.first.compare(0, prefix.size(), prefix) == 0;
      }
      return Value::Bool(found);
    }
    return NoOverload("@in");
  }

  static Value Arith(const std::string& f, const Value& x, const Value& y) {
    char op = f[1];
    if (x.kind == Kind::kInt && y.kind == Kind::kInt) {
      int64_t r = 0;
      switch (op) {
        case '+': if (__builtin_add_overflow(x.i, y.i, &r)) return Value::Error("integer overflow"); return Value::Int(r);
        case '-': if (__builtin_sub_overflow(x.i, y.i, &r)) return Value::Error("integer overflow"); return Value::Int(r);
        case '*': if (__builtin_mul_overflow(x.i, y.i, &r)) return Value::Error("integer overflow"); return Value::Int(r);
        case '/':
          if (y.i == 0) return Value::Error("division by zero");
          if (x.i == INT64_MIN && y.i == -1) return Value::Error("integer overflow");
          return Value::Int(x.i / y.i);
        case '%':
          if (y.i == 0) return Value::Error("modulus by zero");
          if (x.i == INT64_MIN && y.i == -1) return Value::Error("integer overflow");
          return Value::Int(x.i % y.i);
      }
    }
    if (x.kind == Kind::kUint && y.kind == Kind::kUint) {
      uint64_t r = 0;
      switch (op) {
        case '+': if (__builtin_add_overflow(x.u, y.u, &r)) return Value::Error("unsigned integer overflow"); return Value::Uint(r);
        case '-': if (__builtin_sub_overflow(x.u, y.u, &r)) return Value::Error("unsigned integer overflow"); return Value::Uint(r);
        case '*': if (__builtin_mul_overflow(x.u, y.u, &r)) return Value::Error("unsigned integer overflow"); return Value::Uint(r);
        case '/': if (y.u == 0) return Value::Error("division by zero"); return Value::Uint(x.u / y.u);
        case '%': if (y.u == 0) return Value::Error("modulus by zero"); return Value::Uint(x.u % y.u);
      }
    }
    if (x.kind == Kind::kDouble && y.kind == Kind::kDouble && op != '%') {
      switch (op) {
        case '+': return Value::Double(x.d + y.d);
        case '-': return Value::Double(x.d - y.d);
        case '*': return Value::Double(x.d * y.d);
        case '/': return Value::Double(x.d / y.d);
      }
    }
    if (op == '+' && x.kind == y.kind && (x.kind == Kind::kString || x.kind == Kind::kBytes)) {
      Value v = x;
      v.text += y.text;
      return v;
    }
    if (op == '+' && x.kind == Kind::kList && y.kind == Kind::kList) {
      auto items = std::make_shared<std::vector<Value>>(*x.list);
      items->insert(items->end(), y.list->begin(), y.list->end());
      return ListValue(std::move(items));
    }
    return NoOverload(f);
  }

  static Value StringList(std::vector<std::string> texts) {
    auto items = std::make_shared<std::vector<Value>>();
    items->reserve(texts.size());
    for (std::string& text : texts) items->push_back(Value::String(std::move(text)));
    return ListValue(std::move(items));
  }

  static Value QuantityOperand(const Value& y, std::string_view f) {
    if (y.kind == Kind::kQuantity) return y;
    if (y.kind == Kind::kInt) return Value::Quantity(k8s::Quantity::FromUnits(y.i));
    return NoOverload(f);
  }

  Value Method(const std::string& f, std::vector<Value>& a) {
    const Value& t = a[0];
    size_t n = a.size() - 1;
    if (t.kind == Kind::kString && n == 1 && a[1].kind == Kind::kString) {
      const std::string& s = t.text;
      const std::string& p = a[1].text;
      if (f == "contains") return Value::Bool(s.find(p) != std::string::npos);
      if (f == "startsWith") return Value::Bool(s.compare(0, p.size(), p) == 0 && s.size() >= p.size());
      if (f == "endsWith") return Value::Bool(s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0);
      if (f == "matches" || f == "find" || f == "findAll") {
        RegexResult r = f == "matches" ? Matches(s, p) : f == "find" ? Find(s, p) : FindAll(s, p, -1);
        if (!r.ok) return Value::Error(r.error);
        if (f == "matches") return Value::Bool(r.matched);
        if (f == "find") return Value::String(r.matches.empty() ? "" : r.matches[0]);
        return StringList(std::move(r.matches));
      }
      if (f == "indexOf") return IndexOf(s, p, 0);
      if (f == "lastIndexOf") return LastIndexOf(s, p, std::nullopt);
      if (f == "split") return StringList(SplitN(s, p, -1));
    }
    if (t.kind == Kind::kString && n == 2 && a[1].kind == Kind::kString && a[2].kind == Kind::kInt) {
      if (f == "indexOf") return IndexOf(t.text, a[1].text, a[2].i);
      if (f == "lastIndexOf") return LastIndexOf(t.text, a[1].text, a[2].i);
      if (f == "split") return StringList(SplitN(t.text, a[1].text, a[2].i));
    }
    if (t.kind == Kind::kString && f == "charAt" && n == 1 && a[1].kind == Kind::kInt) {
      std::vector<char32_t> r = Runes(t.text);
      int64_t i = a[1].i;
      if (i < 0 || i > static_cast<int64_t>(r.size())) return OutOfRange(i);
      return Value::String(i == static_cast<int64_t>(r.size()) ? "" : Utf8(std::span<const char32_t>(&r[i], 1)));
    }
    if (t.kind == Kind::kString && f == "substring" && (n == 1 || n == 2) && a[1].kind == Kind::kInt &&
        (n == 1 || a[2].kind == Kind::kInt)) {
      std::vector<char32_t> r = Runes(t.text);
      int64_t size = static_cast<int64_t>(r.size()), start = a[1].i, end = n == 2 ? a[2].i : size;
      if (n == 2 && start > end) return Value::Error(fmt::format("invalid substring range. start: {}, end: {}", start, end));
      if (start < 0 || start > size) return OutOfRange(start);
      if (end < 0 || end > size) return OutOfRange(end);
      return Value::String(Utf8(std::span<const char32_t>(r).subspan(start, end - start)));
    }
    if (t.kind == Kind::kString && n == 0) {
      std::string s = t.text;
      if (f == "lowerAscii") {
        for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        return Value::String(s);
      }
      if (f == "upperAscii") {
        for (char& c : s) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
        return Value::String(s);
      }
      if (f == "trim") return Value::String(TrimSpace(s));
      if (f == "size") return Size(t);
    }
    if (t.kind == Kind::kString && f == "findAll" && n == 2 && a[1].kind == Kind::kString && a[2].kind == Kind::kInt) {
      RegexResult r = FindAll(t.text, a[1].text, a[2].i);
      if (!r.ok) return Value::Error(r.error);
      return StringList(std::move(r.matches));
    }
    if (t.kind == Kind::kString && f == "replace" && (n == 2 || n == 3) && a[1].kind == Kind::kString &&
        a[2].kind == Kind::kString && (n == 2 || a[3].kind == Kind::kInt)) {
      return Value::String(ReplaceN(t.text, a[1].text, a[2].text, n == 3 ? a[3].i : -1));
    }
    if (n == 0 && f == "size") return Size(t);
    if (t.kind == Kind::kString && f == "format" && n == 1 && a[1].kind == Kind::kList) {
      Value v = Format(t.text, *a[1].list);
      if (v.kind == Kind::kString && !Allocate(v.text.size())) return Value::Error(cancelled_);
      return v;
    }
    if (t.kind == Kind::kList && f == "join" && n <= 1) {
      std::string sep = n == 1 && a[1].kind == Kind::kString ? a[1].text : "";
      uint64_t length = 0;
      for (size_t i = 0; i < t.list->size(); ++i) {
        if ((*t.list)[i].kind != Kind::kString) return NoOverload(f);
        length += (i ? sep.size() : 0) + (*t.list)[i].text.size();
      }
      if (!Charge(CostOf(length, 2 * kStringTraversalCostFactor)) || !Allocate(length)) return Value::Error(cancelled_);
      std::string out;
      out.reserve(length);
      for (size_t i = 0; i < t.list->size(); ++i) out += (i ? sep : "") + (*t.list)[i].text;
      return Value::String(out);
    }
    if (t.kind == Kind::kQuantity) {
      if (n == 1 && (f == "compareTo" || f == "isGreaterThan" || f == "isLessThan")) {
        if (a[1].kind != Kind::kQuantity) return NoOverload(f);
        int c = t.quantity < a[1].quantity ? -1 : t.quantity == a[1].quantity ? 0 : 1;
        if (f == "compareTo") return Value::Int(c);
        return Value::Bool(f == "isGreaterThan" ? c > 0 : c < 0);
      }
      if (n == 1 && (f == "add" || f == "sub")) {
        Value y = QuantityOperand(a[1], f);
        if (y.IsError()) return y;
        k8s::Quantity::Nanos r = f == "add" ? t.quantity.nanos() + y.quantity.nanos() : t.quantity.nanos() - y.quantity.nanos();
        if (r > k8s::Quantity::kMaxNanos || r < -k8s::Quantity::kMaxNanos) return Value::Error("quantity overflow");
        return Value::Quantity(k8s::Quantity::FromNanos(r, t.quantity.format()));
      }
      if (n == 0 && f == "sign") return Value::Int(t.quantity.IsZero() ? 0 : t.quantity.IsNegative() ? -1 : 1);
      if (n == 0 && f == "isInteger") return Value::Bool(t.quantity.nanos() % 1000000000 == 0);
      if (n == 0 && f == "asInteger") {
        if (t.quantity.nanos() % 1000000000 != 0) return Value::Error("cannot convert value to integer");
        return Value::Int(t.quantity.Value());
      }
      if (n == 0 && f == "asApproximateFloat") return Value::Double(static_cast<double>(t.quantity.nanos()) / 1e9);
    }
    if (t.kind == Kind::kSemver) {
      if (n == 1 && (f == "compareTo" || f == "isGreaterThan" || f == "isLessThan")) {
        if (a[1].kind != Kind::kSemver) return NoOverload(f);
        int c = Compare(*t.semver, *a[1].semver);
        if (f == "compareTo") return Value::Int(c);
        return Value::Bool(f == "isGreaterThan" ? c > 0 : c < 0);
      }
      if (n == 0 && f == "major") return Value::Int(static_cast<int64_t>(t.semver->major));
      if (n == 0 && f == "minor") return Value::Int(static_cast<int64_t>(t.semver->minor));
      if (n == 0 && f == "patch") return Value::Int(static_cast<int64_t>(t.semver->patch));
    }
    return Value::Error(fmt::format("no such overload: {}.{}", TypeName(t), f));
  }

  const DeviceInput& device_;
  std::vector<std::pair<std::string, Value>> scopes_;
  uint64_t cost_ = 0, work_ = 0, bytes_ = 0;
  std::string cancelled_;  ///< why evaluation stopped; empty while it goes on
};

}  // namespace

Value EvaluateValue(const Expr& expr, const DeviceInput& device) {
  Evaluator ev(device);
  return ev.Eval(expr);
}

Outcome Evaluate(const Expr& expr, const DeviceInput& device) {
  Value v = EvaluateValue(expr, device);
  if (v.IsError()) return {false, v.text};
  if (v.kind != Kind::kBool) {
    return {false, fmt::format("CEL result of type {} could not be converted to bool", TypeName(v))};
  }
  return {v.b, {}};
}

}  // namespace policy::cel
