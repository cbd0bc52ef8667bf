// `policyc test`: runs test files (docs/testing.md), as `opa test` runs
// Rego's: every case of every file given or found under a directory, a
// line per failing case with what differed, `N passed, N failed`, and with
// --coverage which rules of each policy the cases exercised.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_setup.h"
#include "runtime/tooling/input.h"
#include "runtime/tooling/structured_output.h"
#include "runtime/tooling/test_file.h"
#include "support/json_writer.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc test PATH ... [--policies DIR ...] [--kubernetes-version 1.34|1.31] [--coverage] [--verbose] [--output|-o text|json|yaml] [--no-cache]

Runs policy tests: each PATH is a test file, or a directory whose .yaml and
.yml files (and its subdirectories') are run in name order; YAML files that
are no tests (no `expect` or `cases`) are skipped. A test file names a
snapshot or holds objects inline, the policies and plugins to run, and
cases: a pod and what must come of it — the feasible nodes, reasons on
rejected nodes, scores or score ranges, the selected node, the summary, the
exit status (docs/testing.md). The conformance corpus's cases are test
files. Prints each failing case with what differed, then `N passed, N
failed`. --policies: where policy files not beside a test are looked up.
--kubernetes-version: whose semantics the cases follow (1.34 when absent;
the public corpus's cases/ state 1.31's).
--coverage: which rules of each policy the cases made reject a node and
pass one, and which scores were computed on a feasible node. --verbose:
a line for every case. --output json (or yaml): one document with every
case (file, name, passed, differences), the counts, and with --coverage the
rules. A test's `snapshot:` files (without inline objects) load through the
snapshot cache, as check loads them (docs/cache.md); --no-cache reads the
files alone.

Exit status: 0 every case passed, 1 some case failed, 2 bad usage or a
file that is not a readable test.
)";

void PrintCoverage(const std::map<std::string, tooling::RuleCoverage>& coverage) {
  if (coverage.empty()) {
    fmt::print("\ncoverage: no policy ran\n");
    return;
  }
  fmt::print("\ncoverage (every rule of every policy the cases ran):\n");
  size_t filters = 0, both = 0, scores = 0, scored = 0;
  // By file, then line and column as numbers (FILE:LINE:COL).
  auto position = [](const std::string& where) {
    size_t col = where.rfind(':'), line = col == std::string::npos ? col : where.rfind(':', col - 1);
    if (line == std::string::npos) return std::tuple(where, 0L, 0L);
    return std::tuple(where.substr(0, line), std::atol(where.c_str() + line + 1), std::atol(where.c_str() + col + 1));
  };
  std::vector<std::pair<std::tuple<std::string, long, long>, const tooling::RuleCoverage*>> ordered;
  for (const auto& [where, c] : coverage) ordered.emplace_back(position(where), &c);
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [at, rule] : ordered) {
    const tooling::RuleCoverage& c = *rule;
    std::string verdict;
    if (c.score) {
      ++scores;
      scored += c.passed > 0;
      verdict = c.passed > 0 ? fmt::format("scored {} feasible nodes", c.passed) : "never scored a feasible node";
    } else {
      ++filters;
      both += c.rejected > 0 && c.passed > 0;
      verdict = c.rejected == 0 ? fmt::format("never rejected a node (passed {})", c.passed)
                : c.passed == 0 ? fmt::format("never passed a node (rejected {})", c.rejected)
                                : fmt::format("rejected {} nodes, passed {}", c.rejected, c.passed);
    }
    bool covered = c.score ? c.passed > 0 : c.rejected > 0 && c.passed > 0;
    fmt::print("  {} {:<40} {:<7} {} in {} case{}: {}\n", covered ? "ok  " : "MISS", c.where, c.policy,
               c.score ? "score" : "filter", c.cases, c.cases == 1 ? "" : "s", verdict);
  }
  fmt::print("coverage: {} of {} filter rules both rejected and passed a node; {} of {} scores scored a feasible node\n",
             both, filters, scored, scores);
}

}  // namespace

