#pragma once
/// The compiler's front half with owned lifetimes: policy files parsed,
/// checked and lowered to IR, and copies of their programs run through the
/// pass pipeline for a pod and a node table.
///
/// A Compilation owns every source it compiled, the type table and schema
/// the programs' types come from, and each file's syntax tree, checked
/// module and program; what it hands out stays valid while it lives. A
/// source is held by a std::shared_ptr, so a diagnostic about it keeps it
/// alive even when compiling failed (DiagnosticSink).

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/lower/lower.h"
#include "compiler/passes/pass.h"
#include "compiler/sema/check.h"
#include "support/expected.h"
#include "compiler/syntax/ast.h"

namespace policy::driver {

/// One policy file after parse, check and lower. Its spans point into
/// `source`, which it owns.
struct CompiledFile {
  std::shared_ptr<const Source> source;
  syntax::Module module;
  sema::CheckedModule checked;
  ir::Program program;  ///< as lowered, before any pass
};

class Compilation {
 public:
  Compilation();
  ~Compilation();
  Compilation(const Compilation&) = delete;
  Compilation& operator=(const Compilation&) = delete;

  /// Parses, checks and lowers `source`; null with diagnostics on any
  /// error. `params` (a profile's plugin args) must name params the file
  /// declares, with values of their types; a mismatch is a diagnostic at
  /// the param. The IR verifier runs on the result; its problems abort (they
  /// are compiler bugs).
  const CompiledFile* Add(std::shared_ptr<const Source> source, DiagnosticSink& diags,
                          const lower::ParamValues* params = nullptr);
  /// A copy of `program` after the pass pipeline with `options` (its
  /// `types` is set here). Dumps and timings go to `trace` when given.
  /// Safe to call from several threads (specializing adds types).
  ir::Program Optimize(const ir::Program& program, passes::PassOptions options, std::string* trace = nullptr);
  /// A program in its printed form (`--emit=ir`), verified; else an Error
  /// worded to follow the file's name (`:LINE:COL: ...` or ` the IR is not
  /// valid: ...`).
  Expected<ir::Program> ParseIr(std::string_view text);

  const std::vector<std::unique_ptr<CompiledFile>>& Files() const { return files_; }
  const lang::TypeTable& Types() const { return *types_; }

 private:
  std::unique_ptr<lang::TypeTable> types_;
  std::unique_ptr<lang::Schema> schema_;
  std::vector<std::unique_ptr<CompiledFile>> files_;
  std::mutex types_mutex_;  // specialization adds types to types_
};

}  // namespace policy::driver
