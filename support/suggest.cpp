#include "support/suggest.h"

#include <algorithm>
#include <cctype>

namespace policy {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string_view Closest(std::string_view name, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  // A near miss: at most 1 edit for short names, 2 for longer ones.
  size_t best_distance = std::min<size_t>(2, std::max<size_t>(1, name.size() / 2)) + 1;
  for (std::string_view c : candidates) {
    // The lengths alone bound the distance from below.
    size_t apart = name.size() > c.size() ? name.size() - c.size() : c.size() - name.size();
    if (apart >= best_distance) continue;
    size_t d = EditDistance(name, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  return best;
}

}  // namespace policy
