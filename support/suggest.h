#pragma once
/// "Did you mean ...?" suggestions for misspelt names.

#include <string_view>
#include <vector>

namespace policy {

/// Edit distance between `a` and `b`, ignoring ASCII case.
size_t EditDistance(std::string_view a, std::string_view b);

/// The candidate closest to `name` when it is a near miss (one edit for
/// names under four characters, else at most two), else empty. Ties go to
/// the earlier candidate.
std::string_view Closest(std::string_view name, const std::vector<std::string_view>& candidates);

}  // namespace policy
