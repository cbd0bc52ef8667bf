#include "support/decimal.h"

#include <charconv>

namespace policy {

std::optional<int64_t> ParseDecimalInt(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (*begin == '+') {  // from_chars takes `-` but not `+`
    ++begin;
    if (begin == end || *begin == '-') return std::nullopt;
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace policy
