#include "dlsched/k8s/rest_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "dlsched/core/text.h"

namespace dlsched::k8s {
namespace {

namespace fs = std::filesystem;

core::Result<std::string> ReadWhole(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return core::Errorf("{}: cannot read {}: not a regular file", core::EscapeText(path), what);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) return core::Errorf("{}: cannot read {}", core::EscapeText(path), what);
  return ss.str();
}

// node[key] without yaml-cpp's "zombie" nodes (which throw when read): a
// missing key or a node that is not a map gives a null node.
YAML::Node Child(const YAML::Node& node, std::string_view key) {
  if (!node.IsDefined() || !node.IsMap()) return YAML::Node();
  for (const auto& kv : node) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node();
}

std::string Scalar(const YAML::Node& n) {
  return n.IsDefined() && n.IsScalar() ? n.Scalar() : std::string();
}

// The entry named `name` of a kubeconfig list such as `clusters`.
YAML::Node Named(const YAML::Node& list, const std::string& name) {
  if (!list.IsSequence()) return YAML::Node();
  for (const auto& e : list) {
    if (Scalar(Child(e, "name")) == name) return e;
  }
  return YAML::Node();
}

}  // namespace

core::Result<std::string> DecodeBase64(std::string_view text) {
  std::string in;
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ') in.push_back(c);
  }
  if (in.size() % 4 != 0)
    return core::Errorf("not base64 (length {} is not a multiple of 4)", in.size());
  std::string out(in.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()),
                                static_cast<int>(in.size()));
  if (n < 0) return core::Errorf("not base64");
  size_t pad = 0;
  if (!in.empty() && in.back() == '=') ++pad;
  if (in.size() > 1 && in[in.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

namespace {

std::string EncodeBase64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string TrimmedRight(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// A user's `exec` section (`where` names it) as client-go reads it.
core::Result<ExecPlugin> ReadExec(const YAML::Node& exec, const std::string& where,
                                  const std::function<std::string(const std::string&)>& resolve,
                                  const RestConfig& cluster) {
  ExecPlugin p;
  p.where = where;
  p.api_version = Scalar(Child(exec, "apiVersion"));
  if (p.api_version != "client.authentication.k8s.io/v1" &&
      p.api_version != "client.authentication.k8s.io/v1beta1") {
    return core::Errorf(
        "{}.apiVersion: '{}' is not supported (client.authentication.k8s.io/v1 or /v1beta1)", where,
        core::EscapeText(p.api_version));
  }
  p.command = Scalar(Child(exec, "command"));
  if (p.command.empty()) return core::Errorf("{}.command: missing", where);
  // A relative path (not a bare name, which is looked up on PATH) is
  // relative to the kubeconfig's directory.
  if (p.command.find('/') != std::string::npos)
    p.command = fs::path(resolve(p.command)).lexically_normal().string();
  const YAML::Node args = Child(exec, "args");
  if (args.IsDefined() && !args.IsNull() && !args.IsSequence())
    return core::Errorf("{}.args: expected a list", where);
  for (const auto& a : args) p.args.push_back(Scalar(a));
  const YAML::Node env = Child(exec, "env");
  if (env.IsDefined() && !env.IsNull() && !env.IsSequence())
    return core::Errorf("{}.env: expected a list of name and value", where);
  for (const auto& e : env) {
    const std::string name = Scalar(Child(e, "name"));
    if (name.empty() || name.find('=') != std::string::npos)
      return core::Errorf("{}.env: an entry without a valid name", where);
    p.env.emplace_back(name, Scalar(Child(e, "value")));
  }
  p.install_hint = Scalar(Child(exec, "installHint"));
  const std::string mode = Scalar(Child(exec, "interactiveMode"));
  if (mode.empty() && p.api_version.ends_with("/v1")) {
    return core::Errorf(
        "{}.interactiveMode: missing (client.authentication.k8s.io/v1 needs "
        "Never, IfAvailable or Always)",
        where);
  }
  if (mode == "Always") {
    return core::Errorf(
        "{}.interactiveMode: Always needs a terminal, and dlsched runs plugins "
        "without one (log in with the plugin first, or use IfAvailable)",
        where);
  }
  if (!mode.empty() && mode != "Never" && mode != "IfAvailable") {
    return core::Errorf("{}.interactiveMode: '{}' is not Never, IfAvailable or Always", where,
                        core::EscapeText(mode));
  }
  if (Scalar(Child(exec, "provideClusterInfo")) == "true") {
    nlohmann::json info = {{"server", cluster.server},
                           {"insecure-skip-tls-verify", cluster.insecure_skip_tls_verify}};
    if (!cluster.ca_pem.empty()) info["certificate-authority-data"] = EncodeBase64(cluster.ca_pem);
    p.cluster_json = info.dump();
  }
  return p;
}

using PemReader = std::function<core::Status(const YAML::Node&, const std::string&,
                                             const std::string&, std::string&)>;

// A kubeconfig user: client certificates, a token, a token file, an exec
// plugin; the legacy auth-provider is refused.
core::Status ReadUser(const YAML::Node& u, const std::string& where, const PemReader& pem,
                      const std::function<std::string(const std::string&)>& resolve,
                      RestConfig& c) {
  if (const YAML::Node ap = Child(u, "auth-provider"); !ap.IsNull()) {
    const std::string name = Scalar(Child(ap, "name"));
    return core::Errorf(
        "{}.auth-provider: the legacy auth-provider{} was removed in Kubernetes 1.26; use an "
        "exec credential plugin instead (GKE: gke-gcloud-auth-plugin, AKS: kubelogin "
        "convert-kubeconfig, EKS: aws eks update-kubeconfig write one)",
        where, name.empty() ? "" : " '" + core::EscapeText(name) + "'");
  }
  DLSCHED_TRY(pem(u, "client-certificate", "client-certificate", c.client_cert_pem));
  DLSCHED_TRY(pem(u, "client-key", "client-key", c.client_key_pem));
  c.bearer_token = Scalar(Child(u, "token"));
  if (c.bearer_token.empty()) {
    if (const std::string file = Scalar(Child(u, "tokenFile")); !file.empty()) {
      const std::string path = resolve(file);
      DLSCHED_TRY_LET(token, ReadWhole(path, "the token file"));
      c.bearer_token = TrimmedRight(*token);
      c.credentials = std::make_shared<TokenFileSource>(path, c.bearer_token);
    }
  }
  if (const YAML::Node exec = Child(u, "exec"); !exec.IsNull()) {
    DLSCHED_TRY_LET(plugin, ReadExec(exec, where + ".exec", resolve, c));
    c.credentials = std::make_shared<ExecCredentialSource>(std::move(*plugin));
  }
  return {};
}

core::Result<RestConfig> ReadKubeconfig(const std::string& path, std::string_view context) {
  DLSCHED_TRY_LET(text, ReadWhole(path, "the kubeconfig"));
  const std::string where = core::EscapeText(path);
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const std::bad_alloc&) {
    throw;  // out of memory is not an error in the file
  } catch (const std::exception& e) {
    return core::Errorf("{}: not YAML: {}", where, core::EscapeText(e.what()));
  }
  if (!root.IsMap()) return core::Errorf("{}: expected a kubeconfig (a map)", where);
  const std::string ctx_name =
      context.empty() ? Scalar(Child(root, "current-context")) : std::string(context);
  if (ctx_name.empty()) {
    return core::Errorf("{}: current-context: missing (or give a context)", where);
  }
  const YAML::Node ctx = Named(Child(root, "contexts"), ctx_name);
  if (ctx.IsNull())
    return core::Errorf("{}: contexts: no context named '{}'", where, core::EscapeText(ctx_name));
  const std::string cluster_name = Scalar(Child(Child(ctx, "context"), "cluster"));
  const std::string user_name = Scalar(Child(Child(ctx, "context"), "user"));
  const YAML::Node cluster = Named(Child(root, "clusters"), cluster_name);
  if (cluster.IsNull()) {
    return core::Errorf("{}: clusters: no cluster named '{}' (context '{}')", where,
                        core::EscapeText(cluster_name), core::EscapeText(ctx_name));
  }
  RestConfig c;
  if (const std::string ns = Scalar(Child(Child(ctx, "context"), "namespace")); !ns.empty())
    c.namespace_name = ns;
  const fs::path base = fs::path(path).parent_path();
  const std::function<std::string(const std::string&)> resolve = [&base](const std::string& p) {
    return fs::path(p).is_absolute() ? p : (base / p).string();
  };
  // "<key>-data" (base64) or "<key>" (a file), read from `node`.
  const PemReader pem = [&](const YAML::Node& node, const std::string& key,
                            const std::string& field, std::string& out) -> core::Status {
    if (const std::string data = Scalar(Child(node, key + "-data")); !data.empty()) {
      auto bytes = DecodeBase64(data);
      if (!bytes) return core::Errorf("{}: {}-data: {}", where, field, bytes.error().message);
      out = *bytes;
    } else if (const std::string file = Scalar(Child(node, key)); !file.empty()) {
      DLSCHED_TRY_LET(bytes, ReadWhole(resolve(file), field));
      out = *bytes;
    }
    return {};
  };
  const YAML::Node cl = Child(cluster, "cluster");
  c.server = Scalar(Child(cl, "server"));
  if (c.server.empty()) {
    return core::Errorf("{}: clusters[{}].cluster.server: missing", where,
                        core::EscapeText(cluster_name));
  }
  c.insecure_skip_tls_verify = Scalar(Child(cl, "insecure-skip-tls-verify")) == "true";
  DLSCHED_TRY(pem(cl, "certificate-authority", "certificate-authority", c.ca_pem));
  if (!user_name.empty()) {
    const YAML::Node user = Named(Child(root, "users"), user_name);
    if (user.IsNull()) {
      return core::Errorf("{}: users: no user named '{}' (context '{}')", where,
                          core::EscapeText(user_name), core::EscapeText(ctx_name));
    }
    DLSCHED_TRY(ReadUser(Child(user, "user"),
                         fmt::format("{}: users[{}].user", where, core::EscapeText(user_name)), pem,
                         resolve, c));
  }
  return c;
}

}  // namespace

core::Result<RestConfig> LoadKubeconfig(const std::string& path, std::string_view context) {
  // yaml-cpp reports some malformed input by throwing.
  try {
    return ReadKubeconfig(path, context);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return core::Errorf("{}: {}", core::EscapeText(path), core::EscapeText(e.what()));
  }
}

core::Result<RestConfig> InClusterConfig(const std::string& account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return core::Errorf(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
        "set");
  }
  RestConfig c;
  const std::string h = host;
  // An IPv6 address goes in brackets.
  c.server =
      fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h, port);
  DLSCHED_TRY_LET(token, ReadWhole(account_dir + "/token", "the service account token"));
  c.bearer_token = TrimmedRight(*token);
  // The kubelet rotates bound service account tokens (about hourly).
  c.credentials = std::make_shared<TokenFileSource>(account_dir + "/token", c.bearer_token);
  DLSCHED_TRY_LET(ca, ReadWhole(account_dir + "/ca.crt", "the service account CA"));
  c.ca_pem = *ca;
  if (auto ns = ReadWhole(account_dir + "/namespace", "the namespace"); ns && !ns->empty()) {
    c.namespace_name = TrimmedRight(*ns);
  }
  return c;
}

}  // namespace dlsched::k8s
