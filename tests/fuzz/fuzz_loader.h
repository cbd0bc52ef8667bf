#pragma once
// The body shared by the YAML and JSON fuzzers: load the input as a cluster
// and as a pod, render the diagnostics, and trap on a refusal without one.

#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/k8s/pod_reader.h"
#include "runtime/columnar/cluster_loader.h"

inline int FuzzLoad(const uint8_t* data, size_t size, policy::k8s::InputFormat format) {
  policy::Source source("fuzz", std::string(reinterpret_cast<const char*>(data), size));
  policy::DiagnosticSink diags;
  auto table = policy::rt::LoadCluster(source, diags, nullptr, format);
  if (table == nullptr && !diags.HasErrors()) __builtin_trap();  // refused without saying why
  policy::DiagnosticSink pod_diags;
  auto pod = policy::k8s::ReadPod(source, pod_diags);
  if (!pod && !pod_diags.HasErrors()) __builtin_trap();
  (void)policy::RenderAll(diags);
  (void)policy::RenderAll(pod_diags);
  return 0;
}
