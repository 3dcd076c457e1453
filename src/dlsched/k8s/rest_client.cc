#include "dlsched/k8s/rest_client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include <curl/curl.h>
#include <fmt/format.h>

#include "dlsched/core/text.h"

namespace dlsched::k8s {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The answer's body, cut off (the transfer fails) past `max` bytes.
struct BodySink {
  std::string* body;
  uint64_t max = 0;  // 0: no limit
  bool over = false;
};

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  if (sink->max > 0 && sink->body->size() + size * n > sink->max) {
    sink->over = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  sink->body->append(data, size * n);
  return size * n;
}

struct StreamState {
  std::string pending;
  const std::function<bool(std::string_view)>* on_line;
  bool stopped = false;
  // A 401's body is not delivered when the stream is to be retried.
  CURL* curl = nullptr;
  bool hold_unauthorized = false;
  bool unauthorized = false;
};

size_t SplitLines(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<StreamState*>(user);
  if (s->hold_unauthorized) {
    long status = 0;
    curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 401) s->unauthorized = true;
    s->hold_unauthorized = false;
  }
  if (s->unauthorized) return size * n;  // dropped: the stream is retried
  s->pending.append(data, size * n);
  size_t start = 0;
  for (size_t nl; (nl = s->pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    if (nl > start && !(*s->on_line)(std::string_view(s->pending).substr(start, nl - start))) {
      s->stopped = true;
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
  }
  s->pending.erase(0, start);
  return size * n;
}

int Cancelled(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(user)->load() ? 1 : 0;
}

// A curl_slist freed at scope exit.
struct Headers {
  curl_slist* list = nullptr;
  ~Headers() { curl_slist_free_all(list); }
  void Add(const std::string& h) { list = curl_slist_append(list, h.c_str()); }
};

void SetBlob(CURL* c, CURLoption option, const std::string& bytes) {
  curl_blob blob{const_cast<char*>(bytes.data()), bytes.size(), CURL_BLOB_COPY};
  curl_easy_setopt(c, option, &blob);
}

}  // namespace

RestClient::RestClient(RestConfig config) : config_(std::move(config)) {
  GlobalInit();
  curl_ = curl_easy_init();
}

RestClient::~RestClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

int RestClient::OpenSocket(void* self, int purpose, void* address) {
  (void)purpose;
  auto* a = static_cast<curl_sockaddr*>(address);
  const int fd = ::socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
  if (fd >= 0) static_cast<RestClient*>(self)->socket_ = fd;
  return fd < 0 ? CURL_SOCKET_BAD : fd;
}

int RestClient::CloseSocket(void* self, int fd) {
  auto* client = static_cast<RestClient*>(self);
  int expected = fd;
  client->socket_.compare_exchange_strong(expected, -1);
  return ::close(fd);
}

void RestClient::Abort() {
  const int fd = socket_.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

core::Result<Credential> RestClient::CurrentCredential() const {
  Credential own{config_.bearer_token, config_.client_cert_pem, config_.client_key_pem};
  if (config_.credentials == nullptr) return own;
  DLSCHED_TRY_LET(c, config_.credentials->Current());
  if (c->client_cert_pem.empty()) {  // a token plus the kubeconfig's client certificate
    c->client_cert_pem = own.client_cert_pem;
    c->client_key_pem = own.client_key_pem;
  }
  return *c;
}

bool RestClient::RetryUnauthorized(const Credential& used) const {
  return config_.credentials != nullptr && config_.credentials->Rejected(used);
}

void* RestClient::Prepare(std::string_view method, const std::string& path,
                          const Credential& credential) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  // Our own sockets, so Abort can shut one down from another thread.
  curl_opensocket_callback open = [](void* self, curlsocktype purpose, curl_sockaddr* address) {
    return static_cast<curl_socket_t>(OpenSocket(self, static_cast<int>(purpose), address));
  };
  curl_closesocket_callback close = [](void* self, curl_socket_t fd) {
    return CloseSocket(self, fd);
  };
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, this);
  curl_easy_setopt(c, CURLOPT_CLOSESOCKETFUNCTION, close);
  curl_easy_setopt(c, CURLOPT_CLOSESOCKETDATA, this);
  const std::string url = config_.server + path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  if (!config_.user_agent.empty())
    curl_easy_setopt(c, CURLOPT_USERAGENT, config_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::ceil(std::min(config_.timeout_seconds, 30.0) * 1000)));
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  // TLS: verified unless the kubeconfig says otherwise.
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, config_.insecure_skip_tls_verify ? 0L : 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, config_.insecure_skip_tls_verify ? 0L : 2L);
  if (!config_.ca_pem.empty()) SetBlob(c, CURLOPT_CAINFO_BLOB, config_.ca_pem);
  if (!credential.client_cert_pem.empty()) {
    SetBlob(c, CURLOPT_SSLCERT_BLOB, credential.client_cert_pem);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (!credential.client_key_pem.empty()) {
    SetBlob(c, CURLOPT_SSLKEY_BLOB, credential.client_key_pem);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }
  return c;
}

