#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "dlsched/core/error.h"
#include "dlsched/k8s/rest_config.h"

namespace dlsched::k8s {

struct Response {
  long status = 0;  // HTTP status
  std::string body;
  // The Retry-After header in seconds (429, some 503s), 0 when absent.
  double retry_after_seconds = 0;
};

// HTTP to the API server over libcurl: TLS verified against the config's CA
// (or the system's) unless the kubeconfig asks otherwise, client
// certificates or a bearer token (or what the config's CredentialSource
// gives: a 401 Unauthorized to those is retried once with fresh ones), a
// timeout per request. Transport failures
// (refused, timed out, TLS) are errors; any HTTP status is a Response for
// the caller to judge (404, 409 Conflict, 410 Gone...). Not thread-safe:
// one client per thread.
class RestClient {
 public:
  explicit RestClient(RestConfig config);
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;
  ~RestClient();

  const RestConfig& config() const { return config_; }

  // `path` starts with "/" ("/api/v1/namespaces/default/pods"). `body` is
  // sent when not empty, as `content_type`.
  core::Result<Response> Request(std::string_view method, const std::string& path,
                                 const std::string& body = "",
                                 std::string_view content_type = "application/json");

  // A streaming GET (a watch): `on_line` gets every newline-terminated line
  // (one watch event) as it arrives, until the server ends the stream, the
  // stream is idle for `idle_timeout_seconds`, or `on_line` returns false.
  // Returns the HTTP status.
  // `cancel`, when given, ends the stream within about a second of being
  // set (checked even while no data arrives); Abort ends it at once.
  core::Result<long> Stream(const std::string& path,
                            const std::function<bool(std::string_view)>& on_line,
                            double idle_timeout_seconds = 300,
                            const std::atomic<bool>* cancel = nullptr);

  // From another thread: shuts the connection of a request in progress
  // down, so a blocked Stream returns at once (a stopping informer).
  void Abort();

 private:
  // The credentials to send: the config's source's, or the config's own.
  core::Result<Credential> CurrentCredential() const;
  // Whether a 401 to `used` is worth one retry (fresh credentials to be had).
  bool RetryUnauthorized(const Credential& used) const;
  void* Prepare(std::string_view method, const std::string& path, const Credential& credential);
  core::Result<Response> RequestOnce(std::string_view method, const std::string& path,
                                     const std::string& body, std::string_view content_type,
                                     const Credential& credential);
  core::Result<long> StreamOnce(const std::string& path,
                                const std::function<bool(std::string_view)>& on_line,
                                double idle_timeout_seconds, const std::atomic<bool>* cancel,
                                const Credential& credential, bool hold_unauthorized);
  static int OpenSocket(void* self, int purpose, void* address);
  static int CloseSocket(void* self, int fd);

  RestConfig config_;
  void* curl_ = nullptr;         // CURL*, reused for keep-alive
  std::atomic<int> socket_{-1};  // the connection's socket, for Abort
};

}  // namespace dlsched::k8s
