#include <doctest/doctest.h>

#include <string>

#include "k8s/quantity.h"

using policy::k8s::Quantity;
using policy::k8s::SchedulerUnits;

namespace {

struct Case {
  const char* text;
  int64_t milli;  // MilliValue()
  int64_t value;  // Value()
};

// Quantities as they appear in real manifests and node dumps, with the values
// k8s.io/apimachinery gives (MilliValue and Value both round up).
constexpr Case kValid[] = {
    {"0", 0, 0},
    {"100m", 100, 1},
    {"250m", 250, 1},
    {"1", 1000, 1},
    {"4", 4000, 4},
    {"0.5", 500, 1},
    {".5", 500, 1},
    {"5.", 5000, 5},
    {"+2", 2000, 2},
    {"1.5m", 2, 1},
    {"0.1m", 1, 1},
    {"1n", 1, 1},
    {"1u", 1, 1},
    {"3800m", 3800, 4},
    {"1k", 1000000, 1000},
    {"1M", 1000000000, 1000000},
    {"129M", 129000000000, 129000000},
    {"129e6", 129000000000, 129000000},
    {"128974848", 128974848000, 128974848},
    {"123Mi", 128974848000, 128974848},
    {"1Ki", 1024000, 1024},
    {"1.5Ki", 1536000, 1536},
    {"0.5Ki", 512000, 512},
    {"1Gi", 1073741824000, 1073741824},
    {"16Gi", 17179869184000, 17179869184},
    {"7807312Ki", 7994687488000, 7994687488},
    {"32784012Ki", 33570828288000, 33570828288},
    {"1.5Gi", 1610612736000, 1610612736},
    {"1Ti", 1099511627776000, 1099511627776},
    {"1e3", 1000000, 1000},
    {"1E3", 1000000, 1000},
    {"1e-3", 1, 1},
    {"2.5e-3", 3, 1},
    {"1E", INT64_MAX, 1000000000000000000},
    {"9223372036854775807", INT64_MAX, INT64_MAX},
    {"0.000000001", 1, 1},
    {"0.0000000001", 1, 1},
    {"1e-10", 1, 1},
    {"000", 0, 0},
    {"-0", 0, 0},
    {"-1", -1000, -1},
    {"-1.5m", -2, -1},
    {"-1Gi", -1073741824000, -1073741824},
};

}  // namespace

TEST_CASE("valid quantities parse to Kubernetes' values") {
  for (const Case& c : kValid) {
    INFO(std::string(c.text));
    std::string why;
    auto q = Quantity::Parse(c.text, &why);
    REQUIRE_MESSAGE(q.has_value(), why);
    CHECK(q->MilliValue() == c.milli);
    CHECK(q->Value() == c.value);
  }
}

TEST_CASE("values beyond int64 units clamp to the maximum") {
  for (const char* text : {"10E", "9223372036854775808", "1e30", "99999999999999999999999999999999999Ei"}) {
    INFO(std::string(text));
    auto q = Quantity::Parse(text);
    REQUIRE(q.has_value());
    CHECK(q->Value() == INT64_MAX);
    CHECK(q->nanos() == Quantity::kMaxNanos);
  }
  auto negative = Quantity::Parse("-1e30");
  REQUIRE(negative);
  CHECK(negative->Value() == -INT64_MAX);
}

TEST_CASE("exact below the nanounit: rounding happens after the binary scale") {
  // 1e-10 Ki = 102.4 nanounits: rounds up to 103, not 1 * 1024.
  auto q = Quantity::Parse("0.0000000001Ki");
  REQUIRE(q);
  CHECK(q->nanos() == 103);
  auto many_digits = Quantity::Parse("1.0000000000000000000000000000001");
  REQUIRE(many_digits);
  CHECK(many_digits->nanos() == 1000000001);
}

TEST_CASE("invalid quantities are refused with a reason") {
  for (const char* text : {"", "2 cores", "1.2.3", "1K", "1e", "1 ", " 1", "abc", "1iB", "--1",
                           "1.5Gii", "1x", "0x10", "1e1.5", "1Mi1", "1mm", "１"}) {
    INFO(std::string(text));
    std::string why;
    CHECK_FALSE(Quantity::Parse(text, &why).has_value());
    CHECK_FALSE(why.empty());
  }
}

TEST_CASE("a suffix or sign with no digits is zero - as in Kubernetes") {
  // parseQuantityString treats a missing numerator as 0: `Ki`, `m`, `-`, `.`, `e3`.
  for (const char* text : {"Ki", "m", "-", ".", "e3"}) {
    INFO(std::string(text));
    auto q = Quantity::Parse(text);
    REQUIRE(q.has_value());
    CHECK(q->IsZero());
  }
}

TEST_CASE("the scheduler counts cpu in millicores and the rest in units") {
  auto cpu = Quantity::Parse("1500m");
  auto mem = Quantity::Parse("1.5Ki");
  CHECK(SchedulerUnits("cpu", *cpu) == 1500);
  CHECK(SchedulerUnits("memory", *mem) == 1536);
  CHECK(SchedulerUnits("nvidia.com/gpu", *Quantity::Parse("2")) == 2);
}

TEST_CASE("to string picks a canonical suffix") {
  CHECK(Quantity::Parse("500m")->ToString() == "500m");
  CHECK(Quantity::Parse("0.5")->ToString() == "500m");
  CHECK(Quantity::Parse("16Gi")->ToString() == "16Gi");
  CHECK(Quantity::Parse("1536Mi")->ToString() == "1536Mi");
  CHECK(Quantity::Parse("1.5M")->ToString() == "1500k");
  CHECK(Quantity::Parse("4")->ToString() == "4");
  CHECK(Quantity::Parse("-2k")->ToString() == "-2k");
  CHECK(Quantity::Parse("1n")->ToString() == "1n");
  CHECK(Quantity().ToString() == "0");
}

TEST_CASE("amounts written back are exact and amounts a person reads are rounded") {
  CHECK(policy::k8s::WrittenAmount("cpu", 47910) == "47910m");
  CHECK(policy::k8s::ReadableAmount("cpu", 47910) == "47.91");
  CHECK(policy::k8s::ReadableAmount("cpu", 12000) == "12");
  CHECK(policy::k8s::ReadableAmount("cpu", 250) == "0.25");
  CHECK(policy::k8s::WrittenAmount("memory", int64_t{199826592} * 1024) == "199826592Ki");
  CHECK(policy::k8s::ReadableAmount("memory", int64_t{199826592} * 1024) == "190.6Gi");
  CHECK(policy::k8s::ReadableAmount("memory", int64_t{64} << 30) == "64Gi");
  CHECK(policy::k8s::ReadableAmount("memory", 1000) == "1000");
  CHECK(policy::k8s::ReadableAmount("memory", -(int64_t{3} << 20)) == "-3Mi");
  CHECK(policy::k8s::ReadableAmount("nvidia.com/gpu", 4) == "4");
  CHECK(policy::k8s::ReadableAmount("example.com/foo", 1500) == "1500");
}

TEST_CASE("addition is exact and clamps") {
  Quantity a = *Quantity::Parse("0.5m");
  a += *Quantity::Parse("0.5m");
  CHECK(a.MilliValue() == 1);  // not 2: sums are exact before rounding
  Quantity big = *Quantity::Parse("8E");
  big += *Quantity::Parse("8E");
  CHECK(big.Value() == INT64_MAX);
}
