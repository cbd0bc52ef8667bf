// `policyc serve`'s HTTP side on cpp-httplib (server.h).

#include "server/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>

#include "support/json_writer.h"
#include "server/extender.h"
#include "server/log.h"

namespace policy::server {
namespace {

std::string Escaped(const std::string& text) {  // for httplib's route patterns
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(text, special, R"(\$&)");
}

// Set on the thread serving a connection over ServerOptions::max_connections:
// its requests are answered 503 and the connection closed.
thread_local bool over_limit = false;

// cpp-httplib's thread pool, bounded: a connection past `max_open` open ones
// goes to one thread of its own that refuses its requests at once (the
// library hands a queue the connection's whole work, never the socket).
class BoundedQueue final : public httplib::TaskQueue {
 public:
  BoundedQueue(size_t threads, size_t max_open) : pool_(threads), overflow_(1), max_open_(max_open) {}
  void enqueue(std::function<void()> fn) override {
    if (open_.fetch_add(1) >= max_open_) {
      overflow_.enqueue([this, fn = std::move(fn)] {
        over_limit = true;
        fn();
        over_limit = false;
        --open_;
      });
      return;
    }
    pool_.enqueue([this, fn = std::move(fn)] {
      fn();
      --open_;
    });
  }
  void shutdown() override {
    pool_.shutdown();
    overflow_.shutdown();
  }

 private:
  httplib::ThreadPool pool_, overflow_;
  size_t max_open_;
  std::atomic<size_t> open_{0};
};

std::unique_ptr<httplib::Server> MakeHttp(const ServerOptions& o) {
  if (o.tls_cert.empty()) return std::make_unique<httplib::Server>();
  return std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str(),
                                              o.client_ca.empty() ? nullptr : o.client_ca.c_str());
}

// Why the address cannot be bound (`: address already in use`), found by
// binding a socket of our own as the server's would be (cpp-httplib does not
// keep errno); empty when that binds.
std::string WhyNotBound(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int e = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); e != 0) {
    return fmt::format(": {}", gai_strerror(e));
  }
  std::string why;
  for (addrinfo* a = found; a != nullptr && why.empty(); a = a->ai_next) {
    int sock = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (sock < 0) continue;
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (bind(sock, a->ai_addr, a->ai_addrlen) != 0) {
      std::string text = std::strerror(errno);
      if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
      why = ": " + text;
    }
    close(sock);
  }
  freeaddrinfo(found);
  return why;
}

}  // namespace

