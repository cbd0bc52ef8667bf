#pragma once
/// The standard library's policy sources, embedded at build time.

#include <string_view>
#include <vector>

namespace policy::stdlib {

struct EmbeddedPolicy {
  std::string_view path;  ///< `stdlib/node_affinity.policy`
  std::string_view text;
};

/// Every stdlib/*.policy, sorted by path.
const std::vector<EmbeddedPolicy>& Sources();

}  // namespace policy::stdlib
