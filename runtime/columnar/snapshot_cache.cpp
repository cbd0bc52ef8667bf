// The snapshot cache (snapshot_cache.h). Layout of a cache file:
//
//   "PLCYSNAP"  u32 format  then varints: the number of snapshot files, per
//   file (kKeyFields) its device, inode, size, mtime and ctime (ns), head+tail
//   hash, the hash of its whole content when it was written racily (else
//   0), the policyc binary's size and mtime (ns); the payload length, the
//   payload checksum; then the payload:
//   the table's image (NodeTable::WriteImage), then the load's report — the
//   read statistics (objects, each skipped kind and count), its counts, and
//   the Pending pods (objects, as the archive writes them), then the load's
//   warnings.
//
// The objects cache beside it (`.objects`, for the commands that need whole
// objects: drain, serve --cluster, check of a bound pod): "PLCYOBJS", its
// u32 format and the same header, then the payload: the Node objects and
// the bound pods, each a count and the objects as the archive writes them.

#include "runtime/columnar/snapshot_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "k8s/object_archive.h"
#include "runtime/columnar/cluster_loader.h"

namespace policy::rt {
namespace {

constexpr char kMagic[8] = {'P', 'L', 'C', 'Y', 'S', 'N', 'A', 'P'};
// Bump when the payload's layout or what the decoders make of a file changes.
constexpr uint32_t kFormat = 9;  // 7: node facts hashed by line; 8: files keyed as git's index keys them; 9: warnings
constexpr size_t kEdge = 64 * 1024;  // the head and the tail hashed
// The objects cache: the snapshot's Node objects and bound pods, whole.
constexpr char kObjectsMagic[8] = {'P', 'L', 'C', 'Y', 'O', 'B', 'J', 'S'};
constexpr uint32_t kObjectsFormat = 1;

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

// A file as the cache is keyed with it, as git's index keys a file: where
// it is (device, inode), its size, its mtime and ctime to the nanosecond (a
// write changes the ctime, and no one can set it back), and its head and
// tail hashed. A file changed within kRacy of the cache being written could
// change again within one tick of the clock unseen (git's "racily clean"
// files): for such a file the whole content is hashed too, and checked on
// every read.
struct Key {
  uint64_t dev = 0, ino = 0, size = 0, mtime = 0, ctime = 0, edges = 0, content = 0, exe_size = 0, exe_mtime = 0;
  bool operator==(const Key&) const = default;
};
constexpr size_t kKeyFields = 9;
constexpr int64_t kRacy = 2'000'000'000;  // ns

uint64_t Ns(const struct timespec& t) {
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ULL + static_cast<uint64_t>(t.tv_nsec);
}
uint64_t MtimeNs(const struct stat& st) { return Ns(st.st_mtim); }

// The hash of a whole file (nonzero), read in chunks; 0 when it cannot be read.
uint64_t ContentHash(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::string chunk(size_t{1} << 20, '\0');
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd, chunk.data(), chunk.size(), at);
    if (n < 0) {
      ::close(fd);
      return 0;
    }
    if (n == 0) break;
    h = Hash(std::string_view(chunk.data(), static_cast<size_t>(n)), h);
    at += n;
  }
  ::close(fd);
  return h | 1;
}

// Whether `key` was changed too recently to trust its times alone.
bool Racy(const Key& key) {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(Ns(now) - std::max(key.mtime, key.ctime)) < kRacy;
}

