#include "k8s/decode_context.h"

#include "support/suggest.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

namespace policy::k8s {

std::optional<int64_t> ParseGoInt(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c != '_') s += c;
  }
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  int base = 10;
  if (s.size() - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    base = 16, i += 2;
  } else if (s.size() - i > 2 && s[i] == '0' && (s[i + 1] == 'o' || s[i + 1] == 'O')) {
    base = 8, i += 2;
  } else if (s.size() - i > 2 && s[i] == '0' && (s[i + 1] == 'b' || s[i + 1] == 'B')) {
    base = 2, i += 2;
  } else if (s.size() - i > 1 && s[i] == '0') {
    base = 8, i += 1;
  }
  if (i >= s.size()) return std::nullopt;
  unsigned __int128 v = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : 99;
    if (d >= base) return std::nullopt;
    v = v * base + static_cast<unsigned>(d);
    if (v > static_cast<unsigned __int128>(INT64_MAX) + 1) return std::nullopt;
  }
  if (!negative && v > INT64_MAX) return std::nullopt;
  return negative ? static_cast<int64_t>(-static_cast<__int128>(v)) : static_cast<int64_t>(v);
}

Diagnostic& DecodeContext::Error(DiagCode code, NodeRef at, std::string message, std::string label) {
  return diags_.Error(code, at.GetSpan(), std::move(message), std::move(label));
}

bool DecodeContext::TypeError(NodeRef node, std::string_view what, std::string_view expected) {
  Diagnostic& d = Error(DiagCode::kWrongType, node,
                        fmt::format("`{}` must be {}, found {}", what, expected, node.Describe()));
  if (expected == "a string" && node.IsScalar()) {
    d.help = fmt::format("quote it: `\"{}\"` (YAML reads `{}` unquoted as {})", node.Text(), node.Text(),
                         node.Describe());
  }
  return false;
}

NodeRef DecodeContext::Mapping(NodeRef parent, std::string_view key) {
  NodeRef v = parent.Get(key);
  if (!v.Valid() || v.IsNull()) return {};
  if (!v.IsMapping()) {
    TypeError(v, key, "a mapping");
    return {};
  }
  return v;
}

NodeRef DecodeContext::Sequence(NodeRef parent, std::string_view key) {
  NodeRef v = parent.Get(key);
  if (!v.Valid() || v.IsNull()) return {};
  if (!v.IsSequence()) {
    TypeError(v, key, "a list");
    return {};
  }
  return v;
}

bool DecodeContext::ExpectMapping(NodeRef node, std::string_view what) {
  if (node.IsMapping()) return true;
  return TypeError(node, what, "a mapping");
}

bool DecodeContext::StringValue(NodeRef node, std::string_view what, std::string* out) {
  if (node.IsNull()) return true;
  if (!node.IsScalar() || node.Type() != ScalarType::kString) return TypeError(node, what, "a string");
  out->assign(node.Text());
  return true;
}

void DecodeContext::String(NodeRef parent, std::string_view key, std::string* out) {
  NodeRef v = parent.Get(key);
  if (v.Valid()) StringValue(v, key, out);
}

void DecodeContext::Int64(NodeRef parent, std::string_view key, std::optional<int64_t>* out) {
  NodeRef v = parent.Get(key);
  if (!v.Valid() || v.IsNull()) return;
  std::optional<int64_t> value;
  if (v.IsScalar() && v.Type() == ScalarType::kInt) value = ParseGoInt(v.Text());
  if (!value) {
    TypeError(v, key, "an integer");
    return;
  }
  *out = value;
}

void DecodeContext::Int32(NodeRef parent, std::string_view key, std::optional<int32_t>* out) {
  std::optional<int64_t> wide;
  Int64(parent, key, &wide);
  if (!wide) return;
  if (*wide < INT32_MIN || *wide > INT32_MAX) {
    Error(DiagCode::kWrongType, parent.Get(key), fmt::format("`{}` is out of range for a 32-bit integer", key));
    return;
  }
  *out = static_cast<int32_t>(*wide);
}

