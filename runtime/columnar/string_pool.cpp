#include "runtime/columnar/string_pool.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace policy::rt {

namespace {

uint64_t Hash(std::string_view text) { return std::hash<std::string_view>{}(text); }
uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }

}  // namespace

StringPool::StringPool() : slots_(64, 0) { strings_.emplace_back(); }

size_t StringPool::Find(std::string_view text, uint64_t hash) const {
  size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    uint64_t slot = slots_[i];
    if (slot == 0) return i;
    if (static_cast<uint32_t>(slot >> 32) == Tag(hash) && strings_[static_cast<uint32_t>(slot)] == text) return i;
  }
}

void StringPool::Reserve(size_t more) {
  // The slots the interning would grow to (so MemoryBytes is the same either way).
  size_t want = strings_.size() + more;
  size_t slots = slots_.size();
  while (want * 2 > slots) slots *= 2;
  if (slots != slots_.size()) Grow(slots);
}

void StringPool::Grow(size_t slots) {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(slots, 0);
  size_t mask = slots_.size() - 1;
  for (uint64_t slot : old) {
    if (slot == 0) continue;
    uint64_t hash = Hash(strings_[static_cast<uint32_t>(slot)]);
    size_t i = hash & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

uint32_t StringPool::Intern(std::string_view text) {
  uint64_t hash = Hash(text);
  size_t at = Find(text, hash);
  if (slots_[at] != 0) return static_cast<uint32_t>(slots_[at]);
  const char* out = "";  // the empty string needs no block (there may be none yet)
  if (!text.empty()) {
    if (block_used_ + text.size() > block_size_) {
      block_size_ = std::max<size_t>(text.size(), 256 * 1024);
      blocks_.push_back(std::make_unique<char[]>(block_size_));
      block_used_ = 0;
      char_bytes_ += block_size_;
    }
    char* at = blocks_.back().get() + block_used_;
    std::memcpy(at, text.data(), text.size());
    block_used_ += text.size();
    out = at;
  }
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(out, text.size());
  slots_[at] = (uint64_t{Tag(hash)} << 32) | id;
  if (strings_.size() * 2 > slots_.size()) Grow(slots_.size() * 2);
  return id;
}

std::optional<uint32_t> StringPool::Lookup(std::string_view text) const {
  uint64_t slot = slots_[Find(text, Hash(text))];
  if (slot == 0) return std::nullopt;
  return static_cast<uint32_t>(slot);
}

size_t StringPool::MemoryBytes() const {
  return char_bytes_ + strings_.capacity() * sizeof(std::string_view) +
         slots_.capacity() * sizeof(uint64_t);
}

}  // namespace policy::rt
