// Differential testing of the LLVM back end against the interpreter (the
// oracle): random well-typed policies over random tables, compiled at O0 and
// O2; pass/fail per filter and raw scores must be identical on every node.
// A fixed seed and a bounded count here; scripts/differential.sh runs longer.

#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>

#include "compiler/codegen/jit.h"
#include "compiler/codegen/tiered_jit.h"
#include "runtime/engine/engine.h"
#include "runtime/interp/interpreter.h"
#include "runtime/sched/decide.h"
#include "runtime/sched/kernel_columns.h"

using namespace policy;

namespace {

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  int Pick(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }

  /// A table of 1..40 nodes: labels from a small vocabulary (some absent,
  /// some integers), taints, resources from 0 to near the int64 limit.
  std::unique_ptr<rt::NodeTable> Table() {
    auto table = std::make_unique<rt::NodeTable>();
    int nodes = 1 + Pick(40);
    for (int i = 0; i < nodes; ++i) {
      k8s::Node n;
      n.name = fmt::format("n{}", i);
      for (const char* key : {"zone", "gen", "tier", "gpu"}) {
        if (Pick(4) == 0) continue;
        n.labels.emplace_back(key, Value());
      }
      for (const char* res : {"cpu", "memory", "nvidia.com/gpu", "pods"}) {
        if (Pick(5) == 0) continue;
        n.allocatable.emplace_back(res, k8s::Quantity::FromUnits(Amount()));
      }
      int taints = Pick(4);
      for (int t = 0; t < taints; ++t) {  // unique by key and effect, as the API requires
        k8s::TaintEffect effect = std::array{k8s::TaintEffect::kNoSchedule, k8s::TaintEffect::kPreferNoSchedule,
                                             k8s::TaintEffect::kNoExecute}[static_cast<size_t>(Pick(3))];
        k8s::Taint taint{fmt::format("t{}", Pick(5)), Pick(2) ? "x" : "", effect};
        bool duplicate = false;
        for (const k8s::Taint& other : n.taints) duplicate |= other.key == taint.key && other.effect == taint.effect;
        if (!duplicate) n.taints.push_back(taint);
      }
      n.unschedulable = Pick(6) == 0;
      table->AddNode(n);
      for (int p = Pick(4); p > 0; --p) {
        k8s::Pod pod;
        pod.name = fmt::format("p{}-{}", i, p);
        pod.node_name = n.name;
        pod.phase = k8s::PodPhase::kRunning;
        k8s::Container c;
        c.requests = {{"cpu", k8s::Quantity::FromMilli(Pick(5000))}, {"memory", k8s::Quantity::FromUnits(Amount() / 4)}};
        pod.containers = {c};
        table->BindPod(pod);
      }
    }
    return table;
  }

  /// A policy with 1..4 filters and a score.
  std::string Policy() {
    std::string text = "policy P \"random\"\n";
    lets_ = false;  // a let's value may not name itself
    text += fmt::format("  let a = {}\n", Int(2));
    text += fmt::format("  let b = {}\n", Bool(2));
    lets_ = true;
    int filters = 1 + Pick(4);
    for (int i = 0; i < filters; ++i) text += fmt::format("  filter {}\n", Bool(3));
    text += fmt::format("  score {}\n", Int(3));
    return text;
  }

