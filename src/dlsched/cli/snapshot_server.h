#pragma once

// A loopback HTTP server standing in for a dlsched operator, for the tests
// of `dlsched snapshot` (cli/ tests only).

#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <httplib.h>

namespace dlsched::cli::testing {

// A loopback HTTP server standing in for a dlsched operator: each case's
// answer at /<case>/snapshot. One per test process, started when first
// used and never stopped (its thread runs until the process ends).
class SnapshotServer {
 public:
  static SnapshotServer& Get() {
    static SnapshotServer* const server = new SnapshotServer();
    return *server;
  }
  // Serves `body` with `status` for the case `name`; returns the address
  // for --from.
  std::string Serve(const std::string& name, int status, std::string body) {
    std::string key;
    for (char c : name) key += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    std::lock_guard lock(mu_);
    answers_[key] = {status, std::move(body)};
    return "127.0.0.1:" + std::to_string(port_) + "/" + key;
  }

 private:
  SnapshotServer() {
    server_.Get(R"(/([^/]+)/snapshot)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  std::lock_guard lock(mu_);
                  const auto it = answers_.find(req.matches[1].str());
                  if (it == answers_.end()) {
                    res.status = 404;
                    return;
                  }
                  res.status = it->second.first;
                  res.set_content(it->second.second, "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    std::thread([this] { server_.listen_after_bind(); }).detach();
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  httplib::Server server_;
  std::mutex mu_;
  std::map<std::string, std::pair<int, std::string>> answers_;
  int port_ = 0;
};

}  // namespace dlsched::cli::testing
