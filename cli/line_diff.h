#pragma once
/// A unified diff of two texts by lines (`policyc fmt --diff`), as `diff -u`
/// prints it: `--- a`, `+++ b`, hunks with three lines of context.

#include <string>
#include <string_view>

namespace policy::cli {

/// The diff from `before` to `after`, or empty when they are equal. Texts
/// of more than 4,000 lines a side are told as one hunk (every line out,
/// every line in) rather than compared line by line.
std::string UnifiedDiff(std::string_view before, std::string_view after, std::string_view name_before,
                        std::string_view name_after);

}  // namespace policy::cli
