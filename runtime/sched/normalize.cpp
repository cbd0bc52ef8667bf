#include "runtime/sched/normalize.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace policy::rt {

// kube-scheduler's NormalizeScore variants over the feasible nodes' raw scores.
void Normalize(lang::Normalize kind, std::span<int64_t> scores) {
  if (kind == lang::Normalize::kNone || scores.empty()) return;
  if (kind == lang::Normalize::kSpread) {  // podtopologyspread NormalizeScore
    int64_t min = INT64_MAX, max = 0;
    for (int64_t s : scores) {
      if (s < 0) continue;  // an ignored node
      min = std::min(min, s);
      max = std::max(max, s);
    }
    for (int64_t& s : scores) {
      if (s < 0) s = 0;
      else s = max == 0 ? 100 : 100 * (max + min - s) / max;
    }
    return;
  }
  int64_t max = scores[0], min = scores[0];
  for (int64_t s : scores) {  // one pass, no branch
    max = std::max(max, s);
    min = std::min(min, s);
  }
  if (kind == lang::Normalize::kMinMax) {  // interpodaffinity NormalizeScore: float64, truncated
    for (int64_t& s : scores) {
      s = max == min ? 0 : static_cast<int64_t>(100.0 * (static_cast<double>(s - min) / static_cast<double>(max - min)));
    }
    return;
  }
  // helper.DefaultNormalizeScore(100, reverse): a zero maximum leaves zeros
  // (or all 100 when reversed).
  bool reverse = kind == lang::Normalize::kReverse;
  if (max == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), 100);
    return;
  }
  if (min >= 0 && static_cast<size_t>(max) < scores.size()) {
    // Few distinct raw values (counts, weights), many rows: a table of the
    // answers, one load per row.
    std::vector<int64_t> answer(static_cast<size_t>(max) + 1);
    for (int64_t s = 0; s <= max; ++s) answer[static_cast<size_t>(s)] = reverse ? 100 - 100 * s / max : 100 * s / max;
    for (int64_t& s : scores) s = answer[static_cast<size_t>(s)];
    return;
  }
  if (min >= 0 && max <= (int64_t{1} << 50)) {
    // 100 * s / max for 0 <= s <= max without a division per row: the
    // quotient (0..100) estimated with a reciprocal, then made exact by its
    // remainder (100 * s fits in 64 bits here).
    double inverse = 100.0 / static_cast<double>(max);
    for (int64_t& s : scores) {
      int64_t q = static_cast<int64_t>(static_cast<double>(s) * inverse);
      int64_t r = 100 * s - q * max;
      q += (r >= max ? 1 : 0) - (r < 0 ? 1 : 0);
      s = reverse ? 100 - q : q;
    }
    return;
  }
  for (int64_t& s : scores) {
    s = 100 * s / max;
    if (reverse) s = 100 - s;
  }
}

Extremes ExtremesOf(lang::Normalize kind, const int64_t* raw, std::span<const uint32_t> rows) {
  Extremes e;
  switch (kind) {
    case lang::Normalize::kNone: return e;
    case lang::Normalize::kSpread:
      e.min = INT64_MAX;
      for (uint32_t row : rows) {
        int64_t s = raw[row];
        if (s < 0) continue;
        e.min = std::min(e.min, s);
        e.max = std::max(e.max, s);
      }
      return e;
    case lang::Normalize::kMinMax:
      e.min = e.max = raw[rows[0]];
      for (uint32_t row : rows) {
        e.min = std::min(e.min, raw[row]);
        e.max = std::max(e.max, raw[row]);
      }
      return e;
    default:
      e.max = raw[rows[0]];
      for (uint32_t row : rows) e.max = std::max(e.max, raw[row]);
      return e;
  }
}

int64_t NormalizeOne(lang::Normalize kind, int64_t s, Extremes e) {
  switch (kind) {
    case lang::Normalize::kNone: return s;
    case lang::Normalize::kSpread:
      if (s < 0) return 0;
      return e.max == 0 ? 100 : 100 * (e.max + e.min - s) / e.max;
    case lang::Normalize::kMinMax:
      return e.max == e.min
                 ? 0
                 : static_cast<int64_t>(100.0 * (static_cast<double>(s - e.min) / static_cast<double>(e.max - e.min)));
    default: {
      bool reverse = kind == lang::Normalize::kReverse;
      if (e.max == 0) return reverse ? 100 : s;
      int64_t q = 100 * s / e.max;
      return reverse ? 100 - q : q;
    }
  }
}

}  // namespace policy::rt
