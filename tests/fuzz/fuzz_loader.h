#pragma once
// The body shared by the YAML and JSON fuzzers: read the input as every kind
// of YAML/JSON file policyc takes (cluster snapshot, pod, scheduler profile,
// policy in the YAML form), render the diagnostics, and trap on a refusal
// without one.

#include <cstddef>
#include <cstdint>
#include <string>

#include "k8s/pod_reader.h"
#include "compiler/syntax/parser.h"
#include "runtime/columnar/cluster_loader.h"
#include "runtime/sched/profile.h"

inline int FuzzLoad(const uint8_t* data, size_t size, policy::k8s::InputFormat format) {
  policy::Source source(format == policy::k8s::InputFormat::kJson ? "fuzz.json" : "fuzz.yaml",
                        std::string(reinterpret_cast<const char*>(data), size));
  auto refused_silently = [](bool refused, const policy::DiagnosticSink& diags) {
    if (refused && !diags.HasErrors()) __builtin_trap();
    (void)policy::RenderAll(diags);
  };
  policy::DiagnosticSink cluster_diags;
  refused_silently(policy::rt::LoadCluster(source, cluster_diags, nullptr, format) == nullptr, cluster_diags);
  policy::DiagnosticSink pod_diags;
  refused_silently(!policy::k8s::ReadPod(source, pod_diags, policy::k8s::FieldValidation::kStrict).has_value(), pod_diags);
  policy::DiagnosticSink profile_diags;
  refused_silently(!policy::rt::ReadProfiles(source, profile_diags).has_value(), profile_diags);
  policy::DiagnosticSink policy_diags;
  refused_silently(!policy::syntax::ParseYamlPolicyFile(source, policy_diags).has_value(), policy_diags);
  return 0;
}
