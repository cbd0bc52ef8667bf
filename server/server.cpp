// `policyc serve`'s HTTP side on Boost.Beast (server.h): an acceptor and
// asynchronous sessions on a few I/O threads, the extender's calls on a pool
// of workers, and a probe listener with a thread of its own.

#include "server/server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <list>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "server/extender.h"
#include "server/log.h"
#include "support/json_writer.h"

namespace policy::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

namespace {

constexpr int kIoThreads = 2;

// Workers behind a bounded queue: Push refuses past `max_queued`.
class WorkerPool {
 public:
  WorkerPool(size_t threads, size_t max_queued) : max_queued_(max_queued) {
    for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) threads_.emplace_back([this] { Work(); });
  }
  ~WorkerPool() { Stop(); }
  bool Push(std::function<void()> job) {
    std::lock_guard lock(mutex_);
    if (stopping_ || jobs_.size() >= max_queued_) return false;
    jobs_.push_back(std::move(job));
    ready_.notify_one();
    return true;
  }
  // Runs what is queued, then ends the threads.
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      ready_.notify_all();
    }
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

std::string Lowercase(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// Constant-time comparison of the token sent with the one expected.
bool SameToken(std::string_view sent, std::string_view want) {
  unsigned diff = sent.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < sent.size(); ++i) diff |= static_cast<unsigned>(sent[i] ^ want[i % std::max<size_t>(want.size(), 1)]);
  return diff == 0 && !want.empty();
}

std::string JsonError(std::string_view why) { return fmt::format("{{\"Error\": {}}}", JsonQuote(std::string(why))); }

// A session's interface to the server, whatever its stream.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  /// On the server's stopping: an idle session closes now, a busy one
  /// after its answer.
  virtual void OnStop() = 0;
  /// Closes at once (the grace has passed).
  virtual void Close() = 0;
};

}  // namespace

class Server::Impl {
 public:
  Impl(host::Decisions& decisions, host::ClusterState& state, ServerOptions options)
      : decisions_(decisions), state_(state), options_(std::move(options)) {
    while (options_.prefix.size() > 1 && options_.prefix.back() == '/') options_.prefix.pop_back();  // as kube-scheduler trims
  }

  host::Decisions& decisions_;
  host::ClusterState& state_;
  ServerOptions options_;
  Metrics metrics_;
  RecentPods recent_;
  const ApiClient* api_ = nullptr;
  std::string token_;
  asio::io_context io_{kIoThreads};
  asio::io_context probe_io_{1};
  tcp::acceptor acceptor_{io_};
  tcp::acceptor probe_acceptor_{probe_io_};
  std::optional<ssl::context> tls_;
  std::unique_ptr<WorkerPool> workers_;
  asio::steady_timer grace_{io_};
  int port_ = 0, probe_port_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> open_{0}, probe_open_{0};
  std::atomic<uint64_t> inflight_bytes_{0};
  // Takes `bytes` of the in-flight budget; false (nothing taken) past it.
  bool Reserve(uint64_t bytes) {
    uint64_t now = inflight_bytes_.load();
    do {
      if (now + bytes > options_.max_inflight_bytes) return false;
    } while (!inflight_bytes_.compare_exchange_weak(now, now + bytes));
    return true;
  }
  std::mutex sessions_mutex_;
  std::list<std::weak_ptr<SessionBase>> sessions_;
  // Counts kept for the probes when the state is being written.
  std::atomic<size_t> last_nodes_{0}, last_pods_{0};

  bool Bind(std::string* error);
  void Listen();
  void Stop();
  void Accept();
  void AcceptProbe();
  void Opened(const std::shared_ptr<SessionBase>& s) {
    std::lock_guard lock(sessions_mutex_);
    std::erase_if(sessions_, [](const std::weak_ptr<SessionBase>& w) { return w.expired(); });
    sessions_.push_back(s);
  }
  void Closed() {
    if (--open_ == 0 && stopping_) asio::post(io_, [this] { grace_.cancel(); });
  }

