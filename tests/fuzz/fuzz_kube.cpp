// libFuzzer: what `policyc serve` reads about and from the Kubernetes API
// (server/kube_api.h, server/api_watch.h): the first byte picks a
// kubeconfig's text (0) or a list page / watch event line's header (1).
// Neither may crash; a kubeconfig that reads must name a server.

#include <cstddef>
#include <cstdint>
#include <string>

#include "server/api_watch.h"
#include "server/kube_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    std::string error;
    std::optional<policy::server::ApiConfig> config = policy::server::KubeconfigApiFromText(text, "/tmp/fuzz/kubeconfig", &error);
    if (config ? config->server.empty() : error.empty()) __builtin_trap();
  } else {
    policy::server::ApiHeader header;
    policy::server::ReadApiHeader(text, header);
  }
  return 0;
}
