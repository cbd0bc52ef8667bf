#include "compiler/cel/value.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace policy::cel {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A version number part: digits, no leading zero (unless "0").
std::optional<uint64_t> Number(std::string_view s) {
  if (!AllDigits(s) || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc()) return std::nullopt;
  return v;
}

bool IdentifierChars(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-')) return false;
  }
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace

std::optional<Semver> ParseSemver(std::string_view text) {
  Semver v;
  v.text = std::string(text);
  std::string_view rest = text;
  if (size_t plus = rest.find('+'); plus != std::string_view::npos) {
    for (std::string_view part : Split(rest.substr(plus + 1), '.')) {
      if (!IdentifierChars(part)) return std::nullopt;
    }
    rest = rest.substr(0, plus);
  }
  std::string_view pre;
  if (size_t dash = rest.find('-'); dash != std::string_view::npos) {
    pre = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    for (std::string_view part : Split(pre, '.')) {
      if (!IdentifierChars(part) || (AllDigits(part) && part.size() > 1 && part[0] == '0')) return std::nullopt;
      v.pre.emplace_back(part);
    }
  }
  std::vector<std::string_view> parts = Split(rest, '.');
  if (parts.size() != 3) return std::nullopt;
  auto major = Number(parts[0]), minor = Number(parts[1]), patch = Number(parts[2]);
  if (!major || !minor || !patch) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  v.patch = *patch;
  return v;
}

int Compare(const Semver& a, const Semver& b) {
  auto cmp = [](uint64_t x, uint64_t y) { return x < y ? -1 : x > y ? 1 : 0; };
  if (int c = cmp(a.major, b.major)) return c;
  if (int c = cmp(a.minor, b.minor)) return c;
  if (int c = cmp(a.patch, b.patch)) return c;
  // A version without pre-release identifiers ranks above one with them.
  if (a.pre.empty() || b.pre.empty()) return a.pre.empty() == b.pre.empty() ? 0 : a.pre.empty() ? 1 : -1;
  for (size_t i = 0; i < a.pre.size() && i < b.pre.size(); ++i) {
    bool an = AllDigits(a.pre[i]), bn = AllDigits(b.pre[i]);
    if (an && bn) {
      if (a.pre[i].size() != b.pre[i].size()) return a.pre[i].size() < b.pre[i].size() ? -1 : 1;
    } else if (an != bn) {
      return an ? -1 : 1;  // numeric identifiers rank below alphanumeric ones
    }
    if (int c = a.pre[i].compare(b.pre[i])) return c < 0 ? -1 : 1;
  }
  return cmp(a.pre.size(), b.pre.size());
}

std::optional<double> ParseDouble(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  std::string copy(text);  // strtod needs a terminator
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  if (errno == ERANGE && std::isinf(d)) return std::nullopt;  // too large; too small is 0 or subnormal
  return d;
}

std::string TypeName(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull: return "null_type";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kUint: return "uint";
    case Value::Kind::kDouble: return "double";
    case Value::Kind::kString: return "string";
    case Value::Kind::kBytes: return "bytes";
    case Value::Kind::kList: return "list";
    case Value::Kind::kMap:
    case Value::Kind::kAttributes:
    case Value::Kind::kDomain:
    case Value::Kind::kCapacities:
    case Value::Kind::kCapacityDomain: return "map";
    case Value::Kind::kQuantity: return "kubernetes.Quantity";
    case Value::Kind::kSemver: return "kubernetes.Semver";
    case Value::Kind::kType: return "type";
    case Value::Kind::kError: return "error";
    case Value::Kind::kDevice: return "kubernetes.DRADevice";
  }
  return "dyn";
}

std::string Show(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull: return "null";
    case Value::Kind::kBool: return v.b ? "true" : "false";
    case Value::Kind::kInt: return fmt::format("{}", v.i);
    case Value::Kind::kUint: return fmt::format("{}u", v.u);
    case Value::Kind::kDouble: return fmt::format("{}", v.d);
    case Value::Kind::kString: return fmt::format("\"{}\"", v.text);
    case Value::Kind::kBytes: return fmt::format("b\"{}\"", v.text);
    case Value::Kind::kQuantity: return v.quantity.ToString();
    case Value::Kind::kSemver: return v.semver ? v.semver->text : "";
    case Value::Kind::kType: return v.text;
    case Value::Kind::kError: return "error: " + v.text;
    case Value::Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; v.list && i < v.list->size(); ++i) out += (i ? ", " : "") + Show((*v.list)[i]);
      return out + "]";
    }
    default: return TypeName(v);
  }
}

}  // namespace policy::cel