// The key of `path` as it is now; nullopt when it cannot be read.
std::optional<Key> KeyOf(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  Key key;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) {
    key.dev = static_cast<uint64_t>(st.st_dev);
    key.ino = static_cast<uint64_t>(st.st_ino);
    key.size = static_cast<uint64_t>(st.st_size);
    key.mtime = MtimeNs(st);
    key.ctime = Ns(st.st_ctim);
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
// come from the page cache as the image is read); empty when it cannot
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

// The keys of `paths` as they are now, written as a cache's header holds
// them; nullopt when one cannot be read.
std::optional<std::vector<Key>> KeysOf(const std::vector<std::string>& paths) {
  std::vector<Key> keys;
  for (const std::string& path : paths) {
    std::optional<Key> key = KeyOf(path);
    if (!key) return std::nullopt;
    keys.push_back(*key);
  }
  return keys;
}

// The keys a cache of `paths` is written with: as they are now, and the
// whole content hashed of each file changed too recently to trust its
// times; nullopt when one cannot be read (no cache then).
std::optional<std::vector<Key>> KeysFor(const CacheOptions& options, const std::vector<std::string>& paths) {
  std::optional<std::vector<Key>> keys = KeysOf(paths);
  if (!keys || paths.empty() || options.dir.empty()) return std::nullopt;
  for (size_t i = 0; i < keys->size(); ++i) {
    if (Racy((*keys)[i]) && ((*keys)[i].content = ContentHash(paths[i])) == 0) return std::nullopt;
  }
  return keys;
}

// The payload of a cache file's bytes when it is of `magic` and `format`
// and of the files `paths` exactly as they are now, whole (its length and
// checksum); nullopt otherwise.
std::optional<std::string_view> PayloadOf(std::string_view rest, const char (&magic)[8], uint32_t format_wanted,
                                          const std::vector<std::string>& paths) {
  std::optional<std::vector<Key>> now = KeysOf(paths);
  if (!now) return std::nullopt;
  if (rest.size() < sizeof magic + 4 || std::memcmp(rest.data(), magic, sizeof magic) != 0) return std::nullopt;
  uint32_t format;
  std::memcpy(&format, rest.data() + sizeof magic, 4);
  if (format != format_wanted) return std::nullopt;
  rest.remove_prefix(sizeof magic + 4);
  k8s::ArchiveReader header(rest);
  if (header.U64() != now->size()) return std::nullopt;
  for (size_t i = 0; i < now->size(); ++i) {
    Key was;
    for (uint64_t* v : {&was.dev, &was.ino, &was.size, &was.mtime, &was.ctime, &was.edges, &was.content, &was.exe_size,
                        &was.exe_mtime}) {
      *v = header.U64();
    }
    Key key = (*now)[i];
    key.content = was.content;  // checked below, when there is one
    if (!(was == key)) return std::nullopt;
    if (was.content != 0 && ContentHash(paths[i]) != was.content) return std::nullopt;
  }
  uint64_t length = header.U64(), checksum = header.U64();
  if (!header.Ok() || rest.size() - header.Position() != length) return std::nullopt;
  std::string_view payload = rest.substr(header.Position());
  if (Hash(payload) != checksum) return std::nullopt;
  return payload;
}

// Writes a cache file at `path`: `magic`, `format`, the files' `keys`, the
// payload's length and checksum, the payload; into a temporary file renamed
// into place, and only when no file changed while it was read.
bool WriteKeyed(const CacheOptions& options, const std::string& path, const char (&magic)[8], uint32_t format,
                const std::vector<std::string>& paths, const std::vector<Key>& keys, std::string_view payload) {
  k8s::ArchiveWriter header;
  header.U64(keys.size());
  for (const Key& key : keys) {
    for (uint64_t v : {key.dev, key.ino, key.size, key.mtime, key.ctime, key.edges, key.content, key.exe_size, key.exe_mtime}) {
      header.U64(v);
    }
  }
  header.U64(payload.size());
  header.U64(Hash(payload));
  std::error_code ec;
  bool made = std::filesystem::create_directories(options.dir, ec);
  if (ec) return false;
  if (made && options.made_dir) options.made_dir(options.dir);
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(magic, 1, sizeof magic, f) == sizeof magic && std::fwrite(&format, 4, 1, f) == 1 &&
            std::fwrite(header.Bytes().data(), 1, header.Bytes().size(), f) == header.Bytes().size() &&
            std::fwrite(payload.data(), 1, payload.size(), f) == payload.size();
  ok = std::fclose(f) == 0 && ok;
  // A file may have changed while it was read: then this cache is not of it.
  std::optional<std::vector<Key>> after = KeysOf(paths);
  for (size_t i = 0; after && i < after->size(); ++i) (*after)[i].content = keys[i].content;
  if (!ok || !after || *after != keys || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

// The report's counts, in one place for writing and reading.
template <class R, class F>
void Counts(R& r, F f) {
  for (auto* n : {&r.nodes, &r.pods_bound, &r.pods_not_bound, &r.pods_finished, &r.pods_unknown_node, &r.namespaces,
                    &r.selector_owners, &r.claims, &r.volumes, &r.storage_classes, &r.csi_nodes, &r.priority_classes,
                    &r.budgets, &r.device_classes, &r.resource_slices, &r.resource_claims, &r.claim_templates,
                    &r.pods_with_pod_affinity}) {
    f(*n);
  }
}

// A label as the cache holds it: its file's index + 1 (0: no span), its
// offsets and its message.
bool PutLabel(k8s::ArchiveWriter& out, const Label& label, const std::vector<const Source*>& sources) {
  uint64_t file = 0;
  if (label.span.source != nullptr) {
    auto at = std::find(sources.begin(), sources.end(), label.span.source);
    if (at == sources.end()) return false;
    file = static_cast<uint64_t>(at - sources.begin()) + 1;
  }
  out.U64(file);
  out.U64(label.span.begin);
  out.U64(label.span.end);
  out.Str(label.message);
  return true;
}

bool GetLabel(k8s::ArchiveReader& in, Label& label, std::vector<int64_t>& files) {
  uint64_t file = in.U64(), begin = in.U64(), end = in.U64();
  label.message = in.Str();
  if (begin > end || end > UINT32_MAX || file > (uint64_t{1} << 20)) return false;
  label.span = {nullptr, static_cast<uint32_t>(begin), static_cast<uint32_t>(end)};
  files.push_back(static_cast<int64_t>(file) - 1);
  return in.Ok();
}

bool PutWarnings(k8s::ArchiveWriter& out, const std::vector<Diagnostic>& warnings,
                 const std::vector<const Source*>& sources) {
  out.U64(warnings.size());
  for (const Diagnostic& d : warnings) {
    out.U64(static_cast<uint64_t>(d.code));
    out.U64(static_cast<uint64_t>(d.severity));
    out.Str(d.message);
    out.Str(d.help);
    out.U64(d.notes.size());
    for (const std::string& note : d.notes) out.Str(note);
    if (!PutLabel(out, d.primary, sources)) return false;
    out.U64(d.secondary.size());
    for (const Label& label : d.secondary) {
      if (!PutLabel(out, label, sources)) return false;
    }
  }
  return true;
}

bool GetWarnings(k8s::ArchiveReader& in, std::vector<CachedWarning>& warnings) {
  size_t codes = AllCodes().size();
  for (uint64_t n = in.U64(); in.Ok() && n > 0; --n) {
    if (n > in.Remaining()) return false;
    CachedWarning w;
    Diagnostic& d = w.diagnostic;
    uint64_t code = in.U64(), severity = in.U64();
    if (code >= codes || severity != static_cast<uint64_t>(Severity::kWarning)) return false;
    d.code = static_cast<DiagCode>(code);
    d.severity = Severity::kWarning;
    d.message = in.Str();
    d.help = in.Str();
    for (uint64_t notes = in.U64(); in.Ok() && notes > 0; --notes) {
      if (notes > in.Remaining()) return false;
      d.notes.push_back(in.Str());
    }
    if (!GetLabel(in, d.primary, w.files)) return false;
    for (uint64_t labels = in.U64(); in.Ok() && labels > 0; --labels) {
      if (labels > in.Remaining()) return false;
      if (!GetLabel(in, d.secondary.emplace_back(), w.files)) return false;
    }
    warnings.push_back(std::move(w));
  }
  return in.Ok();
}

}  // namespace

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/policyc";  // relative: ignored, as the spec says
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/policyc";
  return "";
}

std::string CachePath(const std::string& dir, const std::vector<std::string>& paths) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const std::string& path : paths) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    std::string name = ec ? path : absolute.lexically_normal().string();
    h = Hash(name + '\0', h);
  }
  return fmt::format("{}/snapshot-{:016x}.cache", dir, h);
}

