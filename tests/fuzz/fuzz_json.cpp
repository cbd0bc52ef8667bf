// Fuzzes the JSON front end end to end (cluster into a NodeTable, pod reading,
// diagnostic rendering).
#include "tests/fuzz/fuzz_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return FuzzLoad(data, size, policy::k8s::InputFormat::kJson);
}
