// List and watch from the Kubernetes API (api_watch.h).

#include "server/api_watch.h"

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "server/log.h"

namespace policy::server {
namespace {

namespace od = simdjson::ondemand;

constexpr int kWatchSeconds = 300;  // the API ends a watch after this; it is then resumed

// Calls `each(key, value)` for every member of `object`; false when one
// does not read.
template <typename F>
bool ForEachField(od::object object, F&& each) {
  for (auto member : object) {
    od::field field;
    std::string_view key;
    if (std::move(member).get(field) || field.unescaped_key().get(key)) return false;
    if (!each(key, field.value())) return false;
  }
  return true;
}

bool ReadHeader(od::parser& parser, std::string_view text, ApiHeader& out) {
  simdjson::padded_string padded(text);
  od::document doc;
  od::object top;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(top)) return false;
  std::string_view s;
  // metadata.resourceVersion and .continue: a list's, or a watch object's.
  auto metadata = [&](od::value value) {
    od::object meta;
    if (value.get_object().get(meta)) return true;  // not an object: nothing of it is read
    return ForEachField(meta, [&](std::string_view key, od::value v) {
      if (key == "resourceVersion" && !v.get_string().get(s)) out.resource_version = s;
      if (key == "continue" && !v.get_string().get(s)) out.next = s;
      return true;
    });
  };
  return ForEachField(top, [&](std::string_view key, od::value value) {
    if (key == "type" && !value.get_string().get(s)) out.type = s;
    if (key == "message" && !value.get_string().get(s)) out.message = s;
    if (key == "metadata") return metadata(value);
    od::object object;  // a watch event's object (an ERROR's Status)
    if (key != "object" || value.get_object().get(object)) return true;
    return ForEachField(object, [&](std::string_view k, od::value v) {
      if (k == "code" && v.get_int64().get(out.code)) out.code = 0;
      if (k == "message" && !v.get_string().get(s)) out.message = s;
      if (k == "metadata") return metadata(v);
      return true;
    });
  });
}

std::string Escape(std::string_view text) {  // for a query parameter
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// Why a request failed, in words: the API's Status message when it sent one.
std::string Why(const ApiClient::Response& r) {
  if (r.status == 0) return r.error;
  od::parser parser;
  ApiHeader h;
  std::string message = ReadHeader(parser, r.body, h) && !h.message.empty() ? h.message : "";
  std::string hint = r.status == 401 ? " (the token or certificate was not accepted)" : "";
  return fmt::format("HTTP {}{}{}", r.status, message.empty() ? "" : ": " + Printable(message), hint);
}

// The ClusterRole rule that grants listing and watching `kind`, as
// examples/extender/rbac.yaml writes it.
std::string RuleFor(const ApiWatch::Kind& kind) {
  std::string_view path = kind.path;
  std::string group;
  if (path.starts_with("/apis/")) {
    path.remove_prefix(6);
    group = std::string(path.substr(0, path.find('/')));
  }
  return fmt::format("{{apiGroups: [\"{}\"], resources: [{}], verbs: [get, list, watch]}}", group, kind.name);
}

// Kinds a cluster may go without: Dynamic Resource Allocation's (a cluster
// before 1.34 serves none; an account not granted them reads on without).
bool Optional(const ApiWatch::Kind& kind) { return std::string_view(kind.path).starts_with("/apis/resource.k8s.io/"); }

}  // namespace

bool ReadApiHeader(std::string_view text, ApiHeader& out) {
  od::parser parser;
  return ReadHeader(parser, text, out);
}

const std::vector<ApiWatch::Kind>& ApiWatch::Kinds() {
  static const std::vector<Kind> kinds = {
      {"/api/v1/nodes", "nodes"},
      {"/api/v1/pods", "pods"},
      {"/api/v1/namespaces", "namespaces"},
      {"/api/v1/services", "services"},
      {"/api/v1/replicationcontrollers", "replicationcontrollers"},
      {"/apis/apps/v1/replicasets", "replicasets"},
      {"/apis/apps/v1/statefulsets", "statefulsets"},
      {"/api/v1/persistentvolumeclaims", "persistentvolumeclaims"},
      {"/api/v1/persistentvolumes", "persistentvolumes"},
      {"/apis/storage.k8s.io/v1/storageclasses", "storageclasses"},
      {"/apis/storage.k8s.io/v1/csinodes", "csinodes"},
      {"/apis/scheduling.k8s.io/v1/priorityclasses", "priorityclasses"},
      {"/apis/policy/v1/poddisruptionbudgets", "poddisruptionbudgets"},
      // Dynamic Resource Allocation (GA in 1.34; a cluster without it answers 404: not served).
      {"/apis/resource.k8s.io/v1/deviceclasses", "deviceclasses"},
      {"/apis/resource.k8s.io/v1/resourceslices", "resourceslices"},
      {"/apis/resource.k8s.io/v1/resourceclaims", "resourceclaims"},
  };
  return kinds;
}

ApiWatch::ApiWatch(const ApiClient& api, host::ClusterState& state, Metrics& metrics)
    : api_(api), state_(state), metrics_(metrics) {}

ApiWatch::~ApiWatch() { Stop(); }

// 10 million objects of one kind, 500 a page.
constexpr size_t kMaxPages = 20000;

bool ListApi(const ApiClient& api, std::vector<std::shared_ptr<const Source>>& pages,
             std::map<size_t, std::string>& versions, std::vector<std::string>& not_served,
             std::vector<std::string>& forbidden, std::string* error) {
  const std::vector<ApiWatch::Kind>& kinds = ApiWatch::Kinds();
  od::parser parser;
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::string next;
    std::set<std::string> seen;  // continue tokens: one given twice is a loop
    size_t page = 0;
    do {
      if (++page > kMaxPages || !seen.insert(next).second) {
        *error = fmt::format("listing {} from {}: the API {} (a list that does not end)", kinds[k].name, api.config().server,
                             page > kMaxPages ? fmt::format("gave over {} pages of 500", kMaxPages)
                                              : std::string("gave a `continue` token it had given before"));
        return false;
      }
      std::string path = fmt::format("{}?limit=500{}", kinds[k].path, next.empty() ? "" : "&continue=" + Escape(next));
      ApiClient::Response r = api.Get(path);
      if (r.status == 404 && next.empty()) {
        not_served.push_back(kinds[k].name);
        break;
      }
      if (r.status == 403 && next.empty() && Optional(kinds[k])) {
        forbidden.push_back(fmt::format("{}: {}; the account lacks the ClusterRole rule {} (examples/extender/rbac.yaml "
                                        "has it): pods with resource claims are decided without their devices",
                                        kinds[k].name, Why(r), RuleFor(kinds[k])));
        break;
      }
      if (r.status != 200) {
        std::string rule = r.status == 403 ? fmt::format("; the account lacks the ClusterRole rule {} (examples/extender/"
                                                         "rbac.yaml has every rule policyc needs)",
                                                         RuleFor(kinds[k]))
                                           : "";
        *error = fmt::format("listing {} from {} ({}): {}{}", kinds[k].name, api.config().server, api.config().origin,
                             Why(r), rule);
        return false;
      }
      ApiHeader h;
      if (!ReadHeader(parser, r.body, h)) {
        *error = fmt::format("listing {} from {}: the answer is not a JSON list", kinds[k].name, api.config().server);
        return false;
      }
      versions[k] = h.resource_version;
      next = h.next;
      pages.push_back(std::make_shared<const Source>(api.config().server + path, std::move(r.body)));
    } while (!next.empty());
  }
  return true;
}

