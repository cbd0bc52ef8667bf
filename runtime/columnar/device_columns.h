#pragma once
/// The DRA devices of a DeviceTable as columns, and each CEL selector's
/// answer over all of them, kept while the ResourceSlices stay as they are
/// (a claim allocated or freed changes the DeviceTable, not these).
///
/// The columns keep answers; they decide nothing themselves. A
/// SelectorDecider does, from above: the reference evaluator device by
/// device (runtime/dra/selector_evaluator.h), or a native kernel over all
/// of them, checked against the evaluator if asked (runtime/sched/
/// selector_kernels.h), as the engine's options choose.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/dra.h"

namespace policy::rt {

/// One selector's answer per device: 1 matches, 0 does not, -1 failed
/// (errors[device] says why).
struct SelectorVerdicts {
  std::vector<int8_t> match;
  std::unordered_map<uint32_t, std::string> errors;
  std::string compile_error;  ///< kube's text when the selector does not compile
  bool compiled = false;      ///< a native kernel decided it
};

/// A device and its driver, pointing into the storage objects.
struct DeviceRef {
  std::string_view driver;
  const k8s::Device* device = nullptr;
  bool operator==(const DeviceRef&) const = default;
};

/// What a SelectorDecider keeps of one set of devices between selectors
/// (the devices as a table, built at its first selector).
struct DeciderMemo {
  virtual ~DeciderMemo() = default;
};

/// Decides CEL selectors over devices.
class SelectorDecider {
 public:
  virtual ~SelectorDecider() = default;
  /// `expression` on every one of `devices`, in their order. `memo` is this
  /// decider's memory of these devices (null at first; what it leaves there
  /// comes back with the next selector over the same devices). Called with
  /// no other call on the same memo meanwhile.
  virtual std::shared_ptr<SelectorVerdicts> Decide(const std::string& expression, const std::vector<DeviceRef>& devices,
                                                   std::unique_ptr<DeciderMemo>& memo) const = 0;
};

/// How a table's selectors are decided: by `decider`, or (none) by what the
/// caller asking falls back to.
struct DeviceSelectors {
  std::shared_ptr<const SelectorDecider> decider;
  bool operator==(const DeviceSelectors&) const = default;
};

class DeviceColumns {
 public:
  using Ref = DeviceRef;
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
  /// `expression` on every device: decided at the first ask (by the
  /// decider these columns were made with, else by `fallback`), then kept.
  std::shared_ptr<const SelectorVerdicts> Selector(const std::string& expression, const SelectorDecider& fallback) const;

  /// Selectors decided so far by a native kernel and by the evaluator.
  struct Counts {
    size_t compiled = 0, evaluated = 0;
  };
  Counts Decided() const;

 private:
  std::vector<Ref> devices_;
  uint64_t slices_version_;
  DeviceSelectors how_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, std::shared_ptr<const SelectorVerdicts>> selectors_;
  mutable Counts counts_;
  mutable std::unique_ptr<DeciderMemo> memo_;  // the decider's
  mutable const SelectorDecider* memo_of_ = nullptr;
};

}  // namespace policy::rt
