// Which HTTP library `policyc serve` stands on, measured: cpp-httplib (what
// it uses: server/server.cpp, as in production) against a minimal
// Boost.Beast server (synchronous, a thread per connection, keep-alive)
// that answers with the same Extender, on loopback, with the same client
// (cpp-httplib's, TCP_NODELAY, keep-alive) for both.
//
//   BM_Http/<library>/healthz/clients:N   the library's own cost: a 3-byte answer
//   BM_Http/<library>/filter/clients:N    filter with 5,000 names on 5,000 nodes (150 KB in, 200 KB out)
//   counters: calls_per_s over all clients, p50_us and p99_us per call
//
//   build/benchmarks/bench_http

#include <benchmark/benchmark.h>
#include <httplib.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/extender_load.h"
#include "runtime/host/host.h"
#include "server/extender.h"
#include "server/server.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

// The Beast server: an acceptor thread, a thread per connection.
class BeastServer {
 public:
  BeastServer(policy::host::Decisions& decisions, policy::host::ClusterState& state)
      : decisions_(decisions), state_(state), acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    accepting_ = std::thread([this] {
      for (;;) {
        tcp::socket socket(io_);
        boost::system::error_code ec;
        acceptor_.accept(socket, ec);
        if (ec || stop_) return;
        socket.set_option(tcp::no_delay(true));
        std::thread([this, s = std::move(socket)]() mutable { Serve(std::move(s)); }).detach();
      }
    });
  }
  ~BeastServer() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket poke(io_);
    poke.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
    accepting_.join();
  }
  int Port() const { return port_; }

 private:
  void Serve(tcp::socket socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64 << 20);
      boost::system::error_code ec;
      http::read(socket, buffer, parser, ec);
      if (ec) return;
      http::request<http::string_body>& req = parser.get();
      http::response<http::string_body> res{http::status::ok, req.version()};
      if (req.target() == "/healthz") {
        res.set(http::field::content_type, "text/plain");
        res.body() = "ok\n";
      } else {
        policy::server::Extender extender(decisions_, state_);
        policy::server::Reply reply = extender.Filter(req.body());
        res.result(static_cast<unsigned>(reply.status));
        res.set(http::field::content_type, "application/json");
        res.body() = std::move(reply.body);
      }
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !res.keep_alive()) return;
    }
  }

  policy::host::Decisions& decisions_;
  policy::host::ClusterState& state_;
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accepting_;
};

struct World : policy::bench::ExtenderWorld {
  policy::bench::LoopbackServer httplib_server{*this};
  std::unique_ptr<BeastServer> beast_server;
  World() : ExtenderWorld(policy::engine::Backend::kJit), beast_server(std::make_unique<BeastServer>(*decisions, state)) {}
};

World& TheWorld() {
  static World world;
  return world;
}

void BM_Http(benchmark::State& state, bool beast, bool filter) {
  World& world = TheWorld();
  int port = beast ? world.beast_server->Port() : world.httplib_server.Port();
  auto call = [&](httplib::Client& client, int, int) {
    auto res = filter ? client.Post("/policyc/filter", world.body, "application/json") : client.Get("/healthz");
    if (!res || res->status != 200) std::abort();
  };
  {
    httplib::Client warm("127.0.0.1", port);
    for (int i = 0; i < 10; ++i) call(warm, 0, i);  // the template's kernels compile on its first call
  }
  policy::bench::RunClients(state, port, static_cast<int>(state.range(0)), filter ? 300 : 5000, call, "us");
}

}  // namespace

BENCHMARK_CAPTURE(BM_Http, httplib_healthz, false, false)->Name("BM_Http/httplib/healthz")->ArgName("clients")->Arg(1)->Arg(4)
    ->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Http, beast_healthz, true, false)->Name("BM_Http/beast/healthz")->ArgName("clients")->Arg(1)->Arg(4)
    ->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Http, httplib_filter, false, true)->Name("BM_Http/httplib/filter")->ArgName("clients")->Arg(1)->Arg(4)
    ->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Http, beast_filter, true, true)->Name("BM_Http/beast/filter")->ArgName("clients")->Arg(1)->Arg(4)
    ->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
