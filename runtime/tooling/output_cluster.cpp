#include "runtime/tooling/output_cluster.h"

#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "runtime/tooling/structured_output.h"
#include "k8s/decode.h"
#include "k8s/document.h"
#include "k8s/document_json.h"
#include "k8s/object_reader.h"
#include "support/diagnostic.h"
#include "support/json_writer.h"

namespace policy::tooling {
namespace {

using k8s::NodeRef;

std::string Key(std::string_view namespace_name, std::string_view name) {
  return std::string(namespace_name.empty() ? "default" : namespace_name) + "/" + std::string(name);
}

// A change to an object as it is written out: the value at `path` (keys
// from the object's root) replaced, or added where absent.
struct Edit {
  std::vector<std::string_view> path;
  std::function<void(JsonWriter&)> value;
};

Edit Set(std::vector<std::string_view> path, std::string value) {
  return {std::move(path), [value = std::move(value)](JsonWriter& w) { w.String(value); }};
}

// Mapping `m` (or an empty one) with the edits whose path goes through it
// at `depth` applied; keys kept in order, new ones at the end.
void WriteEdited(JsonWriter& w, NodeRef m, const std::vector<const Edit*>& edits, size_t depth) {
  w.BeginObject();
  std::vector<uint8_t> done(edits.size(), 0);
  // Writes key `key` (holding `value`, perhaps invalid) with the edits on it.
  auto write_key = [&](std::string_view key, NodeRef value) {
    std::vector<const Edit*> below;
    const Edit* here = nullptr;
    for (size_t e = 0; e < edits.size(); ++e) {
      if (edits[e]->path[depth] != key) continue;
      done[e] = 1;
      if (edits[e]->path.size() == depth + 1) here = edits[e];
      else below.push_back(edits[e]);
    }
    w.Key(key);
    if (here != nullptr) here->value(w);
    else if (!below.empty()) WriteEdited(w, value.IsMapping() ? value : NodeRef(), below, depth + 1);
    else k8s::WriteJson(w, value);
  };
  for (uint32_t i = 0; m.IsMapping() && i < m.Size(); ++i) write_key(m.KeyAt(i).Text(), m.ValueAt(i));
  for (size_t e = 0; e < edits.size(); ++e) {
    if (!done[e]) write_key(edits[e]->path[depth], NodeRef());
  }
  w.EndObject();
}

void WriteEdited(JsonWriter& w, NodeRef m, const std::vector<Edit>& edits) {
  std::vector<const Edit*> all;
  for (const Edit& e : edits) all.push_back(&e);
  WriteEdited(w, m, all, 0);
}

// An object with `edits`; `kind` written when it has none (an item of a typed list).
void WriteObject(JsonWriter& w, NodeRef object, std::string_view kind, std::vector<Edit> edits = {}) {
  if (!object.Get("kind").Valid()) {
    edits.push_back(Set({"kind"}, std::string(kind)));
    if (!object.Get("apiVersion").Valid()) edits.push_back(Set({"apiVersion"}, "v1"));
  }
  WriteEdited(w, object, edits);
}

// status.resourceClaimStatuses of a pod whose claims were made.
void WriteClaimStatuses(JsonWriter& w, const ScheduledPod& pod) {
  w.BeginArray();
  for (const auto& [entry, claim] : pod.claim_statuses) {
    w.BeginObject().Key("name").String(entry).Key("resourceClaimName").String(claim).EndObject();
  }
  w.EndArray();
}

std::vector<Edit> PodEdits(NodeRef object, const ScheduledPod& p) {
  std::vector<Edit> edits;
  if (p.node) edits.push_back(Set({"spec", "nodeName"}, *p.node));
  if (!p.claim_statuses.empty()) {
    if (!object.Get("metadata").Get("uid").Valid() && !p.uid.empty()) edits.push_back(Set({"metadata", "uid"}, p.uid));
    edits.push_back({{"status", "resourceClaimStatuses"}, [&p](JsonWriter& w) { WriteClaimStatuses(w, p); }});
  }
  return edits;
}

void WriteRequirements(JsonWriter& w, const std::vector<k8s::SelectorRequirement>& requirements) {
  w.BeginArray();
  for (const k8s::SelectorRequirement& r : requirements) {
    w.BeginObject().Key("key").String(r.key).Key("operator").String(k8s::ToString(r.op));
    w.Key("values").BeginArray();
    for (const std::string& v : r.values) w.String(v);
    w.EndArray().EndObject();
  }
  w.EndArray();
}

// A ResourceClaim's status as the API writes it: the allocation (devices,
// where they are) and the pods it is reserved for.
void WriteClaimStatus(JsonWriter& w, const k8s::ResourceClaim& c) {
  w.BeginObject();
  if (c.allocation) {
    w.Key("allocation").BeginObject().Key("devices").BeginObject().Key("results").BeginArray();
    for (const k8s::DeviceResult& d : c.allocation->devices) {
      w.BeginObject().Key("request").String(d.request).Key("driver").String(d.driver);
      w.Key("pool").String(d.pool).Key("device").String(d.device);
      if (d.admin_access) w.Key("adminAccess").Bool(true);
      w.EndObject();
    }
    w.EndArray().EndObject();
    if (c.allocation->node_selector) {
      w.Key("nodeSelector").BeginObject().Key("nodeSelectorTerms").BeginArray();
      for (const k8s::NodeSelectorTerm& t : *c.allocation->node_selector) {
        w.BeginObject();
        if (!t.match_expressions.empty()) WriteRequirements(w.Key("matchExpressions"), t.match_expressions);
        if (!t.match_fields.empty()) WriteRequirements(w.Key("matchFields"), t.match_fields);
        w.EndObject();
      }
      w.EndArray().EndObject();
    }
    w.EndObject();
  }
  if (!c.reserved_for.empty()) {
    w.Key("reservedFor").BeginArray();
    for (const k8s::ClaimConsumer& r : c.reserved_for) {
      w.BeginObject().Key("resource").String(r.resource.empty() ? "pods" : r.resource).Key("name").String(r.name);
      w.Key("uid").String(r.uid).EndObject();
    }
    w.EndArray();
  }
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
  if (!pod.claim_statuses.empty() && !pod.uid.empty()) w.Key("uid").String(pod.uid);
  for (const char* field : {"labels", "annotations"}) {
    if (metadata.Get(field).IsMapping()) k8s::WriteJson(w.Key(field), metadata.Get(field));
  }
  w.EndObject();
  w.Key("spec");
  if (pod.node) {
    WriteEdited(w, pod_template.Get("spec"), {Set({"nodeName"}, *pod.node)});
  } else {
    k8s::WriteJson(w, pod_template.Get("spec"));
  }
  if (!pod.claim_statuses.empty()) {
    w.Key("status").BeginObject().Key("resourceClaimStatuses");
    WriteClaimStatuses(w, pod);
    w.EndObject();
  }
  w.EndObject();
}

// The run's ResourceClaims, across the files: each written with its
// status where a file has it; then those no file has (made from templates)
// written whole.
struct Claims {
  std::unordered_map<std::string, const k8s::ResourceClaim*> by_key;
  std::unordered_set<std::string> written;
  struct Made {
    const ScheduledPod* pod;
    std::string entry;
    const k8s::ResourceClaim* claim;
  };
  std::unordered_map<std::string, std::vector<Made>> made;  // by template, namespace/name
};

// A claim the run made from a template, as the resourceclaim controller
// makes it: the template's spec, the pod as controller, its status.
void WriteMadeClaim(JsonWriter& w, const Claims::Made& m, NodeRef spec) {
  const k8s::ResourceClaim& c = *m.claim;
  w.BeginObject().Key("apiVersion").String("resource.k8s.io/v1").Key("kind").String("ResourceClaim");
  w.Key("metadata").BeginObject().Key("name").String(c.name).Key("namespace").String(c.namespace_name);
  w.Key("uid").String(c.uid);
  w.Key("annotations").BeginObject().Key("resource.kubernetes.io/pod-claim-name").String(m.entry).EndObject();
  w.Key("ownerReferences").BeginArray().BeginObject().Key("apiVersion").String("v1").Key("kind").String("Pod");
  w.Key("name").String(m.pod->name).Key("uid").String(m.pod->uid).Key("controller").Bool(true);
  w.Key("blockOwnerDeletion").Bool(true).EndObject().EndArray();
  w.EndObject();
  w.Key("spec");
  k8s::WriteJson(w, spec);
  w.Key("status");
  WriteClaimStatus(w, c);
  w.EndObject();
}

class Writer final : public k8s::ObjectVisitor {
 public:
  Writer(JsonWriter& w, const RunResult& result, bool input, Claims& dra) : w_(w), input_(input), dra_(dra) {
    for (const std::string& key : result.evicted) evicted_.insert(key);
    for (const BoundClaim& c : result.claims) {
      claims_[Key(c.namespace_name, c.claim)] = &c;
      if (!c.volume.empty()) volumes_[c.volume] = &c;
    }
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
        WriteObject(w_, object, kind);
        return;
      }
      for (const ScheduledPod* p : found->second) {  // --fill copies share the source's key
        std::vector<Edit> edits = PodEdits(object, *p);
        if (p->name != name) edits.push_back(Set({"metadata", "name"}, p->name));
        WriteObject(w_, object, kind, std::move(edits));
      }
      return;
    }
    if (kind == "ResourceClaim") {
      std::string key = Key(namespace_name, name);
      auto found = dra_.by_key.find(key);
      if (found != dra_.by_key.end() && dra_.written.insert(key).second) {
        const k8s::ResourceClaim* claim = found->second;
        return WriteObject(w_, object, kind, {{{"status"}, [claim](JsonWriter& w) { WriteClaimStatus(w, *claim); }}});
      }
    }
    if (kind == "ResourceClaimTemplate") {  // then the claims the run made from it
      WriteObject(w_, object, kind);
      NodeRef spec = object.Get("spec").IsMapping() ? object.Get("spec").Get("spec") : NodeRef();
      auto made = dra_.made.find(Key(namespace_name, name));
      if (made == dra_.made.end()) return;
      for (const Claims::Made& m : made->second) {
        if (dra_.written.insert(Key(m.claim->namespace_name, m.claim->name)).second) WriteMadeClaim(w_, m, spec);
      }
      return;
    }
    if (kind == "PersistentVolumeClaim") {
      auto found = claims_.find(Key(namespace_name, name));
      if (found != claims_.end()) return WriteObject(w_, object, kind, ClaimEdits(*found->second));
    }
    if (kind == "PersistentVolume") {
      auto found = volumes_.find(std::string(name));
      if (found != volumes_.end()) return WriteObject(w_, object, kind, VolumeEdits(*found->second));
    }
    if (input_ && k8s::IsWorkloadKind(kind)) {
      std::string key = std::string(namespace_name.empty() ? "default" : namespace_name) + "/" + std::string(kind) +
                        "/" + std::string(name);
      if (auto found = by_template_.find(key); found != by_template_.end()) {
        for (const ScheduledPod* p : found->second) WriteTemplatePod(w_, object, kind, *p);
      }
      return;
    }
    WriteObject(w_, object, kind);
  }

