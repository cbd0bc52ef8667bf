#pragma once
/// Reading input files for subcommands: a failure is an I/O diagnostic.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/diagnostic.h"
#include "runtime/columnar/cluster_loader.h"

namespace policy::tooling {

/// Reads `path` (`-`: standard input); on failure reports `cannot read
/// PATH: why` and returns null. Shared, so diagnostics about it keep it
/// alive.
std::shared_ptr<Source> ReadInput(const std::string& path, DiagnosticSink& diags);

/// The files of a snapshot given as `paths`, each a file or a directory;
/// a directory stands for its `.yaml`, `.yml` and `.json` files in name
/// order, as `kubectl apply -f DIR` reads it (not its subdirectories).
/// Empty after an I/O diagnostic.
std::vector<std::shared_ptr<const Source>> ReadSnapshot(const std::vector<std::string>& paths, DiagnosticSink& diags);

/// The files `paths` name: each file as given, each directory's files
/// ending in one of `extensions` (subdirectories included), in name order.
/// `missing` is set to the first path that names nothing.
std::vector<std::string> FilesUnder(const std::vector<std::string>& paths, const std::vector<std::string>& extensions,
                                    std::string& missing);

/// The same files, not read yet (standard input is): what
/// engine::Cluster::LoadFiles loads, each from its cache when it can.
/// nullopt after an I/O diagnostic.
std::optional<std::vector<rt::SnapshotFile>> SnapshotFiles(const std::vector<std::string>& paths, DiagnosticSink& diags);

/// The snapshot cache as the command's flags ask: on unless --no-cache, in
/// rt::DefaultCacheDir() (said once, on stderr, when a first cache makes the
/// folder); POLICYC_CACHE_MIN_BYTES sets the smallest snapshot cached
/// (default 1 MiB).
rt::CacheOptions CacheFromFlags(bool no_cache);

/// Why a snapshot that loaded cannot be a cluster to decide on, for a
/// person: it holds no Node (pods alone, an empty list), nothing was read
/// from it (`{}`), or only objects without a `kind` (policyc's own `-o
/// json` output). `where` names the files. nullopt when it can be one.
std::optional<std::string> NotACluster(const rt::LoadReport& report, const std::string& where);

}  // namespace policy::tooling