std::string ObjectCachePath(const std::string& dir, const std::vector<std::string>& paths) {
  std::string path = CachePath(dir, paths);
  return path.substr(0, path.size() - std::string_view(".cache").size()) + ".objects";
}

std::unique_ptr<NodeTable> ReadCache(const CacheOptions& options, const std::vector<std::string>& paths,
                                     LoadReport& report, std::vector<CachedWarning>& warnings) {
  if (paths.empty() || options.dir.empty()) return nullptr;
  Mapped file(CachePath(options.dir, paths));
  std::optional<std::string_view> payload = PayloadOf(file.Bytes(), kMagic, kFormat, paths);
  return payload ? ReadPayload(*payload, report, warnings) : nullptr;
}

bool ReadObjectCache(const CacheOptions& options, const std::vector<std::string>& paths, SnapshotObjectList& out,
                     bool pods_too) {
  if (paths.empty() || options.dir.empty()) return false;
  Mapped file(ObjectCachePath(options.dir, paths));
  std::optional<std::string_view> payload = PayloadOf(file.Bytes(), kObjectsMagic, kObjectsFormat, paths);
  if (!payload) return false;
  k8s::ArchiveReader in(*payload);
  SnapshotObjectList read;
  // Objects are made as they are read, never ahead of the bytes: a count
  // damaged past the checksum cannot ask for more memory than the file holds.
  constexpr uint64_t kReserveAtMost = 4096;
  uint64_t nodes = in.U64();
  if (!in.Ok() || nodes > in.Remaining()) return false;  // each at least a byte
  read.nodes.reserve(std::min(nodes, kReserveAtMost));
  for (; nodes > 0; --nodes) {
    if (!in.Get(read.nodes.emplace_back())) return false;
  }
  uint64_t pods = in.U64();
  if (!in.Ok() || pods > in.Remaining()) return false;
  if (!pods_too) {  // the checksum has covered them
    out = std::move(read);
    return true;
  }
  read.bound.reserve(std::min(pods, kReserveAtMost));
  for (; pods > 0; --pods) {
    if (!in.Get(read.bound.emplace_back())) return false;
  }
  if (!in.Ok() || !in.AtEnd()) return false;
  out = std::move(read);
  return true;
}

