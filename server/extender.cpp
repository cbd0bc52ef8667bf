// The extender protocol's bodies (extender.h).

#include "server/extender.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "k8s/decode.h"
#include "k8s/document_json.h"
#include "k8s/object_reader.h"
#include "support/json_writer.h"
#include "runtime/engine/preemption.h"
#include "server/extender_args.h"
#include "server/kube_api.h"

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
    // A request is one JSON object: anything else is named as such, before
    // the JSON reader (which takes a top-level array for a list of objects
    // and words a lone scalar in its own terms) sees it.
    size_t first = body.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || body[first] != '{') {
      std::string_view found = first == std::string_view::npos ? "nothing"
                               : body[first] == '['             ? "an array"
                               : body[first] == '"'             ? "a string"
                               : body.substr(first).starts_with("null")  ? "null"
                               : body.substr(first).starts_with("true") || body.substr(first).starts_with("false") ? "a boolean"
                               : body[first] == '-' || (body[first] >= '0' && body[first] <= '9') ? "a number"
                                                                                                    : "text that is not JSON";
      return fmt::format("{}: expected a JSON object (the request kube-scheduler sends), found {}", what, found);
    }
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
// as a NodeList (nodeCacheCapable: false), by name order of `names`, and
// `sent` what they say.
struct Args {
  std::optional<k8s::Pod> pod;
  std::vector<std::string_view> names;
  std::vector<k8s::NodeRef> objects;
  std::vector<k8s::Node> sent;
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
      out.names.push_back(names.At(i).Text());
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
    std::optional<k8s::Node> node = k8s::DecodeNode(items.At(i), diags);
    if (!node) return RenderAll(diags);
    out.names.push_back(name.Text());
    out.objects.push_back(items.At(i));
    out.sent.push_back(std::move(*node));
  }
  return "";
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

// Reads ExtenderArgs and hands them to `use` while what they view lives:
// the fast reader's for names (the usual call), else the general reader's
// document. Empty when used, else the problem in words.
std::string ReadArgs(std::string_view body, const char* what, const std::function<void(Args&)>& use) {
  thread_local NamedArgsReader fast;
  NamedArgs named;
  if (fast.Read(body, named)) {
    Source pod_text(what, std::string(named.pod_json));
    std::optional<k8s::Pod> pod;
    struct One final : k8s::ObjectVisitor {
      std::optional<k8s::Pod>* pod;
      DiagnosticSink* diags;
      void Visit(k8s::NodeRef object, std::string_view) override { *pod = k8s::DecodePod(object, *diags); }
    };
    DiagnosticSink diags;
    One one;
    one.pod = &pod;
    one.diags = &diags;
    if (k8s::ReadObjects(pod_text, one, diags, k8s::InputFormat::kJson) && pod && !diags.HasErrors()) {
      Args args;
      args.pod = std::move(pod);
      args.names = std::move(named.names);
      use(args);
      return "";
    }  // else the general reader says where the pod is wrong, in the body's lines
  }
  Request request([&](k8s::NodeRef object) -> std::string {
    Args args;
    if (std::string problem = ReadArgs(object, args); !problem.empty()) return problem;
    use(args);
    return "";
  });
  return request.Read(body, what);
}

}  // namespace

Extender::Named::Named(host::ClusterState::View v) : view(std::move(v)) {}

bool Extender::Named::Feasible(size_t i, int64_t* score) const {
  if (row[i] == rt::kNoRow || at[row[i]] < 0) return false;
  if (score != nullptr) *score = verdicts.score[static_cast<size_t>(at[row[i]])];
  return true;
}

const host::RowVerdicts::Rejected* Extender::Named::Rejected(size_t i) const {
  if (row[i] == rt::kNoRow || at[row[i]] > -2) return nullptr;
  return &verdicts.rejected[static_cast<size_t>(-2 - at[row[i]])];
}

