// Fuzzes the policy language front half: lexing, parsing, interpolation,
// sema, lowering, and the whole pass pipeline specialized to a sample pod
// (the IR verifier runs after each pass), then printing. A refusal must
// always come with a diagnostic.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"
#include "compiler/syntax/parser.h"

namespace {

// A pod with something in every field policies loop over.
policy::k8s::Pod SamplePod() {
  using namespace policy::k8s;
  Pod pod;
  pod.name = "sample";
  pod.labels = {{"app", "web"}};
  pod.node_selector = {{"disk", "ssd"}};
  Container c;
  c.requests = {{"cpu", *Quantity::Parse("500m")}, {"nvidia.com/gpu", Quantity::FromUnits(1)}};
  pod.containers = {c};
  pod.tolerations = {{"gpu", TolerationOp::kExists, "", TaintEffect::kNoSchedule, std::nullopt},
                     {"", TolerationOp::kExists, "", std::nullopt, std::nullopt}};
  NodeAffinity affinity;
  NodeSelectorTerm term;
  term.match_expressions = {{"zone", SelectorOp::kIn, {"a", "b"}, {}}, {"gen", SelectorOp::kGt, {"3"}, {}}};
  term.match_fields = {{"metadata.name", SelectorOp::kIn, {"n1"}, {}}};
  affinity.required = std::vector<NodeSelectorTerm>{term};
  affinity.preferred = {{10, term}};
  pod.affinity.node_affinity = affinity;
  return pod;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const policy::k8s::Pod pod = SamplePod();
  policy::Source source("fuzz.policy", std::string(reinterpret_cast<const char*>(data), size));
  policy::DiagnosticSink diags;
  policy::sema::TypeTable types;
  policy::sema::Schema schema(types);
  auto compiled = policy::passes::CompileFile(source, types, schema, diags);
  if (!compiled && !diags.HasErrors()) __builtin_trap();
  if (compiled) {
    (void)policy::syntax::PrintModule(compiled->module);
    policy::passes::PassOptions options;
    options.pod = &pod;
    options.types = &types;
    policy::passes::Optimize(compiled->program, options, nullptr);
    (void)policy::ir::Print(compiled->program);
  }
  (void)policy::RenderAll(diags);
  return 0;
}
