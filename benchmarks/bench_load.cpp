// Loading cluster snapshots into the NodeTable, end to end (read, decode,
// columns), from JSON and YAML, at 5,000 and 50,000 nodes; and a
// 5,000-node, 100,000-pod snapshot file parsed against its cache.
//
// Each load benchmark also times the bare parser over the same bytes in the
// same run (simdjson's DOM parser; libyaml's event loop with no tree) and
// reports `x_parser`: our end-to-end time over that floor.
//
// Counters: bytes_per_second (MB/s), ns/node, table B/node (row columns,
// without interned strings), dict B/node (interned strings and dictionaries),
// peak B/node (growth of the process's peak RSS during one load: the table
// plus the parser's transient buffers; the input text is excluded).

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <simdjson.h>
#include <yaml.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "benchmarks/cluster_gen.h"
#include "runtime/columnar/cluster_loader.h"

namespace {

using policy::bench::Format;

const policy::Source& Input(Format format, int nodes) {
  static std::map<std::pair<Format, int>, std::unique_ptr<policy::Source>> cache;
  auto& slot = cache[{format, nodes}];
  if (!slot) {
    policy::bench::ClusterSpec spec;
    spec.nodes = nodes;
    std::string text = policy::bench::GenerateCluster(spec, format);
    slot = std::make_unique<policy::Source>(format == Format::kJson ? "bench.json" : "bench.yaml", std::move(text));
  }
  return *slot;
}

long ReadStatusKb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::string(field).size()));
  }
  return 0;
}

// Returns freed heap pages to the kernel, then resets the peak-RSS mark
// (Linux: clear_refs 5), so VmHWM - VmRSS afterwards is what a load adds.
void ResetPeakRss() {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
}

double ParseOnlySeconds(const policy::Source& source, Format format) {
  auto start = std::chrono::steady_clock::now();
  if (format == Format::kJson) {
    simdjson::dom::parser parser;
    simdjson::padded_string_view view(source.PaddedData(), source.Size(), source.Size() + policy::Source::kPadding);
    simdjson::dom::element doc;
    if (parser.parse(view).get(doc) != simdjson::SUCCESS) return -1;
  } else {
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(source.PaddedData()), source.Size());
    yaml_event_t event;
    bool done = false;
    while (!done && yaml_parser_parse(&parser, &event)) {
      done = event.type == YAML_STREAM_END_EVENT;
      yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Load(benchmark::State& state, Format format) {
  int nodes = static_cast<int>(state.range(0));
  const policy::Source& source = Input(format, nodes);
  double parse_only = ParseOnlySeconds(source, format);
  double total = 0;
  size_t table_bytes = 0, dict_bytes = 0;
  long peak_kb = 0;
  for (auto _ : state) {
    ResetPeakRss();
    long before_kb = ReadStatusKb("VmRSS:");
    auto start = std::chrono::steady_clock::now();
    policy::DiagnosticSink diags;
    auto table = policy::rt::LoadCluster(source, diags);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!table || table->NodeCount() != static_cast<size_t>(nodes)) {
      state.SkipWithError("load failed");
      return;
    }
    peak_kb = std::max(peak_kb, ReadStatusKb("VmHWM:") - before_kb);
    table_bytes = table->RowMemoryBytes();
    dict_bytes = table->DictionaryMemoryBytes();
    benchmark::DoNotOptimize(table.get());
  }
  double per_load = total / static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(source.Size()));
  state.counters["MB"] = static_cast<double>(source.Size()) / 1e6;
  state.counters["ns/node"] = per_load * 1e9 / nodes;
  state.counters["table_B/node"] = static_cast<double>(table_bytes) / nodes;
  state.counters["dict_B/node"] = static_cast<double>(dict_bytes) / nodes;
  state.counters["peak_B/node"] = static_cast<double>(peak_kb) * 1024 / nodes;
  state.counters["x_parser"] = parse_only > 0 ? per_load / parse_only : 0;
}

// The benchmark's own cache folder (not the user's).
constexpr const char* kCacheDir = "/tmp/policyc-bench-cache.d";

