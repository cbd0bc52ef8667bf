#pragma once
/// UTF-8 validation for inputs that must be UTF-8 (YAML, JSON, policies).

#include <cstddef>
#include <string_view>

namespace policy {

/// Byte offset of the first byte that does not begin a valid UTF-8 sequence
/// (overlong forms and surrogates are invalid); `text.size()` when valid.
size_t FirstInvalidUtf8(std::string_view text);

}  // namespace policy
