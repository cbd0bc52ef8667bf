#pragma once
// What bench_serve and bench_http share: a generated cluster of 5,000 nodes
// and 50,000 bound pods in a ClusterState with decisions over the default
// profile, the ExtenderArgs of a web pod with every node's name, and clients
// that call a server on loopback and measure each call. The realistic world
// is shaped as ../shared/fixtures/real is (cluster_gen's `realistic`), and
// its ExtenderArgs are those of 50 of its real-shaped Pending pods.

#include <benchmark/benchmark.h>
#include <httplib.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host/host.h"
#include "server/server.h"

namespace policy::bench {

struct ExtenderWorld {
  host::ClusterState state;
  std::unique_ptr<host::Decisions> decisions;
  std::string body;        ///< ExtenderArgs: the pod and every node name (nodeCacheCapable: true)
  std::vector<std::string> bodies;  ///< the realistic world's: one per pod (body is the first)
  std::string node_names;  ///< every node's name, quoted, comma-separated (a NodeNames list's inside)
  std::string first_node;  ///< the table's first node
  explicit ExtenderWorld(engine::Backend backend, bool realistic = false, int nodes = 5000);
};

/// policyc serve's HTTP side over `world` on a free loopback port, serving on
/// a thread of its own until destroyed.
class LoopbackServer {
 public:
  /// `read_timeout_s`: server::ServerOptions::read_timeout_s.
  explicit LoopbackServer(ExtenderWorld& world, int read_timeout_s = 10);
  ~LoopbackServer();
  int Port() const;

 private:
  std::unique_ptr<server::Server> server_;
  std::thread serving_;
};

/// Per benchmark iteration, `clients` threads each make `calls` calls
/// (`call(client, c, i)`: client c's i-th, after `before(c, i)`, which is
/// not timed) on keep-alive connections to `port` with TCP_NODELAY (as Go's
/// net/http, kube-scheduler's client). Sets the counters calls_per_s,
/// p50_<unit> and p99_<unit> per call (`unit`: "ms" or "us").
void RunClients(benchmark::State& state, int port, int clients, int calls,
                const std::function<void(httplib::Client&, int c, int i)>& call, const std::string& unit,
                const std::function<void(int c, int i)>& before = nullptr);

}  // namespace policy::bench
