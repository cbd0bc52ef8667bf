// CEL's own conformance suite (google/cel-spec's tests/simple/testdata at the
// tag kube 1.34's cel-go builds with), converted by tests/cel-spec/convert.py
// into device selectors: each kept test is true exactly when its expression
// gives the expected value of the expected type, or errs when it should.
// Every selector runs through the reference evaluator and through the native
// kernels (runtime/sched/selector_kernels.h); where a kernel compiles it must
// answer as the evaluator does.
//
// tests/cel-spec/known_failures.txt names the tests policyc does not pass
// yet. The suite fails when one of them passes (take it off the list) or
// when any other fails: the list only ever shrinks, and the count below is
// the one docs/dra.md reports.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "compiler/codegen/jit.h"
#include "runtime/columnar/device_columns.h"
#include "runtime/dra/selector_evaluator.h"
#include "runtime/sched/selector_kernels.h"

using namespace policy;

namespace {

struct Case {
  std::string id, file, selector, expected_error;
  bool expects_error = false;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Case> KeptCases(size_t* all) {
  std::string text = ReadFile(std::string(POLICYC_SOURCE_DIR) + "/tests/cel-spec/cases.json");
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(text);
  std::vector<Case> out;
  *all = 0;
  for (simdjson::dom::element c : root["cases"].get_array()) {
    ++*all;
    if (c["left_out"].error() == simdjson::SUCCESS) continue;
    Case k;
    k.id = std::string(std::string_view(c["id"]));
    k.file = std::string(std::string_view(c["file"]));
    k.selector = std::string(std::string_view(c["selector"]));
    simdjson::dom::array errors;
    if (c["error"].get(errors) == simdjson::SUCCESS) {
      k.expects_error = true;
      for (simdjson::dom::element e : errors) k.expected_error = std::string(std::string_view(e));
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::set<std::string> KnownFailures() {
  std::set<std::string> out;
  std::istringstream in(ReadFile(std::string(POLICYC_SOURCE_DIR) + "/tests/cel-spec/known_failures.txt"));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') out.insert(line);
  }
  return out;
}

// What one engine answered, in words, and whether it is what the test asks.
struct Answer {
  bool right = false;
  std::string said;
};

Answer Judge(const Case& c, const rt::SelectorVerdicts& v) {
  if (!v.compile_error.empty()) return {false, "does not compile: " + v.compile_error};
  int8_t m = v.match.empty() ? 0 : v.match[0];
  if (m < 0) {
    auto e = v.errors.find(0);
    std::string why = e == v.errors.end() ? std::string("an error") : e->second;
    return {c.expects_error, "error: " + why};
  }
  return {!c.expects_error && m == 1, m == 1 ? "true" : "false (a value other than the expected)"};
}

}  // namespace

TEST_CASE("cel-spec's conformance tests answer as CEL does under the evaluator and the native kernels") {
  size_t all = 0;
  std::vector<Case> cases = KeptCases(&all);
  std::set<std::string> known = KnownFailures();
  REQUIRE(cases.size() > 1000);

  k8s::Device device;  // selectors here read no device; one is there to run over
  device.name = "d0";
  std::vector<rt::DeviceRef> refs = {{"cel-spec.example.com", &device}};
  auto jit = std::make_shared<codegen::Jit>();
  rt::DeviceColumns compiled(refs, 1, {std::make_shared<rt::KernelSelectorDecider>(jit, false)});
  rt::DeviceColumns evaluated(refs, 1, {});

  size_t passed = 0, kernels = 0;
  std::map<std::string, std::pair<size_t, size_t>> by_file;  // passed, kept
  std::set<std::string> failing;
  for (const Case& c : cases) {
    CAPTURE(c.id);
    CAPTURE(c.selector);
    auto by_evaluator = evaluated.Selector(c.selector, dra::Evaluator());
    auto by_kernel = compiled.Selector(c.selector, dra::Evaluator());
    Answer e = Judge(c, *by_evaluator), k = Judge(c, *by_kernel);
    if (by_kernel->compiled) {
      ++kernels;
      // A kernel answers as the evaluator: the same verdict, the same error words.
      CHECK(by_kernel->match == by_evaluator->match);
      CHECK(by_kernel->errors == by_evaluator->errors);
    }
    bool right = e.right && k.right;
    ++by_file[c.file].second;
    if (right) {
      ++passed;
      ++by_file[c.file].first;
    } else {
      failing.insert(c.id);
    }
    if (known.contains(c.id)) {
      CHECK_MESSAGE(!right, c.id << " passes now: take it off tests/cel-spec/known_failures.txt");
    } else {
      CHECK_MESSAGE(right, c.id << ": " << (e.right ? k.said : e.said)
                                << (c.expects_error ? " (expected an error: " + c.expected_error + ")" : ""));
    }
  }
  std::set<std::string> ids;
  for (const Case& c : cases) ids.insert(c.id);
  for (const std::string& id : known) CHECK_MESSAGE(ids.contains(id), id << " on the list is no kept test");
  std::string files;
  for (const auto& [file, counts] : by_file) files += fmt::format(" {} {}/{}", file, counts.first, counts.second);
  MESSAGE(fmt::format("cel-spec: {} tests, {} kept; {} passed, {} failed ({} compiled to kernels);{}", all, cases.size(),
                      passed, cases.size() - passed, kernels, files));
  if (std::getenv("POLICYC_CELSPEC_FAILURES") != nullptr) {  // the list's next version
    std::ofstream out(std::getenv("POLICYC_CELSPEC_FAILURES"));
    for (const std::string& id : failing) out << id << "\n";
  }
}
