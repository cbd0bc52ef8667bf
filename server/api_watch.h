#pragma once
/// The cluster state kept in step with the Kubernetes API, as
/// kube-scheduler's informers keep its cache: every kind the plugins read
/// is listed (in pages of 500) and loaded as one snapshot, then watched from
/// the list's resourceVersion with bookmarks, one thread a kind. A watch
/// that ends or breaks resumes from the last version it saw; `410 Gone`
/// (that version is too old) lists everything again and replaces the state
/// at once, as a relist does. A kind the API does not serve (404) is left
/// out and logged.

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host/host.h"
#include "server/kube_api.h"
#include "server/metrics.h"

namespace policy::server {

/// What a list page or a watch event line says about itself.
struct ApiHeader {
  std::string type;              ///< a watch event's (ADDED, ..., BOOKMARK, ERROR); empty for a list
  std::string resource_version;  ///< metadata.resourceVersion: the list's, or the event object's
  std::string next;              ///< a list page's metadata.continue
  int64_t code = 0;              ///< an ERROR event's status code
  std::string message;           ///< an ERROR event's or a Status's message
};
/// Reads `text`'s header; false when it is not a JSON object.
bool ReadApiHeader(std::string_view text, ApiHeader& out);

/// Lists every kind ApiWatch::Kinds() names from `api`, in pages of 500:
/// the pages as sources, as a snapshot loads them, and each kind's list
/// resourceVersion (by index into Kinds()); a kind the API does not serve
/// (404) is left out and named in `not_served`; an optional kind (Dynamic
/// Resource Allocation's) the account may not list (403) is left out too,
/// with a message naming the ClusterRole rule it lacks in `forbidden`.
/// False with the reason (a 403 on any other kind names its rule). What
/// `serve` starts from and `check` without --cluster reads.
bool ListApi(const ApiClient& api, std::vector<std::shared_ptr<const Source>>& pages,
             std::map<size_t, std::string>& versions, std::vector<std::string>& not_served,
             std::vector<std::string>& forbidden, std::string* error);

class ApiWatch {
 public:
  ApiWatch(const ApiClient& api, host::ClusterState& state, Metrics& metrics);
  ~ApiWatch();

  /// Lists every kind and loads the state; false with the reason.
  bool List(std::string* error);
  /// Watches until Stop(), listing again when the API says to.
  void Start();
  void Stop();

  /// The API paths watched and the kinds they hold.
  struct Kind {
    const char* path;  ///< e.g. /api/v1/nodes
    const char* name;  ///< e.g. nodes
  };
  static const std::vector<Kind>& Kinds();

 private:
  void Supervise();
  void Watch(size_t kind);  // until halted or a relist is needed

  const ApiClient& api_;
  host::ClusterState& state_;
  Metrics& metrics_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<size_t, std::string> version_;  // by kind: the last resourceVersion seen; absent: not served
  bool relist_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> halt_{false};  // the watchers' stop: set by Stop() and for a relist
  std::thread supervisor_;
};

}  // namespace policy::server
