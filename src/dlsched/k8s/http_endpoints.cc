#include "dlsched/k8s/http_endpoints.h"

#include <charconv>
#include <chrono>

#include <fmt/format.h>
#include <httplib.h>

namespace dlsched::k8s {

HttpEndpoints::HttpEndpoints() = default;
HttpEndpoints::~HttpEndpoints() { Stop(); }

core::Status HttpEndpoints::Start(const std::string& address, Handlers handlers) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return core::Errorf("'{}': expected host:port or :port", address);
  }
  std::string host = address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  int port = -1;
  const std::string port_text = address.substr(colon + 1);
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return core::Errorf("'{}': expected a port in 0..65535", address);
  }
  server_ = std::make_unique<httplib::Server>();
  server_->Get("/metrics", [h = handlers](const httplib::Request&, httplib::Response& res) {
    res.set_content(h.metrics ? h.metrics() : "", "text/plain; version=0.0.4; charset=utf-8");
  });
  auto probe = [](std::function<bool()> check) {
    return [check](const httplib::Request&, httplib::Response& res) {
      const bool ok = !check || check();
      res.status = ok ? 200 : 503;
      res.set_content(ok ? "ok\n" : "not ready\n", "text/plain");
    };
  };
  if (handlers.snapshot) {
    server_->Get("/snapshot", [h = handlers](const httplib::Request&, httplib::Response& res) {
      auto body = h.snapshot();
      res.status = body ? 200 : 503;
      res.set_content(body ? *body : "not leading: ask the leader\n",
                      body ? "application/json" : "text/plain");
    });
  }
  server_->Get("/healthz", probe(handlers.healthy));
  server_->Get("/readyz", probe(handlers.ready));
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ <= 0) return core::Errorf("cannot listen on {}", address);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return {};
}

void HttpEndpoints::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace dlsched::k8s
