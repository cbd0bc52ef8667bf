// The extender protocol's bodies (extender.h).

#include "server/extender.h"

#include <cctype>
#include <cstdlib>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/k8s/decode.h"
#include "compiler/k8s/document_json.h"
#include "compiler/k8s/object_reader.h"
#include "compiler/support/json_writer.h"

namespace policy::server {
namespace {

// `m`'s value for `key`, whatever its case (Go's encoding/json reads keys
// case-insensitively, and kube-scheduler's own tests lower-case them).
k8s::NodeRef Field(k8s::NodeRef m, std::string_view key) {
  for (uint32_t i = 0; m.IsMapping() && i < m.Size(); ++i) {
    std::string_view k = m.KeyAt(i).Text();
    bool same = k.size() == key.size();
    for (size_t c = 0; same && c < k.size(); ++c) {
      same = std::tolower(static_cast<unsigned char>(k[c])) == std::tolower(static_cast<unsigned char>(key[c]));
    }
    if (same) return m.ValueAt(i);
  }
  return {};
}

bool Null(k8s::NodeRef v) { return !v.Valid() || (v.IsScalar() && v.Type() == k8s::ScalarType::kNull); }

// Reads one JSON request and hands its top-level object to `handle` while
// the document lives; the problem, if any, in words.
class Request final : public k8s::ObjectVisitor {
 public:
  explicit Request(std::function<std::string(k8s::NodeRef)> handle) : handle_(std::move(handle)) {}

  void Visit(k8s::NodeRef object, std::string_view) override {
    if (++objects_ > 1) {
      problem_ = "expected one JSON object, found another after it";
      return;
    }
    if (!object.IsMapping()) {
      problem_ = "expected a JSON object";
      return;
    }
    problem_ = handle_(object);
  }

  // Reads `body`; empty when it was handled, else why not.
  std::string Read(std::string_view body, const char* what) {
    auto source = std::make_shared<const Source>(what, std::string(body));
    DiagnosticSink diags;
    if (!k8s::ReadObjects(*source, *this, diags, k8s::InputFormat::kJson)) return RenderAll(diags);
    if (objects_ == 0) return std::string(what) + ": expected a JSON object, found nothing";
    return problem_;
  }