bool ApiWatch::List(std::string* error) {
  std::vector<std::shared_ptr<const Source>> pages;
  std::map<size_t, std::string> versions;
  std::vector<std::string> not_served, forbidden;
  if (!ListApi(api_, pages, versions, not_served, forbidden, error)) return false;
  for (const std::string& kind : not_served) {
    Log("warn", "the API does not serve this kind; it is left out", {{"kind", std::string_view(kind)}});
  }
  for (const std::string& why : forbidden) {
    Log("warn", "the account may not list this kind; it is left out", {{"detail", std::string_view(why)}});
  }
  DiagnosticSink diags;
  if (!state_.Load(pages, diags)) {
    *error = "the API's objects do not load:\n" + RenderAll(diags);
    return false;
  }
  metrics_.Listed();
  std::lock_guard lock(mutex_);
  version_ = std::move(versions);
  return true;
}

void ApiWatch::Start() { supervisor_ = std::thread([this] { Supervise(); }); }

void ApiWatch::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stop_.exchange(true)) return;
    halt_ = true;
  }
  wake_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
}

void ApiWatch::Supervise() {
  int failures = 0;
  while (!stop_) {
    std::vector<std::thread> watchers;
    {
      std::lock_guard lock(mutex_);
      halt_ = false;
      relist_ = false;
      for (const auto& [kind, version] : version_) watchers.emplace_back([this, k = kind] { Watch(k); });
    }
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || relist_; });
      halt_ = true;
    }
    for (std::thread& t : watchers) t.join();
    while (!stop_) {  // relist, backing off while the API does not answer
      std::string error;
      if (List(&error)) {
        failures = 0;
        Log("info", "listed the cluster again (a watch's resourceVersion was too old)",
            {{"nodes", static_cast<int64_t>(state_.NodeCount())}, {"pods", static_cast<int64_t>(state_.PodCount())}});
        break;
      }
      Log("error", "listing again failed; retrying", {{"detail", error}});
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::seconds(std::min(30, 1 << std::min(++failures, 5))), [&] { return stop_.load(); });
    }
  }
}

