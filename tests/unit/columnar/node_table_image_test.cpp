// NodeTable's image (node_table_image.cpp): a table read back answers every
// query as the table that wrote it, keeps doing so under the same updates
// after, and damaged bytes are refused.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

#include <fmt/format.h>

#include "k8s/object_archive.h"
#include "k8s/quantity.h"
#include "runtime/columnar/node_table.h"

using namespace policy;
using namespace policy::k8s;
using namespace policy::rt;

namespace {

const std::vector<std::string> kZones = {"z1", "z2", "z3"};
const std::vector<std::string> kApps = {"web", "db", "cache"};
const std::vector<std::string> kNamespaces = {"shop", "ops"};

Node RandomNode(const std::string& name, std::mt19937& rng) {
  Node n;
  n.name = name;
  n.labels = {{"kubernetes.io/hostname", name}, {"gen", std::to_string(rng() % 4)}};
  if (rng() % 5 != 0) n.labels.emplace_back("topology.kubernetes.io/zone", kZones[rng() % 3]);
  if (rng() % 3 == 0) n.labels.emplace_back("nvidia.com/gpu.memory", fmt::format("{}Gi", 16 << (rng() % 3)));
  n.allocatable = {{"cpu", Quantity::FromUnits(4 + static_cast<int64_t>(rng() % 8))},
                   {"memory", *Quantity::Parse("16Gi")},
                   {"pods", Quantity::FromUnits(110)}};
  if (rng() % 4 == 0) n.allocatable.emplace_back("attachable-volumes-csi-ebs.csi.aws.com", Quantity::FromUnits(25));
  if (rng() % 3 == 0) n.taints.push_back({"gpu", "true", TaintEffect::kNoSchedule});
  if (rng() % 5 == 0) n.taints.push_back({fmt::format("t{}", rng() % 70), "", TaintEffect::kPreferNoSchedule});
  n.unschedulable = rng() % 7 == 0;
  if (rng() % 2 == 0) n.images.push_back({{"nginx:1.25", "docker.io/nginx:1.25"}, 70'000'000});
  return n;
}

Pod RandomPod(const std::string& name, const std::string& node, std::mt19937& rng) {
  Pod p;
  p.name = name;
  p.namespace_name = kNamespaces[rng() % 2];
  p.node_name = node;
  p.phase = PodPhase::kRunning;
  if (rng() % 4 != 0) p.uid = fmt::format("uid-{}", name);
  if (rng() % 3 != 0) p.start_time = fmt::format("2026-01-01T00:00:{:02}Z", rng() % 60);
  if (rng() % 3 == 0) {
    p.priority = static_cast<int32_t>(rng() % 2000) - 1000;
  } else if (rng() % 2 == 0) {
    p.priority_class_name = rng() % 2 == 0 ? "system-node-critical" : "unknown-class";
  }
  std::string app = kApps[rng() % 3];
  p.labels = {{"app", app}, {"pod-template-hash", fmt::format("h{}", rng() % 5)}};
  Container c;
  c.requests = {{"cpu", Quantity::FromMilli(100 + static_cast<int64_t>(rng() % 900))}};
  if (rng() % 2 == 0) c.requests.emplace_back("memory", *Quantity::Parse("256Mi"));
  if (rng() % 9 == 0) c.host_ports.push_back({8080, "TCP", "0.0.0.0"});
  p.containers = {c};
  if (rng() % 3 == 0) {
    PodAffinityTerm t;
    t.label_selector = LabelSelector{{{"app", app}}, {}};
    t.topology_key = rng() % 2 == 0 ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname";
    p.affinity.pod_anti_affinity = PodAffinity{{t}, {}};
  }
  if (rng() % 6 == 0) {
    Volume v;
    v.name = "data";
    v.kind = Volume::Kind::kClaim;
    v.claim = fmt::format("data-{}", name);
    p.volumes.push_back(v);
  }
  return p;
}

// Everything a reader of the table can see, as text.
std::string Fingerprint(const NodeTable& t) {
  // (Not RowMemoryBytes: the name index's size follows the names a table
  // ever had, and an image holds the live ones.)
  std::string out = fmt::format("nodes {} pods {} rows {} dictionaries {}\n", t.NodeCount(), t.BoundPodCount(),
                                t.RowCount(), t.DictionaryMemoryBytes());
  PodSelector web;
  web.clauses.push_back({LabelSelector{{{"app", "web"}}, {}}, false, {"shop"}});
  PodSelector any_front;
  any_front.clauses.push_back({LabelSelector{{}, {{"app", SelectorOp::kIn, {"web", "db"}, {}}}}, true, {}});
  uint32_t s1 = t.PodSet(web), s2 = t.PodSet(any_front);
  for (RowId row : t.LiveRows()) {
    out += fmt::format("{}: unsched {} pods {} nz {} {} {}", t.NodeName(row), t.Unschedulable()[row], t.PodCount()[row],
                       t.NonZeroMilliCpu()[row], t.NonZeroMemory()[row], t.NonZeroMemoryMilli()[row]);
    for (const LabelColumn& c : t.Labels()) {
      uint32_t d = c.domain[row];
      out += fmt::format(" [{}={} {} {} {} {} live {}]", t.pool().Get(c.key), t.pool().Get(c.value[d]), c.int_value[d],
                         c.is_int[d], c.quantity_milli[d], c.is_quantity[d], c.live_nodes[d]);
    }
    for (const ResourceColumn& c : t.Resources()) {
      out += fmt::format(" {}:{}/{}/{}/{}", t.pool().Get(c.name), c.allocatable[row], c.requested[row],
                         c.allocatable_milli[row], c.requested_milli[row]);
    }
    for (uint32_t id : t.Taints(row)) {
      const TaintEntry& e = t.TaintDictionary()[id];
      out += fmt::format(" taint {}={}:{}", t.pool().Get(e.key), t.pool().Get(e.value), static_cast<int>(e.effect));
    }
    for (uint64_t w : t.TaintBits(row)) out += fmt::format(" bits {:x}", w);
    if (std::optional<uint32_t> image = t.ImageId("docker.io/nginx:1.25")) out += fmt::format(" image {}", t.ImageSize(row, *image));
    for (const NodeTable::PodOnRow& pod : t.PodsBoundTo(row)) {
      out += fmt::format(" pod {} uid {} priority {} started {}", pod.key, pod.uid, pod.priority, pod.start_time);
      for (const auto& [key, value] : t.PodLabels(pod.key)) out += fmt::format(" {}={}", key, value);
      for (const auto& [index, amount] : pod.requests) out += fmt::format(" {}:{}", index, amount);
    }
    for (const HostPort* p : t.UsedPorts(row)) out += fmt::format(" port {}/{}", p->port, p->protocol);
    for (const auto& [driver, limit] : t.VolumeLimits(row)) out += fmt::format(" limit {}={}", driver, limit);
    out += fmt::format(" sets {} {} {} {}", t.PodsOnRow(s1, row), t.PodsInDomain(s1, "topology.kubernetes.io/zone", row),
                       t.PodsOnRow(s2, row), t.PodsInDomain(s2, "gen", row));
    for (uint32_t g = 0; g < t.TermGroups().size(); ++g) out += fmt::format(" g{}={}", g, t.TermGroupInDomain(g, row));
    out += "\n";
  }
  out += fmt::format("with image {}\n", t.NodesWithImage("nginx:1.25"));
  for (const TermGroup& g : t.TermGroups()) {
    out += fmt::format("group {} {} {} {}\n", static_cast<int>(g.kind), g.weight, g.term.topology_key, g.owner_namespace);
  }
  for (const std::string& ns : kNamespaces) {
    out += fmt::format("ns {} labels {}\n", ns, t.NamespaceLabels(ns).size());
    for (int i = 0; i < 400; ++i) out += t.ClaimInUse(ns, fmt::format("data-p{}", i)) ? fmt::format("claim {}/{}\n", ns, i) : "";
  }
  out += fmt::format("owners {} storage {} namespaces {}\n", t.SelectorOwners().size(), t.Storage().Count(), t.NamespaceCount());
  return out;
}

// A table built by updates: nodes added, changed and removed (their rows
// compacted), pods bound and unbound, every pod on a node at the end.
struct Built {
  NodeTable table;
  std::vector<std::pair<std::string, std::string>> pods;  // (namespace, name) bound
};

void Grow(Built& b, std::mt19937& rng, int from, int steps) {
  for (int step = from; step < from + steps; ++step) {
    int op = static_cast<int>(rng() % 10);
    std::string node = fmt::format("n{}", rng() % 40);
    if (op < 6) {
      if (!b.table.FindNode(node)) continue;
      Pod p = RandomPod(fmt::format("p{}", step), node, rng);
      if (b.table.BindPod(p) == BindResult::kBound) b.pods.emplace_back(p.namespace_name, p.name);
    } else if (op < 8 && !b.pods.empty()) {
      size_t i = rng() % b.pods.size();
      REQUIRE(b.table.UnbindPod(b.pods[i].first, b.pods[i].second));
      b.pods.erase(b.pods.begin() + static_cast<long>(i));
    } else if (op == 8) {
      if (b.table.FindNode(node)) {
        REQUIRE(b.table.UpdateNode(RandomNode(node, rng)));
      } else {
        REQUIRE(b.table.AddNode(RandomNode(node, rng)));
      }
    } else if (b.table.FindNode(node) && b.table.NodeCount() > 5) {
      // Its pods go with it (an image holds no pod waiting for a node).
      for (size_t i = 0; i < b.pods.size();) {
        const NodeTable& t = b.table;
        bool on_it = false;
        for (const NodeTable::PodOnRow& pod : t.PodsBoundTo(*t.FindNode(node))) {
          on_it = on_it || pod.key == b.pods[i].first + "/" + b.pods[i].second;
        }
        if (on_it) {
          REQUIRE(b.table.UnbindPod(b.pods[i].first, b.pods[i].second));
          b.pods.erase(b.pods.begin() + static_cast<long>(i));
        } else {
          ++i;
        }
      }
      REQUIRE(b.table.RemoveNode(node));
    }
  }
}

std::string ImageOf(const NodeTable& t) {
  ArchiveWriter out;
  REQUIRE(t.WriteImage(out));
  return out.Bytes();
}

}  // namespace

