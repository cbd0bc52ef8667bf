#pragma once
/// The snapshot cache (docs/cache.md): a snapshot, once loaded, is kept in
/// the user's cache folder (`$XDG_CACHE_HOME/policyc`, else
/// `~/.cache/policyc`), named by its files' absolute paths — the table's image
/// (NodeTable::WriteImage) and what the load reported — and the next load
/// of the same files reads that image instead of parsing them: the node
/// columns and dictionaries come as arrays, the bound pods as the table
/// held them, nothing is decoded from Kubernetes objects again.
///
/// A cache is used only for the files exactly as they were: for each, its
/// size, its modification time and a hash of its first and last 64 KiB, and
/// the policyc binary that wrote it (its size and modification time), must
/// all match; the payload carries its length and a checksum. Anything else
/// — a different or damaged cache, an older format, an image that does not
/// read back whole — is a miss, and the files are parsed and the cache
/// written again. A load's warnings are kept in its cache and said again
/// on every hit, pointing into the files as a parse points (the files are
/// then mapped, not parsed); a load with an error is not cached. The cache is written to
/// a temporary file and renamed into place; a folder that cannot be made or
/// written to just gets no cache. Nothing is written beside the snapshot.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/objects.h"
#include "support/diagnostic.h"
#include "runtime/columnar/node_table.h"

namespace policy::rt {

struct LoadReport;

struct CacheOptions {
  bool enabled = false;
  /// Snapshots smaller than this are parsed every time (parsing them is as
  /// fast as reading a cache); POLICYC_CACHE_MIN_BYTES overrides it (tests).
  uint64_t min_bytes = uint64_t{1} << 20;
  /// The folder caches are kept in (DefaultCacheDir()); empty: no cache.
  std::string dir;
  /// Called when a write made the folder (the first cache there), with it.
  std::function<void(const std::string& dir)> made_dir;
};

/// `$XDG_CACHE_HOME/policyc`, else `$HOME/.cache/policyc`; empty when
/// neither variable is set.
std::string DefaultCacheDir();

/// The cache file, in `dir`, of a snapshot of the files `paths`: named by a
/// hash of their absolute paths (what they hold is checked inside).
std::string CachePath(const std::string& dir, const std::vector<std::string>& paths);

/// A warning of the load a cache was written from. Its labels' spans have
/// no source: `files` holds, per label (the primary, then each secondary),
/// the index of the snapshot file it points into, or -1 for none.
struct CachedWarning {
  Diagnostic diagnostic;
  std::vector<int64_t> files;
};

/// The table of the cache of snapshot files `paths` in `options.dir`, with
/// `report` and `warnings` as the load that wrote it filled them; null when
/// there is no cache of those files as they are now.
std::unique_ptr<NodeTable> ReadCache(const CacheOptions& options, const std::vector<std::string>& paths,
                                     LoadReport& report, std::vector<CachedWarning>& warnings);

/// The payload part of ReadCache (after the key, length and checksum
/// checks): what the fuzzer feeds damaged bytes to.
std::unique_ptr<NodeTable> ReadPayload(std::string_view payload, LoadReport& report,
                                       std::vector<CachedWarning>& warnings);

/// Writes `table`, `report` and `warnings`, what a load of `paths` made, as
/// their cache in `options.dir` (made when missing); `sources` are the
/// files as read, in the order of `paths` (what the warnings' spans point
/// into). False when it could not (no cache then), or when a warning points
/// elsewhere.
bool WriteCache(const CacheOptions& options, const std::vector<std::string>& paths, const NodeTable& table,
                const LoadReport& report, const std::vector<Diagnostic>& warnings,
                const std::vector<const Source*>& sources);

/// A snapshot's objects as the commands that move or re-place bound pods
/// need them whole (the table keeps only what filters and scores read):
/// every Node, in input order, and every pod bound to a node and not
/// finished, in input order.
struct SnapshotObjectList {
  std::vector<k8s::Node> nodes;
  std::vector<k8s::Pod> bound;
};

/// The objects cache of snapshot files `paths` in `dir` (beside their
/// snapshot cache, named as it is, ending `.objects`).
std::string ObjectCachePath(const std::string& dir, const std::vector<std::string>& paths);
/// Reads the objects cache of `paths` into `out`; false (and `out`
/// unchanged) when there is none of those files as they are now, or it
/// does not read back whole. Keyed and checked as the snapshot cache is.
/// Without `pods_too`, the nodes alone (`bound` left empty).
bool ReadObjectCache(const CacheOptions& options, const std::vector<std::string>& paths, SnapshotObjectList& out,
                     bool pods_too = true);
/// Writes `objects`, read from `paths`, as their objects cache.
bool WriteObjectCache(const CacheOptions& options, const std::vector<std::string>& paths,
                      const SnapshotObjectList& objects);

}  // namespace policy::rt
