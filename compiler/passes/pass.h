#pragma once
/// Optimisation passes over the IR and the pipeline that runs them.
///
/// One pass per file, each a class in an anonymous namespace behind a
/// CreateXPass() factory; Run() says whether it changed the program. The
/// pipeline (pipeline_passes.cpp) is one ordered, named table; every pass can
/// be disabled, timed and printed after, and the verifier runs after each.

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/ir.h"
#include "k8s/objects.h"

namespace policy::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view Name() const = 0;
  /// Transforms `program`; true when it changed anything.
  virtual bool Run(ir::Program& program) = 0;
};

std::unique_ptr<Pass> CreateSpecializePass(const k8s::Pod& pod, lang::TypeTable& types);
class NodeDictionary;
std::unique_ptr<Pass> CreateBindTablePass(const NodeDictionary& table, lang::TypeTable& types);
std::unique_ptr<Pass> CreateFoldPass();
std::unique_ptr<Pass> CreateCsePass();
std::unique_ptr<Pass> CreateDcePass();
/// `table` (may be null) gives label statistics for selectivity estimates.
std::unique_ptr<Pass> CreateOrderPass(const NodeDictionary* table);

struct PassOptions {
  std::set<std::string> disabled;     ///< --disable-pass=NAME
  std::set<std::string> print_after;  ///< --print-after=NAME (or `all`)
  bool time = false;                  ///< --time-passes
  /// The pod to specialize for (`specialize` runs only with one), and the
  /// type table the program's types come from.
  const k8s::Pod* pod = nullptr;
  lang::TypeTable* types = nullptr;
  /// The node table to bind label values and taints to (`bind-table` runs
  /// only with one); the program is then valid for that table only.
  const NodeDictionary* table = nullptr;
};

/// The pipeline's pass names, in order.
std::vector<std::string_view> PassNames();

/// Runs the pipeline on `program`. Prints requested dumps and timings to
/// `trace`. The verifier runs after every pass; a problem aborts (a bug).
void Optimize(ir::Program& program, const PassOptions& options, std::string* trace);

}  // namespace policy::passes