  // What a request is answered with, when it is not a verb (or refused).
  enum class Route { kVerb, kHealthz, kReadyz, kMetrics, kNotFound, kMethod };
  Route RouteOf(const Request& req, bool probe, const Extender::Verb** verb) const {
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    auto get = [&](Route r) { return req.method() == http::verb::get || req.method() == http::verb::head ? r : Route::kMethod; };
    if (target == "/healthz") return get(Route::kHealthz);
    if (target == "/readyz") return get(Route::kReadyz);
    if (target == "/metrics") return get(Route::kMetrics);
    if (probe) return Route::kNotFound;
    std::string base = options_.prefix == "/" ? "" : options_.prefix;
    for (const Extender::Verb& v : Extender::Verbs()) {
      if (target == base + "/" + v.name) {
        *verb = &v;
        return req.method() == http::verb::post ? Route::kVerb : Route::kMethod;
      }
    }
    return Route::kNotFound;
  }

  // Whether the caller may call verbs and read /metrics on the main
  // listener (a client certificate was checked by the handshake already).
  bool Authorized(const Request& req) const {
    if (token_.empty()) return true;
    auto it = req.find(http::field::authorization);
    if (it == req.end()) return false;
    std::string_view value(it->value().data(), it->value().size());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() <= kBearer.size() || value.substr(0, kBearer.size()) != kBearer) return false;
    return SameToken(value.substr(kBearer.size()), token_);
  }

  // A probe's answer, on the I/O thread: never waits for the state.
  Response Probe(Route route, const Request& req) {
    Response res{http::status::ok, req.version()};
    std::optional<std::pair<size_t, size_t>> counts = state_.TryCounts();
    if (counts) {
      last_nodes_ = counts->first;
      last_pods_ = counts->second;
    }
    if (route == Route::kHealthz) {
      res.set(http::field::content_type, "text/plain");
      res.body() = "ok\n";
    } else if (route == Route::kReadyz) {
      bool ready = last_nodes_ > 0 && !stopping_;
      res.result(ready ? http::status::ok : http::status::service_unavailable);
      res.set(http::field::content_type, "text/plain");
      res.body() = ready ? "ok\n" : stopping_ ? "stopping\n" : "no nodes in the cluster state yet\n";
    } else {
      res.set(http::field::content_type, "text/plain; version=0.0.4");
      res.body() = metrics_.Render(last_nodes_, last_pods_);
    }
    return res;
  }

  // The extender's answer to a verb, on a worker.
  Response Call(const Extender::Verb& verb, const Request& req, const std::string& remote) {
    auto start = std::chrono::steady_clock::now();
    Extender extender(decisions_, state_, {.metrics = &metrics_, .recent = &recent_, .api = api_, .decide = options_.decide,
                                            .all_reasons = options_.all_reasons});
    Reply reply = (extender.*verb.call)(req.body());
    Response res{static_cast<http::status>(reply.status), req.version()};
    res.set(http::field::content_type, "application/json");
    res.body() = std::move(reply.body);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics_.Request(verb.name, reply.status, seconds);
    bool failed = !reply.error.empty();
    if (options_.log_requests || failed || seconds > 1) {
      Log(failed ? "warn" : "info", "request",
          {{"verb", verb.name}, {"code", int64_t{reply.status}}, {"ms", seconds * 1e3},
           {"bytes_in", static_cast<int64_t>(req.body().size())}, {"bytes_out", static_cast<int64_t>(res.body().size())},
           {"remote", remote}, {"error", reply.error}});
    }
    return res;
  }

  Response Refusal(http::status status, std::string_view why, unsigned version, const std::string& remote) {
    Response res{status, version};
    res.set(http::field::content_type, "application/json");
    if (status == http::status::service_unavailable) res.set(http::field::retry_after, "1");
    if (status == http::status::unauthorized) res.set(http::field::www_authenticate, "Bearer");
    res.body() = JsonError(why);
    res.keep_alive(false);
    metrics_.Request("refused", static_cast<int>(status), 0);
    Log("warn", "request refused", {{"code", static_cast<int64_t>(status)}, {"why", why}, {"remote", remote}});
    return res;
  }
};

