// The REST client against a loopback HTTP server (cpp-httplib, test only),
// and kubeconfig / in-cluster configuration loading.
#include "dlsched/k8s/rest_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

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

// A kubeconfig of one context against `server` whose user is `user` (YAML
// of the user's fields, indented by 6).
std::string KubeconfigWithUser(const fs::path& dir, const std::string& server,
                               const std::string& user) {
  return WriteFile(dir / "config",
                   "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                   "contexts:\n  - {name: c, context: {cluster: k, user: u}}\n"
                   "clusters:\n  - {name: k, cluster: {server: \"" +
                       server + "\"}}\nusers:\n  - name: u\n    user:\n" + user);
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// An exec credential plugin: counts its runs in `runs` beside it, keeps
// KUBERNETES_EXEC_INFO in `exec-info`, and prints an ExecCredential of
// $API with token tok-<first argument>-<run>, expiring at $EXPIRES.
std::string WritePlugin(const fs::path& dir, const std::string& body = "") {
  const std::string path = WriteFile(dir / "plugin.sh", "#!/bin/sh\n" + (body.empty() ? R"(
dir=$(dirname "$0")
n=$(( $(cat "$dir/runs" 2>/dev/null || echo 0) + 1 ))
echo $n > "$dir/runs"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info"
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"tok-%s-%s","expirationTimestamp":"%s"}}\n' "$API" "$1" "$n" "$EXPIRES"
)"
                                                                                      : body));
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

std::string ExecUser(const std::string& api, const std::string& expires,
                     const std::string& extra = "") {
  return "      exec:\n        apiVersion: client.authentication.k8s.io/" + api +
         "\n        command: ./plugin.sh\n        args: [a1]\n        interactiveMode: Never\n"
         "        installHint: \"install it with:\\n  apt-get install plugin\"\n"
         "        env:\n          - {name: API, value: client.authentication.k8s.io/" +
         api + "}\n          - {name: EXPIRES, value: \"" + expires + "\"}\n" + extra;
}

// Records the Authorization header of every request; answers 401 to the
// tokens in `refused`, else 200 (a watch: one event line).
struct AuthServer {
  httplib::Server server;
  std::mutex mu;
  std::vector<std::string> seen;
  std::vector<std::string> refused;
  AuthServer() {
    auto handle = [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu);
      const std::string auth = req.get_header_value("Authorization");
      seen.push_back(auth);
      const bool refuse = std::find(refused.begin(), refused.end(), auth) != refused.end();
      res.status = refuse ? 401 : 200;
      res.set_content(refuse ? R"({"kind":"Status","code":401})" : "{\"type\":\"ADDED\"}\n",
                      "application/json");
    };
    server.Get("/api", handle);
    server.Get("/watch", handle);
  }
};

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ExecCredentialTest, TokenIsSentAndKeptUntilItExpires) {
  AuthServer auth;
  Loopback loop(auth.server);
  const fs::path dir = FreshDir("exec-cache");
  WritePlugin(dir);
  auto config = LoadKubeconfig(KubeconfigWithUser(
      dir, loop.Url(),
      ExecUser("v1", "2999-01-01T00:00:00Z", "        provideClusterInfo: true\n")));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  RestClient client(*config);
  RestClient other(*config);  // a copy of the config shares the plugin's credentials
  ASSERT_EQ(client.Request("GET", "/api").value().status, 200);
  ASSERT_EQ(other.Request("GET", "/api").value().status, 200);
  EXPECT_EQ(auth.seen, (std::vector<std::string>{"Bearer tok-a1-1", "Bearer tok-a1-1"}));
  EXPECT_EQ(ReadAll(dir / "runs"), "1\n");
  // The protocol's input: its version, not interactive, the cluster asked for.
  const auto info = nlohmann::json::parse(ReadAll(dir / "exec-info"));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1");
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_EQ(info["spec"]["cluster"]["server"], loop.Url());
}

TEST(ExecCredentialTest, ExpiredTokenRunsThePluginAgain) {
  AuthServer auth;
  Loopback loop(auth.server);
  const fs::path dir = FreshDir("exec-expired");
  WritePlugin(dir);
  auto config = LoadKubeconfig(
      KubeconfigWithUser(dir, loop.Url(), ExecUser("v1beta1", "2001-02-03T04:05:06+01:00")));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  RestClient client(*config);
  ASSERT_EQ(client.Request("GET", "/api").value().status, 200);
  ASSERT_EQ(client.Request("GET", "/api").value().status, 200);
  EXPECT_EQ(auth.seen, (std::vector<std::string>{"Bearer tok-a1-1", "Bearer tok-a1-2"}));
  EXPECT_EQ(ReadAll(dir / "exec-info").find("\"cluster\""), std::string::npos);  // not asked
}

