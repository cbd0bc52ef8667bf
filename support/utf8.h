#pragma once
/// UTF-8 validation for inputs that must be UTF-8 (YAML, JSON, policies).

#include <cstddef>
#include <string>
#include <string_view>

namespace policy {

/// The length of the valid UTF-8 sequence starting at byte `i` of `text`
/// (1 to 4), or 0 when none starts there.
size_t Utf8SequenceLength(std::string_view text, size_t i);

/// Byte offset of the first byte that does not begin a valid UTF-8 sequence
/// (overlong forms and surrogates are invalid); `text.size()` when valid.
size_t FirstInvalidUtf8(std::string_view text);
/// Appends code point `c` (at most U+10FFFF) to `out` as UTF-8.
void AppendUtf8(std::string& out, char32_t c);

}  // namespace policy
