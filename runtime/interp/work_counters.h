#pragma once
/// Work the explaining path does, counted process-wide so that tests can
/// hold it to what was asked (counts, never time): rows given words, details
/// rendered, label-key searches for a did-you-mean. Relaxed atomics: a count
/// costs about nothing and threads may explain at once.

#include <atomic>
#include <cstdint>

namespace policy::rt {

struct WorkCounters {
  std::atomic<uint64_t> rows_explained{0};      ///< infeasible rows rt::Explain rendered reasons for
  std::atomic<uint64_t> details_rendered{0};    ///< `detail` messages rendered by the interpreter
  std::atomic<uint64_t> label_key_searches{0};  ///< closestLabelKey searches over the table's label keys

  void Reset() {
    rows_explained = 0;
    details_rendered = 0;
    label_key_searches = 0;
  }
};

/// The process's counters.
WorkCounters& Work();

}  // namespace policy::rt