TEST(ExecCredentialTest, UnauthorizedRunsThePluginOnceAndRetries) {
  AuthServer auth;
  auth.refused = {"Bearer tok-a1-1", "Bearer tok-a1-3", "Bearer tok-a1-4"};
  Loopback loop(auth.server);
  const fs::path dir = FreshDir("exec-401");
  WritePlugin(dir);
  auto config =
      LoadKubeconfig(KubeconfigWithUser(dir, loop.Url(), ExecUser("v1", "2999-01-01T00:00:00Z")));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  RestClient client(*config);
  // tok-1 refused: the plugin runs again and the request is retried with tok-2.
  EXPECT_EQ(client.Request("GET", "/api").value().status, 200);
  EXPECT_EQ(auth.seen, (std::vector<std::string>{"Bearer tok-a1-1", "Bearer tok-a1-2"}));
  // A watch too: the first refusal is not delivered as an event, the
  // second (after the one retry) is, as any other answer.
  auth.refused.push_back("Bearer tok-a1-2");
  std::vector<std::string> lines;
  auto status = client.Stream("/watch", [&](std::string_view l) {
    lines.emplace_back(l);
    return true;
  });
  EXPECT_EQ(status.value(), 401);  // tok-2 and then tok-3 refused: one retry only
  EXPECT_EQ(lines, (std::vector<std::string>{R"({"kind":"Status","code":401})"}));
  // tok-3 and then tok-4 refused: 401, without a third try.
  EXPECT_EQ(client.Request("GET", "/api").value().status, 401);
  EXPECT_EQ(auth.seen,
            (std::vector<std::string>{"Bearer tok-a1-1", "Bearer tok-a1-2", "Bearer tok-a1-2",
                                      "Bearer tok-a1-3", "Bearer tok-a1-3", "Bearer tok-a1-4"}));
  EXPECT_EQ(ReadAll(dir / "runs"), "4\n");
}

TEST(ExecCredentialTest, PluginFailuresAreOneLineNamingFileAndField) {
  const fs::path dir = FreshDir("exec-errors");
  const std::string url = "http://127.0.0.1:1";
  auto error_of = [&](const std::string& user) {
    const std::string path = KubeconfigWithUser(dir, url, user);
    auto config = LoadKubeconfig(path);
    if (!config) return config.error().message;
    auto c = config->credentials->Current();
    return c ? std::string("no error") : c.error().message;
  };
  const std::string at = (dir / "config").string() + ": users[u].user";
  const std::string hint = "; install it with: apt-get install plugin";
  WritePlugin(dir, "echo 'boom: no credentials' >&2\necho second >&2\nexit 3\n");
  EXPECT_EQ(error_of(ExecUser("v1", "")), at + ".exec: '" + (dir / "plugin.sh").string() +
                                              "' exited with status 3: boom: no credentials" +
                                              hint);
  WritePlugin(dir, "echo hello\n");
  EXPECT_EQ(error_of(ExecUser("v1", "")), at + ".exec: '" + (dir / "plugin.sh").string() +
                                              "' printed no ExecCredential: not a JSON object "
                                              "(it printed 'hello')");
  WritePlugin(
      dir,
      R"(echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}')");
  EXPECT_EQ(
      error_of(ExecUser("v1", "")),
      at + ".exec: '" + (dir / "plugin.sh").string() +
          "' printed no ExecCredential: apiVersion is 'client.authentication.k8s.io/v1beta1', "
          "the kubeconfig's exec.apiVersion is 'client.authentication.k8s.io/v1'");
  fs::remove(dir / "plugin.sh");
  EXPECT_EQ(error_of(ExecUser("v1", "")), at + ".exec.command: cannot run '" +
                                              (dir / "plugin.sh").string() +
                                              "': No such file or directory" + hint);
  EXPECT_EQ(
      error_of("      exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}\n"),
      at + ".exec.apiVersion: 'client.authentication.k8s.io/v1alpha1' is not supported "
           "(client.authentication.k8s.io/v1 or /v1beta1)");
  EXPECT_EQ(error_of("      exec: {apiVersion: client.authentication.k8s.io/v1, command: x}\n"),
            at + ".exec.interactiveMode: missing (client.authentication.k8s.io/v1 needs Never, "
                 "IfAvailable or Always)");
  EXPECT_EQ(error_of("      auth-provider: {name: gcp}\n"),
            at + ".auth-provider: the legacy auth-provider 'gcp' was removed in Kubernetes 1.26; "
                 "use an exec credential plugin instead (GKE: gke-gcloud-auth-plugin, AKS: "
                 "kubelogin convert-kubeconfig, EKS: aws eks update-kubeconfig write one)");
  // A request names itself and then the plugin's error.
  auto config = LoadKubeconfig(KubeconfigWithUser(dir, url, ExecUser("v1", "")));
  ASSERT_TRUE(config.has_value());
  auto r = RestClient(*config).Request("GET", "/api");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "GET " + url + "/api: " + at + ".exec.command: cannot run '" +
                                   (dir / "plugin.sh").string() + "': No such file or directory" +
                                   hint);
}

