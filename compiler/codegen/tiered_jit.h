#pragma once
/// Tiering: a template's first pods run in the interpreter while its
/// kernels compile on a background thread; later pods of the template get
/// them. A pod never waits for LLVM. (The engine's Backend::kTiered; the
/// scheduling loop of issue 12 is its main user.)

#include <memory>
#include <span>
#include <vector>

#include "compiler/codegen/jit.h"

namespace policy::codegen {

/// When a template is hot enough to compile.
struct TieringOptions {
  /// Pods of a template seen before its compilation is queued (1: the first
  /// pod queues it); a template seen fewer times stays interpreted.
  size_t hot_after = 1;
};

/// Compiles hot templates on one background thread.
class TieredJit {
 public:
  explicit TieredJit(JitOptions options = {}, TieringOptions tiering = {});
  ~TieredJit();  ///< finishes the compilation under way, drops the queue
  TieredJit(const TieredJit&) = delete;
  TieredJit& operator=(const TieredJit&) = delete;

  /// The kernels of function `f` of `program` when they are ready; else null
  /// (evaluate it in the interpreter), with its compilation queued the first
  /// time. A function the back end does not compile stays null.
  std::shared_ptr<const CompiledFunction> Get(const ir::Program& program, size_t f);
  /// Get() for each of `functions`; those that are queued now compile
  /// together, in one module (Jit::CompileAll).
  std::vector<std::shared_ptr<const CompiledFunction>> GetAll(std::span<const Jit::FunctionRef> functions);
  /// Waits until every queued compilation is done (tests, benchmarks).
  void Drain();
  /// Distinct kernels compiled so far (functions of one shape share one,
  /// whatever template they came from: kernel_shape.h).
  size_t Compiled() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace policy::codegen