 private:
  std::string Value() {
    static const char* kValues[] = {"a", "b", "c", "8", "16", "-3", "x9", "9223372036854775807", "", "16Gi", "500m", "1e3"};
    return kValues[Pick(12)];
  }
  int64_t Amount() {
    static const int64_t kAmounts[] = {0, 1, 2, 4, 8, 64, 1000, 4096, 1LL << 40, 9223372036854775LL};
    return kAmounts[Pick(10)];
  }
  std::string IntLeaf() {
    switch (Pick(8)) {
      case 0: return std::to_string(static_cast<int64_t>(rng_()) - (1LL << 31));
      case 1: return "9223372036854775807";
      case 2: return "node.pods";
      case 3: return fmt::format("(node.allocatable['{}'] / 1m)", Resource());
      case 4: return fmt::format("(node.requested['{}'] / 1m)", Resource());
      case 5: return fmt::format("(node.scoringRequested['{}'] / 1m)", Resource());
      case 6: return fmt::format("(count t in node.taints where {})", TaintTest());
      default: return lets_ ? "a" : "7";
    }
  }
  std::string Resource() {
    static const char* kResources[] = {"cpu", "memory", "nvidia.com/gpu", "pods", "ephemeral-storage"};
    return kResources[Pick(5)];
  }
  std::string TaintTest() {
    switch (Pick(4)) {
      case 0: return fmt::format("t.key == 't{}'", Pick(6));
      case 1: return "t.effect in {'NoSchedule', 'NoExecute'}";
      case 2: return fmt::format("t.value == 'x' and t.key != 't{}'", Pick(6));
      default: return "not (t.effect == 'PreferNoSchedule')";
    }
  }
  std::string Int(int depth) {
    if (depth == 0 || Pick(3) == 0) return IntLeaf();
    static const char* kOps[] = {"+", "-", "*", "/", "%"};
    switch (Pick(6)) {
      case 0: return fmt::format("max({}, {})", Int(depth - 1), Int(depth - 1));
      case 1: return fmt::format("min({}, {})", Int(depth - 1), Int(depth - 1));
      case 2: return fmt::format("(if {} then {} else {})", Bool(depth - 1), Int(depth - 1), Int(depth - 1));
      case 3:
        if (Pick(2)) return fmt::format("(node.labels['{}'].int() ?? {})", Key(), Int(depth - 1));
        return fmt::format("((node.labels['{}'].quantity() ?? 0) / 1m)", Key());
      case 4:
        if (Pick(2)) return fmt::format("interpolate([0, {}, 100], [{}, 40, {}], {})", 1 + Pick(98), Pick(101), Pick(101), Int(depth - 1));
        return fmt::format("muldiv({}, {}, {})", Int(depth - 1), Int(depth - 1), Int(depth - 1));
      default: return fmt::format("({} {} {})", Int(depth - 1), kOps[Pick(5)], Int(depth - 1));
    }
  }
  std::string Key() {
    static const char* kKeys[] = {"zone", "gen", "tier", "gpu", "missing"};
    return kKeys[Pick(5)];
  }
  std::string Bool(int depth) {
    if (depth == 0 || Pick(3) == 0) {
      static const char* kCmp[] = {"==", "!=", "<", "<=", ">", ">="};
      switch (Pick(9)) {
        case 0: return fmt::format("node.labels['{}'] == '{}'", Key(), Value());
        case 1: return fmt::format("node.labels['{}'] != '{}'", Key(), Value());
        case 2: return fmt::format("node.labels['{}'] in ['{}', '{}']", Key(), Value(), Value());
        case 3: return fmt::format("'{}' in node.labels", Key());
        case 4: return fmt::format("node.labels['{}'].int() {} {}", Key(), kCmp[Pick(6)], Pick(20) - 5);
        case 5: return fmt::format("(any t in node.taints: {})", TaintTest());
        case 6: return fmt::format("(all t in node.taints: {})", TaintTest());
        case 7: return Pick(2) || !lets_ ? "node.unschedulable" : "b";
        default: return fmt::format("{} {} {}", Int(0), kCmp[Pick(6)], Int(0));
      }
    }
    switch (Pick(4)) {
      case 0: return fmt::format("({} and {})", Bool(depth - 1), Bool(depth - 1));
      case 1: return fmt::format("({} or {})", Bool(depth - 1), Bool(depth - 1));
      case 2: return fmt::format("not ({})", Bool(depth - 1));
      default: return fmt::format("({} {} {})", Int(depth - 1), Pick(2) ? "<=" : "==", Int(depth - 1));
    }
  }

  std::mt19937 rng_;
  bool lets_ = true;
};

// The pod the random policies are specialized to.
k8s::Pod NamedPod() {
  k8s::Pod pod;
  pod.name = "p";
  return pod;
}

