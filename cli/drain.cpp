// `policyc drain`: which nodes could go, every pod they run placed
// elsewhere by the engine, and what the cluster would lose
// (runtime/engine/drain.h). Nothing is changed anywhere: it reads a snapshot.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/summary.h"
#include "cli/engine_setup.h"
#include "runtime/tooling/input.h"
#include "runtime/tooling/snapshot_objects.h"
#include "runtime/tooling/structured_output.h"
#include "k8s/quantity.h"
#include "support/json_writer.h"
#include "runtime/engine/cluster.h"
#include "runtime/engine/drain.h"
#include "runtime/engine/engine.h"
#include "runtime/sched/profile.h"

namespace policy::cli {
namespace {

constexpr const char* kSynopsis = "usage: policyc drain --cluster CLUSTER [--node NAME ...] [--max-drained N]\n"
                                  "                     [--output|-o text|json|yaml] [--no-cache]\n                     ";
constexpr const char* kUsage = R"(

Which nodes of CLUSTER (a snapshot, as for `check`) could be drained with
every pod they run placed elsewhere, and what the cluster would lose in
headroom: cluster compression, simulated. Nodes are tried one after another
(those given by --node, in that order; else every node, the least requested
first): the node's pods are placed on the other nodes by the scheduler
(every plugin of the profile, preemption off), highest priority first; when
all find a place the node counts as drained and the next is tried against
the cluster as that left it; when one fits nowhere the node stays as it was
and that pod is named as what pins it, with kube-scheduler's reason.
DaemonSet and mirror pods go with their node and are not placed. It reads
the snapshot only: nothing is evicted or changed. --max-drained N stops
after N nodes drained (0: none tried, the cluster's headroom as it is).
CLUSTER is read from its snapshot cache when it has one, as check reads it,
and its bound pods and nodes from their objects cache beside it
(docs/cache.md); --no-cache reads the files alone.

Exit status: 0 some node can be drained, 1 none can, 2 bad input or usage.
)";

std::string Usage() { return std::string(kSynopsis) + EngineSynopsis(21) + kUsage + "\n" + EngineHelp({}); }

std::string Text(const engine::DrainPlan& plan) {
  std::string out;
  if (plan.drained.empty() && plan.pinned.empty()) {
    out += "no node was tried (--max-drained 0, or none asked for).\n";
  } else if (plan.drained.empty()) {
    out += "no node can be drained: each runs a pod that fits nowhere else.\n";
  } else {
    out += plan.drained.size() == 1 ? std::string("1 node can be drained (its pods placed elsewhere):\n")
                                    : fmt::format("{} nodes can be drained together (each one's pods placed elsewhere, "
                                                  "in this order):\n", plan.drained.size());
    for (const engine::DrainedNode& d : plan.drained) {
      std::map<std::string, int> to;
      for (const engine::PodMove& m : d.moves) ++to[m.node];
      std::vector<std::string> where;
      for (const auto& [node, n] : to) where.push_back(to.size() == 1 ? node : fmt::format("{} ({})", node, n));
      if (d.moves.empty()) {
        out += fmt::format("  {}: no pod to move.\n", d.node);
      } else {
        std::string places = where.size() == 1 ? where.front()
                                               : fmt::format("{} and {}", fmt::join(where.begin(), where.end() - 1, ", "),
                                                             where.back());
        out += fmt::format("  {}: its {} pod{} to {}.\n", d.node, d.moves.size(),
                           d.moves.size() == 1 ? " moves" : "s move", places);
      }
      if (!d.go_along.empty()) {
        out += fmt::format("    {} DaemonSet or mirror pod{} with it.\n", d.go_along.size(),
                           d.go_along.size() == 1 ? " goes" : "s go");
      }
    }
  }
  if (!plan.pinned.empty()) {
    out += fmt::format("\n{} node{} pinned (the first pod that fits nowhere else):\n", plan.pinned.size(),
                       plan.pinned.size() == 1 ? "" : "s");
    for (const engine::PinnedNode& p : plan.pinned) out += fmt::format("  {}: {}: {}\n", p.node, p.pod, p.summary);
  }
  for (const std::string& s : plan.skipped) out += fmt::format("\nno node named `{}`: skipped.\n", s);
  out += "\nheadroom (allocatable and free, before -> after):\n";
  for (const engine::Headroom& h : plan.headroom) {
    out += fmt::format("  {:<20} allocatable {} -> {}, free {} -> {}\n", h.resource,
                       k8s::ReadableAmount(h.resource, h.allocatable_before), k8s::ReadableAmount(h.resource, h.allocatable_after),
                       k8s::ReadableAmount(h.resource, h.free_before), k8s::ReadableAmount(h.resource, h.free_after));
  }
  return out;
}

std::string Json(const engine::DrainPlan& plan) {
  JsonWriter w;
  w.BeginObject();
  w.Key("drained").BeginArray();
  for (const engine::DrainedNode& d : plan.drained) {
    w.BeginObject().Key("node").String(d.node).Key("moves").BeginArray();
    for (const engine::PodMove& m : d.moves) w.BeginObject().Key("pod").String(m.pod).Key("to").String(m.node).EndObject();
    w.EndArray().Key("goWithNode").BeginArray();
    for (const std::string& p : d.go_along) w.String(p);
    w.EndArray().EndObject();
  }
  w.EndArray();
  w.Key("pinned").BeginArray();
  for (const engine::PinnedNode& p : plan.pinned) {
    w.BeginObject().Key("node").String(p.node).Key("pod").String(p.pod).Key("summary").String(p.summary).EndObject();
  }
  w.EndArray();
  w.Key("skipped").BeginArray();
  for (const std::string& s : plan.skipped) w.String(s);
  w.EndArray();
  w.Key("headroom").BeginArray();
  for (const engine::Headroom& h : plan.headroom) {
    w.BeginObject().Key("resource").String(h.resource);
    w.Key("allocatableBefore").String(k8s::WrittenAmount(h.resource, h.allocatable_before));
    w.Key("allocatableAfter").String(k8s::WrittenAmount(h.resource, h.allocatable_after));
    w.Key("freeBefore").String(k8s::WrittenAmount(h.resource, h.free_before));
    w.Key("freeAfter").String(k8s::WrittenAmount(h.resource, h.free_after));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take() + "\n";
}

int Drain(const Args& args) {
  std::optional<tooling::OutputFormat> format = tooling::ParseOutputFormat("drain", args.Get("output", "text"));
  if (!format) return kExitBadInput;
  std::string error;
  std::optional<int64_t> max_drained = args.GetInt("max-drained", INT64_MAX, 0, INT64_MAX, &error);
  if (!max_drained) {
    fmt::print(stderr, "policyc drain: {}\n", error);
    return kExitBadInput;
  }
  DiagnosticSink diags;
  auto refuse = [&] {
    std::fputs(RenderAll(diags).c_str(), stderr);
    return kExitBadInput;
  };
  std::optional<std::vector<rt::SnapshotFile>> snapshot = tooling::SnapshotFiles(args.GetAll("cluster"), diags);
  if (!snapshot) return refuse();
  rt::CacheOptions cache = tooling::CacheFromFlags(args.Has("no-cache"));
  std::unique_ptr<engine::Cluster> cluster = engine::Cluster::LoadFiles(*snapshot, cache, diags);
  if (!cluster) return refuse();
  if (std::optional<std::string> why =
          tooling::NotACluster(cluster->Report(), fmt::format("{}", fmt::join(args.GetAll("cluster"), ", ")))) {
    fmt::print(stderr, "policyc drain: {}\n", *why);
    return kExitBadInput;
  }
  // A node asked for that the snapshot does not have is bad input, said
  // before any work.
  if (std::optional<std::string> unknown = tooling::UnknownNode(cluster->Table(), args.GetAll("node"), args.GetAll("cluster"))) {
    fmt::print(stderr, "policyc drain: {}\n", *unknown);
    return kExitBadInput;
  }
  tooling::SnapshotObjects objects;
  std::vector<std::shared_ptr<const Source>> read;  // what the objects' spans point into
  if (!tooling::LoadSnapshotObjects(*snapshot, cache, objects, diags, read)) return refuse();
  tooling::ResolveBoundPriorities(objects, cluster->Table());
  std::optional<rt::Profile> profile = ProfileFromFlags("drain", args, "default-scheduler", diags);
  if (!profile) return diags.HasErrors() ? refuse() : kExitBadInput;
  std::optional<engine::EngineOptions> options = EngineOptionsFromFlags("drain", args);
  if (!options) return kExitBadInput;
  std::unique_ptr<engine::Engine> engine = EngineFromFlags(args, *profile, *options, diags);
  if (!engine) return refuse();
  if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);  // warnings

  engine::DrainOptions drain;
  drain.nodes = args.GetAll("node");
  drain.max_drained = static_cast<size_t>(*max_drained);
  engine::DrainPlan plan = engine::PlanDrain(*engine, *cluster, objects.bound, objects.nodes, drain);
  fmt::print("{}", *format == tooling::OutputFormat::kText ? Text(plan) : tooling::Structured(*format, Json(plan)));
  return plan.drained.empty() ? kExitNo : kExitOk;
}

}  // namespace

namespace {

int Run(const Args& args) {
  if (!args.Has("cluster")) {
    fmt::print(stderr, "policyc drain: `--cluster` is missing\nRun `policyc drain --help` for usage.\n");
    return kExitBadInput;
  }
  if (!args.Positional().empty()) {
    fmt::print(stderr, "policyc drain: unexpected argument `{}` (nodes go with --node)\nRun `policyc drain --help` for usage.\n", args.Positional().front());
    return kExitBadInput;
  }
  return Drain(args);
}

}  // namespace

Command DrainCommand() {
  return {"drain", "which nodes could go, their pods placed elsewhere (cluster compression)", Usage(),
          WithEngineFlags({{"cluster", true, true}, {"node", true, true}, {"max-drained"}, {"output", true, false, 'o'}, {"no-cache", false}}),
          &Run};
}

}  // namespace policy::cli
