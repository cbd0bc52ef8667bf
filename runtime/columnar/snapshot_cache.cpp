// The snapshot cache (snapshot_cache.h). Layout of a cache file:
//
//   "PLCYSNAP"  u32 format  then varints: input size, input mtime (ns),
//   head+tail hash, policyc binary size, its mtime (ns), payload length,
//   payload checksum; then the payload: records `tag object` (tag 0 ends
//   them), the read statistics (objects, then each skipped kind and count).

#include "runtime/columnar/snapshot_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string_view>

namespace policy::rt {
namespace {

constexpr char kMagic[8] = {'P', 'L', 'C', 'Y', 'S', 'N', 'A', 'P'};
// Bump when the payload's layout or what the decoders make of a file changes.
constexpr uint32_t kFormat = 1;
constexpr size_t kEdge = 64 * 1024;  // the head and the tail hashed

enum Tag : uint64_t { kEnd = 0, kNode, kPod, kNamespace, kOwner, kClaim, kVolume, kClass, kCsiNode, kPriorityClass };

// 64-bit hash, eight bytes at a time (a damaged cache, not an adversary).
uint64_t Hash(std::string_view bytes, uint64_t h = 0x9e3779b97f4a7c15ULL) {
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<uint8_t>(bytes[i])) * 0x100000001b3ULL;
  return h ^ (h >> 31);
}

struct Key {
  uint64_t size = 0, mtime = 0, edges = 0, exe_size = 0, exe_mtime = 0;
  bool operator==(const Key&) const = default;
};

uint64_t MtimeNs(const struct stat& st) {
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL + static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

// The key of `path` as it is now; nullopt when it cannot be read.
std::optional<Key> KeyOf(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  Key key;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) {
    key.size = static_cast<uint64_t>(st.st_size);
    key.mtime = MtimeNs(st);
    std::string edge(std::min<uint64_t>(kEdge, key.size), '\0');
    ok = ::pread(fd, edge.data(), edge.size(), 0) == static_cast<ssize_t>(edge.size());
    key.edges = Hash(edge);
    if (ok && key.size > kEdge) {
      off_t from = static_cast<off_t>(key.size - std::min<uint64_t>(kEdge, key.size - kEdge));
      edge.resize(key.size - static_cast<uint64_t>(from));
      ok = ::pread(fd, edge.data(), edge.size(), from) == static_cast<ssize_t>(edge.size());
      key.edges = Hash(edge, key.edges);
    }
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  struct stat exe;
  if (::stat("/proc/self/exe", &exe) == 0) {
    key.exe_size = static_cast<uint64_t>(exe.st_size);
    key.exe_mtime = MtimeNs(exe);
  }
  return key;
}

// The cache file mapped read-only (no copy, no zeroed buffer: the pages
// come from the page cache as the replay reads them); empty when it cannot
// be opened or mapped. A cache is only ever replaced by a rename
// (WriteCache), never rewritten in place, so the mapped pages stay as the
// checksum found them; nothing decoded keeps a view into them.
class Mapped {
 public:
  explicit Mapped(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* at = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (at != MAP_FAILED) {
        ::madvise(at, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL | MADV_WILLNEED);
        bytes_ = std::string_view(static_cast<const char*>(at), static_cast<size_t>(st.st_size));
      }
    }
    ::close(fd);
  }
  ~Mapped() {
    if (!bytes_.empty()) ::munmap(const_cast<char*>(bytes_.data()), bytes_.size());
  }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  std::string_view Bytes() const { return bytes_; }

 private:
  std::string_view bytes_;
};

template <class T, class Call>
bool Next(k8s::ArchiveReader& in, Call call) {
  T object;
  if (!in.Get(object)) return false;
  call(std::move(object));
  return true;
}

// One record decoded and handed to the visitor; false on damage or an unknown tag.
bool ReplayRecord(k8s::ArchiveReader& in, uint64_t tag, k8s::ClusterVisitor& v) {
  switch (tag) {
    case kNode: return Next<k8s::Node>(in, [&](auto&& o) { v.OnNode(std::move(o), {}); });
    case kPod: return Next<k8s::Pod>(in, [&](auto&& o) { v.OnPod(std::move(o), {}); });
    case kNamespace: return Next<k8s::Namespace>(in, [&](auto&& o) { v.OnNamespace(std::move(o), {}); });
    case kOwner: return Next<k8s::SelectorOwner>(in, [&](auto&& o) { v.OnSelectorOwner(std::move(o), {}); });
    case kClaim: return Next<k8s::PersistentVolumeClaim>(in, [&](auto&& o) { v.OnClaim(std::move(o), {}); });
    case kVolume: return Next<k8s::PersistentVolume>(in, [&](auto&& o) { v.OnVolume(std::move(o), {}); });
    case kClass: return Next<k8s::StorageClass>(in, [&](auto&& o) { v.OnStorageClass(std::move(o), {}); });
    case kCsiNode: return Next<k8s::CsiNode>(in, [&](auto&& o) { v.OnCsiNode(std::move(o), {}); });
    case kPriorityClass: return Next<k8s::PriorityClass>(in, [&](auto&& o) { v.OnPriorityClass(std::move(o), {}); });
    default: return false;
  }
}

}  // namespace

std::string CachePath(const std::string& path) { return path + ".policyc-cache"; }

