#pragma once
/// A compact binary form of the decoded Kubernetes objects a snapshot
/// holds (what ClusterVisitor receives), for the snapshot cache
/// (runtime/columnar/snapshot_cache.h). Every field is written, spans
/// excepted (a cached object points into no file). Reading is bounds
/// checked: a short or damaged archive makes the reader fail, never read
/// past its end or build a wrong object silently — the cache's checksum
/// catches damage first.

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/dra.h"
#include "k8s/objects.h"

namespace policy::k8s {

class ArchiveWriter {
 public:
  void U64(uint64_t v);
  /// A signed integer, zigzagged so that small negatives stay short.
  void I64(int64_t v);
  void Str(std::string_view s);
  void Put(const Node& v);
  void Put(const Pod& v);
  void Put(const Namespace& v);
  void Put(const SelectorOwner& v);
  void Put(const PersistentVolumeClaim& v);
  void Put(const PersistentVolume& v);
  void Put(const StorageClass& v);
  void Put(const CsiNode& v);
  void Put(const PriorityClass& v);
  void Put(const PodDisruptionBudget& v);
  void Put(const PodAffinityTerm& v);
  void Put(const HostPort& v);
  void Put(const Volume& v);
  void Put(const DeviceClass& v);
  void Put(const ResourceSlice& v);
  void Put(const ResourceClaim& v);
  void Put(const ResourceClaimTemplate& v);
  const std::string& Bytes() const { return out_; }
  std::string& MutableBytes() { return out_; }

 private:
  std::string out_;
};

class ArchiveReader {
 public:
  explicit ArchiveReader(std::string_view bytes) : in_(bytes) {}
  /// False once anything could not be read (then every later read fails too).
  bool Ok() const { return ok_; }
  bool AtEnd() const { return at_ == in_.size(); }
  size_t Position() const { return at_; }
  size_t Remaining() const { return in_.size() - at_; }
  uint64_t U64();
  int64_t I64();
  std::string Str();
  /// A string as Str reads it, as a view of the archive's bytes (no copy).
  std::string_view View();
  bool Get(Node& v);
  bool Get(Pod& v);
  bool Get(Namespace& v);
  bool Get(SelectorOwner& v);
  bool Get(PersistentVolumeClaim& v);
  bool Get(PersistentVolume& v);
  bool Get(StorageClass& v);
  bool Get(CsiNode& v);
  bool Get(PriorityClass& v);
  bool Get(PodDisruptionBudget& v);
  bool Get(PodAffinityTerm& v);
  bool Get(HostPort& v);
  bool Get(Volume& v);
  bool Get(DeviceClass& v);
  bool Get(ResourceSlice& v);
  bool Get(ResourceClaim& v);
  bool Get(ResourceClaimTemplate& v);

 private:
  std::string_view in_;
  size_t at_ = 0;
  bool ok_ = true;
  friend struct ArchiveIo;
};

}  // namespace policy::k8s
