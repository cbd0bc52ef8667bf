#pragma once
/// What the `bind-table` pass may know of the node table: its label and
/// taint dictionaries. Declared here (passes may not use runtime/) and
/// implemented by runtime/columnar over a NodeTable.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace policy::passes {

class NodeDictionary {
 public:
  virtual ~NodeDictionary() = default;

  /// The id of `value` in label column `key`; nullopt when no node ever had it.
  virtual std::optional<uint32_t> LabelDomain(std::string_view key, std::string_view value) const = 0;
  /// Calls `f(id, value)` for every value label `key` ever had.
  virtual void ForEachLabelValue(std::string_view key,
                                 const std::function<void(uint32_t, std::string_view)>& f) const = 0;
  /// Whether some node ever had label `key` / resource `name` (allocatable
  /// or requested); when none did, reading it is none / 0 on every node.
  virtual bool HasLabelKey(std::string_view key) const = 0;
  virtual bool HasResource(std::string_view name) const = 0;
  /// The share of live nodes whose value of `key` is one of `domains` (0 =
  /// the node lacks the label); an estimate for rule ordering.
  virtual double LabelShare(std::string_view key, const std::vector<uint32_t>& domains) const = 0;

  struct Taint {
    std::string_view key, value, effect;
  };
  /// The taint dictionary: ids 0..TaintCount()-1.
  virtual uint32_t TaintCount() const = 0;
  virtual Taint TaintAt(uint32_t id) const = 0;

  /// Changes when a key, value, resource or taint is added; see ir::Program::table_version.
  virtual uint64_t Version() const = 0;
};

}  // namespace policy::passes
