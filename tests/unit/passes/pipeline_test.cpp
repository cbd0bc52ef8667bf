#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"

using namespace policy;

namespace {

// A policy file compiled to IR, with what it needs alive.
struct Compiled {
  std::unique_ptr<Source> source;
  sema::TypeTable types;
  std::unique_ptr<sema::Schema> schema = std::make_unique<sema::Schema>(types);
  DiagnosticSink diags;
  std::unique_ptr<passes::CompiledFile> file;
};

std::unique_ptr<Compiled> CompilePath(const std::string& path) {
  auto c = std::make_unique<Compiled>();
  std::string error;
  c->source = Source::FromFile(path, &error);
  REQUIRE_MESSAGE(c->source, error);
  c->file = passes::CompileFile(*c->source, c->types, *c->schema, c->diags);
  return c;
}

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
    auto c = CompilePath(std::string(POLICYC_SOURCE_DIR "/stdlib/") + name + ".policy");
    REQUIRE(c->file);
    auto& compiled = c->file;
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
  auto c = CompilePath(POLICYC_SOURCE_DIR "/stdlib/node_affinity.policy");
  REQUIRE(c->file);
  auto& compiled = c->file;
  size_t before = compiled->program.nodes.size();
  passes::PassOptions options;
  options.disabled = {"fold", "cse", "dce", "order"};
  passes::Optimize(compiled->program, options, nullptr);
  CHECK(compiled->program.nodes.size() == before);
  CHECK(passes::PassNames() == std::vector<std::string_view>{"specialize", "fold", "bind-table", "cse", "dce", "order"});
}

TEST_CASE("the printed IR reads back to the same program - before and after the passes") {
  for (const char* path : {"/stdlib/node_affinity.policy", "/stdlib/taint_toleration.policy",
                           "/stdlib/node_resources_fit.policy", "/stdlib/requested_to_capacity_ratio.policy",
                           "/policies/gpu-memory-fit.yaml", "/tests/golden/syntax/every-construct.policy"}) {
    INFO(path);
    std::string error;
    std::unique_ptr<Source> source = Source::FromFile(std::string(POLICYC_SOURCE_DIR) + path, &error);
    REQUIRE(source);
    sema::TypeTable types;
    sema::Schema schema(types);
    DiagnosticSink diags;
    auto compiled = passes::CompileFile(*source, types, schema, diags);
    if (!compiled) continue;  // every-construct has type errors on purpose
    for (bool optimize : {false, true}) {
      if (optimize) passes::Optimize(compiled->program, {}, nullptr);
      std::string printed = ir::Print(compiled->program);
      std::optional<ir::Program> read = ir::Parse(printed, types, schema, &error);
      REQUIRE_MESSAGE(read.has_value(), error);
      CHECK(ir::Print(*read) == printed);
      CHECK(ir::Verify(*read).empty());
    }
  }
}

TEST_CASE("bad IR text is refused with a line number") {
  sema::TypeTable types;
  sema::Schema schema(types);
  std::string error;
  CHECK_FALSE(ir::Parse("%0 = const 1 : int\n%2 = const 2 : int\n", types, schema, &error).has_value());
  CHECK(error.starts_with("line 2:"));
  CHECK_FALSE(ir::Parse("%0 = frobnicate : int\n", types, schema, &error).has_value());
  CHECK_FALSE(ir::Parse("%0 = const 1 : widget\n", types, schema, &error).has_value());
  CHECK(error.find("unknown type") != std::string::npos);
  CHECK_FALSE(ir::Parse("%0 = add %0 %1 : int\n", types, schema, &error).has_value());
}