void DecodeContext::Bool(NodeRef parent, std::string_view key, bool* out) {
  NodeRef v = parent.Get(key);
  if (!v.Valid() || v.IsNull()) return;
  if (!v.IsScalar() || v.Type() != ScalarType::kBool) {
    TypeError(v, key, "a boolean");
    return;
  }
  char c = v.Text()[0];
  *out = c == 't' || c == 'T' || c == 'y' || c == 'Y' || v.Text() == "on" || v.Text() == "On" || v.Text() == "ON";
}

void DecodeContext::StringMapField(NodeRef parent, std::string_view key, StringMap* out) {
  NodeRef map = Mapping(parent, key);
  if (!map.Valid()) return;
  out->reserve(map.Size());
  for (uint32_t i = 0; i < map.Size(); ++i) {
    std::string value;
    NodeRef k = map.KeyAt(i);
    if (!StringValue(map.ValueAt(i), k.Text(), &value)) continue;
    out->emplace_back(std::string(k.Text()), std::move(value));
  }
}

void DecodeContext::StringList(NodeRef parent, std::string_view key, std::vector<std::string>* out) {
  NodeRef list = Sequence(parent, key);
  if (!list.Valid()) return;
  for (uint32_t i = 0; i < list.Size(); ++i) {
    std::string value;
    if (StringValue(list.At(i), key, &value)) out->push_back(std::move(value));
  }
}

std::optional<Quantity> DecodeContext::QuantityValue(NodeRef node, std::string_view what) {
  std::string text;
  if (node.IsScalar() && node.Type() == ScalarType::kInt) {
    // YAML 1.1 integers (`010`, `0x10`) reach Kubernetes as their value.
    // One past int64 (a JSON number of 20 digits) is still a quantity's
    // digits, as Quantity.UnmarshalJSON reads the number's text.
    std::optional<int64_t> v = ParseGoInt(node.Text());
    text = v ? fmt::format("{}", *v) : std::string(node.Text());
  } else if (node.IsScalar() && node.Type() != ScalarType::kBool && node.Type() != ScalarType::kNull) {
    text.assign(node.Text());
    if (node.Type() == ScalarType::kFloat) std::erase(text, '_');
  } else {
    TypeError(node, what, "a quantity such as `500m` or `2Gi`");
    return std::nullopt;
  }
  // Quantity.UnmarshalJSON trims surrounding spaces.
  size_t b = text.find_first_not_of(" \t\n\r");
  size_t e = text.find_last_not_of(" \t\n\r");
  std::string trimmed = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  std::string why;
  std::optional<Quantity> q = Quantity::Parse(trimmed, &why);
  if (!q) {
    Diagnostic& d = Error(DiagCode::kInvalidQuantity, node, fmt::format("invalid quantity `{}`: {}", node.Text(), why),
                          "not a Kubernetes quantity");
    d.help = "write a number with an optional suffix: `500m`, `2`, `1.5`, `128Mi`, `16Gi`, `1e3`";
  }
  return q;
}

NodeRef DecodeContext::Resources(NodeRef parent, std::string_view key, ResourceList* out) {
  NodeRef map = Mapping(parent, key);
  if (!map.Valid()) return map;
  out->reserve(map.Size());
  for (uint32_t i = 0; i < map.Size(); ++i) {
    std::optional<Quantity> q = QuantityValue(map.ValueAt(i), map.KeyAt(i).Text());
    if (q) out->emplace_back(std::string(map.KeyAt(i).Text()), *q);
  }
  return map;
}

bool DecodeContext::BadEnum(NodeRef at, std::string_view field, std::string_view found,
                            std::initializer_list<std::string_view> allowed, DiagCode code) {
  std::string list;
  for (std::string_view a : allowed) list += fmt::format("{}`{}`", list.empty() ? "" : ", ", a);
  std::string_view closest = Closest(found, std::vector<std::string_view>(allowed));
  Diagnostic& d = Error(code, at, fmt::format("unknown {} `{}`", field, found), fmt::format("not a valid {}", field));
  d.help = closest.empty() ? fmt::format("use one of {}", list)
                           : fmt::format("did you mean `{}`? (one of {})", closest, list);
  return false;
}

}  // namespace policy::k8s
