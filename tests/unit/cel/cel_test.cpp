// CEL for DRA selectors: parsing, checking and evaluation, with cases taken
// from the CEL language definition and from k8s.io/dynamic-resource-
// allocation/cel/compile_test.go (each cites it).

#include <doctest/doctest.h>

#include <string>

#include "compiler/cel/compile.h"
#include "compiler/cel/eval.h"
#include "compiler/cel/explain.h"

using namespace policy;
using namespace policy::cel;

namespace {

k8s::Device GpuDevice() {
  k8s::Device d;
  d.name = "gpu-0";
  k8s::DeviceAttribute product;
  product.text = "NVIDIA A100-SXM4-40GB";
  d.attributes.emplace_back("gpu.example.com/productName", product);
  k8s::DeviceAttribute cores;
  cores.kind = k8s::DeviceAttribute::Kind::kInt;
  cores.int_value = 108;
  d.attributes.emplace_back("gpu.example.com/cores", cores);
  k8s::DeviceAttribute mig;
  mig.kind = k8s::DeviceAttribute::Kind::kBool;
  mig.bool_value = true;
  d.attributes.emplace_back("gpu.example.com/mig", mig);
  k8s::DeviceAttribute driver_version;
  driver_version.kind = k8s::DeviceAttribute::Kind::kVersion;
  driver_version.text = "550.54.15";
  d.attributes.emplace_back("gpu.example.com/driverVersion", driver_version);
  k8s::DeviceAttribute numa;
  numa.kind = k8s::DeviceAttribute::Kind::kInt;
  numa.int_value = 1;
  d.attributes.emplace_back("topology.k8s.io/numaNode", numa);
  d.capacity.emplace_back("gpu.example.com/memory", *k8s::Quantity::Parse("40Gi"));
  return d;
}

// The outcome of `text` on the sample device: "true", "false", "error: ..."
// or "invalid: ..." (a compile problem).
std::string Run(const std::string& text) {
  static const k8s::Device device = GpuDevice();
  std::shared_ptr<const Program> p = CompileUncached(text);
  if (!p->expr) return "invalid: " + p->problems.front().message;
  Outcome o = Evaluate(*p->expr, DeviceInput{"gpu.example.com", &device});
  if (!o.error.empty()) return "error: " + o.error;
  return o.matches ? "true" : "false";
}

}  // namespace