namespace {

using Impl = Server::Impl;
using Clock = std::chrono::steady_clock;

// One connection: TLS handshake (Stream an ssl_stream), then requests read,
// answered and written one after another. Every wait has a deadline.
template <typename Stream>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <typename... Args>
  Session(Impl& server, bool probe, bool over_limit, Args&&... args)
      : server_(server), probe_(probe), over_limit_(over_limit), stream_(std::forward<Args>(args)...) {
    if (probe_) ++server_.probe_open_;
    beast::error_code ec;
    tcp::endpoint peer = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
    if (!ec) remote_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
  }
  ~Session() override {
    Release();
    if (probe_) --server_.probe_open_;
    else server_.Closed();
  }

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(std::chrono::seconds(server_.options_.handshake_timeout_s));
      stream_.async_handshake(ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (ec) return self->Shut();
        self->WaitForRequest(true);
      });
    } else {
      WaitForRequest(true);
    }
  }

  void OnStop() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (self->idle_) self->Shut();
    });
  }
  void Close() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] { self->Shut(); });
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  // Waits for a request's first byte (the idle timeout; the read timeout
  // for a connection's first request), unless one is buffered already.
  void WaitForRequest(bool first) {
    if (buffer_.size() > 0) return ReadHeader();
    if (server_.stopping_) return Shut();
    idle_ = true;
    int seconds = first ? server_.options_.read_timeout_s : server_.options_.idle_timeout_s;
    Lowest().expires_after(std::chrono::seconds(seconds));
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
      self->idle_ = false;
      if (ec) return self->Shut();
      self->buffer_.commit(n);
      self->ReadHeader();
    });
  }

  void ReadHeader() {
    const ServerOptions& o = server_.options_;
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(o.max_header_bytes));
    parser_->body_limit(o.max_body_bytes);
    Lowest().expires_after(std::chrono::seconds(o.read_timeout_s));
    http::async_read_header(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      self->OnHeader(ec);
    });
  }

  void OnHeader(beast::error_code ec) {
    const ServerOptions& o = server_.options_;
    if (ec == http::error::header_limit) return Refuse(http::status::request_header_fields_too_large, "request headers too large");
    if (ec == http::error::body_limit) return Refuse(http::status::payload_too_large, "request body too large (--max-body-bytes)");
    if (ec == beast::error::timeout) return Refuse(http::status::request_timeout, "the request's headers did not arrive in time");
    if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
        ec == asio::error::connection_reset) {
      return Shut();  // the client went away
    }
    if (ec) return Refuse(http::status::bad_request, "not an HTTP request: " + ec.message());
    const Request& req = parser_->get();
    if (static_cast<size_t>(std::distance(req.begin(), req.end())) > o.max_headers) {
      return Refuse(http::status::request_header_fields_too_large, "request headers too large");
    }
    if (over_limit_) return Refuse(http::status::service_unavailable, "too many connections (--max-connections)");
    if (server_.stopping_) return Refuse(http::status::service_unavailable, "policyc is stopping");
    route_ = server_.RouteOf(req, probe_, &verb_);
    if (route_ == Impl::Route::kNotFound) return Refuse(http::status::not_found, "no such path");
    if (route_ == Impl::Route::kMethod) return Refuse(http::status::method_not_allowed, "method not allowed here");
    bool needs_token = route_ == Impl::Route::kVerb || (route_ == Impl::Route::kMetrics && !probe_);
    if (needs_token && !server_.Authorized(req)) {
      return Refuse(http::status::unauthorized, "a bearer token is required (--token-file)");
    }
    if (parser_->content_length() && *parser_->content_length() > o.max_body_bytes) {
      return Refuse(http::status::payload_too_large, "request body too large (--max-body-bytes)");
    }
    // Without a length, a body is chunked (counted at the most it may be) or none.
    uint64_t body = parser_->content_length() ? *parser_->content_length() : parser_->chunked() ? o.max_body_bytes : 0;
    if (!server_.Reserve(body)) {
      return Refuse(http::status::service_unavailable, "too many request bytes in flight; retry");
    }
    reserved_ = body;
    Lowest().expires_after(std::chrono::seconds(o.read_timeout_s));
    http::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      self->OnBody(ec);
    });
  }

  void OnBody(beast::error_code ec) {
    if (ec == http::error::body_limit) return Refuse(http::status::payload_too_large, "request body too large (--max-body-bytes)");
    if (ec == beast::error::timeout) return Refuse(http::status::request_timeout, "the request's body did not arrive in time");
    if (ec) return Shut();
    request_ = parser_->release();
    if (route_ != Impl::Route::kVerb) return Write(server_.Probe(route_, request_));
    // Decided on a worker; the answer comes back to this session's strand.
    Lowest().expires_never();
    auto self = this->shared_from_this();
    // The work guard keeps the I/O threads running until the answer is written.
    bool queued = server_.workers_->Push([self, guard = asio::make_work_guard(server_.io_)] {
      Response res = self->server_.Call(*self->verb_, self->request_, self->remote_);
      asio::post(self->stream_.get_executor(), [self, res = std::move(res)]() mutable { self->Write(std::move(res)); });
    });
    if (!queued) Refuse(http::status::service_unavailable, "too many calls waiting (--max-queue)");
  }

  void Refuse(http::status status, std::string_view why) {
    Write(server_.Refusal(status, why, parser_ ? parser_->get().version() : 11, remote_));
  }

  void Write(Response res) {
    bool keep = res.keep_alive() && request_.keep_alive() && !server_.stopping_;
    res.keep_alive(keep);
    res.prepare_payload();
    response_ = std::move(res);
    Lowest().expires_after(std::chrono::seconds(server_.options_.write_timeout_s));
    http::async_write(stream_, response_, [self = this->shared_from_this(), keep](beast::error_code ec, size_t) {
      self->Release();
      if (ec || !keep) return self->Shut();
      self->request_ = {};
      self->WaitForRequest(false);
    });
  }

  // The request's share of the in-flight budget, given back.
  void Release() {
    server_.inflight_bytes_ -= reserved_;
    reserved_ = 0;
  }

  void Shut() {
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    Lowest().close();
  }

  Impl& server_;
  bool probe_, over_limit_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Request request_;
  Response response_;
  Impl::Route route_ = Impl::Route::kNotFound;
  const Extender::Verb* verb_ = nullptr;
  std::string remote_;
  bool idle_ = false;
  uint64_t reserved_ = 0;  // of Impl::inflight_bytes_, for the request being read or answered
};