// The raw value of score 0 of `kernels` on row 0.
int64_t ScoreOnRow0(const codegen::CompiledFunction& kernels, const rt::NodeTable& table) {
  rt::RowId row = 0;
  rt::KernelColumns columns(kernels, table);
  int64_t out = -1;
  kernels.scores[0](columns.get(), &row, 1, &out);
  return out;
}

// Function 0's kernels, or null with the reason in `why`.
std::shared_ptr<const codegen::CompiledFunction> Kernels(codegen::Jit& jit, const ir::Program& program, std::string* why) {
  Expected<std::shared_ptr<const codegen::CompiledFunction>> compiled = jit.Compile(program, 0);
  if (!compiled) {
    *why = compiled.error().message;
    return nullptr;
  }
  return *compiled;
}

// Evaluates `program` on every row with the interpreter and with kernels
// compiled at `opt_level`; CHECKs they agree. Returns false when the function
// did not compile.
bool Agree(codegen::Jit& jit, const ir::Program& program, const k8s::Pod& pod, const rt::NodeTable& table,
           int opt_level, const std::string& text) {
  std::string why;
  std::shared_ptr<const codegen::CompiledFunction> kernels = Kernels(jit, program, &why);
  if (!kernels) {
    MESSAGE("not compiled: " << why << "\n" << text);
    return false;
  }
  std::vector<rt::RowId> rows;
  for (rt::RowId r = 0; r < table.RowCount(); ++r) rows.push_back(r);
  rt::KernelColumns columns(*kernels, table);
  std::vector<uint64_t> failed(rows.size(), 0);
  if (kernels->filter != nullptr) kernels->filter(columns.get(), rows.data(), rows.size(), failed.data());
  std::vector<int64_t> scores(rows.size(), 0);
  kernels->scores[0](columns.get(), rows.data(), rows.size(), scores.data());
  if (kernels->pass != nullptr) {  // the pass kernel keeps exactly the rows with no failing filter
    std::vector<rt::RowId> passing(rows.size()), want;
    passing.resize(kernels->pass(columns.get(), rows.data(), rows.size(), passing.data()));
    for (size_t k = 0; k < rows.size(); ++k) {
      if (failed[k] == 0) want.push_back(rows[k]);
    }
    CHECK_MESSAGE(passing == want, "O" << opt_level << " pass kernel\n" << text);
  }
  // Row by row too: a kernel redoes every row exactly when one row's fast
  // (double) division cannot answer, so single rows test the fast answers.
  for (size_t k = 0; k < rows.size(); ++k) {
    int64_t score = 0;
    uint64_t mask = 0;
    kernels->scores[0](columns.get(), &rows[k], 1, &score);
    if (kernels->filter != nullptr) kernels->filter(columns.get(), &rows[k], 1, &mask);
    if (score != scores[k] || mask != failed[k]) {
      FAIL_CHECK("O" << opt_level << " row " << rows[k] << " alone: score " << score << " filters " << mask << ", with the others "
                     << scores[k] << " and " << failed[k] << "\n" << text);
      return false;
    }
  }
  rt::Interpreter interp(program, pod, table);
  bool same = true;
  for (size_t k = 0; k < rows.size(); ++k) {
    uint64_t mask = 0;
    for (const rt::FilterFailure& f : interp.Filter(0, rows[k])) mask |= uint64_t{1} << f.filter;
    int64_t score = interp.Score(0, 0, rows[k]);
    if (mask != failed[k] || score != scores[k]) {
      same = false;
      FAIL_CHECK("O" << opt_level << " row " << rows[k] << ": filters kernel " << failed[k] << " interpreter " << mask
                     << ", score kernel " << scores[k] << " interpreter " << score << "\n" << text);
      break;
    }
  }
  return same;
}

bool Agree(const ir::Program& program, const k8s::Pod& pod, const rt::NodeTable& table, int opt_level,
           const std::string& text) {
  codegen::Jit jit(codegen::JitOptions{opt_level});
  return Agree(jit, program, pod, table, opt_level, text);
}