void ApiWatch::Watch(size_t kind) {
  const Kind& k = Kinds()[kind];
  od::parser parser;
  int failures = 0;
  auto relist = [&] {
    std::lock_guard lock(mutex_);
    relist_ = true;
    wake_.notify_all();
  };
  while (!halt_) {
    std::string version;
    {
      std::lock_guard lock(mutex_);
      version = version_[kind];
    }
    std::string path = fmt::format("{}?watch=1&allowWatchBookmarks=true&timeoutSeconds={}&resourceVersion={}", k.path,
                                   kWatchSeconds, Escape(version));
    bool gone = false, error_event = false;
    size_t events = 0;
    ApiClient::Response r = api_.Stream(path, [&](std::string_view line) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
      ApiHeader h;
      if (!ReadHeader(parser, line, h)) {
        metrics_.Event(false);
        Log("warn", "a watch event does not read; it is skipped", {{"kind", k.name}});
        return true;
      }
      if (h.type == "ERROR") {
        gone = h.code == 410;
        error_event = !gone;
        if (!gone) Log("warn", "the watch ended with an error", {{"kind", k.name}, {"code", h.code}, {"detail", Printable(h.message)}});
        return false;
      }
      if (h.type != "BOOKMARK") {
        Source event(fmt::format("watch {} at {}", k.name, h.resource_version), std::string(line));
        DiagnosticSink diags;
        bool applied = state_.Apply(event, diags).has_value();
        metrics_.Event(applied);
        if (!applied) Log("warn", "a watch event was refused; the state is unchanged", {{"detail", RenderAll(diags)}});
      }
      ++events;
      if (!h.resource_version.empty()) {
        std::lock_guard lock(mutex_);
        version_[kind] = h.resource_version;
      }
      return true;
    }, halt_);
    if (halt_) return;
    if (gone || r.status == 410) {
      Log("info", "the watch's resourceVersion is too old (410 Gone): listing again", {{"kind", k.name}});
      relist();
      return;
    }
    if (r.status == 200 && !error_event) {  // the API ended the watch (timeoutSeconds) or the stream broke: resume
      if (events > 0) failures = 0;
      if (!r.error.empty()) Log("warn", "the watch broke; resuming from the last version", {{"kind", k.name}, {"detail", r.error}});
      if (events > 0 || r.error.empty()) continue;
    } else if (!error_event) {
      Log("warn", "the watch failed; retrying", {{"kind", k.name}, {"detail", Why(r)}});
    }
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(std::min(30000, 250 << std::min(++failures, 7))), [&] { return halt_.load(); });
  }
}

}  // namespace policy::server
