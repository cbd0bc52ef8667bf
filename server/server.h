#pragma once
/// `policyc serve`'s HTTP side, on Boost.Beast's asynchronous model: the
/// extender verbs under a prefix (extender.h, bind included) answered only
/// to an authenticated caller (a client certificate `client_ca` signed,
/// and/or the bearer token of `token_file`); `/healthz`, `/readyz` and
/// Prometheus `/metrics` on a probe listener of their own that needs none;
/// and the watch events read from a file, FIFO or stdin while it serves.
///
/// No client can starve the others: connections are read and written by
/// I/O threads that never decide (a connection waiting for its next request
/// holds no thread), each with deadlines for the TLS handshake, a request's
/// line and headers (from its first byte), its body, and the answer; calls
/// are decided by a pool of `threads` workers behind a bounded queue (503
/// past it). Pipelined requests are answered in order. Stop() refuses new
/// connections, answers the requests already read and closes the idle
/// ones, within `shutdown_grace_s`.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "runtime/host/host.h"
#include "server/extender.h"
#include "server/metrics.h"

namespace policy::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8890;
  std::string prefix = "/policyc";
  size_t max_body_bytes = size_t{64} << 20;  ///< larger bodies: 413
  /// Request bodies held at once, all connections together (a body is
  /// counted from its headers, at its Content-Length, or at
  /// max_body_bytes when chunked, until its answer is written): past it,
  /// 503.
  size_t max_inflight_bytes = size_t{512} << 20;
  /// A request's line and headers must arrive within this of its first
  /// byte, and its body within this of its headers; else 408 and closed.
  int read_timeout_s = 10;
  int write_timeout_s = 10;      ///< an answer not taken within this: closed
  int idle_timeout_s = 60;       ///< a kept-alive connection idle longer: closed
  int handshake_timeout_s = 10;  ///< a TLS handshake not done within this: closed
  int threads = 8;               ///< calls decided at once
  size_t max_queue = 256;        ///< calls waiting for a worker; more: 503
  size_t max_connections = 256;  ///< more open at once: 503 and closed
  size_t max_headers = 100;      ///< more header fields: 431
  size_t max_header_bytes = 32 << 10;  ///< a longer request line and headers: 431
  int shutdown_grace_s = 10;     ///< Stop() closes whatever is still open after this
  /// TLS: PEM files of the server's certificate and key; with `client_ca`,
  /// clients must present a certificate it signed. Empty: plain HTTP.
  std::string tls_cert, tls_key, client_ca;
  /// A file holding the bearer token callers must send
  /// (`Authorization: Bearer TOKEN`) for the verbs and /metrics; empty:
  /// none asked.
  std::string token_file;
  /// The probe listener (plain HTTP, no authentication): /healthz, /readyz
  /// and /metrics. Port -1: none.
  std::string probe_host = "127.0.0.1";
  int probe_port = -1;
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
  void UseApi(const ApiClient* api);
  Metrics& metrics();

  /// Binds the addresses and reads the TLS files and the token; false with
  /// the reason in `error`.
  bool Bind(std::string* error);
  /// The port bound (the one asked, or the one given for port 0).
  int Port() const;
  /// The probe listener's port, or -1.
  int ProbePort() const;
  /// Serves until Stop(); returns once every connection is answered and
  /// closed, or the grace has passed.
  void Listen();
  /// From any thread, once or more.
  void Stop();

  /// Reads watch events, one JSON object per line, from `path` ("-":
  /// stdin) on a thread of its own until it ends, applying each; an event
  /// that does not read is counted and logged, never applied in part.
  void FollowEvents(const std::string& path);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::thread events_;
};

}  // namespace policy::server