// A policy compiled, specialized to `pod` and bound to `cluster`, as `check`
// does: through the engine, with the policy as its one plugin.
struct Bound {
  std::unique_ptr<engine::Engine> e;
  std::unique_ptr<engine::PodPlan> plan;

  Bound(const std::string& text, const k8s::Pod& pod, const engine::Cluster& cluster,
        engine::Backend backend = engine::Backend::kInterp) {
    DiagnosticSink diags;
    engine::EngineOptions options;
    options.backend = backend;
    e = engine::Engine::Create(rt::Profile{}, {std::make_shared<const Source>("random.policy", text)}, options, diags);
    REQUIRE_MESSAGE(e != nullptr, RenderAll(diags) << "\n" << text);
    plan = e->Plan(pod, cluster);
  }
  const ir::Program& program() const { return plan->Program(0); }
};

// The same decision: feasible rows, their scores, the selected one.
void CheckSame(const rt::Decision& got, const rt::Decision& want) {
  CHECK(got.feasible == want.feasible);
  CHECK(got.score == want.score);
  CHECK(got.selected == want.selected);
}

// A table big enough to be split into chunks (4,096 rows each at least).
std::unique_ptr<rt::NodeTable> BigTable(uint32_t seed) {
  auto table = std::make_unique<rt::NodeTable>();
  std::mt19937 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    k8s::Node n;
    n.name = fmt::format("n{}", i);
    n.labels = {{"zone", fmt::format("z{}", rng() % 5)}, {"gen", std::to_string(rng() % 20)}};
    if (rng() % 3 == 0) n.labels.emplace_back("gpu", "a");
    n.allocatable = {{"cpu", k8s::Quantity::FromUnits(1 + rng() % 64)}, {"pods", k8s::Quantity::FromUnits(110)}};
    if (rng() % 7 == 0) n.taints.push_back({fmt::format("t{}", rng() % 5), "x", k8s::TaintEffect::kNoSchedule});
    table->AddNode(n);
  }
  return table;
}

}  // namespace

TEST_CASE("random policies: the JIT at O0 and O2 agrees with the interpreter on random tables") {
  uint32_t seed = 20261202;
  int count = 150;
  if (const char* env = std::getenv("POLICYC_DIFFERENTIAL_COUNT")) count = std::atoi(env);
  if (const char* env = std::getenv("POLICYC_DIFFERENTIAL_SEED")) seed = static_cast<uint32_t>(std::atoll(env));
  Generator gen(seed);
  int compiled = 0;
  for (int i = 0; i < count; ++i) {
    engine::Cluster cluster(gen.Table());
    const rt::NodeTable& table = cluster.Table();
    std::string text = gen.Policy();
    k8s::Pod pod = NamedPod();
    Bound bound(text, pod, cluster);
    bool o0 = Agree(bound.program(), pod, table, 0, text);
    bool o2 = Agree(bound.program(), pod, table, 2, text);
    compiled += o0 && o2;
  }
  // The generator stays inside what the back end compiles: every policy must.
  CHECK(compiled == count);
}