// A 5,000-node snapshot with 20 pods a node, written to a file: loaded by
// path as `check` loads it, parsed (the cache off: reading the file
// included) or from its cache (snapshot_cache.h). x_parse is the cached
// load's time over the parse's, measured in the same run.
// The generated 5,000-node, 100,000-pod snapshot; `realistic`: pods shaped
// as real ones (cluster_gen's realistic shapes) and 1,000 Pending.
const std::string& SnapshotFile(Format format, bool realistic) {
  static std::map<std::pair<Format, bool>, std::string> paths;
  std::string& path = paths[{format, realistic}];
  if (path.empty()) {
    policy::bench::ClusterSpec spec;
    spec.nodes = 5000;
    spec.pods_per_node = 20;
    spec.realistic = realistic;
    spec.pending = realistic ? 1000 : 0;
    path = std::string("/tmp/policyc-bench-cache") + (realistic ? "-realistic." : ".") + (format == Format::kJson ? "json" : "yaml");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << policy::bench::GenerateCluster(spec, format);
    std::remove(policy::rt::CachePath(kCacheDir, {path}).c_str());
  }
  return path;
}

std::map<std::pair<Format, bool>, double>& ParseSeconds() {
  static std::map<std::pair<Format, bool>, double> seconds;
  return seconds;
}

void LoadFile(benchmark::State& state, Format format, bool cached, bool realistic) {
  const std::string& path = SnapshotFile(format, realistic);
  policy::rt::CacheOptions cache;
  cache.enabled = cached;
  cache.dir = kCacheDir;
  if (cached) {  // the first load writes the cache
    policy::DiagnosticSink diags;
    std::vector<std::shared_ptr<const policy::Source>> read;
    policy::rt::LoadClusterFiles({{path, nullptr}}, cache, diags, nullptr, read);
  }
  double total = 0;
  long peak_kb = 0;
  size_t pods = 0;
  for (auto _ : state) {
    ResetPeakRss();
    long before_kb = ReadStatusKb("VmRSS:");
    auto start = std::chrono::steady_clock::now();
    policy::DiagnosticSink diags;
    std::vector<std::shared_ptr<const policy::Source>> read;
    auto table = policy::rt::LoadClusterFiles({{path, nullptr}}, cache, diags, nullptr, read);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!table || table->NodeCount() != 5000 || (cached && !read.empty())) {
      state.SkipWithError(cached ? "not loaded from the cache" : "load failed");
      return;
    }
    peak_kb = std::max(peak_kb, ReadStatusKb("VmHWM:") - before_kb);
    pods = table->BoundPodCount();
    benchmark::DoNotOptimize(table.get());
  }
  double per_load = total / static_cast<double>(state.iterations());
  if (!cached) ParseSeconds()[{format, realistic}] = per_load;
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["peak_B/node"] = static_cast<double>(peak_kb) * 1024 / 5000;
  if (cached && ParseSeconds()[{format, realistic}] > 0) state.counters["x_parse"] = per_load / ParseSeconds()[{format, realistic}];
}

void BM_LoadJson(benchmark::State& state) { Load(state, Format::kJson); }
void BM_LoadYaml(benchmark::State& state) { Load(state, Format::kYaml); }

BENCHMARK(BM_LoadJson)->Arg(5000)->Arg(50000)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_LoadYaml)->Arg(5000)->Arg(50000)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK_CAPTURE(LoadFile, json_parse, Format::kJson, false, false)->Name("BM_LoadFile/json/parse/100k-pods")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(LoadFile, json_cached, Format::kJson, true, false)->Name("BM_LoadFile/json/cache-hit/100k-pods")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
BENCHMARK_CAPTURE(LoadFile, yaml_parse, Format::kYaml, false, false)->Name("BM_LoadFile/yaml/parse/100k-pods")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(LoadFile, yaml_cached, Format::kYaml, true, false)->Name("BM_LoadFile/yaml/cache-hit/100k-pods")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
BENCHMARK_CAPTURE(LoadFile, realistic_parse, Format::kJson, false, true)->Name("BM_LoadFile/json/parse/realistic-100k-pods")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(LoadFile, realistic_cached, Format::kJson, true, true)->Name("BM_LoadFile/json/cache-hit/realistic-100k-pods")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
