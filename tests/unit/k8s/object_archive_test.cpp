#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "k8s/cluster_reader.h"
#include "k8s/object_archive.h"

using namespace policy;

namespace {

// Every object of every test and example snapshot, as the loader decodes it.
class Collect final : public k8s::ClusterVisitor {
 public:
  void OnNode(k8s::Node&& v, Span) override { nodes.push_back(std::move(v)); }
  void OnPod(k8s::Pod&& v, Span) override { pods.push_back(std::move(v)); }
  void OnNamespace(k8s::Namespace&& v, Span) override { namespaces.push_back(std::move(v)); }
  void OnVolume(k8s::PersistentVolume&& v, Span) override { volumes.push_back(std::move(v)); }
  std::vector<k8s::Node> nodes;
  std::vector<k8s::Pod> pods;
  std::vector<k8s::Namespace> namespaces;
  std::vector<k8s::PersistentVolume> volumes;
};

Collect Snapshots() {
  Collect all;
  std::vector<std::string> files = {POLICYC_SOURCE_DIR "/examples/cluster.yaml"};
  for (const auto& e : std::filesystem::directory_iterator(POLICYC_SOURCE_DIR "/tests/data")) {
    std::string name = e.path().filename().string();
    if (name.ends_with("-cluster.yaml") || name.ends_with("-cluster.json") || name.ends_with("snapshot.yaml")) {
      files.push_back(e.path().string());
    }
  }
  for (const std::string& f : files) {
    std::string error;
    std::unique_ptr<Source> source = Source::FromFile(f, &error);
    REQUIRE_MESSAGE(source, error);
    DiagnosticSink diags;
    k8s::ClusterReadStats stats;
    k8s::ReadCluster(*source, all, diags, &stats);
  }
  return all;
}

bool SameNode(const k8s::Node& a, const k8s::Node& b) {
  auto same_taints = [](const std::vector<k8s::Taint>& x, const std::vector<k8s::Taint>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].key != y[i].key || x[i].value != y[i].value || x[i].effect != y[i].effect) return false;
    }
    return true;
  };
  return a.name == b.name && a.labels == b.labels && a.annotations == b.annotations && same_taints(a.taints, b.taints) &&
         a.unschedulable == b.unschedulable && a.allocatable == b.allocatable && a.capacity == b.capacity &&
         a.images == b.images;
}

}  // namespace

TEST_CASE("every object of the test snapshots reads back from its binary form as it was") {
  Collect all = Snapshots();
  REQUIRE(all.nodes.size() > 20);
  REQUIRE(all.pods.size() > 30);
  k8s::ArchiveWriter w;
  for (const k8s::Node& n : all.nodes) w.Put(n);
  for (const k8s::Pod& p : all.pods) w.Put(p);
  for (const k8s::Namespace& n : all.namespaces) w.Put(n);
  for (const k8s::PersistentVolume& v : all.volumes) w.Put(v);
  k8s::ArchiveReader r(w.Bytes());
  for (const k8s::Node& n : all.nodes) {
    k8s::Node back;
    REQUIRE(r.Get(back));
    CHECK(SameNode(back, n));
  }
  for (const k8s::Pod& p : all.pods) {
    k8s::Pod back;
    REQUIRE(r.Get(back));
    CHECK(back == p);
    // Quantities keep their spelling (messages print them).
    for (size_t c = 0; c < p.containers.size(); ++c) {
      for (size_t q = 0; q < p.containers[c].requests.size(); ++q) {
        CHECK(back.containers[c].requests[q].second.ToString() == p.containers[c].requests[q].second.ToString());
      }
    }
  }
  for (const k8s::Namespace& n : all.namespaces) {
    k8s::Namespace back;
    REQUIRE(r.Get(back));
    CHECK(back.name == n.name);
    CHECK(back.labels == n.labels);
  }
  for (const k8s::PersistentVolume& v : all.volumes) {
    k8s::PersistentVolume back;
    REQUIRE(r.Get(back));
    CHECK(back == v);
  }
  CHECK(r.AtEnd());
}

TEST_CASE("a damaged archive fails to read and never reads past its end") {
  Collect all = Snapshots();
  k8s::ArchiveWriter w;
  w.Put(all.pods.front());
  const std::string& bytes = w.Bytes();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    k8s::ArchiveReader r(std::string_view(bytes).substr(0, cut));
    k8s::Pod back;
    CHECK_FALSE(r.Get(back));
  }
  // A namespace whose labels claim 2^40 entries: refused, nothing allocated for them.
  k8s::ArchiveWriter crafted;
  crafted.Str("ns");
  crafted.U64(uint64_t{1} << 40);
  k8s::ArchiveReader big(crafted.Bytes());
  k8s::Namespace ns;
  CHECK_FALSE(big.Get(ns));
  // A taint effect past the enum's values.
  k8s::ArchiveWriter effect;
  effect.Str("n");
  for (int i = 0; i < 2; ++i) effect.U64(0);  // no labels, no annotations
  effect.U64(1);                              // one taint
  effect.Str("k");
  effect.Str("v");
  effect.U64(9);  // no such effect
  k8s::ArchiveReader bad(effect.Bytes());
  k8s::Node node;
  CHECK_FALSE(bad.Get(node));
}
