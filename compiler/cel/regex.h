#pragma once
/// CEL's regular expressions on RE2, as cel-go's are on Go's regexp (RE2's
/// syntax, linear time in the input, no backtracking): `matches` and the
/// Kubernetes library's `find` and `findAll`. A pattern that does not
/// compile is an error in Go's words (`error parsing regexp: missing
/// closing ): `(a``). Compiled patterns are kept per thread, a bounded few.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace policy::cel {

struct RegexResult {
  bool ok = false;
  std::string error;                 ///< when !ok
  bool matched = false;              ///< Matches
  std::vector<std::string> matches;  ///< Find (0 or 1) and FindAll
};

/// Whether `pattern` matches anywhere in `text` (Go's regexp.MatchString).
RegexResult Matches(std::string_view text, std::string_view pattern);
/// The leftmost match (empty when none) — `find`.
RegexResult Find(std::string_view text, std::string_view pattern);
/// Successive non-overlapping matches, at most `limit` of them (a negative
/// limit: all) — `findAll`, as Go's FindAllString.
RegexResult FindAll(std::string_view text, std::string_view pattern, int64_t limit);

}  // namespace policy::cel