host::ClusterState::View Extender::Judge(std::vector<k8s::Node> sent) {
  size_t differed = 0;
  host::ClusterState::View view = state_.Overlay(std::move(sent), &differed);
  for (size_t i = 0; options_.metrics != nullptr && i < differed; ++i) options_.metrics->SentNodeDiffered();
  return view;
}

Extender::Named Extender::Decide(k8s::Pod pod, std::span<const std::string_view> names, const char* verb, bool words,
                                 std::optional<host::ClusterState::View> view) {
  Named n(view ? std::move(*view) : state_.Read());
  const rt::NodeTable& table = n.view.cluster().Table();
  // kube-scheduler sends the same names call after call: this thread's last
  // list and its rows are kept while the nodes stay what they were.
  thread_local struct {
    uint64_t state_epoch = 0, whole_epoch = 0;
    std::string joined;  // the names, end to end
    std::vector<uint32_t> ends;
    std::vector<rt::RowId> row, rows;
  } last;
  bool same = last.state_epoch == n.view.epoch() && last.whole_epoch == table.WholeEpoch() && last.ends.size() == names.size();
  for (size_t i = 0, begin = 0; same && i < names.size(); begin = last.ends[i++]) {
    same = std::string_view(last.joined).substr(begin, last.ends[i] - begin) == names[i];
  }
  if (!same) {
    last.state_epoch = n.view.epoch();
    last.whole_epoch = table.WholeEpoch();
    last.joined.clear();
    last.ends.clear();
    last.row.clear();
    last.rows.clear();
    for (std::string_view name : names) {
      last.joined += name;
      last.ends.push_back(static_cast<uint32_t>(last.joined.size()));
      std::optional<rt::RowId> row = table.FindNode(name);
      last.row.push_back(row ? *row : rt::kNoRow);
      if (row) last.rows.push_back(*row);
    }
    std::sort(last.rows.begin(), last.rows.end());  // the decision reads them in table order
    last.rows.erase(std::unique(last.rows.begin(), last.rows.end()), last.rows.end());
  }
  n.row = last.row;
  const std::vector<rt::RowId>& rows = last.rows;
  n.at.assign(table.RowCount(), -1);
  if (!rows.empty()) {  // else nothing to decide among (an empty span would mean every node)
    n.verdicts = decisions_.DecideRows(std::move(pod), n.view, rows, words);
    for (size_t k = 0; k < n.verdicts.feasible.size(); ++k) n.at[n.verdicts.feasible[k]] = static_cast<int32_t>(k);
    for (size_t j = 0; j < n.verdicts.rejected.size(); ++j) n.at[n.verdicts.rejected[j].row] = -2 - static_cast<int32_t>(j);
  }
  if (options_.metrics != nullptr) options_.metrics->Decision(verb, n.verdicts.feasible.size());
  return n;
}

namespace {

constexpr std::string_view kUnknownNode = "node(s) not found in policyc's cluster state";

// FailedNodes (unresolvable false) or FailedAndUnresolvableNodes: every
// rejected name of the request with its reasons; names the cluster does
// not have are unresolvable.
void WriteFailed(JsonWriter& w, const Extender::Named& n, std::span<const std::string_view> names, bool unresolvable,
                 bool all_reasons, const std::function<void(size_t, JsonWriter&)>& also = nullptr) {
  w.BeginObject();
  // A name sent twice is a key once: kube-scheduler reads a map.
  std::unordered_set<std::string_view> written;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!written.insert(names[i]).second) continue;
    if (also) also(i, w);
    if (n.row[i] == rt::kNoRow) {
      if (unresolvable) w.Key(names[i]).String(kUnknownNode);
    } else if (const host::RowVerdicts::Rejected* r = n.Rejected(i); r != nullptr && r->unresolvable == unresolvable) {
      w.Key(names[i]).String(all_reasons ? *r->all : *r->reason);
    }
  }
  w.EndObject();
}

}  // namespace

