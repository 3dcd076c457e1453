#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "dlsched/core/error.h"
#include "dlsched/k8s/credentials.h"

namespace dlsched::k8s {

// Where the API server is and how to talk to it, as client-go's rest.Config.
struct RestConfig {
  std::string server;  // "https://10.0.0.1:6443"
  std::string ca_pem;  // CA bundle to verify the server with; empty: the system's
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string bearer_token;
  // When set, what requests authenticate with instead of the three above
  // (an exec plugin, a token file read again when it changes); shared by
  // the copies of this config.
  std::shared_ptr<CredentialSource> credentials;
  // Only when the kubeconfig says so (insecure-skip-tls-verify: true).
  bool insecure_skip_tls_verify = false;
  std::string namespace_name = "default";  // the context's namespace
  double timeout_seconds = 30;             // per request (watches: see RestClient::Watch)
  // The longest answer Request takes, in bytes (0: no limit); a longer one
  // is an error once this much has arrived, not a string of any size.
  uint64_t max_response_bytes = 0;
  // The User-Agent header of every request (the server's audit log names
  // the client by it); empty: curl's own.
  std::string user_agent = "dlsched/" DLSCHED_VERSION;
};

// Reads a kubeconfig file as kubectl does: `context` (empty: the file's
// current-context) picks a cluster (server, certificate-authority[-data],
// insecure-skip-tls-verify) and a user (client-certificate[-data],
// client-key[-data], token, tokenFile, exec); relative paths are relative
// to the file's directory. A tokenFile is read again when it changes; an
// exec plugin runs at the first request (ExecCredentialSource). The legacy
// auth-provider is refused. Errors name the file and the field.
core::Result<RestConfig> LoadKubeconfig(const std::string& path, std::string_view context = "");

// The in-cluster configuration of a pod: KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT, and the service account's token, ca.crt and
// namespace under `account_dir`; the token is read again when the kubelet
// rotates it.
core::Result<RestConfig> InClusterConfig(
    const std::string& account_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Standard base64 (RFC 4648) to bytes; an error for anything else.
core::Result<std::string> DecodeBase64(std::string_view text);

}  // namespace dlsched::k8s