TEST_CASE("device variables as the DRA environment declares them") {
  CHECK(Run(R"(device.driver == "gpu.example.com")") == "true");
  CHECK(Run(R"(device.driver == "other")") == "false");
  CHECK(Run(R"(device.attributes["gpu.example.com"].productName.startsWith("NVIDIA A100"))") == "true");
  CHECK(Run(R"(device.attributes["gpu.example.com"].cores > 100)") == "true");
  CHECK(Run(R"(device.attributes["gpu.example.com"].mig)") == "true");
  CHECK(Run(R"(device.attributes["topology.k8s.io"].numaNode == 1)") == "true");
  // compile_test.go "quantity": capacity values are quantities.
  CHECK(Run(R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0)") == "true");
  CHECK(Run(R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0)") == "false");
  CHECK(Run(R"(device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("32Gi")))") == "true");
  // compile_test.go "version": version attributes are semver values.
  CHECK(Run(R"(device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("550.0.0")))") == "true");
  CHECK(Run(R"(device.attributes["gpu.example.com"].driverVersion.compareTo(semver("550.54.15")) == 0)") == "true");
}

TEST_CASE("a missing attribute is a run-time error and an unknown domain an empty map") {
  // compile_test.go "missing attribute": `no such key`.
  CHECK(Run(R"(device.attributes["gpu.example.com"].missing)") == "error: no such key: missing");
  CHECK(Run(R"(device.attributes["other.example.com"].missing)") == "error: no such key: missing");
  CHECK(Run(R"(has(device.attributes["gpu.example.com"].missing))") == "false");
  CHECK(Run(R"(has(device.attributes["gpu.example.com"].cores))") == "true");
  CHECK(Run(R"("cores" in device.attributes["gpu.example.com"])") == "true");
  CHECK(Run(R"(size(device.attributes["other.example.com"]) == 0)") == "true");
}

TEST_CASE("logical operators absorb errors as the CEL definition says") {
  CHECK(Run(R"(false && device.attributes["gpu.example.com"].missing)") == "false");
  CHECK(Run(R"(device.attributes["gpu.example.com"].missing && false)") == "false");
  CHECK(Run(R"(true || device.attributes["gpu.example.com"].missing)") == "true");
  CHECK(Run(R"(true && device.attributes["gpu.example.com"].missing)").starts_with("error: no such key"));
  CHECK(Run(R"([1, 2, 3].exists(x, x == 2))") == "true");
  CHECK(Run(R"([1, 2, 3].all(x, x > 0))") == "true");
  CHECK(Run(R"([1, 2, 3].exists_one(x, x > 1))") == "false");
  CHECK(Run(R"([1, 2, 3].filter(x, x > 1).size() == 2)") == "true");
  CHECK(Run(R"([1, 2, 3].map(x, x * 2)[2] == 6)") == "true");
  CHECK(Run(R"(cel.bind(gpu, device.attributes["gpu.example.com"], gpu.cores > 100 && gpu.mig))") == "true");
}

TEST_CASE("arithmetic and conversions follow CEL") {
  CHECK(Run("1 + 2 * 3 == 7") == "true");
  CHECK(Run("7 / 2 == 3 && 7 % 2 == 1") == "true");
  CHECK(Run("1 / 0 == 1") == "error: division by zero");
  CHECK(Run("9223372036854775807 + 1 > 0") == "error: integer overflow");
  CHECK(Run("1 == 1.0 && 1u == 1") == "true");  // heterogeneous numeric equality
  CHECK(Run(R"(int("42") == 42 && string(42) == "42")") == "true");
  CHECK(Run(R"("abc".matches("^a.c$"))") == "true");
  CHECK(Run(R"("A100" in ["A100", "H100"])") == "true");
  CHECK(Run(R"('single' + "double" == "singledouble")") == "true");
  CHECK(Run(R"(r"\d" == "\\d")") == "true");
  CHECK(Run(R"("\u00e9" == "é")") == "true");
  CHECK(Run("true ? 1 : 2") == "invalid: must evaluate to bool or the unknown type, not int");
}

TEST_CASE("type errors are caught before any device is seen") {
  // compile_test.go: results must be bool; unknown names and fields fail.
  CHECK(Run("device.driver") == "invalid: must evaluate to bool or the unknown type, not string");
  CHECK(Run("nodevice.driver == 1").starts_with("invalid: undeclared reference to 'nodevice'"));
  CHECK(Run("device.nodriver == 1") == "invalid: undefined field 'nodriver'");
  CHECK(Run(R"(device.driver == 1)") == "invalid: found no matching overload for '_==_' applied to '(string, int)'");
  CHECK(Run(R"(device.capacity["d"].memory >= quantity("1Gi"))").starts_with(
      "invalid: found no matching overload for '_>=_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'"));
  CHECK(Run(R"(device.driver.nosuch())") == "invalid: undeclared reference to 'nosuch' (in container '')");
  CHECK(Run("device.driver ==") .starts_with("invalid: Syntax error:"));
  CHECK(Run("device.driver == \"a\" $").starts_with("invalid: Syntax error: token recognition error"));
}

TEST_CASE("kube's compile error text names line and column") {
  std::shared_ptr<const Program> p = CompileUncached("device.driver ==\n  1");
  REQUIRE(p->expr == nullptr);
  CHECK(p->KubeError() == "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'");
}

TEST_CASE("nesting past the limit is a problem not a crash") {
  std::string deep(5000, '(');
  deep += "true";
  deep += std::string(5000, ')');
  std::shared_ptr<const Program> p = CompileUncached(deep);
  CHECK(p->expr == nullptr);
  REQUIRE_FALSE(p->problems.empty());
  std::string chain = "true";
  for (int i = 0; i < 20000; ++i) chain += " && true";
  p = CompileUncached(chain);
  CHECK(p->expr == nullptr);
  CHECK_FALSE(p->problems.empty());
}

TEST_CASE("explanations name the comparison that failed with both values") {
  static const k8s::Device device = GpuDevice();
  auto explain = [](const std::string& text) {
    std::shared_ptr<const Program> p = CompileUncached(text);
    REQUIRE(p->expr != nullptr);
    FalseBecause why = ExplainFalse(*p->expr, DeviceInput{"gpu.example.com", &device});
    return why.have + " / " + why.asks + " @" + std::to_string(why.begin);
  };
  CHECK(explain(R"(device.driver == "gpu.example.com" && device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0)") ==
        "memory 40Gi / >= 80Gi @38");
  CHECK(explain(R"(device.attributes["gpu.example.com"].cores < 100)") == "cores is 108 / < 100 @0");
  CHECK(explain(R"(device.attributes["gpu.example.com"].productName.startsWith("NVIDIA H100"))") ==
        "productName is \"NVIDIA A100-SXM4-40GB\" / it to startsWith \"NVIDIA H100\" @0");
}

TEST_CASE("semantic versions compare by SemVer precedence") {
  auto cmp = [](const char* a, const char* b) { return Compare(*ParseSemver(a), *ParseSemver(b)); };
  CHECK(cmp("1.0.0-alpha", "1.0.0") == -1);
  CHECK(cmp("1.0.0-alpha.1", "1.0.0-alpha.beta") == -1);
  CHECK(cmp("1.0.0-beta.2", "1.0.0-beta.11") == -1);
  CHECK(cmp("2.1.1", "2.1.0") == 1);
  CHECK(cmp("1.0.0+build", "1.0.0") == 0);
  CHECK_FALSE(ParseSemver("1.0"));
  CHECK_FALSE(ParseSemver("01.0.0"));
}

TEST_CASE("nesting is counted per grammar rule as cel-go counts it") {
  // 32 parentheses are 32 levels of each rule (cel-spec parse/nest/parens);
  // 251 are past the limit.
  auto nested = [](int n) { return std::string(static_cast<size_t>(n), '(') + "true" + std::string(static_cast<size_t>(n), ')'); };
  CHECK(Run(nested(32)) == "true");
  CHECK(Run(nested(240)) == "true");
  CHECK(Run(nested(251)).starts_with("invalid: expression nests deeper than 250 levels"));
}

TEST_CASE("the strings extension as kube declares it - positions in code points") {
  // Selectors a GPU vendor writes over a product name.
  CHECK(Run(R"(device.attributes["gpu.example.com"].productName.substring(0, 6) == "NVIDIA")") == "true");
  CHECK(Run(R"(device.attributes["gpu.example.com"].productName.split(" ", 2)[1] == "A100-SXM4-40GB")") == "true");
  CHECK(Run(R"(device.attributes["gpu.example.com"].productName.lastIndexOf("-", 12) == 11)") == "true");
  CHECK(Run(R"(device.attributes["gpu.example.com"].productName.charAt(7) == "A")") == "true");
  // Code points, not bytes (cel-spec string_ext).
  CHECK(Run("'ta©o©αT'.lastIndexOf('©') == 4 && 'ta©o©αT'.indexOf('©', 3) == 4") == "true");
  CHECK(Run("'©αT'.charAt(1) == 'α' && 'ta©o©αT'.substring(4, 6) == '©α'") == "true");
  // Go's Replace and SplitN counts; an empty pattern works between code points.
  CHECK(Run("'hello hello'.replace('he', 'we', 1) == 'wello hello'") == "true");
  CHECK(Run("'ab'.replace('', '-') == '-a-b-' && 'ab'.replace('', '-', 2) == '-a-b'") == "true");
  CHECK(Run("'a,b,c'.split(',', 0) == [] && 'a,b,c'.split(',', 2) == ['a', 'b,c'] && 'ab'.split('') == ['a', 'b']") == "true");
  // Unicode space, as Go's TrimSpace; quote escapes as CEL writes them.
  CHECK(Run("'\\u00a0\\u3000 x \\u2005'.trim() == 'x'") == "true");
  CHECK(Run(R"(strings.quote('a"b\n') == '"a\\"b\\n"')") == "true");
  // Errors in cel-go's words.
  CHECK(Run("'tacocat'.charAt(30) == ''") == "error: index out of range: 30");
  CHECK(Run("'tacocat'.substring(4, 3) == ''") == "error: invalid substring range. start: 4, end: 3");
  CHECK(Run("'tacocat'.indexOf('a', 30) == 0") == "error: index out of range: 30");
  CHECK(Run("string(b'\\000\\xff') == ''") == "error: invalid UTF-8 in bytes, cannot convert to string");
}

TEST_CASE("two-variable comprehensions over attributes lists and maps") {
  CHECK(Run(R"(device.attributes["gpu.example.com"].exists(k, v, k == "cores" && v > 100))") == "true");
  CHECK(Run(R"(device.attributes["gpu.example.com"].all(k, v, k != "mig" || v == true))") == "true");
  CHECK(Run("[10, 20, 30].transformList(i, v, i > 0, v + i) == [21, 32]") == "true");
  CHECK(Run("{'a': 1, 'b': 2}.transformMap(k, v, v * 10) == {'a': 10, 'b': 20}") == "true");
  CHECK(Run("[1, 2].existsOne(i, v, i == v - 1) == false && [1, 2].exists_one(i, v, v == 2)") == "true");
  CHECK(Run("{'a': 1, 'b': 1}.transformMapEntry(k, v, {v: k}) == {}") ==
        "error: insert failed: key 1 already exists");
  CHECK(Run("[1].all(x, x, true)").starts_with("invalid: duplicate variable name: x"));
}

TEST_CASE("doubles read as Go reads them") {
  CHECK(Run("1e-324 == 0.0 && double('1e-310') > 0.0 && double('1e-310') < 1e-300") == "true");
  CHECK(Run("1e400 == 0.0").starts_with("invalid: invalid double literal"));
  CHECK(Run("double('1e400') == 0.0").starts_with("error: cannot convert '1e400' to double"));
  CHECK(Run("double(' 1') == 1.0").starts_with("error: cannot convert"));
}

TEST_CASE("a string the strings extension grows stays within the evaluator's memory bound") {
  // Each empty-pattern replace multiplies the length: cut off, not run away.
  std::string text = "cel.bind(a, 'abcdefghijklmnop', cel.bind(b, a.replace('', a), cel.bind(c, b.replace('', b), "
                     "cel.bind(d, c.replace('', c), d.replace('', d))))).size() > 0";
  std::string r = Run(text);
  CHECK(r.starts_with("error: "));
}

TEST_CASE("format writes its clauses as the strings extension does") {
  CHECK(Run(R"('%s has %d GiB (%.1f%%)'.format([device.attributes["gpu.example.com"].productName, dyn(40), dyn(12.25)]) ==
               'NVIDIA A100-SXM4-40GB has 40 GiB (12.2%)')") == "true");
  CHECK(Run("'%b %o %x %X %e'.format([dyn(5), dyn(11), dyn(30), dyn(30), dyn(2.71828)]) == '101 13 1e 1E 2.718280e+00'") ==
        "true");
  CHECK(Run("'%s'.format([[dyn(1), dyn('a'), dyn(2.5), dyn(null), dyn({'k': true})]]) == '[1, a, 2.5, null, {k: true}]'") ==
        "true");
  CHECK(Run("'%s %s'.format([1e21, 123456.0]) == '1e+21 123456'") == "true");
  CHECK(Run("'%s %s'.format([0.0001, 1e-5]) == '0.0001 1e-05'") == "true");
  CHECK(Run("'%d'.format([1.5]) == ''") == "error: error during formatting: decimal clause can only be used on integers, was given double");
  CHECK(Run("'%d %d'.format([1]) == ''") == "error: index 1 out of range");
}
