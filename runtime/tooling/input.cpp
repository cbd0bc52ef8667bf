#include "runtime/tooling/input.h"

#include <cstdlib>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

namespace policy::tooling {
namespace {

void CannotRead(const std::string& path, const std::string& why, DiagnosticSink& diags) {
  diags.Report({DiagCode::kIoError, Severity::kError, fmt::format("cannot read `{}`: {}", path, why), {}, {}, {}, {}});
}

// The .yaml, .yml and .json files directly in `dir`, in name order.
std::vector<std::string> ManifestFiles(const std::string& dir, std::error_code& code) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, code)) {
    std::string ext = entry.path().extension().string();
    if ((ext == ".yaml" || ext == ".yml" || ext == ".json") && entry.is_regular_file(code)) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::shared_ptr<Source> ReadInput(const std::string& path, DiagnosticSink& diags) {
  if (path == "-") {
    std::string text(std::istreambuf_iterator<char>(std::cin), {});
    if (std::cin.bad()) {
      CannotRead("-", "standard input failed", diags);
      return nullptr;
    }
    return std::make_shared<Source>("<stdin>", std::move(text));
  }
  std::string error;
  std::unique_ptr<Source> source = Source::FromFile(path, &error);
  if (!source) {
    CannotRead(path, error, diags);
    return nullptr;
  }
  return source;
}

std::vector<std::shared_ptr<const Source>> ReadSnapshot(const std::vector<std::string>& paths, DiagnosticSink& diags) {
  std::vector<std::shared_ptr<const Source>> sources;
  for (const std::string& path : paths) {
    std::error_code code;
    std::vector<std::string> files = {path};
    if (path != "-" && std::filesystem::is_directory(path, code)) {
      files = ManifestFiles(path, code);
      if (code) {
        CannotRead(path, code.message(), diags);
        return {};
      }
      if (files.empty()) {
        CannotRead(path, "the directory holds no .yaml, .yml or .json file", diags);
        return {};
      }
    }
    for (const std::string& file : files) {
      std::shared_ptr<Source> source = ReadInput(file, diags);
      if (!source) return {};
      sources.push_back(std::move(source));
    }
  }
  return sources;
}

std::optional<std::vector<rt::SnapshotFile>> SnapshotFiles(const std::vector<std::string>& paths, DiagnosticSink& diags) {
  std::vector<rt::SnapshotFile> out;
  for (const std::string& path : paths) {
    if (path == "-") {
      std::shared_ptr<Source> source = ReadInput(path, diags);
      if (!source) return std::nullopt;
      out.push_back({path, std::move(source)});
      continue;
    }
    std::error_code code;
    std::vector<std::string> files = {path};
    if (std::filesystem::is_directory(path, code)) {
      files = ManifestFiles(path, code);
      if (code || files.empty()) {
        CannotRead(path, code ? code.message() : "the directory holds no .yaml, .yml or .json file", diags);
        return std::nullopt;
      }
    } else if (!std::filesystem::exists(path, code)) {
      CannotRead(path, "No such file or directory", diags);
      return std::nullopt;
    }
    for (std::string& f : files) out.push_back({std::move(f), nullptr});
  }
  return out;
}

std::vector<std::string> FilesUnder(const std::vector<std::string>& paths, const std::vector<std::string>& extensions,
                                    std::string& missing) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p, ec)) {
        std::string ext = e.path().extension().string();
        if (e.is_regular_file() && std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) {
          found.push_back(e.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (p == "-" || std::filesystem::exists(p, ec)) {
      files.push_back(p);
    } else if (missing.empty()) {
      missing = p;
    }
  }
  return files;
}

rt::CacheOptions CacheFromFlags(bool no_cache) {
  rt::CacheOptions options;
  options.enabled = !no_cache;
  options.dir = rt::DefaultCacheDir();
  options.made_dir = [](const std::string& dir) {
    fmt::print(stderr, "policyc: keeping parsed snapshots in {} to load them faster next time (docs/cache.md; "
                       "--no-cache reads the files alone)\n", dir);
  };
  if (const char* min = std::getenv("POLICYC_CACHE_MIN_BYTES")) options.min_bytes = std::strtoull(min, nullptr, 10);
  return options;
}

std::optional<std::string> NotACluster(const rt::LoadReport& report, const std::string& where) {
  if (report.nodes > 0) return std::nullopt;
  constexpr std::string_view kDump = "a snapshot is `kubectl get nodes,pods -A -o yaml` (or -o json) of the cluster";
  const auto& skipped = report.read.skipped_kinds;
  auto kindless = skipped.find("(no kind)");
  if (kindless != skipped.end() && kindless->second == report.read.objects) {
    return fmt::format("{} holds no Kubernetes object: {} object{} without a `kind` (is it policyc's own -o json "
                       "output?); {}",
                       where, kindless->second, kindless->second == 1 ? "" : "s", kDump);
  }
  if (report.read.objects == 0) return fmt::format("{} holds no Kubernetes object; {}", where, kDump);
  std::vector<std::string> read;
  size_t pods = report.pods_bound + report.pods_not_bound + report.pods_finished + report.pods_unknown_node;
  if (pods > 0) read.push_back(fmt::format("{} pod{}", pods, pods == 1 ? "" : "s"));
  for (const auto& [kind, count] : skipped) read.push_back(fmt::format("{} {} (skipped)", count, kind));
  size_t other = report.read.objects - pods;
  for (const auto& [kind, count] : skipped) other -= std::min(other, count);
  if (other > 0) read.push_back(fmt::format("{} other object{}", other, other == 1 ? "" : "s"));
  return fmt::format("{} holds no Node{}: a pod is decided against the nodes, so a cluster without them answers "
                     "nothing; {}",
                     where, read.empty() ? "" : fmt::format(" (it holds {})", fmt::join(read, ", ")), kDump);
}

}  // namespace policy::tooling

