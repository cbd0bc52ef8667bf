#pragma once
/// Interned strings: label keys and values, node names, taints, resources.
/// Id 0 means "no string"; real ids start at 1 and never change.

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace policy::rt {

class StringPool {
 public:
  StringPool();
  /// The id of `text`, adding it when new.
  uint32_t Intern(std::string_view text);
  /// Room for `more` strings beyond those held, without rehashing on the way.
  void Reserve(size_t more);
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
  // Open addressing, linear probing, at most half full: per slot the
  // hash's high 32 bits and the id (0: empty). One probe usually; a
  // node-based map costs a cache miss more per lookup, and lookups by name
  // (a request's 5,000 node names, labels and resources in the
  // interpreter) are hot.
  std::vector<uint64_t> slots_;
  // The slot where `text` (with hash `hash`) is, or the empty one where it
  // would go.
  size_t Find(std::string_view text, uint64_t hash) const;
  void Grow(size_t slots);
};

}  // namespace policy::rt
