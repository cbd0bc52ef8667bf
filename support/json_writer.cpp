#include "support/json_writer.h"

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace policy {

namespace {

// Whether any of the 8 bytes of `x` is a control character, '"' or '\\'
// (bytes >= 0x80 are plain): the classic SWAR zero-byte tests.
bool NeedsEscape(uint64_t x) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  auto zero_byte = [&](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  uint64_t below_space = (x - kOnes * 0x20) & ~x & kHigh;
  return (below_space | zero_byte(x ^ (kOnes * '"')) | zero_byte(x ^ (kOnes * '\\'))) != 0;
}

}  // namespace

void AppendJsonQuoted(std::string& out, std::string_view text) {
  out += '"';
  size_t plain = 0;  // start of the run of characters that need no escape
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {  // eight plain bytes at a time (names, reasons: nearly always plain)
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if (NeedsEscape(word)) break;
  }
  for (; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += fmt::format("\\u{:04x}", c);
    }
  }
  out.append(text.data() + plain, text.size() - plain);
  out += '"';
}

std::string JsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  AppendJsonQuoted(out, text);
  return out;
}

void JsonWriter::Indent() {
  if (line_) {  // `{"a": 1, "b": 2}`
    if (!out_.empty() && out_.back() == ',') out_ += ' ';
    return;
  }
  out_ += '\n';
  out_.append(first_.size() * 2, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ += ',';
  first_.back() = false;
  Indent();
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) Indent();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() { return EndObject(), out_.back() = ']', *this; }

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonQuoted(out_, key);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendJsonQuoted(out_, value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  fmt::format_to(std::back_inserter(out_), "{}", value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  BeforeValue();
  out_ += fmt::format("{}", value);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

std::string JsonWriter::Take() {
  out_ += '\n';
  return std::move(out_);
}

}  // namespace policy
