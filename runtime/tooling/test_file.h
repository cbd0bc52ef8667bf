#pragma once
/// One `policyc test` file (docs/testing.md): a snapshot or inline objects,
/// policies, and cases — a pod and what must come of it — each run through
/// the engine as `check` runs it and compared field by field. The format
/// is a superset of the conformance corpus's (../shared/conformance/
/// FORMAT.md): a conformance case is a test file with one case.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/sched/profile.h"
#include "support/source.h"

namespace policy::tooling {

/// How often each rule of each policy was seen to reject and to pass a
/// node, over every case run (--coverage).
struct RuleCoverage {
  std::string where;    ///< `file:line:col`
  std::string policy;
  bool score = false;   ///< a score (else a filter rule)
  size_t rejected = 0;  ///< nodes it rejected (filters)
  size_t passed = 0;    ///< nodes it passed (filters) or scored (scores)
  size_t cases = 0;     ///< cases it was evaluated in
};

struct TestOptions {
  std::vector<std::string> policy_dirs;  ///< where policies not beside the file are looked up
  bool coverage = false;
  /// Whose semantics the cases follow (1.MINOR; `--kubernetes-version`).
  int kube_minor = rt::kDefaultKubeMinor;
  /// Snapshot files (a test's `snapshot:` without inline objects) load
  /// through the snapshot cache, as check loads them (`--no-cache`: off).
  bool cache = true;
};

struct CaseResult {
  std::string name;
  std::vector<std::string> differences;  ///< empty: passed
};

struct TestFileResult {
  std::vector<CaseResult> cases;
  /// The file could not be read as a test (an error for the whole file).
  std::string error;
  bool not_a_test = false;  ///< a YAML file without `expect` or `cases` (skipped in a directory)
  std::string not_a_test_why;  ///< why, with its keys that are not a test file's (a misspelled `cases`)
};

/// Runs every case of `path`. `coverage` (keyed by where) gathers rule
/// coverage when TestOptions::coverage.
TestFileResult RunTestFile(const std::string& path, const TestOptions& options,
                           std::map<std::string, RuleCoverage>& coverage);

}  // namespace policy::tooling