namespace {

// GPU nodes with random DRA devices (whole GPUs and MIG slices, some memory
// capacities absent, some held by an allocated claim) for loops over
// `node.devices`.
std::unique_ptr<engine::Cluster> DeviceCluster(std::mt19937& rng) {
  auto table = std::make_unique<rt::NodeTable>();
  int nodes = 1 + static_cast<int>(rng() % 30);
  for (int i = 0; i < nodes; ++i) {
    k8s::Node n;
    n.name = fmt::format("n{}", i);
    n.allocatable = {{"cpu", k8s::Quantity::FromUnits(8)}, {"pods", k8s::Quantity::FromUnits(110)}};
    table->AddNode(n);
  }
  auto cluster = std::make_unique<engine::Cluster>(std::move(table));
  k8s::ResourceClaim held;
  held.name = "held";
  held.allocation.emplace();
  for (int i = 0; i < nodes; ++i) {
    k8s::ResourceSlice slice;
    slice.name = fmt::format("n{}-slice", i);
    slice.driver = "gpu.example.com";
    slice.node_name = fmt::format("n{}", i);
    slice.pool = {slice.node_name, 1, 1};
    int devices = static_cast<int>(rng() % 5);
    for (int d = 0; d < devices; ++d) {
      k8s::Device device;
      device.name = fmt::format("gpu-{}", d);
      k8s::DeviceAttribute type;
      type.text = rng() % 4 == 0 ? "mig" : "gpu";
      if (rng() % 6 != 0) device.attributes.emplace_back("gpu.example.com/type", type);
      if (rng() % 5 != 0) device.capacity.emplace_back("gpu.example.com/memory", k8s::Quantity::FromUnits(int64_t{1} << (30 + rng() % 8)));
      slice.devices.push_back(std::move(device));
      if (rng() % 3 == 0) held.allocation->devices.push_back({"gpu", slice.driver, slice.pool.name, fmt::format("gpu-{}", d)});
    }
    cluster->SetResourceSlice(std::move(slice));
  }
  cluster->SetResourceClaim(std::move(held));
  return cluster;
}

}  // namespace

TEST_CASE("loops over node.devices: the JIT at O0 and O2 agrees with the interpreter on random GPU nodes") {
  std::mt19937 rng(20261207);
  int compiled = 0, count = 0;
  for (int i = 0; i < 40; ++i) {
    std::unique_ptr<engine::Cluster> cluster = DeviceCluster(rng);
    int64_t need = 1 + static_cast<int64_t>(rng() % 100), at_least = static_cast<int64_t>(rng() % 3);
    std::string text = fmt::format(R"x(policy P
  let need = {0}Gi
  def gpu(device: Device) = cel "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].type == 'gpu'"
  def memory(device: Device) = device.capacity["gpu.example.com/memory"]
  let large = count device in node.devices where gpu(device) and not device.allocated and memory(device) >= need
  filter large > {1}
  filter all device in node.devices: device.allocated or memory(device) < 200Gi or gpu(device)
  filter not (any device in node.devices: cel "device.capacity['gpu.example.com'].memory.compareTo(quantity('{0}Gi')) < 0" and not device.allocated) or large > 0
  score (sum device in node.devices: if device.allocated then 0 else memory(device) / 1Gi) + count device in node.devices
)x", need, at_least);
    k8s::Pod pod = NamedPod();
    Bound bound(text, pod, *cluster);
    bool o0 = Agree(bound.program(), pod, cluster->Table(), 0, text);
    bool o2 = Agree(bound.program(), pod, cluster->Table(), 2, text);
    compiled += o0 && o2;
    ++count;
  }
  CHECK(compiled == count);  // every one compiles, and agrees
}