std::unique_ptr<NodeTable> ReadPayload(std::string_view payload, LoadReport& report,
                                       std::vector<CachedWarning>& warnings) {
  k8s::ArchiveReader in(payload);
  std::unique_ptr<NodeTable> table = NodeTable::ReadImage(in);
  if (!table) return nullptr;
  LoadReport r;
  r.read.objects = in.U64();
  for (uint64_t kinds = in.U64(); in.Ok() && kinds > 0 && kinds <= in.Remaining(); --kinds) {
    std::string kind = in.Str();
    r.read.skipped_kinds[kind] += in.U64();
  }
  Counts(r, [&](size_t& n) { n = in.U64(); });
  for (uint64_t pending = in.U64(); in.Ok() && pending > 0 && pending <= in.Remaining(); --pending) {
    k8s::Pod pod;
    if (!in.Get(pod)) return nullptr;
    r.pending.push_back(std::move(pod));
  }
  std::vector<CachedWarning> said;
  if (!in.Ok() || r.pending.size() != r.pods_not_bound || !GetWarnings(in, said) || !in.AtEnd()) return nullptr;
  report = std::move(r);
  warnings = std::move(said);
  return table;
}

bool WriteCache(const CacheOptions& options, const std::vector<std::string>& paths, const NodeTable& table,
                const LoadReport& report, const std::vector<Diagnostic>& warnings,
                const std::vector<const Source*>& sources) {
  std::optional<std::vector<Key>> keys = KeysFor(options, paths);
  if (!keys) return false;
  k8s::ArchiveWriter payload;
  if (!table.WriteImage(payload)) return false;
  payload.U64(report.read.objects);
  payload.U64(report.read.skipped_kinds.size());
  for (const auto& [kind, count] : report.read.skipped_kinds) {
    payload.Str(kind);
    payload.U64(count);
  }
  Counts(report, [&](size_t n) { payload.U64(n); });
  payload.U64(report.pending.size());
  for (const k8s::Pod& pod : report.pending) payload.Put(pod);
  if (!PutWarnings(payload, warnings, sources)) return false;

  return WriteKeyed(options, CachePath(options.dir, paths), kMagic, kFormat, paths, *keys, payload.Bytes());
}

bool WriteObjectCache(const CacheOptions& options, const std::vector<std::string>& paths,
                      const SnapshotObjectList& objects) {
  std::optional<std::vector<Key>> keys = KeysFor(options, paths);
  if (!keys) return false;
  k8s::ArchiveWriter payload;
  payload.U64(objects.nodes.size());
  for (const k8s::Node& n : objects.nodes) payload.Put(n);
  payload.U64(objects.bound.size());
  for (const k8s::Pod& p : objects.bound) payload.Put(p);
  return WriteKeyed(options, ObjectCachePath(options.dir, paths), kObjectsMagic, kObjectsFormat, paths, *keys, payload.Bytes());
}

}  // namespace policy::rt
