// Fuzzes the JSON front end end to end: cluster loading into a NodeTable,
// pod reading, and diagnostic rendering (which re-reads the source).
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/k8s/pod_reader.h"
#include "runtime/columnar/cluster_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  policy::Source source("fuzz.json", std::string(reinterpret_cast<const char*>(data), size));
  policy::DiagnosticSink diags;
  auto table = policy::rt::LoadCluster(source, diags, nullptr, policy::k8s::InputFormat::kJson);
  if (table == nullptr && !diags.HasErrors()) __builtin_trap();  // refused without saying why
  policy::DiagnosticSink pod_diags;
  auto pod = policy::k8s::ReadPod(source, pod_diags);
  if (!pod && !pod_diags.HasErrors()) __builtin_trap();
  (void)policy::RenderAll(diags);
  (void)policy::RenderAll(pod_diags);
  return 0;
}