TEST_CASE("arithmetic at the edges: saturation - division and muldiv agree with the interpreter") {
  // Every (x, y, z) from values around the limits of doubles' exact range
  // and of int64, where saturating and estimated (double) paths must switch.
  const int64_t kEdges[] = {0, 1, -1, 2, -3, 7, 1000, -1000000, 2147483647, (1LL << 50) - 1, 1LL << 50,
                            -(1LL << 50) - 1, (1LL << 53) + 1, -(1LL << 53) - 3, 3435973836800000LL, 1LL << 62,
                            -(1LL << 62) - 5, INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1};
  engine::Cluster cluster;
  const rt::NodeTable& table = cluster.Table();
  int i = 0;
  for (int64_t x : kEdges) {
    for (int64_t y : kEdges) {
      for (int64_t z : kEdges) {
        k8s::Node n;
        n.name = fmt::format("n{}", i++);
        n.labels = {{"x", std::to_string(x)}, {"y", std::to_string(y)}, {"z", std::to_string(z)}};
        cluster.AddNode(n);
      }
    }
  }
  k8s::Pod pod = NamedPod();
  for (const char* expression : {"muldiv(x, y, z)", "muldiv(x, 1000000, z)", "x * y", "x + y", "x - y", "-x",
                                 "x / z", "x % z", "(x - y) * 100 / z", "muldiv(x * 1000, y, z * 1000)",
                                 // divisors chosen by selects between constants, 0 and -1 among them
                                 "x / ((if y > 0 then 2 else -3) + (if z > 0 then 1 else 0))",
                                 "x % (if y > 0 then 7 else -1)", "x / (if z == 0 then 0 else 5)"}) {
    std::string text = fmt::format(
        "policy E \"edges\"\n"
        "  let x = node.labels['x'].int() ?? 0\n"
        "  let y = node.labels['y'].int() ?? 0\n"
        "  let z = node.labels['z'].int() ?? 0\n"
        "  filter {} != 5\n"
        "  score {}\n",
        expression, expression);
    Bound bound(text, pod, cluster);
    CHECK(Agree(bound.program(), pod, table, 0, text));
    CHECK(Agree(bound.program(), pod, table, 2, text));
    // Row by row too: a kernel redoes all its rows exactly when one needs it,
    // so only single rows show the fast (double) division's own answers.
    codegen::Jit jit;
    std::string why;
    std::shared_ptr<const codegen::CompiledFunction> kernels = Kernels(jit, bound.program(), &why);
    REQUIRE_MESSAGE(kernels != nullptr, why);
    rt::KernelColumns columns(*kernels, table);
    rt::Interpreter interp(bound.program(), pod, table);
    int wrong = 0;
    for (rt::RowId row = 0; row < table.RowCount(); ++row) {
      int64_t score = 0;
      uint64_t failed = 0;
      kernels->scores[0](columns.get(), &row, 1, &score);
      kernels->filter(columns.get(), &row, 1, &failed);
      if (score != interp.Score(0, 0, row) || (failed == 0) != interp.Filter(0, row).empty()) {
        if (++wrong <= 3) FAIL_CHECK(std::string(expression) << " on row " << row << ": kernel " << score << ", interpreter " << interp.Score(0, 0, row));
      }
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("Decide: native kernels on 1 or 4 threads give the interpreter's decision") {
  Generator gen(99);
  for (int round = 0; round < 5; ++round) {
    engine::Cluster cluster(BigTable(static_cast<uint32_t>(round)));
    std::string text = gen.Policy();
    k8s::Pod pod = NamedPod();
    Bound interp(text, pod, cluster);
    Bound native(text, pod, cluster, engine::Backend::kJit);
    REQUIRE(native.plan->NativePlugins() == 1);
    rt::Decision want = interp.e->Decide(*interp.plan, cluster);
    for (int threads : {1, 4}) {
      CAPTURE(threads);
      // verify_kernels: every row the kernels decide, also in the interpreter (a difference aborts)
      for (bool verify : {false, true}) {
        rt::Decision got = native.e->Decide(*native.plan, cluster, {.threads = threads, .verify_kernels = verify});
        CheckSame(got, want);
      }
    }
  }
}

TEST_CASE("the kernel cache: one compile per shape - LRU eviction frees code nobody holds") {
  Generator gen(5);
  engine::Cluster cluster(gen.Table());
  const rt::NodeTable& table = cluster.Table();
  k8s::Pod pod = NamedPod();
  std::vector<std::unique_ptr<Bound>> bound;
  for (int i = 0; i < 6; ++i) {  // multipliers are part of the shape: six shapes
    bound.push_back(std::make_unique<Bound>(
        fmt::format("policy P\n  filter node.pods < {}\n  score node.pods * {}\n", i, i), pod, cluster));
  }
  codegen::Jit jit(codegen::JitOptions{2, true, 2});
  std::string why;
  auto first = Kernels(jit, bound[0]->program(), &why);
  auto again = Kernels(jit, bound[0]->program(), &why);
  CHECK(reinterpret_cast<void*>(first->scores[0]) == reinterpret_cast<void*>(again->scores[0]));  // the same shape: the cache hit, the same code
  for (size_t i = 1; i < 6; ++i) {  // different shapes get their own kernels
    auto kernels = Kernels(jit, bound[i]->program(), &why);
    REQUIRE(kernels != nullptr);
    CHECK(reinterpret_cast<void*>(kernels->scores[0]) != reinterpret_cast<void*>(first->scores[0]));
    CHECK(ScoreOnRow0(*kernels, table) == static_cast<int64_t>(table.PodCount()[0]) * static_cast<int64_t>(i));
  }
  // Capacity 2: the unheld shapes were evicted; the held one stays and still runs.
  CHECK(jit.CachedShapes() <= 3);
  CHECK(ScoreOnRow0(*first, table) == 0);
}

TEST_CASE("functions that differ only in the pod's values share one kernel - each with its own values") {
  // Numbers, the label values a term accepts and the taints tolerated are
  // the kernels' parameters: 40 variants, one compile, every row of every
  // variant as the interpreter says.
  engine::Cluster cluster;
  std::mt19937 rng(11);
  for (int i = 0; i < 48; ++i) {
    k8s::Node n;
    n.name = fmt::format("n{}", i);
    n.labels = {{"zone", std::string(1, static_cast<char>('a' + rng() % 4))}};
    if (i % 2 == 0) n.taints.push_back({fmt::format("t{}", i % 5), "", k8s::TaintEffect::kNoSchedule});
    n.allocatable = {{"cpu", k8s::Quantity::FromMilli(static_cast<int64_t>(rng() % 8000))}};
    cluster.AddNode(n);
  }
  const rt::NodeTable& table = cluster.Table();
  k8s::Pod pod = NamedPod();
  for (int opt_level : {0, 2}) {
    codegen::Jit jit(codegen::JitOptions{opt_level});
    for (int variant = 0; variant < 40; ++variant) {
      std::string text = fmt::format(
          "policy P\n"
          "  filter node.allocatable['cpu'] >= {}m\n"
          "  filter node.labels['zone'] in ['{}', '{}']\n"
          "  filter not (any t in node.taints: t.key == 't{}')\n"
          "  score node.allocatable['cpu'] / 1m - {}\n",
          rng() % 8000, static_cast<char>('a' + variant % 2), static_cast<char>('c' + variant % 2), rng() % 5,
          rng() % 100000);
      Bound bound(text, pod, cluster);
      CHECK(Agree(jit, bound.program(), pod, table, opt_level, text));
    }
    CHECK(jit.CachedShapes() == 1);
  }
}

TEST_CASE("functions that differ only in the node resources they read share one kernel - each reads its own") {
  // scheduler_perf's SchedulingWithExtendedResource: node i alone has
  // example.com/r-i, and pod i asks for it. The resources' names are bound
  // per function (the kernels read columns by slot): one compile, and every
  // variant's rows as the interpreter says, the two names of a variant in
  // either order.
  engine::Cluster cluster;
  for (int i = 0; i < 12; ++i) {
    k8s::Node n;
    n.name = fmt::format("n{}", i);
    n.allocatable = {{"cpu", k8s::Quantity::FromMilli(1000 * (i % 3 + 1))},
                     {fmt::format("example.com/r-{}", i), k8s::Quantity::FromMilli(1000 * (i + 1))},
                     {fmt::format("example.com/r-{}", (i + 5) % 12), k8s::Quantity::FromMilli(500)}};
    cluster.AddNode(n);
  }
  const rt::NodeTable& table = cluster.Table();
  k8s::Pod pod = NamedPod();
  for (int opt_level : {0, 2}) {
    codegen::Jit jit(codegen::JitOptions{opt_level});
    for (int variant = 0; variant < 12; ++variant) {
      std::string a = fmt::format("example.com/r-{}", variant), b = fmt::format("example.com/r-{}", (variant + 5) % 12);
      std::string text = fmt::format(
          "policy P\n"
          "  filter node.allocatable['{0}'] - node.requested['{0}'] >= 1\n"
          "  score node.allocatable['{1}'] / 1m + node.allocatable['cpu'] / 1m\n",
          variant % 2 == 0 ? a : b, variant % 2 == 0 ? b : a);
      Bound bound(text, pod, cluster);
      CHECK(Agree(jit, bound.program(), pod, table, opt_level, text));
    }
    CHECK(jit.CachedShapes() == 1);
  }
}

TEST_CASE("tiering: the first pods of a template are interpreted while it compiles - later ones get kernels") {
  Generator gen(77);
  engine::Cluster cluster(gen.Table());
  const rt::NodeTable& table = cluster.Table();
  k8s::Pod pod = NamedPod();
  Bound bound(gen.Policy(), pod, cluster);
  codegen::TieredJit tiered;
  CHECK(tiered.Get(bound.program(), 0) == nullptr);  // queued: interpret this pod
  tiered.Drain();
  std::shared_ptr<const codegen::CompiledFunction> kernels = tiered.Get(bound.program(), 0);
  REQUIRE(kernels != nullptr);
  std::vector<rt::Plugin> interp = {{"P", &bound.program(), 0, 1, true, true, nullptr}};
  std::vector<rt::Plugin> native = {{"P", &bound.program(), 0, 1, true, true, kernels.get()}};
  rt::Decision want = rt::Decide(interp, pod, table);
  rt::Decision got = rt::Decide(native, pod, table);
  CheckSame(got, want);
}

TEST_CASE("tiering: a template compiles once it is hot (hot_after pods)") {
  Generator gen(78);
  engine::Cluster cluster(gen.Table());
  k8s::Pod pod = NamedPod();
  Bound bound(gen.Policy(), pod, cluster);
  codegen::TieredJit tiered(codegen::JitOptions{}, codegen::TieringOptions{3});
  for (int pod_number = 1; pod_number <= 3; ++pod_number) {
    CAPTURE(pod_number);
    // Pods 1 and 2 queue nothing (after a drain the 2nd and 3rd still find
    // no kernels); the 3rd queues the compilation.
    CHECK(tiered.Get(bound.program(), 0) == nullptr);
    tiered.Drain();
  }
  CHECK(tiered.Get(bound.program(), 0) != nullptr);
}

TEST_CASE("a Decider reused pod after pod reorders filters by what it measured - every decision stays the same") {
  for (int round = 0; round < 3; ++round) {
    engine::Cluster cluster(BigTable(100 + static_cast<uint32_t>(round)));
    const rt::NodeTable& table = cluster.Table();
    k8s::Pod pod = NamedPod();
    std::vector<std::unique_ptr<Bound>> bound;
    std::vector<rt::Plugin> interp, native;
    codegen::Jit jit;
    std::string why;
    std::vector<std::shared_ptr<const codegen::CompiledFunction>> kernels;
    // Filters of different selectivity (the gpu label: a third of the nodes),
    // so that the measured order differs from the given one.
    const std::string texts[] = {
        "policy A\n  filter node.labels['zone'] != 'z0'\n  score node.allocatable['cpu'] / 1m\n",
        "policy B\n  filter node.allocatable['cpu'] >= 8\n",
        "policy C\n  filter not (any t in node.taints: t.key == 't1')\n  score count t in node.taints where t.key != 't2'\n",
        "policy D\n  filter 'gpu' in node.labels\n  score node.labels['gen'].int() ?? 0\n"};
    for (int i = 0; i < 4; ++i) {
      bound.push_back(std::make_unique<Bound>(texts[i], pod, cluster));
      kernels.push_back(Kernels(jit, bound.back()->program(), &why));
      REQUIRE_MESSAGE(kernels.back() != nullptr, why);
      interp.push_back({fmt::format("P{}", i), &bound.back()->program(), 0, 1, true, true, nullptr});
      native.push_back({fmt::format("P{}", i), &bound.back()->program(), 0, 1, true, true, kernels.back().get()});
    }
    rt::Decision want = rt::Decide(interp, pod, table);
    CHECK(want.feasible.size() > 1000);
    rt::Decider decider;
    for (int pass = 0; pass < 6; ++pass) {
      CAPTURE(pass);
      const rt::Decision& got = decider.Decide(pass % 3 == 2 ? interp : native, pod, table);
      CheckSame(got, want);
    }
  }
}