void RecentPods::Remember(const k8s::Pod& pod) {
  std::string key = pod.namespace_name + "/" + pod.name;
  std::lock_guard lock(mutex_);
  auto [it, added] = pods_.try_emplace(key, pod, false);
  if (!added) {
    bytes_ -= k8s::ApproximateBytes(it->second.first);
    it->second.first = pod;
  }
  bytes_ += k8s::ApproximateBytes(pod);
  if (added) order_.push_back(std::move(key));
  while (order_.size() > kCapacity || (bytes_ > kCapacityBytes && order_.size() > 1)) {
    auto gone = pods_.find(order_.front());
    bytes_ -= k8s::ApproximateBytes(gone->second.first);
    pods_.erase(gone);
    order_.pop_front();
  }
}

std::optional<k8s::Pod> RecentPods::Find(const std::string& namespace_name, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = pods_.find(namespace_name + "/" + name);
  if (it == pods_.end()) return std::nullopt;
  return it->second.first;
}

void RecentPods::Assumed(const k8s::Pod& pod) {
  std::lock_guard lock(mutex_);
  auto it = pods_.find(pod.namespace_name + "/" + pod.name);
  if (it != pods_.end()) it->second.second = true;
}

bool RecentPods::TakeAssumed(const k8s::Pod& pod) {
  std::lock_guard lock(mutex_);
  auto it = pods_.find(pod.namespace_name + "/" + pod.name);
  return it != pods_.end() && std::exchange(it->second.second, false);
}

Reply Extender::Filter(std::string_view body) {
  std::string out;
  std::string problem = ReadArgs(body, "filter", [&](Args& args) {
    bool decide = options_.decide && options_.recent != nullptr;
    std::optional<k8s::Pod> assume;  // decide: the pod, to assume where it goes
    if (decide) {
      // Filtered again: kube-scheduler is retrying the pod, so the node this
      // filter chose last time did not take it.
      if (options_.recent->TakeAssumed(*args.pod)) state_.Forget(args.pod->namespace_name, args.pod->name);
      assume = *args.pod;
    }
    if (options_.recent != nullptr) options_.recent->Remember(*args.pod);
    if (decide) state_.ExpireAssumed(options_.assume_ttl, options_.max_assumed);
    std::optional<host::ClusterState::View> sent;
    if (!args.by_name) sent.emplace(Judge(std::move(args.sent)));
    std::string chosen;  // decide: the node selected
    {
    Named n = Decide(std::move(*args.pod), args.names, "filter", true, std::move(sent));
    if (n.verdicts.error) {  // kube-scheduler's extender client fails the attempt on a non-empty Error
      out = FilterError(*n.verdicts.error);
      return;
    }
    std::optional<rt::RowId> selected;
    if (decide && n.verdicts.selected) selected = n.verdicts.feasible[*n.verdicts.selected];
    auto passes = [&](size_t i) {  // decide: the selected node alone, once
      if (!n.Feasible(i)) return false;
      if (!decide) return true;
      if (!selected || n.row[i] != *selected || !chosen.empty()) return false;
      chosen = args.names[i];
      return true;
    };
    std::vector<bool> passed(args.names.size());
    for (size_t i = 0; i < args.names.size(); ++i) passed[i] = passes(i);
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
    WriteFailed(w, n, args.names, false, options_.all_reasons, [&](size_t i, JsonWriter& f) {  // decide: the feasible nodes not chosen
      if (!passed[i] && n.Feasible(i)) f.Key(args.names[i]).String(fmt::format("policyc chose node {} for this pod", chosen));
    });
    w.Key("FailedAndUnresolvableNodes");
    WriteFailed(w, n, args.names, true, options_.all_reasons);
    w.Key("Error").String("").EndObject();
    out = w.Take();
    }  // the cluster is no longer held: the assumption may change it
    if (!chosen.empty()) {
      options_.recent->Assumed(*assume);  // (Forget of a pod the cluster lacks does nothing)
      state_.Assume(std::move(*assume), chosen);
    }
  });
  if (!problem.empty()) return {200, FilterError(problem), problem};
  return {200, std::move(out), ""};
}

