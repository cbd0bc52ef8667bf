// The unit tests' main: doctest's, except that a run whose filters match no
// test case fails. ctest runs each case by name (doctest_discover_tests); a
// name the filter cannot match would otherwise pass without running.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

bool ran_none = false;

struct RanNone : doctest::IReporter {
  explicit RanNone(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override { ran_none = stats.numTestCasesPassingFilters == 0; }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("ran-none", 1, RanNone);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  int result = context.run();
  if (context.shouldExit()) return result;  // --help, --list-test-cases, ...
  if (ran_none) {
    std::fputs("no test case matched the filters: nothing ran\n", stderr);
    return 1;
  }
  return result;
}
