#include "cli/output_cluster.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "cli/structured_output.h"
#include "compiler/k8s/decode.h"
#include "compiler/k8s/document.h"
#include "compiler/k8s/object_reader.h"
#include "compiler/support/diagnostic.h"
#include "compiler/support/json_writer.h"

namespace policy::cli {
namespace {

using k8s::NodeRef;

std::string Key(std::string_view namespace_name, std::string_view name) {
  return std::string(namespace_name.empty() ? "default" : namespace_name) + "/" + std::string(name);
}

// A document node as JSON: scalars as Kubernetes reads them (YAML's
// resolved types), mappings and sequences in order.
void WriteValue(JsonWriter& w, NodeRef v) {
  if (!v.Valid()) {
    w.Null();
    return;
  }
  switch (v.Kind()) {
    case k8s::NodeKind::kMapping:
      w.BeginObject();
      for (uint32_t i = 0; i < v.Size(); ++i) {
        w.Key(v.KeyAt(i).Text());
        WriteValue(w, v.ValueAt(i));
      }
      w.EndObject();
      return;
    case k8s::NodeKind::kSequence:
      w.BeginArray();
      for (uint32_t i = 0; i < v.Size(); ++i) WriteValue(w, v.At(i));
      w.EndArray();
      return;
    case k8s::NodeKind::kScalar: break;
  }
  std::string text(v.Text());
  switch (v.Type()) {
    case k8s::ScalarType::kNull: w.Null(); return;
    case k8s::ScalarType::kBool: w.Bool(text == "true" || text == "True" || text == "TRUE"); return;
    case k8s::ScalarType::kInt: {
      errno = 0;
      char* end = nullptr;
      long long n = std::strtoll(text.c_str(), &end, 0);
      if (errno == 0 && end != nullptr && *end == '\0') {
        w.Int(n);
        return;
      }
      break;  // kept as written
    }
    case k8s::ScalarType::kFloat: {
      char* end = nullptr;
      double d = std::strtod(text.c_str(), &end);
      if (end != nullptr && *end == '\0' && d == d && d != HUGE_VAL && d != -HUGE_VAL) {
        w.Double(d);
        return;
      }
      break;
    }
    case k8s::ScalarType::kString: break;
  }
  w.String(text);
}

// What changes in an object as it is written out.
struct Overrides {
  std::string_view kind;  ///< written when the object has none (an item of a typed list)
  std::optional<std::string> name;
  std::optional<std::string> node;  ///< spec.nodeName
};

// `m` with `key` given `value` (added at the end when absent).
void WriteMappingWith(JsonWriter& w, NodeRef m, std::string_view key, const std::string& value) {
  w.BeginObject();
  bool written = false;
  for (uint32_t i = 0; m.IsMapping() && i < m.Size(); ++i) {
    w.Key(m.KeyAt(i).Text());
    if (m.KeyAt(i).Text() == key) {
      w.String(value);
      written = true;
    } else {
      WriteValue(w, m.ValueAt(i));
    }
  }
  if (!written) w.Key(key).String(value);
  w.EndObject();
}

void WriteObject(JsonWriter& w, NodeRef object, const Overrides& o) {
  w.BeginObject();
  if (!object.Get("kind").Valid()) {
    if (!object.Get("apiVersion").Valid()) w.Key("apiVersion").String("v1");
    w.Key("kind").String(o.kind);
  }
  bool spec = false;
  for (uint32_t i = 0; i < object.Size(); ++i) {
    std::string_view key = object.KeyAt(i).Text();
    NodeRef value = object.ValueAt(i);
    w.Key(key);
    if (key == "metadata" && o.name) {
      WriteMappingWith(w, value, "name", *o.name);
    } else if (key == "spec" && o.node) {
      WriteMappingWith(w, value, "nodeName", *o.node);
      spec = true;
    } else {
      WriteValue(w, value);
    }
  }
  if (o.node && !spec) w.Key("spec").BeginObject().Key("nodeName").String(*o.node).EndObject();
  w.EndObject();
}

// A workload's pod template as a Pod of that name.
void WriteTemplatePod(JsonWriter& w, NodeRef workload, std::string_view kind, const ScheduledPod& pod) {
  NodeRef spec = workload.Get("spec");
  NodeRef pod_template = kind == "CronJob" ? spec.Get("jobTemplate").Get("spec").Get("template") : spec.Get("template");
  NodeRef metadata = pod_template.Get("metadata");
  w.BeginObject();
  w.Key("apiVersion").String("v1");
  w.Key("kind").String("Pod");
  w.Key("metadata").BeginObject();
  w.Key("name").String(pod.name);
  w.Key("namespace").String(pod.namespace_name);
  for (const char* field : {"labels", "annotations"}) {
    if (metadata.Get(field).IsMapping()) WriteValue(w.Key(field), metadata.Get(field));
  }
  w.EndObject();
  w.Key("spec");
  if (pod.node) {
    WriteMappingWith(w, pod_template.Get("spec"), "nodeName", *pod.node);
  } else {
    WriteValue(w, pod_template.Get("spec"));
  }
  w.EndObject();
}

class Writer final : public k8s::ObjectVisitor {
 public:
  Writer(JsonWriter& w, const RunResult& result, bool input) : w_(w), input_(input) {
    for (const std::string& key : result.evicted) evicted_.insert(key);
    for (const ScheduledPod& p : result.pods) {
      if (p.template_of.empty()) {
        by_key_[Key(p.namespace_name, p.source_name.empty() ? p.name : p.source_name)].push_back(&p);
      } else {
        by_template_[p.namespace_name + "/" + p.template_of].push_back(&p);
      }
    }
  }