TEST_CASE("a table read from its image answers as the table that wrote it - then and after the same updates") {
  for (unsigned seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    Built b;
    for (int i = 0; i < 30; ++i) REQUIRE(b.table.AddNode(RandomNode(fmt::format("n{}", i), rng)));
    b.table.SetNamespaceLabels("shop", {{"team", "a"}});
    b.table.AddSelectorOwner({"Service", "web", "shop", StringMap{{"app", "web"}}, std::nullopt});
    PersistentVolumeClaim claim;
    claim.name = "data-p7";
    claim.namespace_name = "shop";
    b.table.MutableStorage().claims.emplace("shop/data-p7", claim);
    Grow(b, rng, 0, 1500);

    std::string image = ImageOf(b.table);
    ArchiveReader in(image);
    std::unique_ptr<NodeTable> read = NodeTable::ReadImage(in);
    REQUIRE(read != nullptr);
    CHECK(in.AtEnd());
    CHECK(Fingerprint(*read) == Fingerprint(b.table));
    // Read back, a table's image holds its arenas without the garbage
    // unbinds left: from then on the image is the same bytes each time.
    std::string again = ImageOf(*read);
    CHECK(again.size() <= image.size());
    ArchiveReader in2(again);
    std::unique_ptr<NodeTable> reread = NodeTable::ReadImage(in2);
    REQUIRE(reread != nullptr);
    CHECK(ImageOf(*reread) == again);

    // The same updates to both: the read table's lists and indexes work.
    Built copy{std::move(*read), b.pods};
    std::mt19937 rng_a(seed + 100), rng_b(seed + 100);
    Grow(b, rng_a, 2000, 800);
    Grow(copy, rng_b, 2000, 800);
    CHECK(Fingerprint(copy.table) == Fingerprint(b.table));
  }
}

