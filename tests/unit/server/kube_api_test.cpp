// Where policyc serve finds the Kubernetes API: in a pod (the service
// account's mount and the service environment) and in a kubeconfig.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include "server/kube_api.h"

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() : path(std::filesystem::temp_directory_path() / ("policyc-kube-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  void Write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

}  // namespace

TEST_CASE("in-cluster: the service environment and the service account's token and CA") {
  TempDir account;
  std::string error;
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  CHECK_FALSE(policy::server::InClusterApi(account.path.string(), &error).has_value());
  CHECK(error.find("KUBERNETES_SERVICE_HOST") != std::string::npos);

  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  error.clear();
  CHECK_FALSE(policy::server::InClusterApi(account.path.string(), &error).has_value());
  CHECK(error.find("token") != std::string::npos);

  account.Write("token", "eyJhbGciOi.abc\n");
  account.Write("ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  std::optional<policy::server::ApiConfig> c = policy::server::InClusterApi(account.path.string(), &error);
  REQUIRE(c.has_value());
  CHECK(c->server == "https://10.96.0.1:443");
  CHECK(c->token == "eyJhbGciOi.abc");  // the file's newline is not part of it
  CHECK(c->ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
  CHECK(c->origin == "in-cluster");

  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);  // IPv6: bracketed in the URL
  c = policy::server::InClusterApi(account.path.string(), &error);
  REQUIRE(c.has_value());
  CHECK(c->server == "https://[fd00::1]:443");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
}

TEST_CASE("a kubeconfig's current context: files relative to it and data inline") {
  TempDir dir;
  dir.Write("ca.pem", "CA PEM\n");
  dir.Write("token", "t0ken\n");
  dir.Write("config", R"(apiVersion: v1
kind: Config
current-context: b
contexts:
- {name: a, context: {cluster: one, user: u1}}
- {name: b, context: {cluster: two, user: u2}}
clusters:
- {name: one, cluster: {server: "https://one:6443"}}
- {name: two, cluster: {server: "https://two:6443/", certificate-authority: ca.pem}}
users:
- {name: u1, user: {token: first}}
- {name: u2, user: {tokenFile: token, client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}
)");
  std::string error;
  std::optional<policy::server::ApiConfig> c = policy::server::KubeconfigApi((dir.path / "config").string(), &error);
  REQUIRE_MESSAGE(c.has_value(), error);
  CHECK(c->server == "https://two:6443");  // no trailing slash
  CHECK(c->ca_pem == "CA PEM\n");
  CHECK(c->token == "t0ken");
  CHECK(c->client_cert_pem == "CERT");
  CHECK(c->client_key_pem == "KEY");
  CHECK(c->origin.find("context b") != std::string::npos);
}