namespace {

int Run(const Args& args) {
  if (args.Positional().empty()) {
    fmt::print(stderr, "policyc test: give test files or directories\nRun `policyc test --help` for usage.\n");
    return kExitBadInput;
  }
  std::string missing;
  std::vector<std::string> files = tooling::FilesUnder(args.Positional(), {".yaml", ".yml"}, missing);
  if (!missing.empty()) {
    fmt::print(stderr, "policyc test: no file or directory `{}`\n", missing);
    return kExitBadInput;
  }
  tooling::TestOptions options;
  std::optional<int> minor = KubeMinorFromFlags("test", args);
  if (!minor) return kExitBadInput;
  options.kube_minor = *minor;
  options.policy_dirs = args.GetAll("policies");
  options.coverage = args.Has("coverage");
  options.cache = !args.Has("no-cache");
  std::map<std::string, tooling::RuleCoverage> coverage;
  std::optional<tooling::OutputFormat> format = tooling::ParseOutputFormat("test", args.Get("output", "text"));
  if (!format) return kExitBadInput;
  bool json = *format != tooling::OutputFormat::kText;
  JsonWriter w;
  if (json) w.BeginObject().Key("cases").BeginArray();
  size_t passed = 0, failed = 0, skipped = 0;
  bool unreadable = false;
  // A file named on the command line must be a test; one found in a
  // directory may be any YAML (a snapshot beside the tests) and is skipped.
  std::set<std::string> named;
  for (const std::string& p : args.Positional()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) named.insert(p);
  }
  for (const std::string& file : files) {
    tooling::TestFileResult result = tooling::RunTestFile(file, options, coverage);
    if (!result.error.empty()) {
      fmt::print(stderr, "policyc test: {}: {}{}", file, result.error, result.error.ends_with('\n') ? "" : "\n");
      unreadable = true;
      continue;
    }
    if (result.not_a_test && named.contains(file)) {
      fmt::print(stderr, "policyc test: {}: not a test file: {}\n", file, result.not_a_test_why);
      unreadable = true;
      continue;
    }
    skipped += result.not_a_test;
    for (const tooling::CaseResult& c : result.cases) {
      if (json) {
        w.BeginObject().Key("file").String(file).Key("name").String(c.name).Key("passed").Bool(c.differences.empty());
        w.Key("differences").BeginArray();
        for (const std::string& d : c.differences) w.String(d);
        w.EndArray().EndObject();
      }
      if (c.differences.empty()) {
        ++passed;
        if (args.Has("verbose") && !json) fmt::print("ok   {}: {}\n", file, c.name);
        continue;
      }
      ++failed;
      if (json) continue;
      fmt::print("FAIL {}: {}\n", file, c.name);
      for (const std::string& d : c.differences) fmt::print("    {}\n", d);
    }
  }
  if (json) {
    w.EndArray();
    w.Key("passed").Int(static_cast<int64_t>(passed)).Key("failed").Int(static_cast<int64_t>(failed));
    w.Key("skipped").Int(static_cast<int64_t>(skipped));
    if (options.coverage) {
      w.Key("coverage").BeginArray();
      for (const auto& [where, c] : coverage) {
        w.BeginObject().Key("where").String(c.where).Key("policy").String(c.policy);
        w.Key("kind").String(c.score ? "score" : "filter").Key("cases").Int(static_cast<int64_t>(c.cases));
        w.Key("rejected").Int(static_cast<int64_t>(c.rejected)).Key("passed").Int(static_cast<int64_t>(c.passed));
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
    fmt::print("{}", tooling::Structured(*format, w.Take()));
  } else {
    if (options.coverage) PrintCoverage(coverage);
    if (skipped > 0) fmt::print("({} YAML file{} without cases skipped)\n", skipped, skipped == 1 ? "" : "s");
    fmt::print("{} passed, {} failed\n", passed, failed);
  }
  if (passed + failed == 0 && !unreadable) {
    fmt::print(stderr, "policyc test: no test case in {}\n", fmt::join(args.Positional(), ", "));
    return kExitBadInput;
  }
  if (unreadable) return kExitBadInput;
  return failed > 0 ? kExitNo : kExitOk;
}

}  // namespace

Command TestCommand() {
  return {"test", "run policy tests (cases of pods and what must come of them)", kUsage,
          {{"policies", true, true}, {"kubernetes-version", true}, {"coverage", false}, {"verbose", false, false, 'v'}, {"output", true, false, 'o'}, {"no-cache", false}},
          &Run};
}

}  // namespace policy::cli
