#include "runtime/sched/table_dictionary.h"

namespace policy::rt {

std::optional<uint32_t> TableDictionary::LabelDomain(std::string_view key, std::string_view value) const {
  const LabelColumn* column = table_.Label(key);
  std::optional<uint32_t> id = table_.pool().Lookup(value);
  if (column == nullptr || !id) return std::nullopt;
  auto it = column->domain_of.find(*id);
  if (it == column->domain_of.end()) return std::nullopt;
  return it->second;
}

void TableDictionary::ForEachLabelValue(std::string_view key,
                                        const std::function<void(uint32_t, std::string_view)>& f) const {
  const LabelColumn* column = table_.Label(key);
  if (column == nullptr) return;
  for (uint32_t d = 1; d <= column->DomainCount(); ++d) f(d, table_.pool().Get(column->value[d]));
}

double TableDictionary::LabelShare(std::string_view key, const std::vector<uint32_t>& domains) const {
  if (table_.NodeCount() == 0) return 0.5;
  const LabelColumn* column = table_.Label(key);
  size_t with_label = 0, in_domains = 0;
  for (uint32_t d = 1; column != nullptr && d <= column->DomainCount(); ++d) with_label += column->live_nodes[d];
  for (uint32_t d : domains) {
    if (d == 0) in_domains += table_.NodeCount() - with_label;
    else if (column != nullptr && d <= column->DomainCount()) in_domains += column->live_nodes[d];
  }
  return static_cast<double>(in_domains) / static_cast<double>(table_.NodeCount());
}

passes::NodeDictionary::Taint TableDictionary::TaintAt(uint32_t id) const {
  const TaintEntry& t = table_.TaintDictionary()[id];
  return {table_.pool().Get(t.key), table_.pool().Get(t.value), k8s::ToString(t.effect)};
}

}  // namespace policy::rt
