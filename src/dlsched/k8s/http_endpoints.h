#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "dlsched/core/error.h"

namespace httplib {
class Server;
}

namespace dlsched::k8s {

// The operator's HTTP endpoints, as controller-runtime serves them:
// /metrics (Prometheus text format), /healthz (the process is alive and
// its loop turns) and /readyz (caches synced; for a standby replica too);
// /snapshot (the live queue as simulation inputs, `dlsched snapshot`).
class HttpEndpoints {
 public:
  struct Handlers {
    std::function<std::string()> metrics;
    std::function<bool()> healthy;
    std::function<bool()> ready;
    // GET /snapshot (application/json); nullopt answers 503 (not leading).
    std::function<std::optional<std::string>()> snapshot;
  };
  HttpEndpoints();
  ~HttpEndpoints();
  // `address` is "host:port" or ":port" (all interfaces); port 0 picks one.
  core::Status Start(const std::string& address, Handlers handlers);
  int Port() const { return port_; }
  void Stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace dlsched::k8s
