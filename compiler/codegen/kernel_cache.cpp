#include "compiler/codegen/kernel_cache.h"

namespace policy::codegen {

std::shared_ptr<CachedKernels> KernelCache::Find(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  std::shared_ptr<CachedKernels> entry = it->second;
  Touch(key);
  return entry;
}

void KernelCache::Insert(const std::string& key, std::shared_ptr<CachedKernels> entry) {
  entries_.emplace(key, std::move(entry));
  Touch(key);
}

void KernelCache::Touch(const std::string& key) {
  lru_.remove(key);
  lru_.push_front(key);
  // Evict the least recent templates nobody holds, down to the capacity.
  for (auto it = lru_.end(); entries_.size() > capacity_ && it != lru_.begin();) {
    --it;
    auto entry = entries_.find(*it);
    if (entry != entries_.end() && entry->second.use_count() == 1) {
      entries_.erase(entry);
      it = lru_.erase(it);
    }
  }
}

}  // namespace policy::codegen