CacheLoad ReplayCache(const std::string& path, k8s::ClusterVisitor& visitor, k8s::ClusterReadStats& stats) {
  std::optional<Key> now = KeyOf(path);
  if (!now) return CacheLoad::kMiss;
  Mapped file(CachePath(path));
  std::string_view rest = file.Bytes();
  if (rest.size() < sizeof kMagic + 4 || std::memcmp(rest.data(), kMagic, sizeof kMagic) != 0) return CacheLoad::kMiss;
  uint32_t format;
  std::memcpy(&format, rest.data() + sizeof kMagic, 4);
  if (format != kFormat) return CacheLoad::kMiss;
  rest.remove_prefix(sizeof kMagic + 4);
  k8s::ArchiveReader header(rest);
  Key key{header.U64(), header.U64(), header.U64(), header.U64(), header.U64()};
  uint64_t length = header.U64(), checksum = header.U64();
  if (!header.Ok() || !(key == *now) || rest.size() - header.Position() != length) return CacheLoad::kMiss;
  std::string_view payload = rest.substr(header.Position());
  if (Hash(payload) != checksum) return CacheLoad::kMiss;

  return ReplayPayload(payload, visitor, stats);
}

CacheLoad ReplayPayload(std::string_view payload, k8s::ClusterVisitor& visitor, k8s::ClusterReadStats& stats) {
  // Replayed record by record. A record that cannot be decoded past a good
  // checksum means a damaged build, not a damaged file: the visitor has seen
  // part of the snapshot, so the load must fail.
  k8s::ArchiveReader in(payload);
  bool any = false;
  for (uint64_t tag = in.U64(); tag != kEnd; tag = in.U64()) {
    if (!in.Ok() || !ReplayRecord(in, tag, visitor)) return any ? CacheLoad::kDamaged : CacheLoad::kMiss;
    any = true;
  }
  k8s::ClusterReadStats read;
  read.objects = in.U64();
  for (uint64_t kinds = in.U64(); in.Ok() && kinds > 0; --kinds) {
    std::string kind = in.Str();
    read.skipped_kinds[kind] += in.U64();
  }
  if (!in.Ok() || !in.AtEnd()) return any ? CacheLoad::kDamaged : CacheLoad::kMiss;
  stats.Add(read);
  return CacheLoad::kLoaded;
}

// Each call: the object written after its tag, then handed on.
template <class T>
void Record(k8s::ArchiveWriter& archive, uint64_t tag, T&& v, Span where, k8s::ClusterVisitor& next,
            void (k8s::ClusterVisitor::*on)(T&&, Span)) {
  archive.U64(tag);
  archive.Put(v);
  (next.*on)(std::move(v), where);
}

void RecordingVisitor::OnNode(k8s::Node&& v, Span w) { Record(archive_, kNode, std::move(v), w, next_, &ClusterVisitor::OnNode); }
void RecordingVisitor::OnPod(k8s::Pod&& v, Span w) { Record(archive_, kPod, std::move(v), w, next_, &ClusterVisitor::OnPod); }
void RecordingVisitor::OnNamespace(k8s::Namespace&& v, Span w) {
  Record(archive_, kNamespace, std::move(v), w, next_, &ClusterVisitor::OnNamespace);
}
void RecordingVisitor::OnSelectorOwner(k8s::SelectorOwner&& v, Span w) {
  Record(archive_, kOwner, std::move(v), w, next_, &ClusterVisitor::OnSelectorOwner);
}
void RecordingVisitor::OnClaim(k8s::PersistentVolumeClaim&& v, Span w) {
  Record(archive_, kClaim, std::move(v), w, next_, &ClusterVisitor::OnClaim);
}
void RecordingVisitor::OnVolume(k8s::PersistentVolume&& v, Span w) {
  Record(archive_, kVolume, std::move(v), w, next_, &ClusterVisitor::OnVolume);
}
void RecordingVisitor::OnStorageClass(k8s::StorageClass&& v, Span w) {
  Record(archive_, kClass, std::move(v), w, next_, &ClusterVisitor::OnStorageClass);
}
void RecordingVisitor::OnCsiNode(k8s::CsiNode&& v, Span w) {
  Record(archive_, kCsiNode, std::move(v), w, next_, &ClusterVisitor::OnCsiNode);
}
void RecordingVisitor::OnPriorityClass(k8s::PriorityClass&& v, Span w) {
  Record(archive_, kPriorityClass, std::move(v), w, next_, &ClusterVisitor::OnPriorityClass);
}

bool WriteCache(const std::string& path, RecordingVisitor& recording, const k8s::ClusterReadStats& stats) {
  std::optional<Key> key = KeyOf(path);
  if (!key) return false;
  k8s::ArchiveWriter& payload = recording.Archive();
  payload.U64(kEnd);
  payload.U64(stats.objects);
  payload.U64(stats.skipped_kinds.size());
  for (const auto& [kind, count] : stats.skipped_kinds) {
    payload.Str(kind);
    payload.U64(count);
  }
  k8s::ArchiveWriter header;
  for (uint64_t v : {key->size, key->mtime, key->edges, key->exe_size, key->exe_mtime,
                     static_cast<uint64_t>(payload.Bytes().size()), Hash(payload.Bytes())}) {
    header.U64(v);
  }
  std::string tmp = CachePath(path) + ".tmp" + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  uint32_t format = kFormat;
  bool ok = std::fwrite(kMagic, 1, sizeof kMagic, f) == sizeof kMagic && std::fwrite(&format, 4, 1, f) == 1 &&
            std::fwrite(header.Bytes().data(), 1, header.Bytes().size(), f) == header.Bytes().size() &&
            std::fwrite(payload.Bytes().data(), 1, payload.Bytes().size(), f) == payload.Bytes().size();
  ok = std::fclose(f) == 0 && ok;
  // The file may have changed while it was read: then this cache is not of it.
  std::optional<Key> after = KeyOf(path);
  if (!ok || !after || !(*after == *key) || std::rename(tmp.c_str(), CachePath(path).c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace policy::rt