TEST_CASE("a table with a pod waiting for its node writes no image") {
  NodeTable t;
  std::mt19937 rng(5);
  REQUIRE(t.AddNode(RandomNode("n0", rng)));
  REQUIRE(t.BindPod(RandomPod("p0", "n-missing", rng)) == BindResult::kWaitingForNode);
  ArchiveWriter out;
  CHECK_FALSE(t.WriteImage(out));
}

TEST_CASE("every truncated image is refused and damaged bytes never crash") {
  std::mt19937 rng(7);
  Built b;
  for (int i = 0; i < 8; ++i) REQUIRE(b.table.AddNode(RandomNode(fmt::format("n{}", i), rng)));
  Grow(b, rng, 0, 120);
  std::string image = ImageOf(b.table);
  size_t refused = 0;
  for (size_t size = 0; size < image.size(); ++size) {
    ArchiveReader in(std::string_view(image).substr(0, size));
    refused += NodeTable::ReadImage(in) == nullptr;
  }
  CHECK(refused == image.size());
  // Flipped bytes: a table or none, and a table read whole answers queries.
  for (size_t at = 0; at < image.size(); at += 3) {
    std::string damaged = image;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    ArchiveReader in(damaged);
    if (std::unique_ptr<NodeTable> t = NodeTable::ReadImage(in)) (void)Fingerprint(*t);
  }
}

