#pragma once
/// Decimal integers as Go's strconv.ParseInt(s, 10, 64) reads them: an
/// optional sign, digits, nothing else, within int64 (what kube's Gt/Lt
/// node selector operators and the language's `s.int()` accept).

#include <cstdint>
#include <optional>
#include <string_view>

namespace policy {

std::optional<int64_t> ParseDecimalInt(std::string_view text);

}  // namespace policy
