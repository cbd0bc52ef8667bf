#pragma once
/// DRA CEL selectors decided by native kernels: the selector lowered to the
/// IR (compiler/lower/cel_selector.h), optimised against a NodeTable whose
/// rows are the devices (the driver, each attribute under its type's label,
/// each capacity as an allocatable resource), JIT-compiled and run as a
/// filter kernel over every row. A selector the back end does not compile,
/// or one that reads a capacity some device has that milli-units do not
/// hold exactly, is evaluated (runtime/dra/selector_evaluator.h); so is
/// every selector over fewer devices than compiling pays for. With
/// `verify` both run and a difference aborts, as --verify-jit does for the
/// policies' kernels.

#include <cstddef>
#include <memory>

#include "runtime/columnar/device_columns.h"

namespace policy::codegen {
class Jit;
}

namespace policy::rt {

class KernelSelectorDecider final : public SelectorDecider {
 public:
  /// `compile_from`: fewer devices are evaluated (compiling a new selector
  /// costs about what evaluating it on this many devices does). One `jit`
  /// may serve several deciders and threads.
  KernelSelectorDecider(std::shared_ptr<codegen::Jit> jit, bool verify, size_t compile_from = 0)
      : jit_(std::move(jit)), verify_(verify), compile_from_(compile_from) {}
  std::shared_ptr<SelectorVerdicts> Decide(const std::string& expression, const std::vector<DeviceRef>& devices,
                                           std::unique_ptr<DeciderMemo>& memo) const override;

 private:
  std::shared_ptr<SelectorVerdicts> Compile(const std::string& expression, const std::vector<DeviceRef>& devices,
                                            std::unique_ptr<DeciderMemo>& memo) const;
  std::shared_ptr<codegen::Jit> jit_;
  bool verify_;
  size_t compile_from_;
};

}  // namespace policy::rt
