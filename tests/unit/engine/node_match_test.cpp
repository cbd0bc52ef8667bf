// One answer to "does this node's labels satisfy the pod's node affinity?"
// and "does the pod tolerate this node's taints?": the stdlib's NodeAffinity
// and TaintToleration policies (what the engine decides with) and
// k8s/node_match.h (what every C++ caller asks: volume node
// affinity, suggestions, the interpreter's cluster view, manifest lints)
// on the same generated pods and nodes. The two cases where the C++ copies
// used to disagree with the policies are among them: Gt/Lt with a value
// that is not an integer, and an Equal toleration with an empty key. Last,
// which rejections no eviction resolves: declared in each plugin's profile
// row (rt::InTreePlugin::unresolvable), held to its policy's reasons.

#include <doctest/doctest.h>

#include <map>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "k8s/node_match.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/profile.h"
#include "stdlib/embedded.h"

using namespace policy;

namespace {

const char* kGens[] = {"1", "7", "12", "x", "07", "1e3", "+5"};

k8s::Node RandomNode(int i, std::mt19937& rng) {
  k8s::Node n;
  n.name = fmt::format("n{}", i);
  n.labels = {{"kubernetes.io/hostname", n.name}};
  if (rng() % 5 != 0) n.labels.emplace_back("gen", kGens[rng() % 7]);
  if (rng() % 4 != 0) n.labels.emplace_back("zone", rng() % 2 == 0 ? "a" : "b");
  n.allocatable = {{"cpu", k8s::Quantity::FromUnits(8)}, {"memory", *k8s::Quantity::Parse("16Gi")}, {"pods", k8s::Quantity::FromUnits(110)}};
  const k8s::Taint taints[] = {{"gpu", "yes", k8s::TaintEffect::kNoSchedule},
                               {"gpu", "", k8s::TaintEffect::kNoExecute},
                               {"spot", "true", k8s::TaintEffect::kPreferNoSchedule},
                               {"dedicated", "infra", k8s::TaintEffect::kNoSchedule}};
  for (const k8s::Taint& t : taints) {
    if (rng() % 4 == 0) n.taints.push_back(t);
  }
  return n;
}

k8s::SelectorRequirement RandomRequirement(std::mt19937& rng) {
  switch (rng() % 10) {
    case 0: return {"gen", k8s::SelectorOp::kGt, {"5"}, {}};
    case 1: return {"gen", k8s::SelectorOp::kLt, {"10"}, {}};
    case 2: return {"gen", k8s::SelectorOp::kGt, {"x"}, {}};  // an operand that is not an integer
    case 3: return {"gen", k8s::SelectorOp::kIn, {"x", "07"}, {}};
    case 4: return {"zone", k8s::SelectorOp::kNotIn, {"b"}, {}};
    case 5: return {"zone", k8s::SelectorOp::kExists, {}, {}};
    case 6: return {"zone", k8s::SelectorOp::kDoesNotExist, {}, {}};
    case 7: return {"gen", k8s::SelectorOp::kLt, {"+8"}, {}};
    default: return {"gen", k8s::SelectorOp::kNotIn, {"1"}, {}};
  }
}

k8s::Pod RandomPod(int i, std::mt19937& rng) {
  k8s::Pod p;
  p.name = fmt::format("p{}", i);
  k8s::Container c;
  c.name = "c";
  c.requests = {{"cpu", *k8s::Quantity::Parse("100m")}};
  p.containers = {c};
  if (rng() % 4 == 0) p.node_selector = {{"zone", "a"}};
  if (rng() % 3 != 0) {
    std::vector<k8s::NodeSelectorTerm> terms(1 + rng() % 2);
    for (k8s::NodeSelectorTerm& t : terms) {
      for (unsigned k = 0, n = 1 + rng() % 2; k < n; ++k) t.match_expressions.push_back(RandomRequirement(rng));
      if (rng() % 5 == 0) {
        t.match_fields.push_back({"metadata.name", rng() % 2 == 0 ? k8s::SelectorOp::kIn : k8s::SelectorOp::kNotIn,
                                  {fmt::format("n{}", rng() % 24), fmt::format("n{}", rng() % 24)}, {}});
      }
    }
    p.affinity.node_affinity = k8s::NodeAffinity{std::move(terms), {}};
  }
  const k8s::Toleration tolerations[] = {
      {"", k8s::TolerationOp::kEqual, "yes", std::nullopt, std::nullopt},  // an empty key with Equal
      {"gpu", k8s::TolerationOp::kExists, "", std::nullopt, std::nullopt},
      {"", k8s::TolerationOp::kExists, "", k8s::TaintEffect::kNoSchedule, std::nullopt},
      {"gpu", k8s::TolerationOp::kEqual, "yes", k8s::TaintEffect::kNoSchedule, std::nullopt},
      {"dedicated", k8s::TolerationOp::kEqual, "infra", k8s::TaintEffect::kNoExecute, std::nullopt},
      {"gpu", k8s::TolerationOp::kEqual, "", std::nullopt, std::nullopt},
  };
  for (const k8s::Toleration& t : tolerations) {
    if (rng() % 3 == 0) p.tolerations.push_back(t);
  }
  return p;
}

bool AffinityHolds(const k8s::Pod& pod, const k8s::Node& node) {
  auto label = [&](std::string_view key) -> std::optional<std::string_view> {
    const std::string* v = k8s::Find(node.labels, key);
    return v != nullptr ? std::optional<std::string_view>(*v) : std::nullopt;
  };
  for (const auto& [key, value] : pod.node_selector) {
    if (label(key) != std::optional<std::string_view>(value)) return false;
  }
  const auto& affinity = pod.affinity.node_affinity;
  if (!affinity || !affinity->required) return true;
  return std::any_of(affinity->required->begin(), affinity->required->end(),
                     [&](const k8s::NodeSelectorTerm& t) { return k8s::TermMatches(t, label, node.name); });
}

// The one "no hard taint goes untolerated" every C++ caller uses (k8s::Repels).
bool TaintsTolerated(const k8s::Pod& pod, const k8s::Node& node) {
  return std::none_of(node.taints.begin(), node.taints.end(),
                      [&](const k8s::Taint& taint) { return k8s::Repels(pod.tolerations, taint); });
}

std::unique_ptr<engine::Engine> EngineWith(const std::string& plugin) {
  std::string unknown;
  std::optional<rt::Profile> profile = rt::RestrictProfile(rt::DefaultProfile(), {plugin}, &unknown);
  REQUIRE(profile);
  DiagnosticSink diags;
  std::unique_ptr<engine::Engine> e = engine::Engine::Create(*profile, {}, {}, diags);
  REQUIRE_MESSAGE(e, RenderAll(diags));
  return e;
}

}  // namespace

