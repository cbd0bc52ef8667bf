#pragma once
/// A streaming JSON writer for policyc's machine-readable output.
///
/// Commas and nesting are tracked for the caller; output is pretty-printed
/// with two-space indentation (or on one line), keys in the order written.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace policy {

class JsonWriter {
 public:
  /// Pretty-printed (the default), or all on one line (JSON Lines).
  enum class Style { kPretty, kLine };
  explicit JsonWriter(Style style = Style::kPretty) : line_(style == Style::kLine) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  /// Writes the key of the next member (inside an object only).
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  /// The document so far, followed by a newline once complete.
  std::string Take();

 private:
  void BeforeValue();
  void Indent();

  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
  bool line_ = false;
};

/// `text` as a JSON string literal, quotes included.
std::string JsonQuote(std::string_view text);
/// Appends JsonQuote(text) to `out`.
void AppendJsonQuoted(std::string& out, std::string_view text);

}  // namespace policy
