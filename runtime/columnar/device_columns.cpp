#include "runtime/columnar/device_columns.h"

namespace policy::rt {
namespace {

// Selectors kept; past this many the answers are dropped (computed again if
// asked).
constexpr size_t kMaxSelectors = 1024;

}  // namespace

DeviceColumns::DeviceColumns(std::vector<Ref> devices, uint64_t slices_version, DeviceSelectors how)
    : devices_(std::move(devices)), slices_version_(slices_version), how_(std::move(how)) {}

DeviceColumns::~DeviceColumns() = default;

DeviceColumns::Counts DeviceColumns::Decided() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

std::shared_ptr<const SelectorVerdicts> DeviceColumns::Selector(const std::string& expression,
                                                                const SelectorDecider& fallback) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = selectors_.find(expression);
  if (it != selectors_.end()) return it->second;
  if (selectors_.size() >= kMaxSelectors) selectors_.clear();
  const SelectorDecider& decider = how_.decider ? *how_.decider : fallback;
  if (memo_of_ != &decider) {  // a memo is one decider's
    memo_.reset();
    memo_of_ = &decider;
  }
  std::shared_ptr<SelectorVerdicts> v = decider.Decide(expression, devices_, memo_);
  ++(v->compiled ? counts_.compiled : counts_.evaluated);
  return selectors_.emplace(expression, std::move(v)).first->second;
}

}  // namespace policy::rt
