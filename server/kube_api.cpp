// The Kubernetes API with libcurl (kube_api.h).

#include "server/kube_api.h"

#include <curl/curl.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "k8s/object_reader.h"

namespace policy::server {
namespace {

// The most of one answer read into memory: a page of 500 objects is a few
// MiB; a watch event is one object.
constexpr size_t kMaxAnswerBytes = size_t{256} << 20;

bool IsHttpUrl(std::string_view url) {
  auto starts = [&](std::string_view scheme) {
    if (url.size() <= scheme.size()) return false;
    for (size_t i = 0; i < scheme.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(url[i])) != scheme[i]) return false;
    }
    return true;
  };
  return starts("https://") || starts("http://");
}

// A file a kubeconfig names (a kubeconfig, PEM, token): regular, at most
// 4 MiB (a path such as /dev/zero is refused, not read forever).
std::optional<std::string> ReadFile(const std::string& path) {
  constexpr std::uintmax_t kMax = std::uintmax_t{4} << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || ec) return std::nullopt;
  std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMax) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string out(static_cast<size_t>(size) + 1, '\0');  // one more: a file that grew since is still bounded
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

std::optional<std::string> Base64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    int v = value(c);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if ((count += 6) >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return out;
}

// The kubeconfig's one document, kept while its fields are read.
class Kubeconfig final : public k8s::ObjectVisitor {
 public:
  Kubeconfig(std::string path, std::string context, std::string* error)
      : path_(std::move(path)), context_(std::move(context)), error_(error) {}

  void Visit(k8s::NodeRef root, std::string_view) override {
    if (done_) return;
    done_ = true;
    config_ = Read(root);
  }
  std::optional<ApiConfig> Take() { return std::move(config_); }

 private:
  // Named entry `name` of list `key` (contexts, clusters, users): its `field` mapping.
  k8s::NodeRef Named(k8s::NodeRef root, std::string_view key, std::string_view name, std::string_view field) {
    k8s::NodeRef list = root.Get(key);
    for (uint32_t i = 0; list.IsSequence() && i < list.Size(); ++i) {
      k8s::NodeRef n = list.At(i).Get("name");
      if (n.IsScalar() && n.Text() == name) return list.At(i).Get(field);
    }
    return {};
  }
  std::string Text(k8s::NodeRef m, std::string_view key) {
    k8s::NodeRef v = m.Get(key);
    return v.IsScalar() && !v.IsNull() ? std::string(v.Text()) : std::string();
  }
  std::string Resolve(const std::string& file) {
    std::filesystem::path p(file);
    return p.is_absolute() ? file : (std::filesystem::path(path_).parent_path() / p).string();
  }
  // PEM from `<key>-data` (base64) or the file `<key>`; false when given and unreadable.
  bool Pem(k8s::NodeRef m, const std::string& key, std::string* out) {
    if (std::string data = Text(m, key + "-data"); !data.empty()) {
      std::optional<std::string> pem = Base64(data);
      if (!pem) return Fail(fmt::format("`{}-data` is not base64", key));
      *out = std::move(*pem);
    } else if (std::string file = Text(m, key); !file.empty()) {
      std::optional<std::string> pem = ReadFile(Resolve(file));
      if (!pem) return Fail(fmt::format("cannot read `{}` ({}): not a readable file of at most 4 MiB", key, Resolve(file)));
      *out = std::move(*pem);
    }
    return true;
  }
  bool Fail(const std::string& what) {
    *error_ = fmt::format("kubeconfig {}: {}", path_, what);
    return false;
  }

