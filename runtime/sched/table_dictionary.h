#pragma once
/// A NodeTable's dictionaries as the `bind-table` pass sees them.

#include "compiler/passes/node_dictionary.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

class TableDictionary final : public passes::NodeDictionary {
 public:
  explicit TableDictionary(const NodeTable& table) : table_(table) {}

  std::optional<uint32_t> LabelDomain(std::string_view key, std::string_view value) const override;
  void ForEachLabelValue(std::string_view key,
                         const std::function<void(uint32_t, std::string_view)>& f) const override;
  bool HasLabelKey(std::string_view key) const override { return table_.Label(key) != nullptr; }
  bool HasResource(std::string_view name) const override { return table_.Resource(name) != nullptr; }
  double LabelShare(std::string_view key, const std::vector<uint32_t>& domains) const override;
  uint32_t TaintCount() const override { return static_cast<uint32_t>(table_.TaintDictionary().size()); }
  Taint TaintAt(uint32_t id) const override;
  uint64_t Version() const override { return table_.DictionaryVersion(); }

 private:
  const NodeTable& table_;
};

}  // namespace policy::rt
