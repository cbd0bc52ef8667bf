#include "k8s/document.h"

#include <cstring>

namespace policy::k8s {

// An invalid ref (a key that is absent) reads as a null scalar with no text,
// no elements and no span, so callers may chain lookups without checks.
NodeKind NodeRef::Kind() const { return Valid() ? doc_->node(id_).kind : NodeKind::kScalar; }
ScalarType NodeRef::Type() const { return Valid() ? doc_->node(id_).type : ScalarType::kNull; }
std::string_view NodeRef::Text() const { return Valid() ? doc_->node(id_).text : std::string_view(); }

uint32_t NodeRef::Size() const {
  if (!Valid()) return 0;
  const Document::Node& n = doc_->node(id_);
  if (n.kind == NodeKind::kScalar) return 0;
  return n.kind == NodeKind::kMapping ? n.count / 2 : n.count;
}

NodeRef NodeRef::At(uint32_t i) const { return NodeRef(doc_, doc_->child(doc_->node(id_).first + i)); }
NodeRef NodeRef::KeyAt(uint32_t i) const {
  return NodeRef(doc_, doc_->child(doc_->node(id_).first + 2 * i));
}
NodeRef NodeRef::ValueAt(uint32_t i) const {
  return NodeRef(doc_, doc_->child(doc_->node(id_).first + 2 * i + 1));
}

NodeRef NodeRef::Get(std::string_view key) const {
  if (!IsMapping()) return {};
  const Document::Node& n = doc_->node(id_);
  for (uint32_t i = 0; i < n.count; i += 2) {
    const Document::Node& k = doc_->node(doc_->child(n.first + i));
    if (k.kind == NodeKind::kScalar && k.text == key) return NodeRef(doc_, doc_->child(n.first + i + 1));
  }
  return {};
}

Span NodeRef::GetSpan() const {
  if (!Valid()) return Span{};
  const Document::Node& n = doc_->node(id_);
  uint32_t end = n.end > n.begin ? n.end : n.begin + 1;
  if (end > doc_->source()->Size()) end = static_cast<uint32_t>(doc_->source()->Size());
  return Span{doc_->source(), n.begin, end};
}

std::string_view NodeRef::Describe() const {
  if (!Valid()) return "nothing";
  switch (Kind()) {
    case NodeKind::kMapping: return "a mapping";
    case NodeKind::kSequence: return "a list";
    case NodeKind::kScalar: break;
  }
  switch (Type()) {
    case ScalarType::kString: return "a string";
    case ScalarType::kInt: return "an integer";
    case ScalarType::kFloat: return "a number";
    case ScalarType::kBool: return "a boolean";
    case ScalarType::kNull: return "null";
  }
  return "a value";
}

std::string_view TextArena::Copy(std::string_view text) {
  if (text.empty()) return {};
  if (used_ + text.size() > capacity_) {
    size_t size = std::max<size_t>(text.size(), 64 * 1024);
    blocks_.push_back(std::make_unique<char[]>(size));
    used_ = 0;
    capacity_ = size;
  }
  char* out = blocks_.back().get() + used_;
  std::memcpy(out, text.data(), text.size());
  used_ += text.size();
  return std::string_view(out, text.size());
}

void TextArena::Clear() {
  // Keep the newest block for reuse: per-object documents fit in one.
  if (blocks_.size() > 1) {
    auto last = std::move(blocks_.back());
    blocks_.clear();
    blocks_.push_back(std::move(last));
  }
  used_ = 0;
  capacity_ = blocks_.empty() ? 0 : capacity_;
}

uint32_t Document::AddScalar(uint32_t begin, uint32_t end, ScalarType type, std::string_view text) {
  nodes_.push_back(Node{NodeKind::kScalar, type, begin, end, 0, 0, text});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

uint32_t Document::AddContainer(NodeKind kind, uint32_t begin) {
  nodes_.push_back(Node{kind, ScalarType::kNull, begin, begin, 0, 0, {}});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

void Document::SetChildren(uint32_t id, const uint32_t* ids, uint32_t count) {
  nodes_[id].first = static_cast<uint32_t>(children_.size());
  nodes_[id].count = count;
  children_.insert(children_.end(), ids, ids + count);
}

void Document::Clear() {
  nodes_.clear();
  children_.clear();
  root_ = 0;
  arena_.Clear();
}

namespace {

bool IsOneOf(std::string_view text, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (text == w) return true;
  }
  return false;
}

bool AllDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    int v = (c >= '0' && c <= '9') ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : 99;
    if (v >= base) return false;
  }
  return true;
}

// strconv.ParseInt/ParseUint(s, 0, 64) syntax, after `_` were removed
// (range is not checked: an out-of-range integer is still a number).
bool IsGoInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.size() > 2 && s[0] == '0') {
    char p = s[1];
    if (p == 'x' || p == 'X') return AllDigits(s.substr(2), 16);
    if (p == 'o' || p == 'O') return AllDigits(s.substr(2), 8);
    if (p == 'b' || p == 'B') return AllDigits(s.substr(2), 2);
  }
  if (s.size() > 1 && s[0] == '0') return AllDigits(s.substr(1), 8);
  return AllDigits(s, 10);
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

}  // namespace

ScalarType ResolvePlainScalar(std::string_view text) {
  if (IsOneOf(text, {"", "~", "null", "Null", "NULL"})) return ScalarType::kNull;
  if (IsOneOf(text, {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE", "n", "N",
                     "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"})) {
    return ScalarType::kBool;
  }
  if (IsOneOf(text, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
                     ".NaN", ".NAN"})) {
    return ScalarType::kFloat;
  }
  char c = text[0];
  if (!((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) return ScalarType::kString;
  std::string plain;
  plain.reserve(text.size());
  for (char ch : text) {
    if (ch != '_') plain += ch;
  }
  if (IsGoInteger(plain)) return ScalarType::kInt;
  if (IsYamlFloat(plain)) return ScalarType::kFloat;
  return ScalarType::kString;
}

}  // namespace policy::k8s
