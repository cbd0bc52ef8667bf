#include "cli/line_diff.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace policy::cli {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// One line of the edit script: ' ' kept, '-' out of a, '+' into b.
struct Step {
  char op;
  size_t a, b;  // line indexes (of a for ' ' and '-', of b for '+')
};

std::vector<Step> Script(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::vector<Step> steps;
  constexpr size_t kMaxLines = 4000;
  if (a.size() > kMaxLines || b.size() > kMaxLines) {
    for (size_t i = 0; i < a.size(); ++i) steps.push_back({'-', i, 0});
    for (size_t j = 0; j < b.size(); ++j) steps.push_back({'+', 0, j});
    return steps;
  }
  // Longest common subsequence, from the ends.
  std::vector<std::vector<uint32_t>> lcs(a.size() + 1, std::vector<uint32_t>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      steps.push_back({' ', i++, j++});
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      steps.push_back({'-', i++, j});
    } else {
      steps.push_back({'+', i, j++});
    }
  }
  return steps;
}

}  // namespace

std::string UnifiedDiff(std::string_view before, std::string_view after, std::string_view name_before,
                        std::string_view name_after) {
  if (before == after) return {};
  std::vector<std::string_view> a = Lines(before), b = Lines(after);
  std::vector<Step> steps = Script(a, b);
  std::string out = fmt::format("--- {}\n+++ {}\n", name_before, name_after);
  constexpr size_t kContext = 3;
  size_t k = 0;
  while (k < steps.size()) {
    if (steps[k].op == ' ') {
      ++k;
      continue;
    }
    // A hunk: from kContext kept lines before this change to kContext after the last change near it.
    size_t begin = k >= kContext ? k - kContext : 0;
    while (begin < k && steps[begin].op != ' ') ++begin;
    size_t end = k;
    for (size_t kept = 0; end < steps.size(); ++end) {
      if (steps[end].op != ' ') {
        kept = 0;
      } else if (++kept > 2 * kContext) {
        break;
      }
    }
    // Trim the trailing context to kContext lines.
    size_t last_change = end;
    while (last_change > begin && steps[last_change - 1].op == ' ') --last_change;
    end = std::min(end, last_change + kContext);
    size_t a_start = 0, a_len = 0, b_start = 0, b_len = 0;
    bool first = true;
    std::string body;
    for (size_t s = begin; s < end; ++s) {
      const Step& st = steps[s];
      if (first) {
        a_start = st.op == '+' ? st.a : st.a;
        b_start = st.op == '-' ? st.b : st.b;
        first = false;
      }
      if (st.op != '+') ++a_len;
      if (st.op != '-') ++b_len;
      std::string_view text = st.op == '+' ? b[st.b] : a[st.a];
      body += fmt::format("{}{}\n", st.op, text);
    }
    out += fmt::format("@@ -{},{} +{},{} @@\n", a_len ? a_start + 1 : a_start, a_len, b_len ? b_start + 1 : b_start, b_len);
    out += body;
    k = end;
  }
  return out;
}

}  // namespace policy::cli