  std::optional<ApiConfig> Read(k8s::NodeRef root) {
    std::string context_name = context_.empty() ? Text(root, "current-context") : context_;
    if (context_name.empty()) return Fail("no `current-context` (give --context NAME)"), std::nullopt;
    k8s::NodeRef context = Named(root, "contexts", context_name, "context");
    if (!context.IsMapping()) return Fail(fmt::format("no context named `{}`", context_name)), std::nullopt;
    std::string cluster_name = Text(context, "cluster"), user_name = Text(context, "user");
    k8s::NodeRef cluster = Named(root, "clusters", cluster_name, "cluster");
    if (!cluster.IsMapping()) return Fail(fmt::format("no cluster named `{}`", cluster_name)), std::nullopt;
    ApiConfig c;
    c.origin = fmt::format("kubeconfig {}, context {}", path_, context_name);
    c.server = Text(cluster, "server");
    while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
    if (c.server.empty()) return Fail(fmt::format("cluster `{}` has no `server`", cluster_name)), std::nullopt;
    if (!IsHttpUrl(c.server)) {
      return Fail(fmt::format("cluster `{}`: server `{}` is not an https:// (or http://) address", cluster_name,
                              Printable(c.server))),
             std::nullopt;
    }
    c.insecure = Text(cluster, "insecure-skip-tls-verify") == "true";
    if (!Pem(cluster, "certificate-authority", &c.ca_pem)) return std::nullopt;
    k8s::NodeRef user = Named(root, "users", user_name, "user");
    if (user.IsMapping()) {
      if (user.Get("exec").Valid() || user.Get("auth-provider").Valid()) {
        return Fail(fmt::format("user `{}` authenticates with an {} plugin, which policyc does not run: give it a "
                                "service account's token (`token:` or `tokenFile:`) or a client certificate",
                                user_name, user.Get("exec").Valid() ? "exec" : "auth-provider")),
               std::nullopt;
      }
      c.token = Text(user, "token");
      if (std::string file = Text(user, "tokenFile"); c.token.empty() && !file.empty()) {
        std::optional<std::string> token = ReadFile(Resolve(file));
        if (!token) return Fail(fmt::format("cannot read `tokenFile` ({}): not a readable file of at most 4 MiB", Resolve(file))), std::nullopt;
        c.token = *token;
      }
      while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) c.token.pop_back();
      if (!Pem(user, "client-certificate", &c.client_cert_pem) || !Pem(user, "client-key", &c.client_key_pem)) {
        return std::nullopt;
      }
    }
    return c;
  }

  std::string path_;
  std::string context_;  // empty: the current context
  std::string* error_;
  bool done_ = false;
  std::optional<ApiConfig> config_;
};

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Easy {
  CURL* handle = curl_easy_init();
  curl_slist* headers = nullptr;
  ~Easy() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(handle);
  }
};

void Blob(CURL* h, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(h, option, &blob);
}

// A handle for `path` with the configuration's TLS and authentication.
std::unique_ptr<Easy> Prepare(const ApiConfig& c, const std::string& path) {
  GlobalInit();
  auto e = std::make_unique<Easy>();
  CURL* h = e->handle;
  std::string url = c.server + path;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  // http and https only, and no redirect followed (curl's default, said).
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
  if (!c.ca_pem.empty()) Blob(h, CURLOPT_CAINFO_BLOB, c.ca_pem);
  if (c.insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!c.client_cert_pem.empty()) Blob(h, CURLOPT_SSLCERT_BLOB, c.client_cert_pem);
  if (!c.client_key_pem.empty()) Blob(h, CURLOPT_SSLKEY_BLOB, c.client_key_pem);
  e->headers = curl_slist_append(e->headers, "Accept: application/json");
  if (!c.token.empty()) e->headers = curl_slist_append(e->headers, ("Authorization: Bearer " + c.token).c_str());
  return e;
}

// An answer read into memory, up to a bound (curl hands the bytes over
// decoded, so the bound is on what gzip unpacks to).
struct Sink {
  std::string body;
  bool over = false;
};

size_t Append(char* data, size_t size, size_t n, void* out) {
  auto* sink = static_cast<Sink*>(out);
  if (sink->body.size() + size * n > kMaxAnswerBytes) {
    sink->over = true;
    return 0;  // curl stops: CURLE_WRITE_ERROR
  }
  sink->body.append(data, size * n);
  return size * n;
}

ApiClient::Response Perform(Easy& e, std::string* body);

ApiClient::Response PerformInto(Easy& e, Sink& sink) {
  ApiClient::Response r = Perform(e, &sink.body);
  if (sink.over) {
    r.status = 0;
    r.body.clear();
    r.error = fmt::format("the API's answer is over {} MiB (decompressed): not an answer policyc reads", kMaxAnswerBytes >> 20);
  }
  return r;
}

ApiClient::Response Perform(Easy& e, std::string* body) {
  curl_easy_setopt(e.handle, CURLOPT_HTTPHEADER, e.headers);
  ApiClient::Response r;
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(e.handle, CURLOPT_ERRORBUFFER, error);
  CURLcode code = curl_easy_perform(e.handle);
  curl_easy_getinfo(e.handle, CURLINFO_RESPONSE_CODE, &r.status);
  if (code != CURLE_OK && code != CURLE_WRITE_ERROR && code != CURLE_ABORTED_BY_CALLBACK) {
    r.error = error[0] != '\0' ? error : curl_easy_strerror(code);
  }
  if (body != nullptr) r.body = std::move(*body);
  return r;
}

}  // namespace

std::optional<ApiConfig> KubeconfigApi(const std::string& path, std::string* error, const std::string& context) {
  std::optional<std::string> text = ReadFile(path);
  if (!text) {
    *error = fmt::format("cannot read the kubeconfig {}: not a readable file of at most 4 MiB", path);
    return std::nullopt;
  }
  return KubeconfigApiFromText(std::move(*text), path, error, context);
}

std::string DefaultKubeconfig() {
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && env[0] != '\0') {
    std::string_view list(env);
    return std::string(list.substr(0, list.find(':')));  // the first of a list (kubectl merges them; policyc reads one)
  }
  const char* home = std::getenv("HOME");
  return home != nullptr ? std::string(home) + "/.kube/config" : std::string();
}