Reply Extender::Prioritize(std::string_view body) {
  std::string out;
  std::string problem = ReadArgs(body, "prioritize", [&](Args& args) {
    std::optional<host::ClusterState::View> sent;
    if (!args.by_name) sent.emplace(Judge(std::move(args.sent)));
    Named n = Decide(std::move(*args.pod), args.names, "prioritize", false, std::move(sent));
    // kube-scheduler's 0-10 (MaxExtenderPriority) over the range of the
    // feasible totals among the nodes it sent: the best 10, the least 0,
    // round(10 * (total - least) / (best - least)) between, as
    // InterPodAffinity's NormalizeScore spreads its scores. Real totals lie
    // close together (437-489 of a possible 1,200 in the unit test): scaled
    // against the possible maximum, or against the best alone (1.7's
    // suggestion), they fell into one or two levels and the order was lost.
    std::vector<int64_t> totals(args.names.size(), 0);
    std::vector<bool> feasible(args.names.size(), false);
    int64_t best = 0, least = 0;
    bool any = false;
    for (size_t i = 0; i < args.names.size(); ++i) {
      if (!n.Feasible(i, &totals[i])) continue;
      feasible[i] = true;
      best = any ? std::max(best, totals[i]) : totals[i];
      least = any ? std::min(least, totals[i]) : totals[i];
      any = true;
    }
    JsonWriter w(JsonWriter::Style::kLine);
    w.BeginArray();
    for (size_t i = 0; i < args.names.size(); ++i) {
      int64_t range = best - least;
      int64_t score = !feasible[i] ? 0 : range == 0 ? 10 : ((totals[i] - least) * 10 + range / 2) / range;
      w.BeginObject().Key("Host").String(args.names[i]).Key("Score").Int(score).EndObject();
    }
    w.EndArray();
    out = w.Take();
  });
  if (!problem.empty()) return {400, PlainError(problem), problem};
  return {200, std::move(out), ""};
}

