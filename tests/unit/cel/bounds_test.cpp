// CEL bounded as kube bounds it: regexes on RE2 (linear time, Go's syntax
// and errors), kube's worst-case cost estimate (the figures of
// k8s.io/dynamic-resource-allocation/cel/compile_test.go's `expectCost`,
// each cited by its case name) and the runtime cost limit, plus policyc's
// own bounds on work and bytes for what kube's cost model does not charge.
// No test here times anything: each asserts an answer or a count.

#include <doctest/doctest.h>

#include <string>

#include "compiler/cel/compile.h"
#include "compiler/cel/cost.h"
#include "compiler/cel/eval.h"
#include "compiler/cel/regex.h"

using namespace policy;
using namespace policy::cel;

namespace {

uint64_t Estimate(const std::string& text) {
  std::shared_ptr<const Program> p = CompileUncached(text);
  REQUIRE_MESSAGE(p->expr != nullptr, text, ": ", p->problems.empty() ? "" : p->problems.front().message);
  return p->cost.max;
}

std::string Run(const std::string& text) {
  static const k8s::Device device = [] {
    k8s::Device d;
    d.name = "gpu-0";
    k8s::DeviceAttribute name;
    name.text = "fish";
    d.attributes.emplace_back("dra.example.com/name", name);
    return d;
  }();
  std::shared_ptr<const Program> p = CompileUncached(text);
  if (!p->expr) return "invalid: " + p->problems.front().message;
  Outcome o = Evaluate(*p->expr, DeviceInput{"dra.example.com", &device});
  if (!o.error.empty()) return "error: " + o.error;
  return o.matches ? "true" : "false";
}

// `seed` made four times longer by each of `levels` nested cel.binds.
std::string Quadrupled(const std::string& seed, int levels) {
  std::string e = seed;
  for (int i = 0; i < levels; ++i) {
    std::string v = "v" + std::to_string(i);
    e = "cel.bind(" + v + ", " + e + ", " + v + " + " + v + " + " + v + " + " + v + ")";
  }
  return e;
}

std::string Repeat(std::string_view piece, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

}  // namespace

TEST_CASE("the estimate is kube's for compile_test.go's selectors") {
  CHECK(Estimate(R"("no-such-domain" in device.attributes)") == 3);                         // domain-check-negative
  CHECK(Estimate(R"(device.driver == "")") == 2);                                           // empty-driver-name
  CHECK(Estimate(R"(device.driver == "dra.example.com")") == 4);                            // real-driver-name
  CHECK(Estimate(R"(device.attributes["dra.example.com"].name)") == 4);                     // driver-name-qualifier
  CHECK(Estimate(R"(device.attributes["dra.example.com"]["name"])") == 4);                  // ...-map-lookup
  CHECK(Estimate(R"(cel.bind(dra, device.attributes["dra.example.com"], dra.name))") == 15);  // bind
  CHECK(Estimate(R"(device.attributes["dra.example.com"].name > 0)") == 5);                 // int
  CHECK(Estimate(R"(device.attributes["dra.example.com"].name == "fish")") == 5);           // string
  CHECK(Estimate(R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))") == 6);
}

TEST_CASE("macros cost their expansion per item of the range's declared size") {
  // An attribute value is at most 64 long: all() is 5 + 64 * (2 + 2) as
  // compile_test.go's macro-on-list-of-string has it with its own maximum.
  CHECK(Estimate(R"(device.attributes["dra.example.com"].names.all(x, x != ""))") == 5 + 64 * 4);
  CHECK(Estimate(R"(device.attributes["dra.example.com"].names.exists(x, x > 0))") == 5 + 64 * 6);
}

TEST_CASE("selectors kube refuses as too complex are estimated over the limit") {
  // Three nested comprehensions over 1,000 items: 10^9 iterations.
  std::string items = "[" + Repeat("1,", 999) + "1]";
  std::string nested = items + ".all(a, " + items + ".all(b, " + items + ".all(c, a + b + c > 0)))";
  CHECK(Estimate(nested) > kCostLimit);
  CHECK(CompileUncached(nested)->TooComplex());
  // A string made 4^12 times longer by cel.bind.
  CHECK(Estimate(Quadrupled("'ab'", 12) + ".size() > 0") > kCostLimit);
  // A regex over a value of unknown size (string() of an attribute).
  CHECK(Estimate(R"(string(device.attributes["d"].n).matches("^(a+)+$"))") > kCostLimit);
  // An ordinary selector is far under it.
  CHECK(Estimate(R"(device.attributes["dra.example.com"].model.matches("^A100-(40|80)GB$"))") < 1000);
  CHECK_FALSE(CompileUncached(R"(device.driver == "gpu.nvidia.com")")->TooComplex());
}

TEST_CASE("regexes are RE2's - linear time with Go's syntax and errors") {
  // The pattern that overflowed std::regex's recursive matcher's stack.
  std::string text = Repeat("ab", 5000);
  CHECK(Run("'" + text + "'.matches('^((((((((((a|b))))))))))*$')") == "true");
  // Catastrophic backtracking for a backtracking engine; linear for RE2.
  CHECK(Run("'" + Repeat("a", 5000) + "!'.matches('^(a+)+$')") == "false");
  CHECK(Run(R"('abc'.matches('b'))") == "true");  // unanchored, as Go's MatchString
  CHECK(Run(R"('abc'.matches('^b'))") == "false");
  CHECK(Run(R"('abc'.matches('(a'))") == "error: error parsing regexp: missing closing ): `(a`");
  CHECK(Run(R"('abc'.matches('a**'))") == "error: error parsing regexp: invalid nested repetition operator: `**`");
  CHECK(Run(R"('abc'.matches('\\pX'))").rfind("error: error parsing regexp: invalid character class range", 0) == 0);
}

TEST_CASE("find and findAll of the Kubernetes regex library") {
  CHECK(Run(R"('abc 123 def 456'.find('[0-9]+') == '123')") == "true");
  CHECK(Run(R"('abc'.find('[0-9]+') == '')") == "true");
  CHECK(Run(R"('abc 123 def 456'.findAll('[0-9]+') == ['123', '456'])") == "true");
  CHECK(Run(R"('abc 123 def 456'.findAll('[0-9]+', 1) == ['123'])") == "true");
  CHECK(Run(R"('abc'.findAll('x*').size() == 4)") == "true");  // Go: ["" "" "" ""]
  // Go skips an empty match where the previous match ended.
  CHECK(FindAll("a1b22", "[0-9]*", -1).matches == std::vector<std::string>{"", "1", "22"});
}

TEST_CASE("evaluation stops at kube's cost limit and the error is not absorbed") {
  // 2,000 x 2,000 items: 4 million iterations, cancelled at 1,000,000.
  std::string items = "[" + Repeat("1,", 1999) + "1]";
  std::string nested = items + ".all(a, " + items + ".all(b, a == b || true))";
  CHECK(Run(nested) == "error: operation cancelled: actual cost limit exceeded");
  // `||` and `&&` absorb errors, never the cancellation.
  CHECK(Run("true || " + nested) == "true");  // short-circuits before it runs
  CHECK(Run(nested + " || true") == "error: operation cancelled: actual cost limit exceeded");
  CHECK(Run(nested + " && false") == "error: operation cancelled: actual cost limit exceeded");
}

TEST_CASE("policyc's own bounds on values made and work done") {
  // A list made 4^12 times longer by cel.bind: cost 1 a concatenation in
  // kube's model (cel-go shares the lists), 33 million elements if made.
  CHECK(Run(Quadrupled("[1, 2]", 12) + ".size() > 0") ==
        "error: operation cancelled: evaluation exceeds policyc's bound of 64 MiB of values");
  // A string so made: kube's cost limit comes first.
  CHECK(Run(Quadrupled("'ab'", 12) + ".size() > 0") == "error: operation cancelled: actual cost limit exceeded");
  // replace() that would make a long string: counted before it is made.
  std::string big = "cel.bind(b, 'x' + 'x', cel.bind(c, b + b + b + b, c + c + c + c + c + c))";
  CHECK(Run("cel.bind(t, " + Repeat("'aaaaaaaaaa' + ", 99) + "'a', t.replace('a', " + big + ").size() > 0)") == "true");
}
