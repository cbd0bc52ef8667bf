#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "compiler/driver/compilation.h"
#include "compiler/passes/pass.h"

using namespace policy;

namespace {

// A policy file compiled to IR by a Compilation, which owns what it needs.
struct Compiled {
  driver::Compilation compilation;
  DiagnosticSink diags;
  const driver::CompiledFile* file = nullptr;
};

std::unique_ptr<Compiled> CompilePath(const std::string& path) {
  auto c = std::make_unique<Compiled>();
  std::string error;
  std::shared_ptr<const Source> source = Source::FromFile(path, &error);
  REQUIRE_MESSAGE(source, error);
  c->file = c->compilation.Add(source, c->diags);
  return c;
}

std::string CompileToIr(const std::string& path, bool optimize) {
  auto c = CompilePath(path);
  REQUIRE_MESSAGE(c->file, RenderAll(c->diags));
  return ir::Print(optimize ? c->compilation.Optimize(c->file->program, {}) : c->file->program);
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
    size_t before = c->file->program.nodes.size();
    std::string trace;
    passes::PassOptions options;
    options.time = true;
    ir::Program optimized = c->compilation.Optimize(c->file->program, options, &trace);
    CHECK(optimized.nodes.size() <= before);
    CHECK(ir::Verify(optimized).empty());
    CHECK(trace.find("pass fold") != std::string::npos);
  }
}

TEST_CASE("disabled passes do not run") {
  auto c = CompilePath(POLICYC_SOURCE_DIR "/stdlib/node_affinity.policy");
  REQUIRE(c->file);
  size_t before = c->file->program.nodes.size();
  passes::PassOptions options;
  options.disabled = {"fold", "cse", "dce", "order"};
  CHECK(c->compilation.Optimize(c->file->program, options).nodes.size() == before);
  CHECK(passes::PassNames() == std::vector<std::string_view>{"specialize", "fold", "bind-table", "cse", "dce", "order"});
}

TEST_CASE("the printed IR reads back to the same program - before and after the passes") {
  for (const char* path : {"/stdlib/node_affinity.policy", "/stdlib/taint_toleration.policy",
                           "/stdlib/node_resources_fit.policy", "/stdlib/requested_to_capacity_ratio.policy",
                           "/policies/gpu-memory-fit.yaml", "/tests/golden/syntax/every-construct.policy"}) {
    INFO(path);
    auto c = CompilePath(std::string(POLICYC_SOURCE_DIR) + path);
    if (!c->file) continue;  // every-construct has type errors on purpose
    for (bool optimize : {false, true}) {
      std::string printed = ir::Print(optimize ? c->compilation.Optimize(c->file->program, {}) : c->file->program);
      Expected<ir::Program> read = c->compilation.ParseIr(printed);
      REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
      CHECK(ir::Print(*read) == printed);
      CHECK(ir::Verify(*read).empty());
    }
  }
}

TEST_CASE("bad IR text is refused with a line number") {
  driver::Compilation c;
  Expected<ir::Program> skipped = c.ParseIr("%0 = const 1 : int\n%2 = const 2 : int\n");
  REQUIRE_FALSE(skipped.ok());
  CHECK(skipped.error().message.starts_with("line 2:"));
  CHECK_FALSE(c.ParseIr("%0 = frobnicate : int\n").ok());
  Expected<ir::Program> widget = c.ParseIr("%0 = const 1 : widget\n");
  REQUIRE_FALSE(widget.ok());
  CHECK(widget.error().message.find("unknown type") != std::string::npos);
  CHECK_FALSE(c.ParseIr("%0 = add %0 %1 : int\n").ok());
}
