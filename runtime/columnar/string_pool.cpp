#include "runtime/columnar/string_pool.h"

#include <algorithm>
#include <cstring>

namespace policy::rt {

StringPool::StringPool() { strings_.emplace_back(); }

uint32_t StringPool::Intern(std::string_view text) {
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  if (block_used_ + text.size() > block_size_) {
    block_size_ = std::max<size_t>(text.size(), 256 * 1024);
    blocks_.push_back(std::make_unique<char[]>(block_size_));
    block_used_ = 0;
    char_bytes_ += block_size_;
  }
  char* out = blocks_.back().get() + block_used_;
  if (!text.empty()) std::memcpy(out, text.data(), text.size());
  block_used_ += text.size();
  std::string_view stored(out, text.size());
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

std::optional<uint32_t> StringPool::Lookup(std::string_view text) const {
  auto it = ids_.find(text);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

size_t StringPool::MemoryBytes() const {
  return char_bytes_ + strings_.capacity() * sizeof(std::string_view) +
         ids_.bucket_count() * sizeof(void*) + ids_.size() * (sizeof(std::string_view) + 2 * sizeof(void*));
}

}  // namespace policy::rt
