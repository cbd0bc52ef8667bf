#pragma once
/// String literal bodies: escapes, and the `{expr}` interpolations of reason
/// and detail strings (internal to compiler/syntax).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace policy::syntax {

/// The body of a double-quoted string with its escapes resolved
/// (\" \\ \n \t \{ \}); nullopt on an unknown escape.
std::optional<std::string> Unescape(std::string_view body);

struct TemplatePiece {
  bool is_expr = false;
  std::string text;     ///< unescaped literal text, or the raw expression text
  uint32_t offset = 0;  ///< byte offset of `text` in the body
};

/// Splits a double-quoted string body into literal text and `{...}`
/// expressions. On error returns false with a message and the byte offset.
bool SplitTemplate(std::string_view body, std::vector<TemplatePiece>* pieces, std::string* error,
                   uint32_t* error_offset);

}  // namespace policy::syntax