 private:
  std::function<std::string(k8s::NodeRef)> handle_;
  int objects_ = 0;
  std::string problem_;
};

// ExtenderArgs' pod and nodes. `objects`: the node objects when they came
// as a NodeList (nodeCacheCapable: false), by name order of `names`.
struct Args {
  std::optional<k8s::Pod> pod;
  std::vector<std::string> names;
  std::vector<k8s::NodeRef> objects;
  bool by_name = true;
};

std::string ReadArgs(k8s::NodeRef args, Args& out) {
  k8s::NodeRef pod = Field(args, "Pod");
  if (Null(pod)) return "ExtenderArgs without `Pod`";
  DiagnosticSink diags;
  out.pod = k8s::DecodePod(pod, diags);
  if (!out.pod) return RenderAll(diags);
  k8s::NodeRef names = Field(args, "NodeNames");
  k8s::NodeRef nodes = Field(args, "Nodes");
  if (!Null(names)) {
    if (!names.IsSequence()) return "`NodeNames` must be a list of node names";
    for (uint32_t i = 0; i < names.Size(); ++i) {
      if (!names.At(i).IsScalar()) return "`NodeNames` must be a list of node names";
      out.names.emplace_back(names.At(i).Text());
    }
    return "";
  }
  if (Null(nodes)) return "ExtenderArgs with neither `NodeNames` nor `Nodes`";
  out.by_name = false;
  k8s::NodeRef items = Field(nodes, "items");
  if (!Null(items) && !items.IsSequence()) return "`Nodes.items` must be a list of nodes";
  for (uint32_t i = 0; !Null(items) && i < items.Size(); ++i) {
    k8s::NodeRef name = items.At(i).Get("metadata").Get("name");
    if (!name.IsScalar()) return "a node of `Nodes.items` without metadata.name";
    out.names.emplace_back(name.Text());
    out.objects.push_back(items.At(i));
  }
  return "";
}

void WriteFailed(JsonWriter& w, const host::Answer& answer, bool unresolvable) {
  w.BeginObject();
  for (const host::Answer::Failed& f : answer.failed) {
    if (f.unresolvable == unresolvable) w.Key(f.node).String(f.reason);
  }
  w.EndObject();
}

std::string FilterError(const std::string& message) {
  JsonWriter w(JsonWriter::Style::kLine);
  w.BeginObject().Key("Nodes").Null().Key("NodeNames").Null().Key("FailedNodes").Null();
  w.Key("FailedAndUnresolvableNodes").Null().Key("Error").String(message).EndObject();
  return w.Take();
}

std::string PlainError(const std::string& message) {
  JsonWriter w(JsonWriter::Style::kLine);
  w.BeginObject().Key("Error").String(message).EndObject();
  return w.Take();
}

}  // namespace

host::Answer Extender::Decide(k8s::Pod pod, const std::vector<std::string>& names, const char* verb) {
  host::ClusterState::View view = state_.Read();
  host::Answer answer = decisions_.Decide(std::move(pod), view, &names, host::Decisions::Detail::kVerdicts);
  if (metrics_ != nullptr) metrics_->Decision(verb, answer.feasible.size());
  return answer;
}

Reply Extender::Filter(std::string_view body) {
  std::string out;
  Request request([&](k8s::NodeRef object) -> std::string {
    Args args;
    if (std::string problem = ReadArgs(object, args); !problem.empty()) return problem;
    host::Answer answer = Decide(std::move(*args.pod), args.names, "filter");
    std::unordered_set<std::string_view> feasible;
    for (const auto& [name, score] : answer.feasible) feasible.insert(name);
    std::vector<bool> passed(args.names.size(), false);
    for (size_t i = 0; i < args.names.size(); ++i) passed[i] = feasible.contains(args.names[i]);
    JsonWriter w(JsonWriter::Style::kLine);
    w.BeginObject();
    if (args.by_name) {
      w.Key("Nodes").Null().Key("NodeNames").BeginArray();
      for (size_t i = 0; i < args.names.size(); ++i) {
        if (passed[i]) w.String(args.names[i]);
      }
      w.EndArray();
    } else {
      w.Key("Nodes").BeginObject().Key("apiVersion").String("v1").Key("kind").String("NodeList").Key("items").BeginArray();
      for (size_t i = 0; i < args.objects.size(); ++i) {
        if (passed[i]) k8s::WriteJson(w, args.objects[i]);
      }
      w.EndArray().EndObject().Key("NodeNames").Null();
    }
    w.Key("FailedNodes");
    WriteFailed(w, answer, false);
    w.Key("FailedAndUnresolvableNodes");
    WriteFailed(w, answer, true);
    w.Key("Error").String("").EndObject();
    out = w.Take();
    return "";
  });
  std::string problem = request.Read(body, "filter");
  if (!problem.empty()) return {200, FilterError(problem)};
  return {200, std::move(out)};
}

Reply Extender::Prioritize(std::string_view body) {
  std::string out;
  Request request([&](k8s::NodeRef object) -> std::string {
    Args args;
    if (std::string problem = ReadArgs(object, args); !problem.empty()) return problem;
    host::Answer answer = Decide(std::move(*args.pod), args.names, "prioritize");
    int64_t max = decisions_.MaxScore();
    JsonWriter w(JsonWriter::Style::kLine);
    w.BeginArray();
    std::unordered_map<std::string_view, int64_t> totals;
    for (const auto& [name, total] : answer.feasible) totals.emplace(name, total);
    for (const std::string& name : args.names) {
      auto found = totals.find(name);
      int64_t score = found != totals.end() && max > 0 ? (found->second * 10 + max / 2) / max : 0;  // kube-scheduler's 0-10
      w.BeginObject().Key("Host").String(name).Key("Score").Int(score).EndObject();
    }
    w.EndArray();
    out = w.Take();
    return "";
  });
  std::string problem = request.Read(body, "prioritize");
  if (!problem.empty()) return {400, PlainError(problem)};
  return {200, std::move(out)};
}

Reply Extender::Preempt(std::string_view body) {
  std::string out;
  Request request([&](k8s::NodeRef object) -> std::string {
    k8s::NodeRef pod = Field(object, "Pod");
    if (Null(pod)) return "ExtenderPreemptionArgs without `Pod`";
    DiagnosticSink diags;
    std::optional<k8s::Pod> decoded = k8s::DecodePod(pod, diags);
    if (!decoded) return RenderAll(diags);
    k8s::NodeRef meta = Field(object, "NodeNameToMetaVictims");
    k8s::NodeRef full = Field(object, "NodeNameToVictims");
    k8s::NodeRef victims = !Null(meta) ? meta : full;
    std::vector<std::string> names;
    for (uint32_t i = 0; victims.IsMapping() && i < victims.Size(); ++i) names.emplace_back(victims.KeyAt(i).Text());
    host::Answer answer = Decide(std::move(*decoded), names, "preempt");
    std::unordered_set<std::string_view> hopeless;  // no eviction resolves what rejects the pod there
    for (const host::Answer::Failed& f : answer.failed) {
      if (f.unresolvable) hopeless.insert(f.node);
    }
    JsonWriter w(JsonWriter::Style::kLine);
    w.BeginObject().Key("NodeNameToMetaVictims").BeginObject();
    for (uint32_t i = 0; victims.IsMapping() && i < victims.Size(); ++i) {
      std::string_view node = victims.KeyAt(i).Text();
      if (hopeless.contains(node)) continue;
      k8s::NodeRef v = victims.ValueAt(i);
      w.Key(node).BeginObject().Key("Pods").BeginArray();
      k8s::NodeRef pods = Field(v, "Pods");
      for (uint32_t p = 0; pods.IsSequence() && p < pods.Size(); ++p) {
        k8s::NodeRef uid = !Null(meta) ? Field(pods.At(p), "UID") : pods.At(p).Get("metadata").Get("uid");
        w.BeginObject().Key("UID").String(uid.IsScalar() ? uid.Text() : "").EndObject();
      }
      w.EndArray();
      k8s::NodeRef violations = Field(v, "NumPDBViolations");
      w.Key("NumPDBViolations").Int(violations.IsScalar() ? std::strtoll(std::string(violations.Text()).c_str(), nullptr, 10) : 0);
      w.EndObject();
    }
    w.EndObject().EndObject();
    out = w.Take();
    return "";
  });
  std::string problem = request.Read(body, "preempt");
  if (!problem.empty()) return {400, PlainError(problem)};
  return {200, std::move(out)};
}

}  // namespace policy::server