std::optional<ApiConfig> KubeconfigApiFromText(std::string text, const std::string& path, std::string* error,
                                               const std::string& context) {
  Source source(path, std::move(text));
  DiagnosticSink diags;
  Kubeconfig reader(path, context, error);
  if (!k8s::ReadObjects(source, reader, diags, k8s::InputFormat::kYaml) || diags.HasErrors()) {
    *error = RenderAll(diags);
    return std::nullopt;
  }
  std::optional<ApiConfig> config = reader.Take();
  if (!config && error->empty()) *error = fmt::format("kubeconfig {}: empty", path);
  return config;
}

std::optional<ApiConfig> InClusterApi(const std::string& account_dir, std::string* error) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0') {
    *error = "--in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not in a pod?)";
    return std::nullopt;
  }
  ApiConfig c;
  std::string h = host;
  c.server = fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h, port);
  c.origin = "in-cluster";
  std::optional<std::string> token = ReadFile(account_dir + "/token");
  std::optional<std::string> ca = ReadFile(account_dir + "/ca.crt");
  if (!token || !ca) {
    *error = fmt::format("--in-cluster: cannot read the service account's {} in {}", !token ? "token" : "ca.crt", account_dir);
    return std::nullopt;
  }
  c.token = *token;
  while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) c.token.pop_back();
  c.ca_pem = *ca;
  return c;
}

ApiClient::ApiClient(ApiConfig config) : config_(std::move(config)) {}

std::string Printable(std::string_view text, size_t max) {
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < max; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= max) out += "...";
  return out;
}

ApiClient::Response ApiClient::Get(const std::string& path) const {
  std::unique_ptr<Easy> e = Prepare(config_, path);
  Sink body;
  curl_easy_setopt(e->handle, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(e->handle, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(e->handle, CURLOPT_TIMEOUT, 60L);
  Response r = PerformInto(*e, body);
  if (!r.error.empty()) r.status = 0;  // cut off: no whole answer
  return r;
}

ApiClient::Response ApiClient::Post(const std::string& path, const std::string& json) const {
  std::unique_ptr<Easy> e = Prepare(config_, path);
  e->headers = curl_slist_append(e->headers, "Content-Type: application/json");
  Sink body;
  curl_easy_setopt(e->handle, CURLOPT_POSTFIELDS, json.c_str());
  curl_easy_setopt(e->handle, CURLOPT_POSTFIELDSIZE, static_cast<long>(json.size()));
  curl_easy_setopt(e->handle, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(e->handle, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(e->handle, CURLOPT_TIMEOUT, 30L);
  Response r = PerformInto(*e, body);
  if (!r.error.empty()) r.status = 0;
  return r;
}

namespace {

struct StreamState {
  CURL* handle;
  const std::function<bool(std::string_view)>* line;
  const std::atomic<bool>* stop;
  std::string pending;  // a line not ended yet, or an error status's body
  bool streaming = false;
};

size_t StreamWrite(char* data, size_t size, size_t n, void* out) {
  auto* s = static_cast<StreamState*>(out);
  size_t bytes = size * n;
  if (!s->streaming) {
    long status = 0;
    curl_easy_getinfo(s->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {  // an error's body: kept whole for the caller
      s->pending.append(data, bytes);
      return s->pending.size() > (size_t{1} << 20) ? 0 : bytes;
    }
    s->streaming = true;
  }
  s->pending.append(data, bytes);
  size_t start = 0;
  for (size_t nl; (nl = s->pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    if (!(*s->line)(std::string_view(s->pending).substr(start, nl - start))) return 0;
  }
  s->pending.erase(0, start);
  if (s->pending.size() > kMaxAnswerBytes) return 0;  // a 256 MiB line: not the API
  return bytes;
}

int StreamProgress(void* out, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<StreamState*>(out)->stop->load() ? 1 : 0;
}

}  // namespace

ApiClient::Response ApiClient::Stream(const std::string& path, const std::function<bool(std::string_view)>& line,
                                      const std::atomic<bool>& stop) const {
  std::unique_ptr<Easy> e = Prepare(config_, path);
  StreamState state{e->handle, &line, &stop, {}, false};
  curl_easy_setopt(e->handle, CURLOPT_WRITEFUNCTION, StreamWrite);
  curl_easy_setopt(e->handle, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(e->handle, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e->handle, CURLOPT_XFERINFOFUNCTION, StreamProgress);
  curl_easy_setopt(e->handle, CURLOPT_XFERINFODATA, &state);
  // A watch the server keeps open but silent past this is dead (the API
  // ends watches itself within timeoutSeconds, and sends bookmarks).
  curl_easy_setopt(e->handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e->handle, CURLOPT_LOW_SPEED_TIME, 660L);
  Response r = Perform(*e, nullptr);
  if (!state.streaming) r.body = std::move(state.pending);
  return r;
}

}  // namespace policy::server
