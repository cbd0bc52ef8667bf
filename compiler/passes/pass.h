#pragma once
/// Optimisation passes over the IR and the pipeline that runs them.
///
/// One pass per file, each a class in an anonymous namespace behind a
/// `CreateXPass(const PassOptions&)` factory (null when the pass cannot run
/// with those options); Run() says whether it changed the program. The
/// pipeline (pipeline_passes.cpp) is one ordered, named table that declares
/// the factories; every pass can be disabled, timed and printed after, and
/// the verifier runs after each. A new pass is its file and its row.

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/ir.h"
#include "k8s/objects.h"

namespace policy::binding {
struct ResourceReads;
}

namespace policy::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view Name() const = 0;
  /// Transforms `program`; true when it changed anything.
  virtual bool Run(ir::Program& program) = 0;
};

class NodeDictionary;

struct PassOptions {
  std::set<std::string> disabled;     ///< --disable-pass=NAME
  std::set<std::string> print_after;  ///< --print-after=NAME (or `all`)
  bool time = false;                  ///< --time-passes
  /// The pod to specialize for (`specialize` runs only with one), and the
  /// type table the program's types come from.
  const k8s::Pod* pod = nullptr;
  lang::TypeTable* types = nullptr;
  /// When set, what specializing read of the pod's requests (the engine
  /// keeps a specialization for the pods that answer those reads alike).
  binding::ResourceReads* resource_reads = nullptr;
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
