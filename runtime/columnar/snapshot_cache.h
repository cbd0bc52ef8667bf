#pragma once
/// The snapshot cache (docs/cache.md): a snapshot file, once loaded, is kept
/// beside it as `FILE.policyc-cache` — the decoded objects the loader saw,
/// in order, in a compact binary form — and the next load replays them
/// instead of parsing the file: the same ClusterVisitor calls, so the same
/// table, built by the same code.
///
/// A cache is used only for the file exactly as it was: its size, its
/// modification time and a hash of its first and last 64 KiB, and the
/// policyc binary that wrote it (its size and modification time), must all
/// match; the payload carries its length and a checksum. Anything else — a
/// different or damaged cache, an older format — is a miss, and the file is
/// parsed and the cache written again. Loads with any diagnostic (a warning
/// too) are not cached, so a cached load says exactly what a parse says.
/// The cache is written to a temporary file and renamed into place; a
/// directory that cannot be written to just gets no cache.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/k8s/cluster_reader.h"
#include "compiler/k8s/object_archive.h"

namespace policy::rt {

struct CacheOptions {
  bool enabled = false;
  /// Files smaller than this are parsed every time (parsing them is as fast
  /// as reading a cache); POLICYC_CACHE_MIN_BYTES overrides it (tests).
  uint64_t min_bytes = uint64_t{1} << 20;
};

/// The cache file of snapshot file `path`.
std::string CachePath(const std::string& path);

enum class CacheLoad : uint8_t {
  kMiss,     ///< no cache of the file as it is now (nothing was replayed)
  kLoaded,   ///< replayed whole
  kDamaged,  ///< a cache that passed its checks could not be read whole: part was replayed
};

/// Replays the cache of `path` into `visitor` (and its read statistics into
/// `stats`) when one for the file as it is now exists.
CacheLoad ReplayCache(const std::string& path, k8s::ClusterVisitor& visitor, k8s::ClusterReadStats& stats);

/// The payload part of ReplayCache (after the key, length and checksum
/// checks): what the fuzzer feeds damaged bytes to.
CacheLoad ReplayPayload(std::string_view payload, k8s::ClusterVisitor& visitor, k8s::ClusterReadStats& stats);

/// Forwards every call to `next` and keeps a copy of each object, to be
/// written as a cache after a clean load.
class RecordingVisitor final : public k8s::ClusterVisitor {
 public:
  explicit RecordingVisitor(k8s::ClusterVisitor& next) : next_(next) {}
  void OnNode(k8s::Node&& v, Span where) override;
  void OnPod(k8s::Pod&& v, Span where) override;
  void OnNamespace(k8s::Namespace&& v, Span where) override;
  void OnSelectorOwner(k8s::SelectorOwner&& v, Span where) override;
  void OnClaim(k8s::PersistentVolumeClaim&& v, Span where) override;
  void OnVolume(k8s::PersistentVolume&& v, Span where) override;
  void OnStorageClass(k8s::StorageClass&& v, Span where) override;
  void OnCsiNode(k8s::CsiNode&& v, Span where) override;
  void OnPriorityClass(k8s::PriorityClass&& v, Span where) override;
  k8s::ArchiveWriter& Archive() { return archive_; }

 private:
  k8s::ClusterVisitor& next_;
  k8s::ArchiveWriter archive_;
};

/// Writes what `recording` saw of `path` (and its statistics) as the
/// file's cache; false when it could not (no cache then).
bool WriteCache(const std::string& path, RecordingVisitor& recording, const k8s::ClusterReadStats& stats);

}  // namespace policy::rt
