#include "runtime/columnar/device_table.h"

#include <algorithm>
#include <atomic>
#include <map>

#include <fmt/format.h>

#include "k8s/node_match.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {
namespace {

// Selectors kept per table; past this many the oldest answers are dropped
// (they are computed again if asked).
constexpr size_t kMaxSelectors = 1024;

std::atomic<uint64_t> next_lineage{0};


}  // namespace

DeviceTable::DeviceTable(const StorageObjects& storage, const NodeTable& table, std::shared_ptr<const DeviceColumns> reuse,
                         DeviceSelectors how)
    : table_(table), lineage_(++next_lineage) {
  auto layout = std::make_shared<Layout>();
  Layout& l = *layout;
  // Pools by (driver, name): their slices of the newest generation, by name.
  std::map<std::pair<std::string_view, std::string_view>, std::vector<const k8s::ResourceSlice*>> pools;
  for (const auto& [name, slice] : storage.resource_slices) pools[{slice.driver, slice.pool.name}].push_back(&slice);
  std::unordered_map<std::string, int32_t> held;  // driver/pool/device -> claims holding it
  for (const auto& [key, claim] : storage.resource_claims) {
    if (!claim.allocation) continue;
    for (const k8s::DeviceResult& d : claim.allocation->devices) {
      if (!d.admin_access) ++held[fmt::format("{}/{}/{}", d.driver, d.pool, d.device)];
    }
  }
  std::vector<std::vector<uint32_t>> by_row(table.RowCount());
  for (auto& [key, slices] : pools) {
    int64_t newest = 0;
    for (const k8s::ResourceSlice* s : slices) newest = std::max(newest, s->pool.generation);
    std::erase_if(slices, [&](const k8s::ResourceSlice* s) { return s->pool.generation != newest; });
    std::sort(slices.begin(), slices.end(), [](auto* a, auto* b) { return a->name < b->name; });
    uint32_t pool = static_cast<uint32_t>(l.pools.size());
    l.pools.push_back({key.first, key.second, static_cast<int64_t>(slices.size()) != slices.front()->pool.slice_count});
    for (const k8s::ResourceSlice* s : slices) {
      std::optional<RowId> row;
      if (!s->node_name.empty()) row = table.FindNode(s->node_name);
      if (!s->node_name.empty() && !row) continue;  // a node the snapshot lacks
      std::vector<uint32_t> ids;
      for (const k8s::Device& d : s->devices) {
        uint32_t id = static_cast<uint32_t>(l.devices.size());
        auto holding = held.find(fmt::format("{}/{}/{}", s->driver, s->pool.name, d.name));
        int32_t holders = holding == held.end() ? 0 : holding->second;
        l.devices.push_back({s, &d, pool});
        holders_.push_back(holders);
        ids.push_back(id);
      }
      if (row) {
        by_row[*row].insert(by_row[*row].end(), ids.begin(), ids.end());
      } else if (s->all_nodes || s->node_selector) {
        l.shared.emplace_back(s, std::move(ids));
      }
    }
  }
  l.local_begin.reserve(by_row.size() + 1);
  for (const std::vector<uint32_t>& ids : by_row) {
    l.local_begin.push_back(static_cast<uint32_t>(l.local.size()));
    l.local.insert(l.local.end(), ids.begin(), ids.end());
  }
  l.local_begin.push_back(static_cast<uint32_t>(l.local.size()));
  layout_ = std::move(layout);
  std::vector<DeviceColumns::Ref> refs;
  refs.reserve(l.devices.size());
  for (const Device& d : l.devices) refs.push_back({d.slice->driver, d.device});
  if (reuse && reuse->Same(refs, storage.slices_version, how)) {
    columns_ = std::move(reuse);
  } else {
    columns_ = std::make_shared<const DeviceColumns>(std::move(refs), storage.slices_version, std::move(how));
  }
}

DeviceTable::DeviceTable(const DeviceTable& base, std::span<const ClaimDeviceChange> changes)
    : table_(base.table_),
      lineage_(base.lineage_),
      layout_(base.layout_),
      holders_(base.holders_),
      index_(base.index_),
      columns_(base.columns_) {
  {
    std::lock_guard<std::mutex> lock(base.mu_);
    combined_ = base.combined_;
    by_row_ = base.by_row_;
    capacity_ = base.capacity_;
  }
  if (changes.empty()) return;
  const std::unordered_map<std::string, uint32_t>& index = base.Index();
  index_ = base.index_;
  std::string key;
  for (const ClaimDeviceChange& c : changes) {
    key = fmt::format("{}/{}/{}", c.driver, c.pool, c.device);
    auto it = index.find(key);
    if (it == index.end()) continue;  // a device no slice lists (any more)
    holders_[it->second] += c.delta;
  }
}

