#pragma once
/// `policyc serve`'s HTTP side: the extender verbs under a prefix
/// (extender.h, bind included), `/healthz`, `/readyz` and Prometheus `/metrics`, on
/// cpp-httplib's thread pool (HTTPS with OpenSSL when given a certificate,
/// client certificates optional), with limits on body size and per-request
/// time; and the watch events read from a file, FIFO or stdin while it
/// serves. Stop() lets the requests in flight finish.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "runtime/host/host.h"
#include "server/extender.h"
#include "server/metrics.h"

namespace httplib {
class Server;
}

namespace policy::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8890;
  std::string prefix = "/policyc";
  size_t max_body_bytes = size_t{64} << 20;  ///< larger bodies: 413
  int read_timeout_s = 10;                   ///< a client slower than this to send: the connection is closed
  int write_timeout_s = 10;
  int threads = 8;                           ///< requests served at once
  size_t max_connections = 256;              ///< more open at once: 503 and closed
  size_t max_headers = 100;                  ///< more header fields: 431
  size_t max_header_bytes = 32 << 10;        ///< more header bytes in all: 431 (one line over 8 KiB: 400, the library's)
  /// TLS: PEM files of the server's certificate and key; with `client_ca`,
  /// clients must present a certificate it signed. Empty: plain HTTP.
  std::string tls_cert, tls_key, client_ca;
  bool log_requests = false;  ///< a log line per request (else only failures and slow ones, over 1 s)
  bool decide = false;       ///< filter answers one node and assumes the pod there (ExtenderOptions::decide)
  bool all_reasons = false;  ///< every failing plugin's reasons per failed node (ExtenderOptions::all_reasons)
};

class Server {
 public:
  Server(host::Decisions& decisions, host::ClusterState& state, ServerOptions options);
  ~Server();

  /// The Kubernetes API the bind verb binds through (null: bind answers
  /// that there is none). Set before Listen().
  void UseApi(const ApiClient* api) { api_ = api; }
  Metrics& metrics() { return metrics_; }

  /// Binds the address; false with the reason in `error`.
  bool Bind(std::string* error);
  /// The port bound (the one asked, or the one given for port 0).
  int Port() const { return port_; }
  /// Serves until Stop(); the requests in flight finish first.
  void Listen();
  void Stop();

  /// Reads watch events, one JSON object per line, from `path` ("-":
  /// stdin) on a thread of its own until it ends, applying each; an event
  /// that does not read is counted and logged, never applied in part.
  void FollowEvents(const std::string& path);

 private:
  host::Decisions& decisions_;
  host::ClusterState& state_;
  ServerOptions options_;
  Metrics metrics_;
  RecentPods recent_;
  const ApiClient* api_ = nullptr;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::thread events_;
  std::atomic<bool> stopping_{false};
};

}  // namespace policy::server