TEST_CASE("node affinity and tolerations have one answer - the stdlib's and node_match's") {
  std::mt19937 rng(20261205);
  engine::Cluster cluster;
  std::vector<k8s::Node> nodes;
  for (int i = 0; i < 24; ++i) {
    nodes.push_back(RandomNode(i, rng));
    REQUIRE(cluster.AddNode(nodes.back()));
  }
  std::unique_ptr<engine::Engine> affinity = EngineWith("NodeAffinity"), taints = EngineWith("TaintToleration");
  int compared = 0, admitted = 0;
  for (int i = 0; i < 300; ++i) {
    k8s::Pod pod = RandomPod(i, rng);
    for (auto* e : {affinity.get(), taints.get()}) {
      std::unique_ptr<engine::PodPlan> plan = e->Plan(pod, cluster);
      const rt::Decision& d = e->Decide(*plan, cluster, {.filters_only = true});
      for (size_t row = 0; row < nodes.size(); ++row) {
        bool engine_says = std::binary_search(d.feasible.begin(), d.feasible.end(), static_cast<rt::RowId>(row));
        bool cpp_says = e == affinity.get() ? AffinityHolds(pod, nodes[row]) : TaintsTolerated(pod, nodes[row]);
        std::string where = fmt::format("pod {} on node {} ({})", pod.name, nodes[row].name, e == affinity.get() ? "affinity" : "taints");
        CAPTURE(where);
        CHECK(engine_says == cpp_says);
        ++compared;
        admitted += cpp_says ? 1 : 0;
      }
    }
  }
  // Both answers occur often (the generator is not one-sided).
  CHECK(compared == 300 * 24 * 2);
  CHECK(admitted > compared / 5);
  CHECK(admitted < compared * 4 / 5);
}

TEST_CASE("the cases the copies disagreed on") {
  k8s::Taint gpu{"gpu", "yes", k8s::TaintEffect::kNoSchedule};
  // ToleratesTaint: an empty key matches every key, Equal then compares values.
  CHECK(k8s::Tolerates({"", k8s::TolerationOp::kEqual, "yes", std::nullopt, std::nullopt}, gpu));
  CHECK_FALSE(k8s::Tolerates({"", k8s::TolerationOp::kEqual, "no", std::nullopt, std::nullopt}, gpu));
  CHECK_FALSE(k8s::Tolerates({"gpu", k8s::TolerationOp::kExists, "", k8s::TaintEffect::kNoExecute, std::nullopt}, gpu));
  // Gt/Lt: strconv.ParseInt of both sides; anything else matches nothing.
  k8s::SelectorRequirement gt{"gen", k8s::SelectorOp::kGt, {"5"}, {}};
  CHECK(k8s::RequirementHolds(gt, "7"));
  CHECK(k8s::RequirementHolds(gt, "+7"));
  CHECK_FALSE(k8s::RequirementHolds(gt, "x"));  // strtoll read it as 0 (and 0 > -1 held)
  CHECK_FALSE(k8s::RequirementHolds({"gen", k8s::SelectorOp::kGt, {"-1"}, {}}, "x"));
  CHECK_FALSE(k8s::RequirementHolds(gt, "7x"));
  CHECK_FALSE(k8s::RequirementHolds(gt, std::nullopt));
  CHECK_FALSE(k8s::RequirementHolds({"gen", k8s::SelectorOp::kLt, {"5", "6"}, {}}, "1"));
  // An empty term matches nothing; matchFields sees the name.
  auto none = [](std::string_view) { return std::optional<std::string_view>(); };
  CHECK_FALSE(k8s::TermMatches(k8s::NodeSelectorTerm{}, none, "n1"));
  k8s::NodeSelectorTerm by_name;
  by_name.match_fields.push_back({"metadata.name", k8s::SelectorOp::kIn, {"n1"}, {}});
  CHECK(k8s::TermMatches(by_name, none, "n1"));
  CHECK_FALSE(k8s::TermMatches(by_name, none, "n2"));
}

