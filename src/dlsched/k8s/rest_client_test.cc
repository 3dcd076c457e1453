// The REST client against a loopback HTTP server (cpp-httplib, test only),
// and kubeconfig / in-cluster configuration loading.
#include "dlsched/k8s/rest_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dlsched/k8s/rest_config.h"

namespace dlsched::k8s {
namespace {

namespace fs = std::filesystem;

// A loopback server on a free port, running on its own thread.
class Loopback {
 public:
  explicit Loopback(httplib::Server& server) : server_(server) {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Loopback() {
    server_.stop();
    thread_.join();
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server& server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(RestClientTest, SendsTokenAndBodyAndReturnsStatus) {
  httplib::Server server;
  std::string seen_auth, seen_body, seen_type;
  server.Put("/api/v1/namespaces/default/pods/p",
             [&](const httplib::Request& req, httplib::Response& res) {
               seen_auth = req.get_header_value("Authorization");
               seen_type = req.get_header_value("Content-Type");
               seen_body = req.body;
               res.status = 409;
               res.set_content(R"({"kind":"Status","reason":"Conflict"})", "application/json");
             });
  Loopback loop(server);
  RestConfig config;
  config.server = loop.Url();
  config.bearer_token = "t0ken";
  RestClient client(config);
  auto r = client.Request("PUT", "/api/v1/namespaces/default/pods/p", R"({"a":1})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->status, 409);  // an HTTP status is the caller's to judge
  EXPECT_EQ(r->body, R"({"kind":"Status","reason":"Conflict"})");
  EXPECT_EQ(seen_auth, "Bearer t0ken");
  EXPECT_EQ(seen_type, "application/json");
  EXPECT_EQ(seen_body, R"({"a":1})");
  // The handle is reused: a second request on the same client works.
  auto again = client.Request("GET", "/missing");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 404);
}

TEST(RestClientTest, TransportFailuresAreErrorsNamingTheRequest) {
  RestConfig config;
  config.server = "http://127.0.0.1:1";  // nothing listens on port 1
  config.timeout_seconds = 2;
  RestClient client(config);
  auto r = client.Request("GET", "/api");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message.rfind("GET http://127.0.0.1:1/api: ", 0), 0u) << r.error().message;
}

TEST(RestClientTest, RequestTimeoutIsAnError) {
  httplib::Server server;
  server.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content("late", "text/plain");
  });
  Loopback loop(server);
  RestConfig config;
  config.server = loop.Url();
  config.timeout_seconds = 0.3;
  RestClient client(config);
  auto r = client.Request("GET", "/slow");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("imeout"), std::string::npos) << r.error().message;
}

// An answer longer than max_response_bytes is an error as soon as that
// much has arrived: an endless one too, without holding more than that.
TEST(RestClientTest, AnswersAreCutAtTheLimit) {
  httplib::Server server;
  server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(100'000, 'x'), "application/json");
  });
  server.Get("/endless", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      const std::string chunk(4096, 'y');
      return sink.write(chunk.data(), chunk.size());  // false once the client is gone
    });
  });
  Loopback loop(server);
  RestConfig config;
  config.server = loop.Url();
  config.max_response_bytes = 10'000;
  RestClient client(config);
  for (const char* path : {"/big", "/endless"}) {
    auto r = client.Request("GET", path);
    ASSERT_FALSE(r.has_value()) << path;
    EXPECT_EQ(r.error().message,
              "GET " + loop.Url() + path + ": the answer is longer than 10000 bytes, the limit");
  }
  config.max_response_bytes = 100'000;  // exactly the body: fine
  auto ok = RestClient(config).Request("GET", "/big");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->body.size(), 100'000u);
}

