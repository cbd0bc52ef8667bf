#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "compiler/driver/compilation.h"
#include "runtime/engine/engine.h"
#include "runtime/interp/interpreter.h"

using namespace policy;

namespace {

// A two-node table: n1 labelled zone=a, gen=8, tainted gpu=yes:NoSchedule;
// n2 labelled zone=b, gen=x, 4 cpu with 3 requested.
struct Fixture {
  std::unique_ptr<engine::Cluster> cluster = std::make_unique<engine::Cluster>();
  k8s::Pod pod;
  std::string text;
  std::unique_ptr<engine::Engine> lowered;  // the engine of the policy as lowered
  const driver::CompiledFile* compiled = nullptr;
  // Engines and plans of the optimized forms: the programs' types live in them.
  std::vector<std::unique_ptr<engine::Engine>> engines;
  std::vector<std::unique_ptr<engine::PodPlan>> plans;

  const rt::NodeTable& table() const { return cluster->Table(); }

  Fixture() {
    k8s::Node n1;
    n1.name = "n1";
    n1.labels = {{"zone", "a"}, {"gen", "8"}};
    n1.taints = {{"gpu", "yes", k8s::TaintEffect::kNoSchedule}};
    n1.allocatable = {{"cpu", k8s::Quantity::FromUnits(8)}, {"memory", *k8s::Quantity::Parse("16Gi")}};
    k8s::Node n2;
    n2.name = "n2";
    n2.labels = {{"zone", "b"}, {"gen", "x"}};
    n2.allocatable = {{"cpu", k8s::Quantity::FromUnits(4)}};
    cluster->AddNode(n1);
    cluster->AddNode(n2);
    k8s::Pod bound;
    bound.name = "b";
    bound.node_name = "n2";
    bound.phase = k8s::PodPhase::kRunning;
    k8s::Container c;
    c.requests = {{"cpu", k8s::Quantity::FromUnits(3)}};
    bound.containers = {c};
    cluster->BindPod(bound);
    pod.name = "p";
    k8s::Container pc;
    pc.requests = {{"cpu", *k8s::Quantity::Parse("500m")}};
    pod.containers = {pc};
    pod.tolerations = {{"gpu", k8s::TolerationOp::kExists, "", k8s::TaintEffect::kNoSchedule, std::nullopt}};
  }

  // Compiles `let v = EXPR` plus `score v` / `filter v` and evaluates per node.
  void Compile(const std::string& policy_text) {
    text = policy_text;
    DiagnosticSink diags;
    lowered = engine::Engine::Create(rt::Profile{}, {std::make_shared<const Source>("t.policy", text)}, {}, diags);
    REQUIRE_MESSAGE(lowered != nullptr, RenderAll(diags));
    compiled = lowered->Files()[0];
  }
  // The program after the whole pass pipeline, specialized to `pod`, and
  // bound to the table's dictionaries when `bind` (as the engine plans it).
  const ir::Program& Optimized(bool bind) {
    engine::EngineOptions options;
    if (!bind) options.disabled_passes = {"bind-table"};
    DiagnosticSink diags;
    engines.push_back(engine::Engine::Create(rt::Profile{}, {std::make_shared<const Source>("t.policy", text)}, options, diags));
    REQUIRE(engines.back() != nullptr);
    plans.push_back(engines.back()->Plan(pod, *cluster));
    return plans.back()->Program(0);
  }
  // Each evaluates the unoptimized program, the specialized one and the
  // specialized and bound one; they must agree.
  int64_t Score(const std::string& expr, rt::RowId row) {
    Compile("policy P\n  score " + expr + "\n");
    int64_t plain = rt::Interpreter(compiled->program, pod, table()).Score(0, 0, row);
    for (bool bind : {false, true}) {
      ir::Program optimized = Optimized(bind);
      CHECK_MESSAGE(rt::Interpreter(optimized, pod, table()).Score(0, 0, row) == plain, expr, " bind=", bind);
    }
    return plain;
  }
  bool Passes(const std::string& expr, rt::RowId row) {
    Compile("policy P\n  filter " + expr + "\n");
    bool plain = rt::Interpreter(compiled->program, pod, table()).Filter(0, row).empty();
    for (bool bind : {false, true}) {
      ir::Program optimized = Optimized(bind);
      CHECK_MESSAGE(rt::Interpreter(optimized, pod, table()).Filter(0, row).empty() == plain, expr, " bind=", bind);
    }
    return plain;
  }
};

}  // namespace

