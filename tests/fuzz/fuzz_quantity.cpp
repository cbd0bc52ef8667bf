// Fuzzes Quantity::Parse and checks its invariants: the value stays within
// Kubernetes' bounds, rounding goes up, and the canonical spelling parses
// back to the same value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/quantity.h"

using policy::k8s::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  auto q = Quantity::Parse(text, &why);
  if (!q) {
    if (why.empty()) __builtin_trap();
    return 0;
  }
  if (q->nanos() > Quantity::kMaxNanos || q->nanos() < -Quantity::kMaxNanos) __builtin_trap();
  if (q->nanos() > 0 && (q->Value() <= 0 || q->MilliValue() <= 0)) __builtin_trap();
  auto again = Quantity::Parse(q->ToString());
  if (!again || again->nanos() != q->nanos()) __builtin_trap();
  return 0;
}
