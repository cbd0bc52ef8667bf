#pragma once
/// Interned strings: label keys and values, node names, taints, resources.
/// Id 0 means "no string"; real ids start at 1 and never change.

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace policy::rt {

class StringPool {
 public:
  StringPool();
  /// The id of `text`, adding it when new.
  uint32_t Intern(std::string_view text);
  /// The id of `text` if it was interned.
  std::optional<uint32_t> Lookup(std::string_view text) const;
  std::string_view Get(uint32_t id) const { return strings_[id]; }
  /// Number of ids handed out, plus one for id 0.
  size_t size() const { return strings_.size(); }
  /// Bytes held: characters, index and hash table.
  size_t MemoryBytes() const;

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  size_t char_bytes_ = 0;
  std::vector<std::string_view> strings_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace policy::rt
