// CEL device selectors compiled to native kernels over the device columns
// (compiler/lower/cel_selector.h, runtime/sched/selector_kernels.h), held
// to the reference evaluator on every device: the same verdict (match, no
// match, error) and the same error words, for selectors that lower and for
// those that stay with the evaluator.

#include <doctest/doctest.h>

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "compiler/cel/compile.h"
#include "compiler/codegen/jit.h"
#include "compiler/lang/schema.h"
#include "compiler/lower/cel_selector.h"
#include "runtime/columnar/device_columns.h"
#include "runtime/dra/selector_evaluator.h"
#include "runtime/sched/selector_kernels.h"

using namespace policy;

namespace {

k8s::DeviceAttribute Str(std::string s) {
  k8s::DeviceAttribute a;
  a.text = std::move(s);
  return a;
}
k8s::DeviceAttribute Int(int64_t v) {
  k8s::DeviceAttribute a;
  a.kind = k8s::DeviceAttribute::Kind::kInt;
  a.int_value = v;
  return a;
}
k8s::DeviceAttribute Bool(bool v) {
  k8s::DeviceAttribute a;
  a.kind = k8s::DeviceAttribute::Kind::kBool;
  a.bool_value = v;
  return a;
}
k8s::DeviceAttribute Version(std::string v) {
  k8s::DeviceAttribute a;
  a.kind = k8s::DeviceAttribute::Kind::kVersion;
  a.text = std::move(v);
  return a;
}
k8s::Quantity Q(const char* text) { return *k8s::Quantity::Parse(text); }

// Devices of two drivers whose attributes differ in type and presence from
// one device to the next, so every selector meets matches, misses and
// errors.
struct Devices {
  std::vector<k8s::Device> list;
  std::vector<std::string> drivers;
  Devices() {
    const char* models[] = {"A100", "H100", "L4"};
    for (int i = 0; i < 24; ++i) {
      k8s::Device d;
      d.name = "dev-" + std::to_string(i);
      if (i % 5 != 4) d.attributes.emplace_back("gpu.example.com/model", Str(models[i % 3]));
      if (i % 7 == 3) {
        d.attributes.emplace_back("gpu.example.com/cores", Str("many"));  // a string where others have an int
      } else if (i % 6 != 5) {
        d.attributes.emplace_back("gpu.example.com/cores", Int(i * 16 - 40));
      }
      if (i % 4 != 1) d.attributes.emplace_back("gpu.example.com/mig", Bool(i % 2 == 0));
      if (i % 3 == 0) d.attributes.emplace_back("gpu.example.com/driverVersion", Version(i % 9 == 0 ? "1.2.3" : "not-semver"));
      if (i % 8 != 7) d.capacity.emplace_back("gpu.example.com/memory", Q(i % 2 ? "40Gi" : "80Gi"));
      if (i % 5 == 2) d.capacity.emplace_back("gpu.example.com/power", Q("300"));
      list.push_back(std::move(d));
      drivers.push_back(i % 4 == 3 ? "nic.example.com" : "gpu.example.com");
    }
  }
  std::vector<rt::DeviceColumns::Ref> Refs() const {
    std::vector<rt::DeviceColumns::Ref> out;
    for (size_t i = 0; i < list.size(); ++i) out.push_back({drivers[i], &list[i]});
    return out;
  }
};

// Selectors the back end compiles.
const char* const kLowered[] = {
    R"(device.driver == "gpu.example.com")",
    R"(device.driver != "gpu.example.com")",
    R"(device.driver in ["nic.example.com", "x"])",
    R"("gpu.example.com" == device.driver)",
    R"(device.attributes["gpu.example.com"].model == "H100")",
    R"(device.attributes["gpu.example.com"].model != "H100")",
    R"(device.attributes["gpu.example.com"]["model"] in ["A100", "L4", 7])",
    R"(device.attributes["gpu.example.com"].cores >= 64)",
    R"(32 < device.attributes["gpu.example.com"].cores)",
    R"(device.attributes["gpu.example.com"].cores == 24)",
    R"(device.attributes["gpu.example.com"].mig)",
    R"(!device.attributes["gpu.example.com"].mig)",
    R"(device.attributes["gpu.example.com"].mig == false)",
    R"(device.attributes["gpu.example.com"].model == "A100" || device.attributes["gpu.example.com"].mig)",
    R"(device.attributes["gpu.example.com"].mig && device.attributes["gpu.example.com"].model == "L4")",
    R"(device.attributes["gpu.example.com"].cores > 0 && device.driver == "nic.example.com")",
    R"(device.attributes["gpu.example.com"].cores > 0 || true)",
    R"(has(device.attributes["gpu.example.com"].cores) && device.attributes["gpu.example.com"].cores > 10)",
    R"(has(device.attributes["gpu.example.com"].driverVersion))",
    R"(device.attributes["gpu.example.com"].driverVersion == "1.2.3")",
    R"(has(device.capacity["gpu.example.com"].power))",
    R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0)",
    R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("60Gi")) > 0)",
    R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0)",
    R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) == -1)",
    R"(device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("50Gi")))",
    R"(device.capacity["gpu.example.com"].memory.isLessThan(quantity("50Gi")))",
    R"(device.capacity["gpu.example.com"].memory == quantity("80Gi"))",
    R"(device.attributes["gpu.example.com"].mig ? device.driver == "gpu.example.com" : false)",
    R"(true)",
};