Reply Extender::Preempt(std::string_view body) {
  std::string out;
  Request request([&](k8s::NodeRef object) -> std::string {
    k8s::NodeRef pod = Field(object, "Pod");
    if (Null(pod)) return "ExtenderPreemptionArgs without `Pod`";
    DiagnosticSink diags;
    std::optional<k8s::Pod> decoded = k8s::DecodePod(pod, diags);
    if (!decoded) return RenderAll(diags);
    // NodeNameToMetaVictims (nodeCacheCapable) names victims by UID;
    // NodeNameToVictims gives them whole.
    k8s::NodeRef meta = Field(object, "NodeNameToMetaVictims");
    k8s::NodeRef full = Field(object, "NodeNameToVictims");
    k8s::NodeRef victims = !Null(meta) ? meta : full;
    if (!Null(victims) && !victims.IsMapping()) return "`NodeNameToMetaVictims` must map node names to victims";
    struct Proposal {
      std::vector<std::string> uids;
      int64_t violations = 0;
    };
    std::vector<std::string_view> names;
    std::vector<Proposal> proposed;
    for (uint32_t i = 0; !Null(victims) && i < victims.Size(); ++i) {
      names.push_back(victims.KeyAt(i).Text());
      Proposal& p = proposed.emplace_back();
      k8s::NodeRef pods = Field(victims.ValueAt(i), "Pods");
      if (!Null(pods) && !pods.IsSequence()) return fmt::format("the victims of node `{}`: `Pods` must be a list", names.back());
      for (uint32_t k = 0; !Null(pods) && k < pods.Size(); ++k) {
        k8s::NodeRef uid = !Null(meta) ? Field(pods.At(k), "UID") : pods.At(k).Get("metadata").Get("uid");
        if (!uid.IsScalar() || uid.Text().empty()) return fmt::format("a victim on node `{}` without a UID", names.back());
        p.uids.emplace_back(uid.Text());
      }
      // A count of the victims' own budgets broken: 0 to their number.
      k8s::NodeRef violations = Field(victims.ValueAt(i), "NumPDBViolations");
      if (violations.IsScalar() && !Null(violations)) {
        p.violations = std::clamp<int64_t>(std::strtoll(std::string(violations.Text()).c_str(), nullptr, 10), 0,
                                           static_cast<int64_t>(p.uids.size()));
      }
      // A node named twice (a JSON object with a key twice): the first counts.
      if (std::find(names.begin(), names.end() - 1, names.back()) != names.end() - 1) {
        names.pop_back();
        proposed.pop_back();
      }
    }
    // First, the nodes where no eviction resolves what rejects the pod (or
    // that the cluster does not have): dropped, as kube-scheduler's own
    // dry run leaves them out.
    std::vector<bool> candidate(names.size(), false);
    {
      Named n = Decide(*decoded, names, "preempt", true);
      for (size_t i = 0; i < names.size(); ++i) {
        const host::RowVerdicts::Rejected* rejected = n.Rejected(i);
        candidate[i] = n.row[i] != rt::kNoRow && (rejected == nullptr || !rejected->unresolvable);
      }
    }  // the cluster is no longer held: the trial below changes it
    // Then each candidate's victims, tried: kube-scheduler takes this
    // answer in place of its own dry run (victimsMap = the answer), evicts
    // what it names and nominates the pod. A node is kept only where the
    // pod passes every filter policyc runs with its victims gone: kube's
    // victims when they make room (kube counted their PDB violations), else
    // the ones policyc's own dry run picks on that node
    // (engine::SelectVictimsOnNode, kube's order and reprieve), else none.
    std::vector<std::optional<Proposal>> answer(names.size());
    state_.Try([&](engine::Cluster& cluster) {
      engine::Engine& engine = decisions_.engine();
      std::unique_ptr<engine::PodPlan> plan;
      for (size_t i = 0; i < names.size(); ++i) {
        if (!candidate[i]) continue;
        if (!plan) plan = engine.Plan(*decoded, cluster);
        rt::RowId row = *cluster.Table().FindNode(names[i]);
        std::vector<std::string> aside;
        for (const rt::NodeTable::PodOnRow& p : cluster.Table().PodsBoundTo(row)) {
          if (std::find(proposed[i].uids.begin(), proposed[i].uids.end(), p.uid) != proposed[i].uids.end()) aside.emplace_back(p.key);
        }
        // kube-scheduler has every victim on that node; one the cluster
        // state does not have there (its watch behind) frees nothing here.
        // The victims are kube's own, named back as sent: kube resolves
        // them against its cache (an unknown UID fails its preemption,
        // not policyc's), with their count of broken budgets at most theirs.
        for (const std::string& key : aside) cluster.SetPodAside(key);
        bool fits = !proposed[i].uids.empty() && engine::FitsOn(engine, cluster, *plan, row);
        for (const std::string& key : aside) cluster.PutPodBack(key);
        if (fits) {
          answer[i] = std::move(proposed[i]);
          if (options_.metrics != nullptr) options_.metrics->PreemptNode("kept");
          continue;
        }
        std::optional<engine::NodeVictims> own = engine::SelectVictimsOnNode(engine, cluster, *plan, row);
        // kube-scheduler refuses an answer with no victim on a node, or a
        // victim it cannot name by UID.
        bool named = own && !own->victims.empty() &&
                     std::all_of(own->victims.begin(), own->victims.end(), [](const engine::Victim& v) { return !v.uid.empty(); });
        if (named) {
          Proposal& p = answer[i].emplace();
          for (const engine::Victim& v : own->victims) p.uids.push_back(v.uid);
          p.violations = own->violations;
        }
        if (options_.metrics != nullptr) options_.metrics->PreemptNode(named ? "replaced" : "dropped");
      }
    });
    if (options_.metrics != nullptr) {
      for (size_t i = 0; i < names.size(); ++i) {
        if (!candidate[i]) options_.metrics->PreemptNode("dropped");
      }
    }
    JsonWriter w(JsonWriter::Style::kLine);
    w.BeginObject().Key("NodeNameToMetaVictims").BeginObject();
    for (size_t i = 0; i < names.size(); ++i) {
      if (!answer[i]) continue;
      w.Key(names[i]).BeginObject().Key("Pods").BeginArray();
      for (const std::string& uid : answer[i]->uids) w.BeginObject().Key("UID").String(uid).EndObject();
      w.EndArray().Key("NumPDBViolations").Int(answer[i]->violations).EndObject();
    }
    w.EndObject().EndObject();
    out = w.Take();
    return "";
  });
  std::string problem = request.Read(body, "preempt");
  if (!problem.empty()) return {400, PlainError(problem), problem};
  return {200, std::move(out), ""};
}

