#pragma once
/// The snapshot's DRA devices as a table: one row per device of each pool's
/// newest generation, with its slice, pool and whether an allocated claim
/// holds it; per node the rows of its node-local slices, in driver, pool,
/// slice and device order. A CEL selector is evaluated over every row at
/// once, at its first ask, and its answers are kept (one byte a device, in
/// DeviceColumns, which outlive this table while the slices stay), so
/// deciding a pod reads a node's devices and their verdicts by index.
///
/// Built from a NodeTable's storage objects and rows (NodeTable::Devices()
/// keeps one until the storage or the nodes change); safe to read from
/// several threads.

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/dra.h"
#include "runtime/columnar/device_columns.h"
#include "runtime/columnar/storage_objects.h"

namespace policy::rt {

class NodeTable;
using RowId = uint32_t;

class DeviceTable {
 public:
  struct Device {
    const k8s::ResourceSlice* slice = nullptr;
    const k8s::Device* device = nullptr;
    uint32_t pool = 0;  ///< index into pools
  };
  struct Pool {
    std::string_view driver, name;
    bool incomplete = false;  ///< its newest generation has not every slice it counts
  };
  using Verdicts = SelectorVerdicts;

  /// `reuse`: the columns of the table this one replaces, kept when the
  /// devices are the same (device_columns.h); `how` decides selectors.
  DeviceTable(const StorageObjects& storage, const NodeTable& table, std::shared_ptr<const DeviceColumns> reuse = nullptr,
              DeviceSelectors how = {});
  /// `base` with the devices `changes` took or gave back (the same slices
  /// and nodes): its devices, pools and rows shared, a counter a device
  /// copied, O(changes) looked up, nothing evaluated again (its selectors'
  /// answers are shared).
  DeviceTable(const DeviceTable& base, std::span<const ClaimDeviceChange> changes);

  const std::vector<Device>& Devices() const { return layout_->devices; }
  /// Whether an allocated claim holds device `id` (not with admin access).
  bool InUse(uint32_t id) const { return holders_[id] > 0; }
  /// Tables derived from one build (the constructor from `base`) share a
  /// lineage, unique in the process; Position() is how many of the
  /// NodeTable's claim device changes (NodeTable::ClaimDeviceChanges) the
  /// table reflects. A reader that kept answers of an older table of the
  /// same lineage brings them up to date from the changes in between.
  uint64_t Lineage() const { return lineage_; }
  size_t Position() const { return position_; }
  /// The rows whose node-local devices `changes` took or gave back, added
  /// to `rows`; false when one is a shared slice's (every row it reaches
  /// may answer otherwise). Devices no slice lists are no row's.
  bool RowsOf(std::span<const ClaimDeviceChange> changes, std::vector<RowId>& rows) const;
  const std::vector<Pool>& Pools() const { return layout_->pools; }
  /// The devices `row` can use: its node-local slices' devices, then those
  /// of shared slices (nodeSelector, allNodes) that reach it.
  std::vector<uint32_t> DevicesOf(RowId row) const;
  /// Its node-local devices alone, and whether any shared slice exists.
  std::span<const uint32_t> LocalDevices(RowId row) const;
  bool HasShared() const { return !layout_->shared.empty(); }
  /// `expression` on every device (decided at the first ask, by the
  /// table's decider else `fallback`, and kept while the ResourceSlices
  /// stay: by DeviceColumns).
  std::shared_ptr<const Verdicts> Selector(const std::string& expression, const SelectorDecider& fallback) const {
    return columns_->Selector(expression, fallback);
  }
  const std::shared_ptr<const DeviceColumns>& Columns() const { return columns_; }
  /// Every one of `expressions` in order (a class's selectors, then a
  /// request's), per device: 1 all match, 0 one does not (before any
  /// fails), -1 one fails first. Kept like Selector's.
  std::shared_ptr<const std::vector<int8_t>> Combined(const std::vector<std::string>& expressions,
                                                      const SelectorDecider& fallback) const;

  /// For native kernels (`node.devices` in a policy): every row's devices
  /// as DevicesOf gives them, row r's at ids[begin[r] .. begin[r + 1]);
  /// whether each device is in use; a capacity of each device in
  /// milli-units (0 where it has none). Built at the first ask, kept.
  struct RowDevices {
    std::vector<uint32_t> begin, ids;
  };
  std::shared_ptr<const RowDevices> ByRow() const;
  std::shared_ptr<const std::vector<uint8_t>> InUse() const;
  std::shared_ptr<const std::vector<int64_t>> Capacity(const std::string& qualified_name) const;

 private:
  // Each device's id by `driver/pool/device` (built at the first change,
  // shared by the tables derived from this one).
  const std::unordered_map<std::string, uint32_t>& Index() const;

  friend class NodeTable;  // sets position_

  const NodeTable& table_;
  uint64_t lineage_ = 0;
  size_t position_ = 0;
  // What tables derived from one build share: the devices and where they are.
  struct Layout {
    std::vector<Device> devices;
    std::vector<Pool> pools;
    std::vector<uint32_t> local_begin;  ///< per row: first of its local devices in local
    std::vector<uint32_t> local;        ///< device ids grouped by row
    std::vector<std::pair<const k8s::ResourceSlice*, std::vector<uint32_t>>> shared;  ///< slice, its devices
  };
  std::shared_ptr<const Layout> layout_;
  std::vector<int32_t> holders_;  ///< per device: allocated claims holding it (in use: > 0)
  mutable std::shared_ptr<const std::unordered_map<std::string, uint32_t>> index_;
  std::shared_ptr<const DeviceColumns> columns_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, std::shared_ptr<const std::vector<int8_t>>> combined_;
  mutable std::shared_ptr<const RowDevices> by_row_;
  mutable std::shared_ptr<const std::vector<uint8_t>> in_use_;
  mutable std::unordered_map<std::string, std::shared_ptr<const std::vector<int64_t>>> capacity_;
};

}  // namespace policy::rt