TEST(RestClientTest, StreamDeliversEachLineAndCanStop) {
  httplib::Server server;
  server.Get("/watch", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      for (const char* chunk :
           {"{\"type\":\"ADDED\"}\n{\"ty", "pe\":\"MODIFIED\"}\n", "{\"type\":\"DELETED\"}\n"}) {
        sink.write(chunk, std::strlen(chunk));
      }
      sink.done();
      return true;
    });
  });
  Loopback loop(server);
  RestConfig config;
  config.server = loop.Url();
  RestClient client(config);
  std::vector<std::string> lines;
  auto status = client.Stream("/watch", [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  });
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_EQ(*status, 200);
  // Lines are whole even when a chunk splits one.
  EXPECT_EQ(lines, (std::vector<std::string>{R"({"type":"ADDED"})", R"({"type":"MODIFIED"})",
                                             R"({"type":"DELETED"})"}));
  lines.clear();
  status = client.Stream("/watch", [&](std::string_view line) {
    lines.emplace_back(line);
    return false;  // stop after the first event
  });
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_EQ(lines.size(), 1u);
}

std::string WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p.string();
}

TEST(KubeconfigTest, CurrentContextPicksClusterAndUser) {
  const fs::path dir = fs::path(::testing::TempDir()) / "kubeconfig-test";
  fs::create_directories(dir);
  WriteFile(dir / "ca.pem", "CA-PEM");
  WriteFile(dir / "token", "file-token\n");
  // "Q0VSVA==" is base64 of "CERT", "S0VZ" of "KEY".
  const std::string path = WriteFile(dir / "config", R"(
apiVersion: v1
kind: Config
current-context: dev
contexts:
  - {name: dev, context: {cluster: c1, user: u1, namespace: team-a}}
  - {name: prod, context: {cluster: c2, user: u2}}
clusters:
  - {name: c1, cluster: {server: "https://10.0.0.1:6443", certificate-authority: ca.pem}}
  - {name: c2, cluster: {server: "https://prod:6443", insecure-skip-tls-verify: true}}
users:
  - {name: u1, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}
  - {name: u2, user: {tokenFile: token}}
)");
  auto dev = LoadKubeconfig(path);
  ASSERT_TRUE(dev.has_value()) << dev.error().message;
  EXPECT_EQ(dev->server, "https://10.0.0.1:6443");
  EXPECT_EQ(dev->ca_pem, "CA-PEM");  // relative to the kubeconfig's directory
  EXPECT_EQ(dev->client_cert_pem, "CERT");
  EXPECT_EQ(dev->client_key_pem, "KEY");
  EXPECT_EQ(dev->namespace_name, "team-a");
  EXPECT_FALSE(dev->insecure_skip_tls_verify);  // TLS verification stays on
  auto prod = LoadKubeconfig(path, "prod");
  ASSERT_TRUE(prod.has_value()) << prod.error().message;
  EXPECT_TRUE(prod->insecure_skip_tls_verify);
  EXPECT_EQ(prod->bearer_token, "file-token");
  EXPECT_EQ(prod->namespace_name, "default");
  auto none = LoadKubeconfig(path, "staging");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().message, path + ": contexts: no context named 'staging'");
}

TEST(KubeconfigTest, InClusterReadsTheServiceAccount) {
  const fs::path dir = fs::path(::testing::TempDir()) / "serviceaccount-test";
  fs::create_directories(dir);
  WriteFile(dir / "token", "sa-token\n");
  WriteFile(dir / "ca.crt", "SA-CA");
  WriteFile(dir / "namespace", "dlsched-system");
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = InClusterConfig(dir.string());
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->bearer_token, "sa-token");
  EXPECT_EQ(c->ca_pem, "SA-CA");
  EXPECT_EQ(c->namespace_name, "dlsched-system");
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(InClusterConfig(dir.string()).has_value());
}

TEST(KubeconfigTest, Base64) {
  EXPECT_EQ(DecodeBase64("aGVsbG8=").value(), "hello");
  EXPECT_EQ(DecodeBase64("aGVsbA==").value(), "hell");
  EXPECT_EQ(DecodeBase64("aGVs\nbG8h").value(), "hello!");
  EXPECT_FALSE(DecodeBase64("abc").has_value());
  EXPECT_FALSE(DecodeBase64("ab$=").has_value());
}

}  // namespace
}  // namespace dlsched::k8s