TEST_CASE("a rejection is unresolvable where its filter says so - stdlib and custom policies alike") {
  // The stdlib marks the filters kube returns UnschedulableAndUnresolvable
  // from; a custom policy marks its own. Each node below fails one way.
  auto node = [](const std::string& name, k8s::StringMap labels, std::vector<k8s::Taint> taints = {}) {
    k8s::Node n;
    n.name = name;
    n.labels = std::move(labels);
    n.labels.emplace_back("kubernetes.io/hostname", name);
    n.taints = std::move(taints);
    n.allocatable = {{"cpu", k8s::Quantity::FromUnits(4)}, {"memory", *k8s::Quantity::Parse("16Gi")},
                     {"pods", k8s::Quantity::FromUnits(110)}};
    return n;
  };
  engine::Cluster cluster;
  cluster.AddNode(node("tainted", {{"zone", "a"}}, {{"dedicated", "x", k8s::TaintEffect::kNoSchedule}}));
  cluster.AddNode(node("no-zone", {}));                    // PodTopologySpread: missing required label
  cluster.AddNode(node("small", {{"zone", "b"}}));         // NodeResourcesFit: Insufficient cpu (resolvable)
  cluster.AddNode(node("custom", {{"zone", "c"}, {"block", "hard"}}));
  cluster.AddNode(node("soft", {{"zone", "c"}, {"block", "soft"}}));
  k8s::Pod pod;
  pod.name = "p";
  pod.namespace_name = "default";
  pod.labels = {{"app", "p"}};
  k8s::Container c;
  c.requests = {{"cpu", k8s::Quantity::FromUnits(3)}};
  pod.containers = {c};
  k8s::TopologySpreadConstraint spread;
  spread.max_skew = 1;
  spread.topology_key = "zone";
  spread.when_unsatisfiable = k8s::WhenUnsatisfiable::kDoNotSchedule;
  spread.label_selector = k8s::LabelSelector{{{"app", "p"}}, {}};
  pod.topology_spread = {spread};
  // A bound pod asking 2 cpu on `small` leaves it 2: Insufficient cpu there.
  k8s::Pod busy = pod;
  busy.name = "busy";
  busy.labels = {};
  busy.topology_spread = {};
  busy.node_name = "small";
  busy.containers[0].requests = {{"cpu", k8s::Quantity::FromUnits(2)}};
  cluster.BindPod(busy);
  auto custom = std::make_shared<const Source>("block.policy",
                                               "policy Block \"b\"\n"
                                               "  filter node.labels[\"block\"] != \"hard\"\n"
                                               "    reason \"blocked hard\"\n"
                                               "    unresolvable\n"
                                               "  filter node.labels[\"block\"] != \"soft\"\n"
                                               "    reason \"blocked soft\"\n");
  DiagnosticSink diags;
  std::unique_ptr<engine::Engine> e = engine::Engine::Create(rt::DefaultProfile(), {custom}, {}, diags);
  REQUIRE_MESSAGE(e != nullptr, RenderAll(diags));
  std::unique_ptr<engine::PodPlan> plan = e->Plan(pod, cluster);
  const rt::Decision& d = e->Decide(*plan, cluster);
  rt::Placement words = e->Explain(*plan, cluster, d);
  std::map<std::string, std::vector<std::pair<std::string, bool>>> got;  // node -> (reason, unresolvable)
  for (const rt::NodeResult& n : words.nodes) {
    for (const rt::NodeReason& r : n.reasons) got[n.name].emplace_back(r.reason, r.unresolvable);
  }
  auto has = [&](const std::string& name, const std::string& reason, bool unresolvable) {
    for (const auto& [text, flag] : got[name]) {
      if (text.find(reason) != std::string::npos) return flag == unresolvable;
    }
    return false;
  };
  CHECK(has("tainted", "untolerated taint", true));
  CHECK(has("no-zone", "missing required label", true));
  CHECK(has("small", "Insufficient cpu", false));
  CHECK(has("custom", "blocked hard", true));
  CHECK(has("soft", "blocked soft", false));
}
