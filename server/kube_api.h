#pragma once
/// The Kubernetes API over HTTPS with libcurl, as `policyc serve` reaches
/// it: where the server is and how to authenticate (a kubeconfig's current
/// context, or in-cluster with the pod's service account), GET and POST of
/// JSON, and watch streams read line by line.
///
/// Authentication: a bearer token (`token`, `tokenFile`, the service
/// account's) or a client certificate; the server's certificate is checked
/// against the configured CA (`insecure-skip-tls-verify` is honoured, and
/// logged). Exec and auth-provider plugins (EKS, GKE) are not run: the
/// error says so and what to use instead.

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace policy::server {

struct ApiConfig {
  std::string server;  ///< https://host:port, no trailing slash
  std::string ca_pem;  ///< empty: the system's CAs
  bool insecure = false;
  std::string token;   ///< bearer token, or empty
  std::string client_cert_pem, client_key_pem;
  std::string origin;  ///< where it came from, for messages: "kubeconfig X, context Y" or "in-cluster"
};

/// The context `context` (empty: the current context) of the kubeconfig at
/// `path` (relative file paths in it are relative to its folder); nullopt
/// with the reason in `error`.
std::optional<ApiConfig> KubeconfigApi(const std::string& path, std::string* error, const std::string& context = "");
/// The same for a kubeconfig's text, read from `path`.
std::optional<ApiConfig> KubeconfigApiFromText(std::string text, const std::string& path, std::string* error,
                                               const std::string& context = "");
/// The kubeconfig kubectl reads: $KUBECONFIG (its first file), else
/// ~/.kube/config.
std::string DefaultKubeconfig();
/// In-cluster: $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT, the
/// token and CA in `account_dir` (the service account's mount,
/// /var/run/secrets/kubernetes.io/serviceaccount in a pod).
std::optional<ApiConfig> InClusterApi(const std::string& account_dir, std::string* error);

/// Text from the API server (a Status message, a URL) made safe to print
/// on a terminal or in a log: control characters escaped (`\x1b`, `\n`),
/// at most `max` characters.
std::string Printable(std::string_view text, size_t max = 1024);

class ApiClient {
 public:
  explicit ApiClient(ApiConfig config);
  const ApiConfig& config() const { return config_; }

  struct Response {
    long status = 0;     ///< HTTP status; 0 when no answer came
    std::string body;
    std::string error;   ///< the transport's problem when status is 0
  };
  Response Get(const std::string& path) const;
  Response Post(const std::string& path, const std::string& json) const;
  /// GET of a watch: `line` gets each line of the body as it arrives,
  /// until the server ends the stream, the connection breaks, `line`
  /// returns false, or `stop` becomes true (seen within a second). The
  /// response holds the status, and the body when it was not a stream (an
  /// error status).
  Response Stream(const std::string& path, const std::function<bool(std::string_view)>& line,
                  const std::atomic<bool>& stop) const;

 private:
  ApiConfig config_;
};

}  // namespace policy::server