TEST_CASE("labels: absent values are none - comparisons with none") {
  Fixture f;
  CHECK(f.Passes("node.labels['zone'] == 'a'", 0));
  CHECK_FALSE(f.Passes("node.labels['zone'] == 'a'", 1));
  CHECK(f.Passes("node.labels['nope'] == none", 0));
  CHECK(f.Passes("node.labels['nope'] != 'a'", 0));         // none differs from any value
  CHECK_FALSE(f.Passes("node.labels['nope'] in ['a']", 0));   // not an element
  CHECK(f.Passes("node.labels['nope'] not in ['a']", 0));     // NotIn matches an absent label
  CHECK(f.Passes("'zone' in node.labels", 0));
  CHECK_FALSE(f.Passes("'nope' in node.labels", 0));
}

TEST_CASE("integers from labels: Gt on a label that is not an integer is false") {
  Fixture f;
  CHECK(f.Passes("node.labels['gen'].int() > 4", 0));
  CHECK_FALSE(f.Passes("node.labels['gen'].int() > 4", 1));   // `x` is not an integer
  CHECK_FALSE(f.Passes("node.labels['gen'].int() <= 4", 1));
  CHECK(f.Score("node.labels['gen'].int() ?? -1", 1) == -1);
}

TEST_CASE("resources: milli-unit quantities - absent resources are 0") {
  Fixture f;
  CHECK(f.Score("(node.allocatable['cpu'] - node.requested['cpu']) / 1m", 1) == 1000);  // 1 cpu free
  CHECK(f.Score("node.allocatable['memory'] / 1Gi", 0) == 16);
  CHECK(f.Score("node.allocatable['nvidia.com/gpu'].units()", 0) == 0);
  CHECK(f.Score("pod.requests['cpu'].millis()", 0) == 500);
  CHECK(f.Score("pod.scoringRequests['memory'] / 1Mi", 0) == 200);  // non-zero default
  CHECK(f.Score("node.pods", 1) == 1);
}

TEST_CASE("arithmetic saturates - division by zero is 0 - muldiv is exact") {
  Fixture f;
  CHECK(f.Score("9223372036854775807 + 1", 0) == INT64_MAX);
  CHECK(f.Score("-9223372036854775807 - 10", 0) == INT64_MIN);
  CHECK(f.Score("7 / 0", 0) == 0);
  CHECK(f.Score("7 % 0", 0) == 0);
  CHECK(f.Score("muldiv(9223372036854775807, 100, 1000)", 0) == 922337203685477580);
  CHECK(f.Score("muldiv(-7, 1, 2)", 0) == -4);  // rounds down
  CHECK(f.Score("(16Gi * 1000) / 1Gi", 0) == 16000);
}

TEST_CASE("def arguments that read loop variables are computed at each use") {
  Fixture f;
  f.Compile(R"(policy P
  def tolerates(t: Toleration, taint: Taint) = (t.key == "" or t.key == taint.key) and (t.effect == "" or t.effect == taint.effect)
  let untolerated = first taint in node.taints where not (any t in pod.tolerations: tolerates(t, taint))
  filter untolerated == none reason "untolerated {untolerated.key}"
)");
  rt::Interpreter interp(f.compiled->program, f.pod, f.table());
  CHECK(interp.Filter(0, 0).empty());
  f.pod.tolerations[0].key = "other";
  rt::Interpreter again(f.compiled->program, f.pod, f.table());
  auto failures = again.Filter(0, 0);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].reason == "untolerated gpu");
}

TEST_CASE("filter for fails once per element - with the element in the message") {
  Fixture f;
  f.pod.containers[0].requests.emplace_back("nvidia.com/gpu", k8s::Quantity::FromUnits(1));
  f.Compile(R"(policy P
  filter for (name, amount) in pod.requests: amount <= node.allocatable[name] - node.requested[name]
    reason "Insufficient {name}"
    detail "{node.allocatable[name] - node.requested[name]} free, {amount} asked"
)");
  rt::Interpreter interp(f.compiled->program, f.pod, f.table());
  auto failures = interp.Filter(0, 1);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].reason == "Insufficient nvidia.com/gpu");
  CHECK(failures[0].detail == "0 free, 1 asked");
  CHECK(rt::FormatQuantity(1500) == "1500m");
  CHECK(rt::FormatQuantity(16LL * 1024 * 1024 * 1024 * 1000) == "16Gi");
  CHECK(rt::FormatQuantity(27860128LL * 1024 * 1000) == "26.6Gi");  // byte-like amounts read in Gi
  CHECK(rt::FormatQuantity(1536LL * 1000) == "1536");               // under a mebibyte: exact
}