Server::Server(host::Decisions& decisions, host::ClusterState& state, ServerOptions options)
    : decisions_(decisions), state_(state), options_(std::move(options)), http_(MakeHttp(options_)) {
  while (options_.prefix.size() > 1 && options_.prefix.back() == '/') options_.prefix.pop_back();  // as kube-scheduler trims
  httplib::Server& s = *http_;
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_read_timeout(options_.read_timeout_s, 0);
  s.set_write_timeout(options_.write_timeout_s, 0);
  // Answers go out at once: with Nagle's algorithm a large answer's last
  // segment waits for the client's delayed ACK (40 ms on Linux, measured:
  // 1% of calls). Go's net/http client, kube-scheduler's, sets it too.
  s.set_tcp_nodelay(true);
  // kube-scheduler keeps its connection to the extender alive; cpp-httplib
  // closes one after its fifth request by default (measured with
  // tests/server/kubeclient: every fifth call opened a new connection, a
  // new TLS handshake with --tls-cert). A connection is kept for as many
  // requests as come while it is not idle past the keep-alive timeout (5 s,
  // cpp-httplib's: an idle connection holds a worker thread).
  s.set_keep_alive_max_count(std::numeric_limits<int32_t>::max());
  // SO_REUSEADDR only: cpp-httplib sets SO_REUSEPORT by default, with which
  // a second `policyc serve` on the same port starts and the kernel shares
  // the connections between the two (measured: /metrics answered from each
  // in turn). An address in use must be an error.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  size_t threads = static_cast<size_t>(options_.threads), max_open = options_.max_connections;
  s.new_task_queue = [threads, max_open] { return new BoundedQueue(threads, max_open); };
  // Before any route: refusals that need no body read.
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    auto refuse = [&](int status, const char* why) {
      res.status = status;
      res.set_header("Connection", "close");
      if (status == 503) res.set_header("Retry-After", "1");
      res.set_content(fmt::format("{{\"Error\": {}}}", JsonQuote(why)), "application/json");
      metrics_.Request("refused", status, 0);
      Log("warn", "request refused", {{"code", int64_t{status}}, {"why", why}, {"remote", req.remote_addr}});
      return httplib::Server::HandlerResponse::Handled;
    };
    if (over_limit) return refuse(503, "too many connections (--max-connections)");
    size_t header_bytes = 0;
    for (const auto& [key, value] : req.headers) header_bytes += key.size() + value.size() + 4;
    if (req.headers.size() > options_.max_headers || header_bytes > options_.max_header_bytes) {
      return refuse(431, "request headers too large");
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  auto verb = [this](const char* name, Reply (Extender::*call)(std::string_view)) {
    std::string path = (options_.prefix == "/" ? "" : options_.prefix) + "/" + name;
    http_->Post(Escaped(path), [this, name, call](const httplib::Request& req, httplib::Response& res) {
      auto start = std::chrono::steady_clock::now();
      Extender extender(decisions_, state_, {.metrics = &metrics_, .recent = &recent_, .api = api_, .decide = options_.decide,
                                                                .all_reasons = options_.all_reasons});
      Reply reply = (extender.*call)(req.body);
      res.status = reply.status;
      res.set_content(reply.body, "application/json");
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      metrics_.Request(name, reply.status, seconds);
      bool failed = !reply.error.empty();
      if (options_.log_requests || failed || seconds > 1) {
        Log(failed ? "warn" : "info", "request",
            {{"verb", name}, {"code", int64_t{reply.status}}, {"ms", seconds * 1e3},
             {"bytes_in", static_cast<int64_t>(req.body.size())}, {"bytes_out", static_cast<int64_t>(reply.body.size())},
             {"remote", req.remote_addr}, {"error", reply.error}});
      }
    });
  };
  for (const Extender::Verb& v : Extender::Verbs()) verb(v.name, v.call);
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    bool ready = state_.NodeCount() > 0;
    res.status = ready ? 200 : 503;
    res.set_content(ready ? "ok\n" : "no nodes in the cluster state yet\n", "text/plain");
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.Render(state_.NodeCount(), state_.PodCount()), "text/plain; version=0.0.4");
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
    std::string what = "an unknown exception";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    Log("error", "internal error (a bug in policyc)", {{"detail", what}});
    res.status = 500;
    res.set_content(fmt::format("{{\"Error\": {}}}", JsonQuote("internal error: " + what)), "application/json");
  });
}

Server::~Server() {
  Stop();
  if (events_.joinable()) events_.detach();  // it may wait on a FIFO forever; the process ends it
}

bool Server::Bind(std::string* error) {
  if (!http_->is_valid()) {  // an SSLServer whose certificate, key or CA did not load
    *error = fmt::format("cannot use the TLS certificate `{}` and key `{}`{}: not readable PEM files, or not a pair",
                         options_.tls_cert, options_.tls_key,
                         options_.client_ca.empty() ? "" : fmt::format(" with client CA `{}`", options_.client_ca));
    return false;
  }
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
  } else {
    port_ = http_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ < 0) {
    *error = fmt::format("cannot listen on {}:{}{}", options_.host, options_.port, WhyNotBound(options_.host, options_.port));
    return false;
  }
  return true;
}

void Server::Listen() {
  std::vector<std::string_view> verbs;
  for (const Extender::Verb& v : Extender::Verbs()) verbs.push_back(v.name);
  Log("info", fmt::format("serving the extender at {}://{}:{}{}/{{{}}}", options_.tls_cert.empty() ? "http" : "https",
                          options_.host, port_, options_.prefix == "/" ? "" : options_.prefix, fmt::join(verbs, ",")));
  http_->listen_after_bind();
  Log("info", "stopped: the requests in flight were answered");
}

void Server::Stop() {
  if (stopping_.exchange(true)) return;
  http_->stop();
}

void Server::FollowEvents(const std::string& path) {
  events_ = std::thread([this, path] {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (path != "-") {
      file.open(path);
      if (!file) {
        Log("error", "cannot read the events", {{"path", path}});
        return;
      }
      in = &file;
    }
    std::string line;
    size_t number = 0;
    while (!stopping_ && std::getline(*in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Source source(fmt::format("{}:{}", path == "-" ? "stdin" : path, number), line);
      DiagnosticSink diags;
      bool applied = state_.Apply(source, diags).has_value();
      metrics_.Event(applied);
      if (!applied) Log("warn", "a watch event was refused; the state is unchanged", {{"detail", RenderAll(diags)}});
    }
    Log("info", "the event stream ended", {{"path", path}});
  });
}

}  // namespace policy::server
