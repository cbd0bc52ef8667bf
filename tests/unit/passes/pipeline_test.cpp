#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"

using namespace policy;

namespace {

std::string CompileToIr(const std::string& path, bool optimize) {
  std::string error;
  std::unique_ptr<Source> source = Source::FromFile(path, &error);
  REQUIRE_MESSAGE(source, error);
  sema::TypeTable types;
  sema::Schema schema(types);
  DiagnosticSink diags;
  auto compiled = passes::CompileFile(*source, types, schema, diags);
  REQUIRE_MESSAGE(compiled, RenderAll(diags));
  if (optimize) passes::Optimize(compiled->program, {}, nullptr);
  return ir::Print(compiled->program);
}

}  // namespace

TEST_CASE("the YAML form and the DSL compile to the same IR") {
  std::string dsl = CompileToIr(POLICYC_SOURCE_DIR "/policies/gpu-memory-fit.policy", false);
  std::string yaml = CompileToIr(POLICYC_SOURCE_DIR "/policies/gpu-memory-fit.yaml", false);
  CHECK(dsl == yaml);
  CHECK(CompileToIr(POLICYC_SOURCE_DIR "/policies/gpu-memory-fit.policy", true) ==
        CompileToIr(POLICYC_SOURCE_DIR "/policies/gpu-memory-fit.yaml", true));
}

TEST_CASE("the pipeline shrinks the stdlib and keeps it verified") {
  for (const char* name : {"node_affinity", "taint_toleration", "node_resources_fit", "balanced_allocation",
                           "node_unschedulable", "node_name"}) {
    INFO(name);
    std::string path = std::string(POLICYC_SOURCE_DIR "/stdlib/") + name + ".policy";
    std::string error;
    std::unique_ptr<Source> source = Source::FromFile(path, &error);
    REQUIRE(source);
    sema::TypeTable types;
    sema::Schema schema(types);
    DiagnosticSink diags;
    auto compiled = passes::CompileFile(*source, types, schema, diags);
    REQUIRE(compiled);
    size_t before = compiled->program.nodes.size();
    std::string trace;
    passes::PassOptions options;
    options.time = true;
    passes::Optimize(compiled->program, options, &trace);
    CHECK(compiled->program.nodes.size() <= before);
    CHECK(ir::Verify(compiled->program).empty());
    CHECK(trace.find("pass fold") != std::string::npos);
  }
}

TEST_CASE("disabled passes do not run") {
  std::string error;
  std::unique_ptr<Source> source = Source::FromFile(POLICYC_SOURCE_DIR "/stdlib/node_affinity.policy", &error);
  sema::TypeTable types;
  sema::Schema schema(types);
  DiagnosticSink diags;
  auto compiled = passes::CompileFile(*source, types, schema, diags);
  REQUIRE(compiled);
  size_t before = compiled->program.nodes.size();
  passes::PassOptions options;
  options.disabled = {"fold", "cse", "dce", "order"};
  passes::Optimize(compiled->program, options, nullptr);
  CHECK(compiled->program.nodes.size() == before);
  CHECK(passes::PassNames() == std::vector<std::string_view>{"specialize", "fold", "cse", "dce", "order"});
}