TEST_CASE("when and prefilters") {
  Fixture f;
  f.Compile(R"(policy P
  when pod.name == "other"
  prefilter node.name != "n2" reason "excluded"
  prefilter pod.priority > 5 reason "low priority"
)");
  rt::Interpreter interp(f.compiled->program, f.pod, f.table());
  CHECK_FALSE(interp.Applies(0));
  CHECK_FALSE(interp.Prefilter(0, 0, true).has_value());
  REQUIRE(interp.Prefilter(0, 1, true).has_value());
  CHECK(interp.Prefilter(0, 1, true)->reason == "excluded");
  REQUIRE(interp.Prefilter(0, 0, false).has_value());
  CHECK(interp.Prefilter(0, 0, false)->reason == "low priority");
}

TEST_CASE("lists: (i - x) binds positions - literal lists index and fold") {
  Fixture f;
  CHECK(f.Score("sum (i, x) in [10, 20, 30]: i * x", 0) == 80);
  CHECK(f.Score("[4, 5][1] ?? 0", 0) == 5);
  CHECK(f.Score("[4, 5][2] ?? -1", 0) == -1);  // out of range: none
  CHECK(f.Score("sum (i, name) in ['cpu', 'memory']: ([1, 3][i] ?? 0) * (node.allocatable[name] / 1Gi)", 0) == 48);
  // `??` binds looser than arithmetic: the right side is `0 * 0 + ...`, never taken.
  CHECK(f.Score("sum (i, name) in ['cpu', 'memory']: [1, 3][i] ?? 0 * 0 + node.allocatable[name] / 1Gi", 0) == 4);
  CHECK(f.Passes("'b' in ['a', 'b']", 0));
  CHECK_FALSE(f.Passes("node.labels['zone'] in ['x', 'b']", 0));
  CHECK(f.Passes("node.labels['zone'] in ['x', 'b']", 1));
  CHECK(f.Score("0 + node.pods * 1", 1) == 1);  // identities fold away
}

TEST_CASE("strings: startsWith and contains - false on none") {
  Fixture f;
  CHECK(f.Passes("'nvidia.com/gpu'.startsWith('nvidia.com/')", 0));
  CHECK_FALSE(f.Passes("'nvidia.com/gpu'.startsWith('gpu')", 0));
  CHECK(f.Passes("'nvidia.com/gpu'.contains('/')", 0));
  CHECK(f.Passes("node.labels['zone'].startsWith('a')", 0));
  CHECK_FALSE(f.Passes("node.labels['zone'].startsWith('a')", 1));
  CHECK_FALSE(f.Passes("node.labels['nope'].contains('')", 0));
  CHECK(f.Passes("pod.name.contains('p')", 0));
}

TEST_CASE("bound to the table: label tests and taint loops keep their meaning") {
  Fixture f;
  for (rt::RowId row : {0u, 1u}) {
    CAPTURE(row);
    for (const char* expr : {"node.labels['zone'] == 'a'", "node.labels['zone'] != 'a'", "node.labels['zone'] == 'z'",
                             "node.labels['zone'] != 'z'", "node.labels['nope'] == none", "node.labels['zone'] != none",
                             "node.labels['zone'] in ['b', 'z']", "node.labels['zone'] not in ['b', 'z']",
                             "'gen' in node.labels", "'nope' in node.labels", "node.labels.has('zone')",
                             "node.labels['gen'].int() > 4", "node.labels['gen'].int() <= 8", "5 < node.labels['gen'].int()",
                             "node.labels['nope'].int() < 4", "any t in node.taints: t.key == 'gpu'",
                             "all t in node.taints: t.effect == 'NoSchedule'", "(first t in node.taints where t.value == 'yes') == none",
                             "(first t in node.taints where t.value == 'yes') != none",
                             "not (any t in node.taints: t.key in ['a', 'gpu'] and not (t.effect == 'PreferNoSchedule'))"}) {
      f.Passes(expr, row);  // checks the three forms agree
    }
    f.Score("count t in node.taints where t.key == 'gpu'", row);
    f.Score("count t in node.taints", row);
  }
  // The bound forms are there: no label map or taint list is read any more.
  f.Compile("policy P\n  filter node.labels['zone'] in ['b'] and (any t in node.taints: t.key == 'gpu')\n");
  std::string bound = ir::Print(f.Optimized(true));
  CHECK(bound.find("label_in \"zone\" [2]") != std::string::npos);
  CHECK(bound.find("taints_any [0]") != std::string::npos);
  CHECK(bound.find("Node.labels") == std::string::npos);
  CHECK(bound.find("Node.taints") == std::string::npos);
  // The bound forms print and read back.
  driver::Compilation compilation;
  Expected<ir::Program> reread = compilation.ParseIr(bound);
  REQUIRE_MESSAGE(reread.ok(), (reread.ok() ? "" : reread.error().message));
  CHECK(ir::Print(*reread) == bound);
}