Reply Extender::Bind(std::string_view body) {
  std::string out, failure;
  Request request([&](k8s::NodeRef object) -> std::string {
    auto text = [&](std::string_view key) {
      k8s::NodeRef v = Field(object, key);
      return v.IsScalar() && !Null(v) ? std::string(v.Text()) : std::string();
    };
    std::string name = text("PodName"), ns = text("PodNamespace"), uid = text("PodUID"), node = text("Node");
    if (name.empty() || node.empty()) return "ExtenderBindingArgs need `PodName` and `Node`";
    if (ns.empty()) ns = "default";
    for (const std::string* part : {&name, &ns}) {  // they go into the API's URL
      if (part->find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != std::string::npos) {
        return fmt::format("`{}` is not a Kubernetes object name", *part);
      }
    }
    if (options_.api == nullptr) {
      return "policyc serve has no Kubernetes API to bind through: start it with --kubeconfig or --in-cluster, or "
             "leave `bindVerb` out of the extender's configuration";
    }
    // Assume first, as kube-scheduler does: the next decision counts the
    // pod there before the API's event says so. The event then replaces it.
    std::optional<k8s::Pod> pod = options_.recent != nullptr ? options_.recent->Find(ns, name) : std::nullopt;
    state_.ExpireAssumed(options_.assume_ttl, options_.max_assumed);
    bool assumed = pod && state_.Assume(*pod, node);
    JsonWriter binding(JsonWriter::Style::kLine);
    binding.BeginObject().Key("apiVersion").String("v1").Key("kind").String("Binding");
    binding.Key("metadata").BeginObject().Key("name").String(name).Key("namespace").String(ns);
    if (!uid.empty()) binding.Key("uid").String(uid);
    binding.EndObject().Key("target").BeginObject().Key("apiVersion").String("v1").Key("kind").String("Node");
    binding.Key("name").String(node).EndObject().EndObject();
    ApiClient::Response r =
        options_.api->Post(fmt::format("/api/v1/namespaces/{}/pods/{}/binding", ns, name), binding.Take());
    bool bound = r.status == 200 || r.status == 201;
    if (options_.metrics != nullptr) options_.metrics->Bind(bound);
    if (!bound) {
      if (assumed) state_.Forget(ns, name);
      std::string why = r.status == 0 ? r.error : fmt::format("HTTP {}: {}", r.status, r.body.substr(0, 512));
      failure = fmt::format("binding {}/{} to {} failed: {}", ns, name, node, why);
      out = PlainError(failure);
      return "";
    }
    out = R"({"Error": ""})";
    return "";
  });
  std::string problem = request.Read(body, "bind");
  if (!problem.empty()) return {200, PlainError(problem), problem};
  return {200, std::move(out), std::move(failure)};
}

std::span<const Extender::Verb> Extender::Verbs() {
  static constexpr Verb kVerbs[] = {
      {"filter", &Extender::Filter},
      {"prioritize", &Extender::Prioritize},
      {"preempt", &Extender::Preempt},
      {"bind", &Extender::Bind},
  };
  return kVerbs;
}

}  // namespace policy::server
