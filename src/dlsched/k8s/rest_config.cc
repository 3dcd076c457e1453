#include "dlsched/k8s/rest_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

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
  auto resolve = [&base](const std::string& p) {
    return fs::path(p).is_absolute() ? p : (base / p).string();
  };
  // "<key>-data" (base64) or "<key>" (a file), read from `node`.
  auto pem = [&](const YAML::Node& node, const std::string& key, const std::string& field,
                 std::string& out) -> core::Status {
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
    const YAML::Node u = Child(user, "user");
    DLSCHED_TRY(pem(u, "client-certificate", "client-certificate", c.client_cert_pem));
    DLSCHED_TRY(pem(u, "client-key", "client-key", c.client_key_pem));
    c.bearer_token = Scalar(Child(u, "token"));
    if (c.bearer_token.empty()) {
      if (const std::string file = Scalar(Child(u, "tokenFile")); !file.empty()) {
        DLSCHED_TRY_LET(token, ReadWhole(resolve(file), "the token file"));
        c.bearer_token = *token;
        while (!c.bearer_token.empty() &&
               std::isspace(static_cast<unsigned char>(c.bearer_token.back()))) {
          c.bearer_token.pop_back();
        }
      }
    }
    if (!Child(u, "exec").IsNull() || !Child(u, "auth-provider").IsNull()) {
      return core::Errorf(
          "{}: users[{}].user: exec and auth-provider credentials are not supported "
          "(use a token or client certificates)",
          where, core::EscapeText(user_name));
    }
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
  c.bearer_token = *token;
  while (!c.bearer_token.empty() &&
         std::isspace(static_cast<unsigned char>(c.bearer_token.back()))) {
    c.bearer_token.pop_back();
  }
  DLSCHED_TRY_LET(ca, ReadWhole(account_dir + "/ca.crt", "the service account CA"));
  c.ca_pem = *ca;
  if (auto ns = ReadWhole(account_dir + "/namespace", "the namespace"); ns && !ns->empty()) {
    c.namespace_name = *ns;
    while (!c.namespace_name.empty() &&
           std::isspace(static_cast<unsigned char>(c.namespace_name.back()))) {
      c.namespace_name.pop_back();
    }
  }
  return c;
}

}  // namespace dlsched::k8s
