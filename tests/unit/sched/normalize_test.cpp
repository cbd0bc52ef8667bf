// kube-scheduler's NormalizeScore variants (rt::Normalize) against their
// formulas computed directly, over random raw scores of every size.

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "runtime/sched/normalize.h"

using namespace policy;

TEST_CASE("default normalization: 100 * s / max (reversed: 100 minus it) on every row - exactly") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 400; ++round) {
    // Maxima from 1 to past 2^50 (where the reciprocal path hands over).
    int64_t bound = int64_t{1} << (rng() % 56);
    std::vector<int64_t> raw(1 + rng() % 300);
    for (int64_t& s : raw) s = static_cast<int64_t>(rng() % static_cast<uint64_t>(bound + 1));
    if (round % 5 == 0) raw[rng() % raw.size()] = bound;  // quotients of exactly 100
    for (bool reverse : {false, true}) {
      std::vector<int64_t> got = raw;
      rt::Normalize(reverse ? lang::Normalize::kReverse : lang::Normalize::kMax, got);
      int64_t max = *std::max_element(raw.begin(), raw.end());
      for (size_t k = 0; k < raw.size(); ++k) {
        int64_t want = max == 0 ? (reverse ? 100 : raw[k])
                                : static_cast<int64_t>(static_cast<__int128>(raw[k]) * 100 / max);
        if (max != 0 && reverse) want = 100 - want;
        CAPTURE(raw[k]);
        CAPTURE(max);
        REQUIRE(got[k] == want);
      }
    }
  }
}

TEST_CASE("default normalization: every quotient next to an integer - for small maxima") {
  for (int64_t max = 1; max <= 700; ++max) {
    std::vector<int64_t> raw(static_cast<size_t>(max) + 1);
    for (int64_t s = 0; s <= max; ++s) raw[static_cast<size_t>(s)] = s;
    rt::Normalize(lang::Normalize::kMax, raw);
    for (int64_t s = 0; s <= max; ++s) REQUIRE(raw[static_cast<size_t>(s)] == 100 * s / max);
  }
}

TEST_CASE("one score normalized by the extremes equals the whole normalization - every kind") {
  std::mt19937_64 rng(7);
  using lang::Normalize;
  for (int round = 0; round < 2000; ++round) {
    int64_t bound = int64_t{1} << (rng() % 52);
    std::vector<int64_t> raw(1 + rng() % 64);
    for (int64_t& s : raw) s = static_cast<int64_t>(rng() % static_cast<uint64_t>(bound + 1));
    if (round % 3 == 0) raw[rng() % raw.size()] = -1;  // spread's ignored node; negative weights elsewhere
    if (round % 7 == 0) std::fill(raw.begin(), raw.end(), raw[0]);
    std::vector<uint32_t> rows(raw.size());
    for (uint32_t k = 0; k < rows.size(); ++k) rows[k] = k;
    for (Normalize kind : {Normalize::kNone, Normalize::kMax, Normalize::kReverse, Normalize::kMinMax, Normalize::kSpread}) {
      std::vector<int64_t> all = raw;
      rt::Normalize(kind, all);
      rt::Extremes e = rt::ExtremesOf(kind, raw.data(), rows);
      for (size_t k = 0; k < raw.size(); ++k) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(raw[k]);
        REQUIRE(rt::NormalizeOne(kind, raw[k], e) == all[k]);
      }
    }
  }
}
