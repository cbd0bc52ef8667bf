// `policyc inspect`: what policyc reads from a cluster snapshot or a pod.

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_setup.h"
#include "runtime/tooling/input.h"
#include "runtime/tooling/node_view.h"
#include "runtime/tooling/snapshot_objects.h"
#include "runtime/tooling/structured_output.h"
#include "cli/summary.h"
#include "k8s/pod_reader.h"
#include "k8s/pod_resources.h"
#include "k8s/quantity.h"
#include "support/json_writer.h"
#include "runtime/engine/cluster.h"

namespace policy::cli {
namespace {

constexpr const char* kUsage = R"(usage: policyc inspect --cluster FILE [--output|-o text|json|yaml] [--all-labels] [--no-cache] [--node NAME ...]
       policyc inspect --pod FILE [--output|-o text|json|yaml] [--validate strict|warn|ignore]

Loads a cluster snapshot (`kubectl get nodes,pods,namespaces,services,replicasets,
statefulsets,replicationcontrollers,pvc,pv,storageclasses,csinodes,priorityclasses,pdb,
deviceclasses,resourceslices,resourceclaims
-A -o yaml` or `-o json`,
a NodeList, a multi-document YAML stream; --cluster may be given several
times, and a directory stands for its .yaml, .yml and .json files) or a pod
(a Pod or a workload with a pod template) and prints what policyc reads from
it; `-` reads standard input. Bad input is reported with
file:line:col and exit status 2. A cluster's summary ends with the devices
Dynamic Resource Allocation drivers publish (ResourceSlices), per node;
--node NAME shows that node instead: its labels, taints, resources, the pods
bound to it, and each device with its attributes and capacity, and whether
an allocated claim holds it.
)";

std::string NodeText(const tooling::NodeView& v) {
  std::string out = fmt::format("node         {}{}\n", v.name, v.unschedulable ? " (unschedulable)" : "");
  for (const auto& [k, value] : v.labels) out += fmt::format("label        {}={}\n", k, value);
  for (const std::string& t : v.taints) out += fmt::format("taint        {}\n", t);
  for (const tooling::NodeView::Resource& r : v.resources) {
    out += fmt::format("resource     {:<28} allocatable {:>12}  requested {:>12}  free {:>12}\n", r.name,
                       k8s::ReadableAmount(r.name, r.allocatable), k8s::ReadableAmount(r.name, r.requested),
                       k8s::ReadableAmount(r.name, r.allocatable - r.requested));
  }
  out += fmt::format("pods         {}{}\n", v.pods.size(), v.pods.empty() ? "" : fmt::format(": {}", fmt::join(v.pods, ", ")));
  for (const tooling::NodeDevice& d : v.devices) {
    std::vector<std::string> parts;
    for (const auto& [k, value] : d.attributes) parts.push_back(fmt::format("{}={}", k, value));
    for (const auto& [k, value] : d.capacity) parts.push_back(fmt::format("{}: {}", k, value));
    out += fmt::format("device       {} (driver {}, pool {}{}){}{}\n", d.name, d.driver, d.pool,
                       d.shared ? ", a shared slice" : "", d.in_use ? " in use" : " free",
                       parts.empty() ? "" : fmt::format("; {}", fmt::join(parts, ", ")));
  }
  return out;
}

void NodeJson(JsonWriter& w, const tooling::NodeView& v) {
  w.BeginObject();
  w.Key("name").String(v.name);
  w.Key("unschedulable").Bool(v.unschedulable);
  w.Key("labels").BeginObject();
  for (const auto& [k, value] : v.labels) w.Key(k).String(value);
  w.EndObject();
  w.Key("taints").BeginArray();
  for (const std::string& t : v.taints) w.String(t);
  w.EndArray();
  w.Key("resources").BeginObject();
  for (const tooling::NodeView::Resource& r : v.resources) {
    w.Key(r.name).BeginObject();
    w.Key("allocatable").String(k8s::WrittenAmount(r.name, r.allocatable));
    w.Key("requested").String(k8s::WrittenAmount(r.name, r.requested));
    w.EndObject();
  }
  w.EndObject();
  w.Key("pods").BeginArray();
  for (const std::string& p : v.pods) w.String(p);
  w.EndArray();
  w.Key("devices").BeginArray();
  for (const tooling::NodeDevice& d : v.devices) {
    w.BeginObject().Key("name").String(d.name).Key("driver").String(d.driver).Key("pool").String(d.pool);
    w.Key("inUse").Bool(d.in_use).Key("shared").Bool(d.shared);
    w.Key("attributes").BeginObject();
    for (const auto& [k, value] : d.attributes) w.Key(k).String(value);
    w.EndObject();
    w.Key("capacity").BeginObject();
    for (const auto& [k, value] : d.capacity) w.Key(k).String(value);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// The devices section of a cluster's summary: per node, how many devices of
// which drivers, how many in use.
std::string DevicesText(const rt::NodeTable& table) {
  auto by_node = tooling::DevicesByNode(table);
  if (by_node.empty()) return "";
  std::string out = fmt::format("\ndevices (Dynamic Resource Allocation, on {} node{}; --node NAME lists them)\n",
                                by_node.size(), by_node.size() == 1 ? "" : "s");
  for (const auto& [node, devices] : by_node) {
    std::vector<std::string> drivers;
    size_t in_use = 0;
    for (const tooling::NodeDevice& d : devices) {
      if (std::find(drivers.begin(), drivers.end(), d.driver) == drivers.end()) drivers.push_back(d.driver);
      in_use += d.in_use ? 1 : 0;
    }
    out += fmt::format("  {:<40} {:>3} device{} ({}), {} in use\n", node, devices.size(), devices.size() == 1 ? "" : "s",
                       fmt::join(drivers, ", "), in_use);
  }
  return out;
}

std::string Requests(const k8s::ResourceList& list) {
  std::vector<std::string> parts;
  for (const auto& [name, q] : list) {
    parts.push_back(fmt::format("{} {}", name, q.ToString()));
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string Term(const k8s::NodeSelectorTerm& term) {
  std::vector<std::string> parts;
  auto add = [&](const k8s::SelectorRequirement& r, std::string_view prefix) {
    std::string values = r.values.empty() ? "" : fmt::format(" [{}]", fmt::join(r.values, ", "));
    parts.push_back(fmt::format("{}{} {}{}", prefix, r.key, k8s::ToString(r.op), values));
  };
  for (const auto& r : term.match_expressions) add(r, "");
  for (const auto& r : term.match_fields) add(r, "field ");
  return parts.empty() ? "(empty term)" : fmt::format("{}", fmt::join(parts, " and "));
}

std::string PodText(const k8s::Pod& pod) {
  std::string out = fmt::format("pod          {}/{}", pod.namespace_name, pod.name);
  if (!pod.template_of.empty()) out += fmt::format(" (template of {})", pod.template_of);
  out += '\n';
  out += fmt::format("requests     {}\n", Requests(k8s::PodRequests(pod)));
  k8s::NonZeroRequests nz = k8s::PodNonZeroRequests(pod);
  out += fmt::format("for scoring  cpu {}, memory {}\n", k8s::WrittenAmount("cpu", nz.milli_cpu),
                     k8s::WrittenAmount("memory", nz.memory));
  out += fmt::format("containers   {} ({} init, {} of them sidecars)\n", pod.containers.size(),
                     pod.init_containers.size(),
                     std::count_if(pod.init_containers.begin(), pod.init_containers.end(),
                                   [](const k8s::Container& c) { return c.restartable; }));
  for (const auto& [k, v] : pod.node_selector) out += fmt::format("nodeSelector {}={}\n", k, v);
  if (const auto& na = pod.affinity.node_affinity) {
    if (na->required) {
      for (const auto& term : *na->required) out += fmt::format("required     {}\n", Term(term));
    }
    for (const auto& p : na->preferred) out += fmt::format("preferred    weight {}: {}\n", p.weight, Term(p.preference));
  }
  auto pod_terms = [&](const std::optional<k8s::PodAffinity>& a, std::string_view what) {
    if (!a) return;
    for (const auto& t : a->required) out += fmt::format("{:<12} required, topologyKey {}\n", what, t.topology_key);
    for (const auto& t : a->preferred) {
      out += fmt::format("{:<12} preferred weight {}, topologyKey {}\n", what, t.weight, t.term.topology_key);
    }
  };
  pod_terms(pod.affinity.pod_affinity, "podAffinity");
  pod_terms(pod.affinity.pod_anti_affinity, "antiAffinity");
  for (const auto& t : pod.tolerations) {
    std::string what = t.key.empty() ? "every taint" : t.key;
    what += t.op == k8s::TolerationOp::kEqual ? "=" + t.value : t.key.empty() ? "" : " (any value)";
    out += fmt::format("tolerates    {}, {}\n", what,
                       t.effect ? fmt::format("effect {}", k8s::ToString(*t.effect)) : std::string("any effect"));
  }
  for (const auto& c : pod.topology_spread) {
    out += fmt::format("spread       {} maxSkew {} {}\n", c.topology_key, c.max_skew,
                       c.when_unsatisfiable == k8s::WhenUnsatisfiable::kDoNotSchedule ? "DoNotSchedule"
                                                                                      : "ScheduleAnyway");
  }
  if (pod.priority) out += fmt::format("priority     {}\n", *pod.priority);
  out += fmt::format("scheduler    {}\n", pod.scheduler_name);
  return out;
}

std::string PodJson(const k8s::Pod& pod) {
  JsonWriter w;
  w.BeginObject();
  w.Key("pod").String(pod.namespace_name + "/" + pod.name);
  if (!pod.template_of.empty()) w.Key("templateOf").String(pod.template_of);
  w.Key("requests").BeginObject();
  for (const auto& [name, q] : k8s::PodRequests(pod)) w.Key(name).String(q.ToString());
  w.EndObject();
  k8s::NonZeroRequests nz = k8s::PodNonZeroRequests(pod);
  w.Key("nonZeroRequests").BeginObject().Key("cpu").Int(nz.milli_cpu).Key("memory").Int(nz.memory).EndObject();
  w.Key("nodeSelector").BeginObject();
  for (const auto& [k, v] : pod.node_selector) w.Key(k).String(v);
  w.EndObject();
  w.Key("tolerations").Int(static_cast<int64_t>(pod.tolerations.size()));
  w.Key("topologySpreadConstraints").Int(static_cast<int64_t>(pod.topology_spread.size()));
  w.Key("schedulerName").String(pod.scheduler_name);
  w.EndObject();
  return w.Take();
}

int Fail(const DiagnosticSink& diags) {
  std::fputs(RenderAll(diags).c_str(), stderr);
  return kExitBadInput;
}

}  // namespace

namespace {

int Run(const Args& parsed_args) {
  std::string error;
  const Args* args = &parsed_args;
  std::optional<tooling::OutputFormat> format = tooling::ParseOutputFormat("inspect", args->Get("output", "text"));
  if (!format) return kExitBadInput;
  bool text = *format == tooling::OutputFormat::kText;
  if (args->Has("cluster") == args->Has("pod") || !args->Positional().empty()) {
    fmt::print(stderr, "policyc inspect: give exactly one of `--cluster FILE` or `--pod FILE`\nRun `policyc inspect --help` for usage.\n");
    return kExitBadInput;
  }
  DiagnosticSink diags;
  if (args->Has("pod")) {
    auto source = tooling::ReadInput(args->Get("pod"), diags);
    if (!source) return Fail(diags);
    std::optional<k8s::FieldValidation> validation = ValidationFromFlags("inspect", *args);
    if (!validation) return kExitBadInput;
    std::optional<k8s::Pod> pod = k8s::ReadPod(*source, diags, *validation);
    if (!pod) return Fail(diags);
    if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);  // warnings
    fmt::print("{}", text ? PodText(*pod) : tooling::Structured(*format, PodJson(*pod)));
    return kExitOk;
  }
  std::optional<std::vector<rt::SnapshotFile>> snapshot = tooling::SnapshotFiles(args->GetAll("cluster"), diags);
  if (!snapshot) return Fail(diags);
  std::unique_ptr<engine::Cluster> cluster =
      engine::Cluster::LoadFiles(*snapshot, tooling::CacheFromFlags(args->Has("no-cache")), diags);
  if (!cluster) return Fail(diags);
  if (!diags.All().empty()) std::fputs(RenderAll(diags).c_str(), stderr);  // warnings
  std::vector<std::string> paths = args->GetAll("cluster");
  std::string file = paths.size() == 1 ? paths[0] : fmt::format("{}", fmt::join(paths, ", "));
  if (std::optional<std::string> why = tooling::NotACluster(cluster->Report(), file)) {
    fmt::print(stderr, "policyc inspect: {}\n", *why);
    return kExitBadInput;
  }
  if (args->Has("node")) {
    if (std::optional<std::string> unknown = tooling::UnknownNode(cluster->Table(), args->GetAll("node"), paths)) {
      fmt::print(stderr, "policyc inspect: {}\n", *unknown);
      return kExitBadInput;
    }
    JsonWriter w;
    w.BeginArray();
    std::string out;
    for (const std::string& name : args->GetAll("node")) {
      tooling::NodeView view = *tooling::ViewNode(cluster->Table(), name);
      out += (out.empty() ? "" : "\n") + NodeText(view);
      NodeJson(w, view);
    }
    w.EndArray();
    fmt::print("{}", text ? out : tooling::Structured(*format, w.Take()));
    return kExitOk;
  }
  ClusterSummary summary = Summarize(file, cluster->Table(), cluster->Report());
  fmt::print("{}", text ? RenderText(summary, args->Has("all-labels") ? SIZE_MAX : 15) + DevicesText(cluster->Table())
                        : tooling::Structured(*format, RenderJson(summary)));
  return kExitOk;
}

}  // namespace

Command InspectCommand() {
  return {"inspect", "load a cluster snapshot or a pod and summarise what policyc reads", kUsage,
          {{"cluster", true, true}, {"pod"}, {"output", true, false, 'o'}, {"all-labels", false}, {"no-cache", false}, {"validate"}, {"node", true, true}},
          &Run};
}

}  // namespace policy::cli