TEST_CASE("bound to the table: a label or resource no node has is a constant") {
  Fixture f;
  for (rt::RowId row : {0u, 1u}) {
    CAPTURE(row);
    CHECK(f.Score("(node.labels['nope'].quantity() ?? 7m) / 1m + node.allocatable['example.com/none'] / 1m", row) == 7);
    CHECK(f.Score("node.requested['example.com/none'] / 1m + node.scoringRequested['cpu'] / 1m", row) ==
          f.Score("node.scoringRequested['cpu'] / 1m", row));
  }
  // GPU-memory fit where no node reports GPU memory: the score is 100 everywhere.
  f.Compile("policy P\n  let total = node.labels['gpu-memory'].quantity() ?? node.allocatable['gpu-memory']\n"
            "  score if total == 0 then 100 else (total - node.requested['gpu-memory']) * 100 / total\n");
  ir::Program bound = f.Optimized(true);
  const ir::Function& fn = bound.functions[0];
  CHECK(bound.reads_node[fn.scores[0].value] == 0);
  CHECK(ir::Print(bound).find("Node.allocatable") == std::string::npos);
  // A node that has the resource makes it a column again (a new dictionary version).
  uint64_t version = f.table().DictionaryVersion();
  k8s::Node gpu;
  gpu.name = "g";
  gpu.allocatable = {{"gpu-memory", k8s::Quantity::FromUnits(80)}};
  f.cluster->AddNode(gpu);
  CHECK(f.table().DictionaryVersion() != version);
  CHECK(ir::Print(f.Optimized(true)).find("Node.allocatable") != std::string::npos);
}

TEST_CASE("bound to the table: `and` tests the rarer label first") {
  Fixture f;
  for (int i = 0; i < 8; ++i) {  // 10 nodes: gpu=yes on 9, zone=a on 1
    k8s::Node n;
    n.name = "m" + std::to_string(i);
    n.labels = {{"zone", "b"}, {"gpu", "yes"}};
    f.cluster->AddNode(n);
  }
  k8s::Node n1 = {};
  n1.name = "n1";
  n1.labels = {{"zone", "a"}, {"gen", "8"}, {"gpu", "yes"}};
  n1.taints = {{"gpu", "yes", k8s::TaintEffect::kNoSchedule}};
  n1.allocatable = {{"cpu", k8s::Quantity::FromUnits(8)}, {"memory", *k8s::Quantity::Parse("16Gi")}};
  REQUIRE(f.cluster->UpdateNode(n1));
  for (const char* expr : {"node.labels['gpu'] == 'yes' and node.labels['zone'] == 'a'",
                           "node.labels['zone'] == 'a' and node.labels['gpu'] == 'yes'"}) {
    f.Compile(std::string("policy P\n  filter ") + expr + "\n");
    std::string text = ir::Print(f.Optimized(true));
    size_t zone = text.find("label_in \"zone\"");
    size_t gpu = text.find("label_in \"gpu\"");
    size_t conj = text.find("= and ");
    REQUIRE(zone != std::string::npos);
    REQUIRE(gpu != std::string::npos);
    REQUIRE(conj != std::string::npos);
    // The `and` names the zone test (10% true) before the gpu test (90%).
    std::string zone_id = text.substr(text.rfind('%', zone), text.find(' ', text.rfind('%', zone)) - text.rfind('%', zone));
    std::string line = text.substr(conj, text.find('\n', conj) - conj);
    CAPTURE(text);
    CHECK(line.find("and " + zone_id + " ") != std::string::npos);
  }
}