core::Result<Response> RestClient::Request(std::string_view method, const std::string& path,
                                           const std::string& body, std::string_view content_type) {
  if (curl_ == nullptr) return core::Errorf("{} {}: libcurl could not start", method, path);
  for (int attempt = 0;; ++attempt) {
    auto credential = CurrentCredential();
    if (!credential) {
      return core::Errorf("{} {}{}: {}", method, config_.server, core::EscapeText(path),
                          credential.error().message);
    }
    DLSCHED_TRY_LET(r, RequestOnce(method, path, body, content_type, *credential));
    if (r->status == 401 && attempt == 0 && RetryUnauthorized(*credential)) continue;
    return r;
  }
}

core::Result<Response> RestClient::RequestOnce(std::string_view method, const std::string& path,
                                               const std::string& body,
                                               std::string_view content_type,
                                               const Credential& credential) {
  CURL* c = static_cast<CURL*>(Prepare(method, path, credential));
  Headers headers;
  headers.Add("Accept: application/json");
  if (!credential.token.empty()) headers.Add("Authorization: Bearer " + credential.token);
  if (!body.empty()) {
    headers.Add(fmt::format("Content-Type: {}", content_type));
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::ceil(config_.timeout_seconds * 1000)));
  Response r;
  BodySink sink{&r.body, config_.max_response_bytes};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  const CURLcode rc = curl_easy_perform(c);
  if (sink.over) {
    return core::Errorf("{} {}{}: the answer is longer than {} bytes, the limit", method,
                        config_.server, core::EscapeText(path), config_.max_response_bytes);
  }
  if (rc != CURLE_OK) {
    return core::Errorf("{} {}{}: {}", method, config_.server, core::EscapeText(path),
                        curl_easy_strerror(rc));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_header* retry = nullptr;
  if (curl_easy_header(c, "Retry-After", 0, CURLH_HEADER, -1, &retry) == CURLHE_OK) {
    // Seconds (the API server's form); an HTTP date is not used by it.
    r.retry_after_seconds = std::max(0.0, std::strtod(retry->value, nullptr));
  }
  return r;
}

core::Result<long> RestClient::Stream(const std::string& path,
                                      const std::function<bool(std::string_view)>& on_line,
                                      double idle_timeout_seconds,
                                      const std::atomic<bool>* cancel) {
  if (curl_ == nullptr) return core::Errorf("GET {}: libcurl could not start", path);
  for (int attempt = 0;; ++attempt) {
    auto credential = CurrentCredential();
    if (!credential) {
      return core::Errorf("GET {}{}: {}", config_.server, core::EscapeText(path),
                          credential.error().message);
    }
    const bool hold = attempt == 0 && config_.credentials != nullptr;
    DLSCHED_TRY_LET(status,
                    StreamOnce(path, on_line, idle_timeout_seconds, cancel, *credential, hold));
    if (*status == 401 && hold && RetryUnauthorized(*credential)) continue;
    return status;
  }
}

core::Result<long> RestClient::StreamOnce(const std::string& path,
                                          const std::function<bool(std::string_view)>& on_line,
                                          double idle_timeout_seconds,
                                          const std::atomic<bool>* cancel,
                                          const Credential& credential, bool hold_unauthorized) {
  CURL* c = static_cast<CURL*>(Prepare("GET", path, credential));
  Headers headers;
  headers.Add("Accept: application/json");
  if (!credential.token.empty()) headers.Add("Authorization: Bearer " + credential.token);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.list);
  // No overall timeout for a watch; an idle one instead (below 1 byte/s).
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(std::ceil(idle_timeout_seconds)));
  StreamState state{{}, &on_line, false, c, hold_unauthorized, false};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, SplitLines);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
  if (cancel != nullptr) {
    // libcurl calls this about once a second even while the stream idles.
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, Cancelled);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, cancel);
  }
  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (state.stopped || (cancel != nullptr && cancel->load())) return status;
  if (rc != CURLE_OK) {
    return core::Errorf("GET {}{}: {}", config_.server, core::EscapeText(path),
                        curl_easy_strerror(rc));
  }
  if (!state.pending.empty() && !state.unauthorized) on_line(state.pending);  // a last line
  return status;
}

}  // namespace dlsched::k8s
