#include "runtime/tooling/recorded_answer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

namespace policy::tooling {

std::string TaintsUnnamed(std::string_view summary) {
  constexpr std::string_view kAvailable = " nodes are available: ";
  constexpr std::string_view kUnnamed = "node(s) had untolerated taint(s)";
  size_t colon = summary.find(kAvailable);
  if (colon == std::string_view::npos || !summary.ends_with('.')) return std::string(summary);
  size_t start = colon + kAvailable.size();
  std::string_view body = summary.substr(start, summary.size() - start - 1);
  std::vector<std::string> reasons;
  int64_t taints = 0;
  for (size_t at = 0;;) {
    // A reason ends at ", " before the next one's count.
    size_t end = at;
    while ((end = body.find(", ", end)) != std::string_view::npos &&
           !(end + 2 < body.size() && std::isdigit(static_cast<unsigned char>(body[end + 2])))) {
      end += 2;
    }
    std::string_view reason = body.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    size_t space = reason.find(' ');
    int64_t count = 0;
    std::string_view text = space == std::string_view::npos ? reason : reason.substr(space + 1);
    bool counted = space != std::string_view::npos &&
                   std::from_chars(reason.data(), reason.data() + space, count).ptr == reason.data() + space;
    if (counted && (text.starts_with("node(s) had untolerated taint {") || text == kUnnamed)) {
      taints += count;
    } else {
      reasons.emplace_back(reason);
    }
    if (end == std::string_view::npos) break;
    at = end + 2;
  }
  if (taints > 0) reasons.push_back(fmt::format("{} {}", taints, kUnnamed));
  std::sort(reasons.begin(), reasons.end());
  return fmt::format("{}{}.", summary.substr(0, start), fmt::join(reasons, ", "));
}

Agreement CompareRecorded(std::string_view recorded, std::string_view summary) {
  std::string_view kube = recorded;
  for (std::string_view postscript : {" preemption: ", " no new claims to deallocate", " still not schedulable",
                                      " deallocation of ResourceClaim completed", " not eligible due to"}) {
    if (size_t at = kube.find(postscript); at != std::string_view::npos) kube = kube.substr(0, at);
  }
  if (kube == summary) return Agreement::kSame;
  if (TaintsUnnamed(kube) == TaintsUnnamed(summary)) return Agreement::kWording;
  return Agreement::kDiffers;
}

}  // namespace policy::tooling