TEST_CASE("pods bound and unbound without end keep the pod storage bounded and the counts right") {
  NodeTable t;
  std::mt19937 rng(11);
  for (int i = 0; i < 20; ++i) REQUIRE(t.AddNode(RandomNode(fmt::format("n{}", i), rng)));
  PodSelector web;
  web.clauses.push_back({LabelSelector{{{"app", "web"}}, {}}, true, {}});
  uint32_t set = t.PodSet(web);
  std::vector<Pod> bound;
  size_t after_first = 0, most = 0;
  for (int round = 0; round < 40; ++round) {
    for (const Pod& p : bound) REQUIRE(t.UnbindPod(p.namespace_name, p.name));
    bound.clear();
    for (int i = 0; i < 2000; ++i) {
      // Every pod new: its own name and a label value no pod had.
      Pod p = RandomPod(fmt::format("r{}-p{}", round, i), fmt::format("n{}", rng() % 20), rng);
      p.labels.emplace_back("pod-uid", fmt::format("u{}-{}", round, i));
      REQUIRE(t.BindPod(p) == BindResult::kBound);
      bound.push_back(p);
    }
    if (round == 0) after_first = t.PodMemoryBytes();
    most = std::max(most, t.PodMemoryBytes());
  }
  CAPTURE(after_first);
  CHECK(most <= 4 * after_first);  // 80,000 pods went by; the storage holds about 2,000
  // The counts over the last round's pods, against a recount.
  set = t.PodSet(web);
  std::map<std::string, int64_t> web_by_node;
  for (const Pod& p : bound) web_by_node[p.node_name] += k8s::Find(p.labels, "app") && *k8s::Find(p.labels, "app") == "web";
  for (int i = 0; i < 20; ++i) {
    std::string name = fmt::format("n{}", i);
    CHECK(t.PodsOnRow(set, *t.FindNode(name)) == web_by_node[name]);
  }
  PodSelector one;
  one.clauses.push_back({LabelSelector{{{"pod-uid", "u39-7"}}, {}}, true, {}});
  int64_t ones = 0;
  for (int i = 0; i < 20; ++i) ones += t.PodsOnRow(t.PodSet(one), *t.FindNode(fmt::format("n{}", i)));
  CHECK(ones == 1);
}
