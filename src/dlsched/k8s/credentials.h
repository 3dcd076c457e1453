#pragma once

// Credentials that change while the process runs: a token file the kubelet
// rotates, and kubeconfig `exec` plugins (client.authentication.k8s.io v1
// and v1beta1, as EKS, GKE and AKS kubeconfigs use).

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlsched/core/error.h"

namespace dlsched::k8s {

// What one request authenticates with.
struct Credential {
  std::string token;  // sent as "Authorization: Bearer <token>" when not empty
  std::string client_cert_pem;
  std::string client_key_pem;
  bool operator==(const Credential&) const = default;
};

// A source of credentials shared by every RestClient made from one
// RestConfig (the config is copied into each): thread-safe.
class CredentialSource {
 public:
  virtual ~CredentialSource() = default;
  // What to send now, refreshed when due.
  virtual core::Result<Credential> Current() = 0;
  // The server answered 401 Unauthorized to `used`: the next Current gets
  // fresh credentials. True when a retry with them may succeed.
  virtual bool Rejected(const Credential& used) = 0;
};

// A bearer token file (kubeconfig `tokenFile`, a pod's service account
// token), read again when it changes: its identity, size and modification
// time are checked before every request (the kubelet replaces bound service
// account tokens by renaming a new file into place), and it is read at
// least once a minute whatever they say, as client-go does. While the file
// cannot be read the last token read is sent.
class TokenFileSource : public CredentialSource {
 public:
  // `token`: the file's content already read (trimmed), when it was.
  TokenFileSource(std::string path, std::string token);
  core::Result<Credential> Current() override;
  bool Rejected(const Credential& used) override;

 private:
  struct Stamp {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  static std::optional<Stamp> StampOf(const std::string& path);

  const std::string path_;
  std::mutex mu_;
  std::string token_;
  std::optional<Stamp> stamp_;
  std::chrono::steady_clock::time_point read_at_;
  bool force_ = false;
};

// A kubeconfig user's `exec` section.
struct ExecPlugin {
  std::string where;        // "<kubeconfig>: users[<name>].user.exec", the prefix of its errors
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;      // a path or a name looked up on PATH
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the process's
  std::string install_hint;
  // ExecCredential.spec.cluster (JSON) when provideClusterInfo is true, else "".
  std::string cluster_json;
};

// Runs an exec plugin with KUBERNETES_EXEC_INFO set (spec.interactive
// false: its standard input is /dev/null) and uses the token or client
// certificate and key of the ExecCredential it prints: cached until
// shortly before status.expirationTimestamp (for ever without one), run
// again after a 401 to the credentials it gave.
class ExecCredentialSource : public CredentialSource {
 public:
  explicit ExecCredentialSource(ExecPlugin plugin);
  core::Result<Credential> Current() override;
  bool Rejected(const Credential& used) override;
  int runs() const;  // how many times the plugin ran

  // Credentials are run for again this long before they expire.
  static constexpr std::chrono::seconds kRefreshBefore{10};

 private:
  const ExecPlugin plugin_;
  mutable std::mutex mu_;
  std::optional<Credential> cached_;
  std::optional<std::chrono::system_clock::time_point> expires_;
  int runs_ = 0;
};

// Reads an ExecCredential as `plugin` prints it: JSON of its apiVersion,
// with status.token or status.clientCertificateData and clientKeyData, and
// an optional status.expirationTimestamp (RFC 3339). Errors say what is
// wrong, without the plugin's where.
struct ExecOutput {
  Credential credential;
  std::optional<std::chrono::system_clock::time_point> expires;
};
core::Result<ExecOutput> ParseExecCredential(std::string_view output, std::string_view api_version);

// An RFC 3339 time ("2026-11-26T16:00:00Z", "...T16:00:00.5+01:00").
core::Result<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

}  // namespace dlsched::k8s
