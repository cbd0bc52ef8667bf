// The optimisation pipeline: one ordered, named table.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "compiler/passes/pass.h"

namespace policy::passes {

// Each pass's factory, defined in the pass's own file.
std::unique_ptr<Pass> CreateSpecializePass(const PassOptions& o);
std::unique_ptr<Pass> CreateBindTablePass(const PassOptions& o);
std::unique_ptr<Pass> CreateFoldPass(const PassOptions& o);
std::unique_ptr<Pass> CreateCsePass(const PassOptions& o);
std::unique_ptr<Pass> CreateDcePass(const PassOptions& o);
std::unique_ptr<Pass> CreateOrderPass(const PassOptions& o);

namespace {

struct PassEntry {
  std::string_view name;
  /// Null when the pass cannot run with these options (no pod to specialize for).
  std::unique_ptr<Pass> (*create)(const PassOptions&);
};

// Order matters:
constexpr PassEntry kPipeline[] = {
    {"specialize", CreateSpecializePass},  // first: the pod's values become constants for every later pass
    {"fold", CreateFoldPass},              // after specialize: constants and short circuits, canonical operands for CSE
    {"specialize", CreateSpecializePass},  // again: pod reads whose keys folded to constants (a param's resource names)
    {"fold", CreateFoldPass},
    {"bind-table", CreateBindTablePass},   // after fold: label tests and taint loops against constants, bound to ids
    {"fold", CreateFoldPass},              // again: what binding decided for every node (a value no node has) folds away
    {"cse", CreateCsePass},                // after fold: merges what folding made identical
    {"dce", CreateDcePass},                // drops what specialization, folding and CSE left unused
    {"order", CreateOrderPass},            // last: costs and selectivities are estimated on the final, smallest program
};

}  // namespace

std::vector<std::string_view> PassNames() {
  std::vector<std::string_view> names;
  for (const PassEntry& e : kPipeline) {
    if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
  }
  return names;
}

void Optimize(ir::Program& program, const PassOptions& options, std::string* trace) {
  for (const PassEntry& entry : kPipeline) {
    if (options.disabled.contains(std::string(entry.name))) continue;
    std::unique_ptr<Pass> pass = entry.create(options);
    if (pass == nullptr) continue;
    auto start = std::chrono::steady_clock::now();
    size_t before = program.nodes.size();
    bool changed = pass->Run(program);
    double micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    for (const std::string& problem : ir::Verify(program)) {
      std::fprintf(stderr, "policyc: IR verifier after `%s`: %s\n", std::string(entry.name).c_str(), problem.c_str());
      std::abort();
    }
    if (trace == nullptr) continue;
    if (options.time) {
      *trace += fmt::format("; pass {:<10} {:>8.1f} us  nodes {} -> {}{}\n", entry.name, micros, before,
                            program.nodes.size(), changed ? "" : "  (no change)");
    }
    if (options.print_after.contains(std::string(entry.name)) || options.print_after.contains("all")) {
      *trace += fmt::format("; IR after {}\n{}", entry.name, ir::Print(program));
    }
  }
}

}  // namespace policy::passes
