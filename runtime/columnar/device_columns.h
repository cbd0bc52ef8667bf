#pragma once
/// The DRA devices of a DeviceTable as columns, and each CEL selector's
/// answer over all of them, kept while the ResourceSlices stay as they are
/// (a claim allocated or freed changes the DeviceTable, not these).
///
/// A selector is answered by the reference evaluator (compiler/cel/eval.h),
/// device by device, or compiled: lowered to the IR (compiler/lower/
/// cel_selector.h), bound to a NodeTable whose rows are the devices (the
/// driver, each attribute under its type's label, each capacity as an
/// allocatable resource) and run as a native filter kernel over every row.
/// A selector the back end does not compile, or one that reads a capacity
/// some device has that milli-units do not hold exactly, is evaluated. With
/// kVerify both run and a difference aborts, as --verify-jit does for the
/// policies' kernels.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/dra.h"

namespace policy::codegen {
class Jit;
}

namespace policy::rt {

class NodeTable;

/// One selector's answer per device: 1 matches, 0 does not, -1 failed
/// (errors[device] says why).
struct SelectorVerdicts {
  std::vector<int8_t> match;
  std::unordered_map<uint32_t, std::string> errors;
  std::string compile_error;  ///< kube's text when the selector does not compile
  bool compiled = false;      ///< a native kernel decided it
};

/// How selectors are decided.
struct DeviceSelectors {
  enum class Mode : uint8_t { kEvaluate, kCompile, kVerify };
  Mode mode = Mode::kEvaluate;
  /// kCompile: tables with fewer devices are evaluated (compiling a new
  /// selector costs about what evaluating it on this many devices does).
  size_t compile_from = 0;
  std::shared_ptr<codegen::Jit> jit;  ///< kCompile, kVerify

  bool operator==(const DeviceSelectors&) const = default;
};

class DeviceColumns {
 public:
  /// A device and its driver, pointing into the storage objects.
  struct Ref {
    std::string_view driver;
    const k8s::Device* device = nullptr;
    bool operator==(const Ref&) const = default;
  };
  DeviceColumns(std::vector<Ref> devices, uint64_t slices_version, DeviceSelectors how);
  ~DeviceColumns();
  DeviceColumns(const DeviceColumns&) = delete;
  DeviceColumns& operator=(const DeviceColumns&) = delete;

  /// Whether these columns are those of `devices` (the same devices, the
  /// slices unchanged since) decided as `how` says.
  bool Same(const std::vector<Ref>& devices, uint64_t slices_version, const DeviceSelectors& how) const {
    return slices_version == slices_version_ && how == how_ && devices == devices_;
  }
  size_t Size() const { return devices_.size(); }
  /// `expression` on every device (decided at the first ask, then kept).
  std::shared_ptr<const SelectorVerdicts> Selector(const std::string& expression) const;

  /// Selectors decided so far by a native kernel and by the evaluator.
  struct Counts {
    size_t compiled = 0, evaluated = 0;
  };
  Counts Decided() const;

 private:
  std::shared_ptr<SelectorVerdicts> Evaluate(const std::string& expression) const;
  std::shared_ptr<SelectorVerdicts> Compile(const std::string& expression) const;
  void BuildTable() const;

  std::vector<Ref> devices_;
  uint64_t slices_version_;
  DeviceSelectors how_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, std::shared_ptr<const SelectorVerdicts>> selectors_;
  mutable Counts counts_;
  struct Compiled;  // the device NodeTable and what compiling needs, built at the first compiled selector
  mutable std::unique_ptr<Compiled> compiled_;
};

}  // namespace policy::rt