bool DeviceTable::RowsOf(std::span<const ClaimDeviceChange> changes, std::vector<RowId>& rows) const {
  if (changes.empty()) return true;
  const std::unordered_map<std::string, uint32_t>& index = Index();
  std::string key;
  for (const ClaimDeviceChange& c : changes) {
    key = fmt::format("{}/{}/{}", c.driver, c.pool, c.device);
    auto it = index.find(key);
    if (it == index.end()) continue;
    const k8s::ResourceSlice& slice = *layout_->devices[it->second].slice;
    if (slice.node_name.empty()) return false;
    std::optional<RowId> row = table_.FindNode(slice.node_name);
    if (row) rows.push_back(*row);
  }
  return true;
}

const std::unordered_map<std::string, uint32_t>& DeviceTable::Index() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!index_) {
    auto index = std::make_shared<std::unordered_map<std::string, uint32_t>>();
    index->reserve(layout_->devices.size());
    for (uint32_t id = 0; id < layout_->devices.size(); ++id) {
      const Device& d = layout_->devices[id];
      index->emplace(fmt::format("{}/{}/{}", d.slice->driver, d.slice->pool.name, d.device->name), id);
    }
    index_ = std::move(index);
  }
  return *index_;
}

std::span<const uint32_t> DeviceTable::LocalDevices(RowId row) const {
  if (row + 1 >= layout_->local_begin.size()) return {};
  return std::span<const uint32_t>(layout_->local.data() + layout_->local_begin[row], layout_->local_begin[row + 1] - layout_->local_begin[row]);
}

std::vector<uint32_t> DeviceTable::DevicesOf(RowId row) const {
  std::vector<uint32_t> out;
  if (row + 1 < layout_->local_begin.size()) out.assign(layout_->local.begin() + layout_->local_begin[row], layout_->local.begin() + layout_->local_begin[row + 1]);
  for (const auto& [slice, ids] : layout_->shared) {
    bool reaches = slice->all_nodes;
    if (!reaches && slice->node_selector) {
      auto label = [&](std::string_view key) { return table_.LabelValue(key, row); };
      reaches = std::any_of(slice->node_selector->begin(), slice->node_selector->end(),
                            [&](const k8s::NodeSelectorTerm& t) { return k8s::TermMatches(t, label, table_.NodeName(row)); });
    }
    if (reaches) out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

std::shared_ptr<const DeviceTable::RowDevices> DeviceTable::ByRow() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!by_row_) {
    auto out = std::make_shared<RowDevices>();
    size_t rows = layout_->local_begin.empty() ? 0 : layout_->local_begin.size() - 1;
    out->begin.reserve(rows + 1);
    for (RowId row = 0; row < rows; ++row) {
      out->begin.push_back(static_cast<uint32_t>(out->ids.size()));
      std::vector<uint32_t> ids = DevicesOf(row);
      out->ids.insert(out->ids.end(), ids.begin(), ids.end());
    }
    out->begin.push_back(static_cast<uint32_t>(out->ids.size()));
    if (out->ids.empty()) out->ids.push_back(0);  // never read; a pointer to data all the same
    by_row_ = std::move(out);
  }
  return by_row_;
}

std::shared_ptr<const std::vector<uint8_t>> DeviceTable::InUse() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!in_use_) {
    auto out = std::make_shared<std::vector<uint8_t>>(std::max<size_t>(layout_->devices.size(), 1), 0);
    for (size_t i = 0; i < layout_->devices.size(); ++i) (*out)[i] = holders_[i] > 0 ? 1 : 0;
    in_use_ = std::move(out);
  }
  return in_use_;
}

std::shared_ptr<const std::vector<int64_t>> DeviceTable::Capacity(const std::string& qualified_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (capacity_.size() >= kMaxSelectors && !capacity_.contains(qualified_name)) capacity_.clear();  // bounded
  std::shared_ptr<const std::vector<int64_t>>& kept = capacity_[qualified_name];
  if (!kept) {
    auto out = std::make_shared<std::vector<int64_t>>(std::max<size_t>(layout_->devices.size(), 1), 0);
    for (size_t i = 0; i < layout_->devices.size(); ++i) {
      for (const auto& [name, q] : layout_->devices[i].device->capacity) {
        if (name == qualified_name) (*out)[i] = q.MilliValue();  // as the interpreter reads it
      }
    }
    kept = std::move(out);
  }
  return kept;
}

std::shared_ptr<const std::vector<int8_t>> DeviceTable::Combined(const std::vector<std::string>& expressions,
                                                                 const SelectorDecider& fallback) const {
  std::string key;
  for (const std::string& e : expressions) key += e + '\0';
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = combined_.find(key);
    if (it != combined_.end()) return it->second;
  }
  std::vector<std::shared_ptr<const Verdicts>> each;
  for (const std::string& e : expressions) each.push_back(Selector(e, fallback));
  auto out = std::make_shared<std::vector<int8_t>>(layout_->devices.size(), 1);
  for (uint32_t i = 0; i < layout_->devices.size(); ++i) {
    for (const auto& v : each) {
      if (v->match[i] != 1) {
        (*out)[i] = v->match[i];
        break;
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (combined_.size() >= kMaxSelectors) combined_.clear();
  return combined_.emplace(std::move(key), std::move(out)).first->second;
}

}  // namespace policy::rt