  void Visit(NodeRef object, std::string_view default_kind) override {
    if (!object.IsMapping()) return;
    std::string_view kind = k8s::KindOf(object, default_kind);
    NodeRef metadata = object.Get("metadata");
    std::string_view name = metadata.Get("name").Text();
    std::string_view namespace_name = metadata.Get("namespace").Text();
    if (kind == "Pod") {
      std::string key = Key(namespace_name, name);
      if (evicted_.contains(key)) return;
      auto found = by_key_.find(key);
      if (found == by_key_.end()) {  // bound, or not ours to schedule
        WriteObject(w_, object, {kind, std::nullopt, std::nullopt});
        return;
      }
      for (const ScheduledPod* p : found->second) {  // --fill copies share the source's key
        std::optional<std::string> rename = p->name != name ? std::optional<std::string>(p->name) : std::nullopt;
        WriteObject(w_, object, {kind, rename, p->node});
      }
      return;
    }
    if (input_ && k8s::IsWorkloadKind(kind)) {
      std::string key = std::string(namespace_name.empty() ? "default" : namespace_name) + "/" + std::string(kind) +
                        "/" + std::string(name);
      if (auto found = by_template_.find(key); found != by_template_.end()) {
        for (const ScheduledPod* p : found->second) WriteTemplatePod(w_, object, kind, *p);
      }
      return;
    }
    WriteObject(w_, object, {kind, std::nullopt, std::nullopt});
  }

 private:
  JsonWriter& w_;
  bool input_;
  std::unordered_set<std::string> evicted_;
  std::unordered_map<std::string, std::vector<const ScheduledPod*>> by_key_, by_template_;
};

bool LooksLikeJson(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

}  // namespace

std::string ClusterAfter(const std::vector<std::shared_ptr<const Source>>& snapshot,
                         const std::vector<std::shared_ptr<Source>>& inputs, const RunResult& result) {
  // Pods of the snapshot are written where they are; pods of the inputs
  // (and --fill copies, named after their source) where the run put them.
  RunResult from_snapshot, from_inputs;
  from_snapshot.evicted = from_inputs.evicted = result.evicted;
  std::unordered_set<std::string> in_snapshot;
  {
    struct Keys final : k8s::ObjectVisitor {
      std::unordered_set<std::string>& keys;
      explicit Keys(std::unordered_set<std::string>& k) : keys(k) {}
      void Visit(NodeRef object, std::string_view default_kind) override {
        if (!object.IsMapping() || k8s::KindOf(object, default_kind) != "Pod") return;
        NodeRef metadata = object.Get("metadata");
        keys.insert(Key(metadata.Get("namespace").Text(), metadata.Get("name").Text()));
      }
    } keys(in_snapshot);
    DiagnosticSink diags;
    for (const auto& s : snapshot) k8s::ReadObjects(*s, keys, diags);
  }
  for (const ScheduledPod& p : result.pods) {
    bool ours = p.template_of.empty() && p.source_name.empty() && in_snapshot.contains(Key(p.namespace_name, p.name));
    (ours ? from_snapshot : from_inputs).pods.push_back(p);
  }
  JsonWriter w;
  w.BeginObject().Key("apiVersion").String("v1").Key("kind").String("List").Key("items").BeginArray();
  DiagnosticSink diags;  // every file was read once already, without errors
  Writer snapshot_writer(w, from_snapshot, false);
  for (const auto& s : snapshot) k8s::ReadObjects(*s, snapshot_writer, diags);
  Writer input_writer(w, from_inputs, true);
  for (const auto& s : inputs) k8s::ReadObjects(*s, input_writer, diags);
  w.EndArray().Key("metadata").BeginObject().Key("resourceVersion").String("").EndObject().EndObject();
  std::string json = w.Take();
  bool json_input = !snapshot.empty() && LooksLikeJson(snapshot.front()->Text());
  return json_input ? json : Structured(OutputFormat::kYaml, json);
}

}  // namespace policy::cli
