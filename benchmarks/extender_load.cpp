// The extender benchmarks' shared world and clients (extender_load.h).

#include "benchmarks/extender_load.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/cluster_gen.h"

namespace policy::bench {

ExtenderWorld::ExtenderWorld(engine::Backend backend, bool realistic, int nodes) {
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.pods_per_node = 10;
  spec.realistic = realistic;
  spec.pending = realistic ? 1000 : 0;
  auto snapshot = std::make_shared<const Source>("c.json", GenerateCluster(spec, Format::kJson));
  DiagnosticSink diags;
  if (!state.Load(snapshot, diags)) std::abort();
  engine::EngineOptions options;
  options.backend = backend;
  decisions = std::make_unique<host::Decisions>(engine::Engine::Create(rt::DefaultProfile(), {}, options, diags));
  {
    host::ClusterState::View view = state.Read();
    const rt::NodeTable& t = view.cluster().Table();
    for (rt::RowId r : t.LiveRows()) node_names += fmt::format("{}\"{}\"", node_names.empty() ? "" : ",", t.NodeName(r));
    first_node = std::string(t.NodeName(t.LiveRows().front()));
  }
  auto args = [&](const std::string& pod) { return R"({"Pod": )" + pod + R"(, "NodeNames": [)" + node_names + "], \"Nodes\": null}"; };
  if (realistic) {  // every 20th of the queue: its workloads in proportion
    std::vector<std::string> pods = PendingPodsJson(spec);
    for (size_t i = 0; i < pods.size(); i += 20) bodies.push_back(args(pods[i]));
    body = bodies.front();
    return;
  }
  body = args(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}})");
}

LoopbackServer::LoopbackServer(ExtenderWorld& world, int read_timeout_s) {
  server::ServerOptions options;
  options.port = 0;
  options.read_timeout_s = read_timeout_s;
  server_ = std::make_unique<server::Server>(*world.decisions, world.state, options);
  std::string error;
  if (!server_->Bind(&error)) std::abort();
  serving_ = std::thread([this] { server_->Listen(); });
}

LoopbackServer::~LoopbackServer() {
  server_->Stop();
  serving_.join();
}

int LoopbackServer::Port() const { return server_->Port(); }

void RunClients(benchmark::State& state, int port, int clients, int calls,
                const std::function<void(httplib::Client&, int c, int i)>& call, const std::string& unit,
                const std::function<void(int c, int i)>& before) {
  double scale = unit == "ms" ? 1e3 : 1e6;
  std::vector<double> latencies;
  double seconds = 0;
  for (auto _ : state) {
    std::vector<std::vector<double>> per(static_cast<size_t>(clients));
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", port);
        client.set_keep_alive(true);
        client.set_tcp_nodelay(true);
        for (int i = 0; i < calls; ++i) {
          if (before) before(c, i);
          auto t0 = std::chrono::steady_clock::now();
          call(client, c, i);
          per[static_cast<size_t>(c)].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * scale);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto& p : per) latencies.insert(latencies.end(), p.begin(), p.end());
  }
  std::sort(latencies.begin(), latencies.end());
  state.counters["calls_per_s"] = static_cast<double>(latencies.size()) / seconds;
  state.counters["p50_" + unit] = latencies[latencies.size() / 2];
  state.counters["p99_" + unit] = latencies[latencies.size() * 99 / 100];
}

}  // namespace policy::bench