 private:
  // A claim bound as kube-scheduler's volume binder binds it: the volume
  // named, the bind marked complete; or, to be provisioned, the node chosen.
  static std::vector<Edit> ClaimEdits(const BoundClaim& c) {
    if (c.volume.empty()) return {Set({"metadata", "annotations", "volume.kubernetes.io/selected-node"}, c.selected_node)};
    return {Set({"metadata", "annotations", "pv.kubernetes.io/bind-completed"}, "yes"),
            Set({"spec", "volumeName"}, c.volume), Set({"status", "phase"}, "Bound")};
  }
  static std::vector<Edit> VolumeEdits(const BoundClaim& c) {
    return {Set({"spec", "claimRef", "kind"}, "PersistentVolumeClaim"),
            Set({"spec", "claimRef", "namespace"}, c.namespace_name.empty() ? "default" : c.namespace_name),
            Set({"spec", "claimRef", "name"}, c.claim), Set({"status", "phase"}, "Bound")};
  }

  JsonWriter& w_;
  bool input_;
  Claims& dra_;
  std::unordered_set<std::string> evicted_;
  std::unordered_map<std::string, std::vector<const ScheduledPod*>> by_key_, by_template_;
  std::unordered_map<std::string, const BoundClaim*> claims_, volumes_;
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
  from_snapshot.claims = from_inputs.claims = result.claims;
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
  Claims dra;
  for (const k8s::ResourceClaim& c : result.resource_claims) dra.by_key[Key(c.namespace_name, c.name)] = &c;
  for (const ScheduledPod& p : result.pods) {
    for (const auto& [entry, claim_name] : p.claim_statuses) {
      auto claim = dra.by_key.find(Key(p.namespace_name, claim_name));
      for (const auto& [e, template_name] : p.claim_templates) {
        if (e == entry && claim != dra.by_key.end()) {
          dra.made[Key(p.namespace_name, template_name)].push_back({&p, entry, claim->second});
        }
      }
    }
  }
  Writer snapshot_writer(w, from_snapshot, false, dra);
  for (const auto& s : snapshot) k8s::ReadObjects(*s, snapshot_writer, diags);
  Writer input_writer(w, from_inputs, true, dra);
  for (const auto& s : inputs) k8s::ReadObjects(*s, input_writer, diags);
  w.EndArray().Key("metadata").BeginObject().Key("resourceVersion").String("").EndObject().EndObject();
  std::string json = w.Take();
  bool json_input = !snapshot.empty() && LooksLikeJson(snapshot.front()->Text());
  return json_input ? json : Structured(OutputFormat::kYaml, json);
}

}  // namespace policy::tooling