TEST(ExecCredentialTest, ClientCertificateAndTimes) {
  auto o = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",
          "status":{"clientCertificateData":"CERT","clientKeyData":"KEY",
                    "expirationTimestamp":"2030-01-02T03:04:05.5Z"}})",
      "client.authentication.k8s.io/v1beta1");
  ASSERT_TRUE(o.has_value()) << o.error().message;
  EXPECT_EQ(o->credential, (Credential{"", "CERT", "KEY"}));
  EXPECT_EQ(o->expires, ParseRfc3339("2030-01-02T04:04:05.5+01:00").value());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(
                ParseRfc3339("1970-01-01T00:00:01.25Z").value().time_since_epoch())
                .count(),
            1250);
  EXPECT_EQ(ParseRfc3339("2999-01-01T00:00:00Z").value(),
            std::chrono::system_clock::time_point::max());
  EXPECT_FALSE(ParseRfc3339("2030-02-30T00:00:00Z").has_value());
  EXPECT_FALSE(ParseRfc3339("2030-01-01T00:00:00").has_value());
  EXPECT_EQ(ParseExecCredential(R"({"apiVersion":"v","kind":"ExecCredential",
                                    "status":{"clientCertificateData":"CERT"}})",
                                "v")
                .error()
                .message,
            "status: clientCertificateData and clientKeyData go together");
  EXPECT_EQ(ParseExecCredential(R"({"apiVersion":"v","kind":"ExecCredential","status":{}})", "v")
                .error()
                .message,
            "status: neither token nor clientCertificateData and clientKeyData");
}

// Replaces `path` as the kubelet does (a new file renamed into place), or
// rewrites it in place.
void Rotate(const fs::path& path, const std::string& token, bool rename) {
  if (!rename) {
    WriteFile(path, token);
    return;
  }
  WriteFile(path.string() + ".new", token);
  fs::rename(path.string() + ".new", path);
}

TEST(TokenFileTest, RotatedTokenFilesAreReadAgain) {
  AuthServer auth;
  Loopback loop(auth.server);
  const fs::path dir = FreshDir("token-rotation");
  WriteFile(dir / "token", "first\n");
  auto config = LoadKubeconfig(KubeconfigWithUser(dir, loop.Url(), "      tokenFile: token\n"));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  fs::create_directories(dir / "sa");
  WriteFile(dir / "sa" / "token", "sa-first");
  WriteFile(dir / "sa" / "ca.crt", "CA");
  setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "1", 1);
  auto in_cluster = InClusterConfig((dir / "sa").string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(in_cluster.has_value()) << in_cluster.error().message;
  in_cluster->server = loop.Url();
  RestClient client(*config), pod(*in_cluster);
  for (RestClient* c : {&client, &pod}) ASSERT_EQ(c->Request("GET", "/api").value().status, 200);
  Rotate(dir / "token", "second-token\n", true);
  Rotate(dir / "sa" / "token", "sa-second-token", false);
  for (RestClient* c : {&client, &pod}) ASSERT_EQ(c->Request("GET", "/api").value().status, 200);
  Rotate(dir / "token", "third", false);
  Rotate(dir / "sa" / "token", "sa-third", true);
  for (RestClient* c : {&client, &pod}) ASSERT_EQ(c->Request("GET", "/api").value().status, 200);
  fs::remove(dir / "token");  // unreadable for a moment: the last token read is sent
  ASSERT_EQ(client.Request("GET", "/api").value().status, 200);
  EXPECT_EQ(auth.seen,
            (std::vector<std::string>{"Bearer first", "Bearer sa-first", "Bearer second-token",
                                      "Bearer sa-second-token", "Bearer third", "Bearer sa-third",
                                      "Bearer third"}));
}

}  // namespace
}  // namespace dlsched::k8s
