// `policyc serve`: a kube-scheduler extender (server/) over a cluster state
// loaded from a snapshot and kept current by watch events.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_setup.h"
#include "runtime/tooling/input.h"
#include "runtime/host/host.h"
#include "server/api_watch.h"
#include "server/kube_api.h"
#include "server/log.h"
#include "server/server.h"

namespace policy::cli {
namespace {

constexpr const char* kSynopsis = R"(usage: policyc serve (--cluster SNAPSHOT [--cluster MORE ...] [--events FILE|-] | --kubeconfig FILE | --in-cluster)
                     [--listen HOST:PORT] [--prefix /policyc] [--mode authoritative|policies|decide]
                     )";
constexpr const char* kUsage = R"(
                     [--max-body-bytes N] [--read-timeout S] [--threads N] [--max-connections N] [--log-requests] [--all-reasons]
                     [--tls-cert CERT.pem --tls-key KEY.pem [--client-ca CA.pem] | --insecure-http]
                     [--token-file FILE] [--probe-listen HOST:PORT] [--idle-timeout S] [--max-queue N] [--no-cache]

A kube-scheduler extender (the extender/v1 protocol): POST PREFIX/filter,
PREFIX/prioritize, PREFIX/preempt and PREFIX/bind, with `nodeCacheCapable:
true` (node names) or false (node objects); GET /healthz, /readyz and
/metrics (Prometheus), also on --probe-listen without authentication. The
cluster state is either
  * the snapshot, then the watch events read from --events (one
    {"type": ..., "object": ...} per line, as `kubectl get ... --watch
    --output-watch-events -o json` prints them; a file, a FIFO, or - for
    stdin); or
  * the Kubernetes API itself, listed then watched as kube-scheduler's
    informers do (--kubeconfig: its current context; --in-cluster: the
    pod's service account). Bind then POSTs the pod's Binding, and the pod
    counts on its node from that moment.

  --mode authoritative   decide with the whole profile (the default)
  --mode policies        decide with the --policy files alone, beside
                         kube-scheduler's own in-tree plugins
  --mode decide          authoritative, and filter answers the one node policyc
                         selects and counts the pod there at once (HAMi's way:
                         no wait for the bind to come back through the watch)
  --listen               default 127.0.0.1:8890 (port 0: any free port)
  --log-requests         a JSON log line per request (else failed and slow ones only)
  --all-reasons          a failed node's words are every failing plugin's reasons
                         joined, as check gives them; by default the first failing
                         plugin's first reason, the one string kube-scheduler's
                         Pending event counts per node (nodes failing alike are
                         then counted alike)
  --max-connections      open connections at once (default 256); more are answered
                         503 with Retry-After and closed. Bodies over
                         --max-body-bytes get 413, headers over 100 fields or
                         32 KiB 431; a request whose line and headers (from its
                         first byte), or whose body, take longer than
                         --read-timeout (default 10) is answered 408 and closed, as is
                         a TLS handshake not done in 10 s; a connection idle past
                         --idle-timeout (default 60) is closed. An idle connection
                         holds no thread: --threads workers decide the calls, at most
                         --max-queue (default 256) wait for one (more: 503)
  --tls-cert, --tls-key  serve HTTPS (PEM files); --client-ca also asks clients for a
                         certificate that CA signed (kube-scheduler's tlsConfig certFile):
                         the handshake refuses any other caller
  --token-file           callers of the verbs and /metrics must send
                         `Authorization: Bearer TOKEN` with the token this file holds
                         (401 otherwise), beside or instead of --client-ca
  --probe-listen         a plain-HTTP listener for /healthz, /readyz and /metrics that
                         asks no authentication (kubelet's probes, Prometheus), on
                         I/O of its own: it answers whatever the main listener's load
  --insecure-http        plain HTTP on an address other than loopback (for tests: the
                         calls carry pods and node names in the clear)
  --no-cache             read the --cluster files alone; by default from their snapshot
                         cache and the node objects from its objects cache (docs/cache.md)

examples/extender/ has a KubeSchedulerConfiguration that uses it. SIGTERM or
SIGINT stops it: no new connection is taken, the requests already read are
answered, idle connections are closed, and whatever is left after 10 s is
closed. SIGHUP is ignored (logged): nothing reloads; restart to change flags.
Bad input exits with 2; an API that cannot be listed at start, with 1.
)";

std::atomic<bool> stop_requested{false};
std::atomic<bool> hangup{false};

extern "C" void OnStopSignal(int) { stop_requested = true; }
extern "C" void OnHangup(int) { hangup = true; }

// HOST:PORT, HOST a name, an IPv4 address or a bracketed IPv6 one.
bool SplitListen(const std::string& listen, std::string* host, int* port) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = listen.substr(0, colon);
  if (host->front() == '[') {
    if (host->size() < 3 || host->back() != ']') return false;
    *host = host->substr(1, host->size() - 2);
  } else if (host->find(':') != std::string::npos) {
    return false;  // an IPv6 address goes in brackets
  }
  try {
    size_t used = 0;
    *port = std::stoi(listen.substr(colon + 1), &used);
    return used == listen.size() - colon - 1 && *port >= 0 && *port <= 65535;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

namespace {

int Run(const Args& args) {
  int sources = (args.Has("cluster") ? 1 : 0) + (args.Has("kubeconfig") ? 1 : 0) + (args.Has("in-cluster") ? 1 : 0);
  if (sources != 1) {
    fmt::print(stderr, "policyc serve: give the cluster state one way: --cluster SNAPSHOT, --kubeconfig FILE or --in-cluster\nRun `policyc serve --help` for usage.\n");
    return kExitBadInput;
  }
  if (args.Has("events") && !args.Has("cluster")) {
    fmt::print(stderr, "policyc serve: --events follows a --cluster snapshot; the API's own watch follows --kubeconfig and --in-cluster\n");
    return kExitBadInput;
  }
  if (!args.Positional().empty()) {
    fmt::print(stderr, "policyc serve: unexpected argument `{}`\nRun `policyc serve --help` for usage.\n", args.Positional().front());
    return kExitBadInput;
  }
  server::ServerOptions options;
  std::string error;
  for (const char* flag : {"listen", "probe-listen"}) {
    if (std::string_view(flag) == "probe-listen" && !args.Has(flag)) continue;
    std::string listen = args.Get(flag, "127.0.0.1:8890");
    bool probe = std::string_view(flag) == "probe-listen";
    if (!SplitListen(listen, probe ? &options.probe_host : &options.host, probe ? &options.probe_port : &options.port)) {
      fmt::print(stderr, "policyc serve: --{} `{}`: expected HOST:PORT ([ADDRESS]:PORT for IPv6), a port from 0 to 65535\n",
                 flag, listen);
      return kExitBadInput;
    }
  }
  options.prefix = args.Get("prefix", "/policyc");
  if (options.prefix.empty() || options.prefix[0] != '/') {
    fmt::print(stderr, "policyc serve: --prefix `{}` must start with `/`\n", options.prefix);
    return kExitBadInput;
  }
  std::optional<int64_t> max_body = args.GetInt("max-body-bytes", int64_t{64} << 20, 1024, int64_t{1} << 34, &error);
  std::optional<int64_t> timeout = args.GetInt("read-timeout", 10, 1, 3600, &error);
  std::optional<int64_t> threads = args.GetInt("threads", 8, 1, 1024, &error);
  std::optional<int64_t> connections = args.GetInt("max-connections", 256, 1, 65536, &error);
  std::optional<int64_t> idle = args.GetInt("idle-timeout", 60, 1, 3600, &error);
  std::optional<int64_t> queue = args.GetInt("max-queue", 256, 1, 65536, &error);
  if (!max_body || !timeout || !threads || !connections || !idle || !queue) {
    fmt::print(stderr, "policyc serve: {}\n", error);
    return kExitBadInput;
  }
  options.max_body_bytes = static_cast<size_t>(*max_body);
  options.max_inflight_bytes = std::max(options.max_inflight_bytes, 2 * options.max_body_bytes);
  options.read_timeout_s = options.write_timeout_s = static_cast<int>(*timeout);
  options.threads = static_cast<int>(*threads);
  options.max_connections = static_cast<size_t>(*connections);
  options.idle_timeout_s = static_cast<int>(*idle);
  options.max_queue = static_cast<size_t>(*queue);
  options.token_file = args.Get("token-file");
  options.log_requests = args.Has("log-requests");
  options.tls_cert = args.Get("tls-cert");
  options.tls_key = args.Get("tls-key");
  options.client_ca = args.Get("client-ca");
  if (options.tls_cert.empty() != options.tls_key.empty() || (!options.client_ca.empty() && options.tls_cert.empty())) {
    fmt::print(stderr, "policyc serve: --tls-cert and --tls-key go together (and --client-ca needs them)\n");
    return kExitBadInput;
  }
  bool loopback = options.host == "127.0.0.1" || options.host == "localhost" || options.host == "::1";
  if (options.tls_cert.empty() && !loopback && !args.Has("insecure-http")) {
    fmt::print(stderr,
               "policyc serve: --listen {} is not loopback: give --tls-cert and --tls-key, or --insecure-http to send "
               "pods and node names in the clear\n",
               args.Get("listen", "127.0.0.1:8890"));
    return kExitBadInput;
  }
  std::string mode = args.Get("mode", "authoritative");
  if (mode != "authoritative" && mode != "policies" && mode != "decide") {
    fmt::print(stderr, "policyc serve: --mode `{}`: expected authoritative, policies or decide\n", mode);
    return kExitBadInput;
  }
  options.decide = mode == "decide";
  options.all_reasons = args.Has("all-reasons");
  if (mode == "policies" && !args.Has("policy")) {
    fmt::print(stderr, "policyc serve: --mode policies decides with the --policy files alone, and none was given\n");
    return kExitBadInput;
  }

  DiagnosticSink diags;
  std::optional<rt::Profile> profile = ProfileFromFlags("serve", args, "default-scheduler", diags);
  if (!profile) {
    fmt::print(stderr, "{}", RenderAll(diags));
    return kExitBadInput;
  }
  if (mode == "policies") profile = rt::RestrictProfile(std::move(*profile), {}, nullptr);  // no in-tree plugin
  std::optional<engine::EngineOptions> engine_options = EngineOptionsFromFlags("serve", args);
  if (!engine_options) return kExitBadInput;
  std::unique_ptr<engine::Engine> engine = EngineFromFlags(args, *profile, *engine_options, diags);
  if (!engine) {
    fmt::print(stderr, "{}", RenderAll(diags));
    return kExitBadInput;
  }
  host::ClusterState state;
  state.KeepNodeObjects();  // sent node objects stand in for one call only, then the state's come back
  std::optional<server::ApiClient> api;
  if (args.Has("cluster")) {
    std::optional<std::vector<rt::SnapshotFile>> snapshot = tooling::SnapshotFiles(args.GetAll("cluster"), diags);
    if (!snapshot || !state.LoadFiles(*snapshot, tooling::CacheFromFlags(args.Has("no-cache")), diags)) {
      fmt::print(stderr, "{}", RenderAll(diags));
      return kExitBadInput;
    }
  } else {
    std::optional<server::ApiConfig> config =
        args.Has("kubeconfig") ? server::KubeconfigApi(args.Get("kubeconfig"), &error)
                               : server::InClusterApi("/var/run/secrets/kubernetes.io/serviceaccount", &error);
    if (!config) {
      fmt::print(stderr, "policyc serve: {}\n", error);
      return kExitBadInput;
    }
    api.emplace(std::move(*config));
  }
  host::Decisions decisions(std::move(engine));
  server::Server server(decisions, state, options);
  if (!server.Bind(&error)) {
    fmt::print(stderr, "policyc serve: {}\n", error);
    return kExitBadInput;
  }
  std::unique_ptr<server::ApiWatch> watch;
  if (api) {
    if (api->config().insecure) server::Log("warn", "the API server's certificate is not checked (insecure-skip-tls-verify)");
    watch = std::make_unique<server::ApiWatch>(*api, state, server.metrics());
    if (!watch->List(&error)) {
      fmt::print(stderr, "policyc serve: {}\n", error);
      return kExitNo;  // the API did not answer as it should: not bad input, and kube would restart the pod
    }
    server::Log("info", "listed the cluster from the Kubernetes API",
                {{"server", api->config().server}, {"from", api->config().origin},
                 {"nodes", static_cast<int64_t>(state.NodeCount())}, {"pods", static_cast<int64_t>(state.PodCount())}});
    watch->Start();
    server.UseApi(&*api);
  }
  if (args.Has("events")) server.FollowEvents(args.Get("events"));
  std::signal(SIGTERM, OnStopSignal);
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGHUP, OnHangup);
  std::thread watcher([&server] {  // a signal handler may only set a flag
    while (!stop_requested) {
      if (hangup.exchange(false)) server::Log("warn", "SIGHUP ignored: policyc serve reloads nothing; restart it to change its flags");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    server::Log("info", "stopping: no new connections; answering the requests already read");
    server.Stop();
  });
  server.Listen();
  stop_requested = true;
  watcher.join();
  if (watch) watch->Stop();
  return kExitOk;
}

}  // namespace

Command ServeCommand() {
  return {"serve", "answer kube-scheduler as an extender (filter, prioritize, preempt)",
          std::string(kSynopsis) + EngineSynopsis(21) + kUsage + "\n" + EngineHelp({}),
          WithEngineFlags({{"cluster", true, true}, {"listen"}, {"prefix"}, {"mode"}, {"events"}, {"max-body-bytes"}, {"read-timeout"}, {"threads"}, {"tls-cert"}, {"tls-key"}, {"client-ca"}, {"insecure-http", false}, {"kubeconfig"}, {"in-cluster", false}, {"log-requests", false}, {"max-connections"}, {"all-reasons", false}, {"token-file"}, {"probe-listen"}, {"idle-timeout"}, {"max-queue"}, {"no-cache", false}}),
          &Run};
}

}  // namespace policy::cli
