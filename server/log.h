#pragma once
/// `policyc serve`'s log: one JSON object per line on stderr, with `ts`
/// (RFC 3339, UTC, milliseconds), `level`, `msg`, then fields of the
/// caller's. Lines are written whole, from any thread.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace policy::server {

using LogValue = std::variant<std::string_view, int64_t, double>;

void Log(std::string_view level, std::string_view message,
         std::initializer_list<std::pair<std::string_view, LogValue>> fields = {});

}  // namespace policy::server