// Selectors that stay with the evaluator: what does not lower, and what
// does not type-check (a string against an int, a quantity against a
// string: cel-go finds no overload; every device fails with its words).
const char* const kEvaluated[] = {
    R"(device.driver == 3)",
    R"(device.capacity["gpu.example.com"].memory == "80Gi")",
    R"(device.attributes["gpu.example.com"].model.startsWith("H"))",
    R"(device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0")))",
    R"(device.attributes["gpu.example.com"].cores + 1 > 10)",
    R"(device.attributes["gpu.example.com"].model.matches("^A"))",
};

}  // namespace

TEST_CASE("a compiled selector answers as the evaluator on every device") {
  Devices devices;
  rt::DeviceSelectors compile{std::make_shared<rt::KernelSelectorDecider>(std::make_shared<codegen::Jit>(), false)};
  rt::DeviceColumns compiled(devices.Refs(), 1, compile);
  rt::DeviceColumns evaluated(devices.Refs(), 1, {});
  for (const char* selector : kLowered) {
    std::string text = selector;
    CAPTURE(text);
    auto a = compiled.Selector(selector, dra::Evaluator());
    auto b = evaluated.Selector(selector, dra::Evaluator());
    CHECK(a->compiled);
    CHECK_FALSE(b->compiled);
    CHECK(a->match == b->match);
    CHECK(a->errors == b->errors);
  }
  for (const char* selector : kEvaluated) {
    std::string text = selector;
    CAPTURE(text);
    auto a = compiled.Selector(selector, dra::Evaluator());
    CHECK_FALSE(a->compiled);
    CHECK(a->match == evaluated.Selector(selector, dra::Evaluator())->match);
  }
  CHECK(compiled.Decided().compiled == std::size(kLowered));
  CHECK(compiled.Decided().evaluated == std::size(kEvaluated));
}

TEST_CASE("the selectors meet matches misses and errors") {
  // The differential test above means something only if its verdicts vary.
  Devices devices;
  rt::DeviceColumns evaluated(devices.Refs(), 1, {});
  int seen[3] = {0, 0, 0};
  for (const char* selector : kLowered) {
    for (int8_t m : evaluated.Selector(selector, dra::Evaluator())->match) ++seen[m + 1];
  }
  CHECK(seen[0] > 20);  // errors
  CHECK(seen[1] > 100);
  CHECK(seen[2] > 100);
}

TEST_CASE("verifying compiles and evaluates and kernels are shared by shape") {
  Devices devices;
  auto jit = std::make_shared<codegen::Jit>();
  rt::DeviceSelectors verify{std::make_shared<rt::KernelSelectorDecider>(jit, true)};
  rt::DeviceColumns columns(devices.Refs(), 1, verify);
  CHECK(columns.Selector(R"(device.attributes["gpu.example.com"].model == "H100")", dra::Evaluator())->compiled);
  // Another constant, the same shape: the kernel is reused with other parameters.
  CHECK(columns.Selector(R"(device.attributes["gpu.example.com"].model == "L4")", dra::Evaluator())->compiled);
  CHECK(jit->CachedShapes() == 1);
}

TEST_CASE("a capacity milli-units do not hold exactly is evaluated") {
  Devices devices;
  devices.list[0].capacity.emplace_back("gpu.example.com/tiny", Q("1u"));
  auto jit = std::make_shared<codegen::Jit>();
  rt::DeviceSelectors compile{std::make_shared<rt::KernelSelectorDecider>(jit, false)};
  rt::DeviceColumns columns(devices.Refs(), 1, compile);
  CHECK_FALSE(columns.Selector(R"(device.capacity["gpu.example.com"].tiny.compareTo(quantity("1m")) < 0)", dra::Evaluator())->compiled);
  CHECK(columns.Selector(R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("1m")) > 0)", dra::Evaluator())->compiled);
  // Fewer devices than compile_from: evaluated.
  rt::DeviceSelectors from_1000{std::make_shared<rt::KernelSelectorDecider>(jit, false, 1000)};
  rt::DeviceColumns few(devices.Refs(), 1, from_1000);
  CHECK_FALSE(few.Selector(R"(device.driver == "gpu.example.com")", dra::Evaluator())->compiled);
}

TEST_CASE("lowering names what it does not compile") {
  lang::TypeTable types;
  lang::Schema schema(types);
  auto program = cel::Compile(R"(device.attributes["d"].model.startsWith("x"))");
  REQUIRE(program->expr);
  Expected<lower::LoweredSelector> lowered = lower::LowerSelector(*program->expr, types, schema);
  REQUIRE_FALSE(lowered.ok());
  CHECK(lowered.error().message.find("startsWith") != std::string::npos);
  auto ok = cel::Compile(R"(device.capacity["d"].memory.compareTo(quantity("1Gi")) >= 0)");
  Expected<lower::LoweredSelector> good = lower::LowerSelector(*ok->expr, types, schema);
  REQUIRE(good.ok());
  CHECK(good->capacities == std::vector<std::string>{"d/memory"});
  CHECK(good->program.functions.size() == 1);
  CHECK(good->program.functions[0].filters.size() == 2);
}