// host:port of a listener, for the log and errors.
std::string Address(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

// Opens, binds and listens; the port bound, or -1 with the reason.
int Open(tcp::acceptor& acceptor, asio::io_context& io, const std::string& host, int port, std::string* error) {
  beast::error_code ec;
  tcp::resolver resolver(io);
  auto found = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || found.empty()) {
    *error = fmt::format("cannot listen on {}: {}", Address(host, port), Lowercase(ec ? ec.message() : "no such address"));
    return -1;
  }
  tcp::endpoint endpoint = found.begin()->endpoint();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    *error = fmt::format("cannot listen on {}: {}", Address(host, port), Lowercase(ec.message()));
    return -1;
  }
  return acceptor.local_endpoint().port();
}

}  // namespace

bool Server::Impl::Bind(std::string* error) {
  const ServerOptions& o = options_;
  if (!o.tls_cert.empty()) {
    try {
      tls_.emplace(ssl::context::tls_server);
      tls_->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      tls_->use_certificate_chain_file(o.tls_cert);
      tls_->use_private_key_file(o.tls_key, ssl::context::pem);
      if (!o.client_ca.empty()) {
        tls_->load_verify_file(o.client_ca);
        tls_->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      }
    } catch (const boost::system::system_error&) {
      *error = fmt::format("cannot use the TLS certificate `{}` and key `{}`{}: not readable PEM files, or not a pair",
                           o.tls_cert, o.tls_key, o.client_ca.empty() ? "" : fmt::format(" with client CA `{}`", o.client_ca));
      return false;
    }
  }
  if (!o.token_file.empty()) {
    std::ifstream in(o.token_file);
    std::stringstream text;
    text << in.rdbuf();
    token_ = text.str();
    while (!token_.empty() && std::isspace(static_cast<unsigned char>(token_.back()))) token_.pop_back();
    if (!in || token_.empty() || token_.find_first_of(" \t\r\n") != std::string::npos) {
      *error = fmt::format("--token-file `{}`: expected a readable file holding one token", o.token_file);
      return false;
    }
  }
  port_ = Open(acceptor_, io_, o.host, o.port, error);
  if (port_ < 0) return false;
  if (o.probe_port >= 0) {
    probe_port_ = Open(probe_acceptor_, probe_io_, o.probe_host, o.probe_port, error);
    if (probe_port_ < 0) return false;
  }
  return true;
}

void Server::Impl::Accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || stopping_) return;
    if (!ec) {
      // Past the limit a connection is answered 503 after its headers; far
      // past it (a flood), closed at once.
      size_t open = ++open_;
      bool over = open > options_.max_connections;
      if (open > options_.max_connections + 64) {
        beast::error_code ignored;
        socket.close(ignored);
        Closed();
      } else {
        socket.set_option(tcp::no_delay(true), ec);  // as kube's Go client: answers go out at once
        std::shared_ptr<SessionBase> s;
        if (tls_) {
          auto t = std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(*this, false, over, std::move(socket), *tls_);
          t->Start();
          s = t;
        } else {
          auto p = std::make_shared<Session<beast::tcp_stream>>(*this, false, over, std::move(socket));
          p->Start();
          s = p;
        }
        Opened(s);
      }
    }
    Accept();
  });
}

void Server::Impl::AcceptProbe() {
  probe_acceptor_.async_accept(probe_io_, [this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    // Probes are few (kubelet's): a flood past 64 open is closed at once.
    if (!ec && probe_open_ < 64) {
      std::make_shared<Session<beast::tcp_stream>>(*this, true, false, std::move(socket))->Start();
    }
    AcceptProbe();
  });
}

void Server::Impl::Listen() {
  workers_ = std::make_unique<WorkerPool>(static_cast<size_t>(options_.threads), options_.max_queue);
  std::vector<std::string_view> verbs;
  for (const Extender::Verb& v : Extender::Verbs()) verbs.push_back(v.name);
  Log("info", fmt::format("serving the extender at {}://{}{}/{{{}}}", tls_ ? "https" : "http", Address(options_.host, port_),
                          options_.prefix == "/" ? "" : options_.prefix, fmt::join(verbs, ",")),
      {{"auth", options_.client_ca.empty() ? (token_.empty() ? "none" : "bearer token")
                                             : (token_.empty() ? "client certificate" : "client certificate and bearer token")}});
  std::thread probe;
  if (probe_port_ >= 0) {
    Log("info", fmt::format("serving probes at http://{}/{{healthz,readyz,metrics}}", Address(options_.probe_host, probe_port_)));
    AcceptProbe();
    probe = std::thread([this] { probe_io_.run(); });
  }
  Accept();
  std::vector<std::thread> io;
  for (int i = 1; i < kIoThreads; ++i) io.emplace_back([this] { io_.run(); });
  io_.run();
  for (std::thread& t : io) t.join();
  workers_->Stop();
  probe_io_.stop();
  if (probe.joinable()) probe.join();
  Log("info", "stopped: the requests in flight were answered");
}

void Server::Impl::Stop() {
  if (stopping_.exchange(true)) return;
  asio::post(io_, [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    std::vector<std::shared_ptr<SessionBase>> open;
    {
      std::lock_guard lock(sessions_mutex_);
      for (const auto& w : sessions_) {
        if (auto s = w.lock()) open.push_back(std::move(s));
      }
    }
    for (const auto& s : open) s->OnStop();
    if (open_ == 0) return;
    // Whatever is still open after the grace is closed.
    grace_.expires_after(std::chrono::seconds(options_.shutdown_grace_s));
    grace_.async_wait([this](beast::error_code ec) {
      if (ec) return;  // cancelled: every connection closed first
      std::lock_guard lock(sessions_mutex_);
      for (const auto& w : sessions_) {
        if (auto s = w.lock()) s->Close();
      }
    });
  });
}

Server::Server(host::Decisions& decisions, host::ClusterState& state, ServerOptions options)
    : impl_(std::make_unique<Impl>(decisions, state, std::move(options))) {}

Server::~Server() {
  Stop();
  if (events_.joinable()) events_.detach();  // it may wait on a FIFO forever; the process ends it
}

void Server::UseApi(const ApiClient* api) { impl_->api_ = api; }
Metrics& Server::metrics() { return impl_->metrics_; }
bool Server::Bind(std::string* error) { return impl_->Bind(error); }
int Server::Port() const { return impl_->port_; }
int Server::ProbePort() const { return impl_->probe_port_; }
void Server::Listen() { impl_->Listen(); }
void Server::Stop() { impl_->Stop(); }

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
    while (!impl_->stopping_ && std::getline(*in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Source source(fmt::format("{}:{}", path == "-" ? "stdin" : path, number), line);
      DiagnosticSink diags;
      bool applied = impl_->state_.Apply(source, diags).has_value();
      impl_->metrics_.Event(applied);
      if (!applied) Log("warn", "a watch event was refused; the state is unchanged", {{"detail", RenderAll(diags)}});
    }
    Log("info", "the event stream ended", {{"path", path}});
  });
}

}  // namespace policy::server
