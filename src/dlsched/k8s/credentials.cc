#include "dlsched/k8s/credentials.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dlsched/core/text.h"

extern char** environ;

namespace dlsched::k8s {
namespace {

using nlohmann::json;
using SystemTime = std::chrono::system_clock::time_point;

// The most of a plugin's stdout and stderr kept, and how long it may run.
constexpr size_t kMaxPluginOutput = 1 << 20;
constexpr int kPluginTimeoutSeconds = 60;
// client-go reads a token file again at least this often.
constexpr std::chrono::seconds kTokenFileMaxAge{60};

std::string TrimRight(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// Text on one line: runs of whitespace (newlines included) become one space.
std::string OneLine(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return core::EscapeText(TrimRight(std::move(out)), 300);
}

std::optional<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string token = TrimRight(ss.str());
  if (token.empty()) return std::nullopt;
  return token;
}

struct ProcessResult {
  int exit_code = 0;  // when it exited
  int signal = 0;     // when a signal ended it
  bool timed_out = false;
  std::string out, err;
};

// Reads the child's stdout and stderr until both close or the time is up.
void Collect(pid_t pid, int out_fd, int err_fd, ProcessResult& r) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kPluginTimeoutSeconds);
  for (int open = 2; open > 0;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      r.timed_out = true;
      break;
    }
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      } else if (sinks[i]->size() < kMaxPluginOutput) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
}

// Runs `argv` (argv[0] a path, or a name looked up on PATH) with `env`
// and standard input from /dev/null. An error when it cannot start.
core::Result<ProcessResult> RunProcess(std::vector<std::string> argv,
                                       std::vector<std::string> env) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return core::Errorf("pipe: {}", std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return core::Errorf("pipe: {}", std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> args, envp;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return core::Errorf("{}", std::strerror(rc));
  }
  ProcessResult r;
  Collect(pid, out[0], err[0], r);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// The process's environment with the plugin's variables and
// KUBERNETES_EXEC_INFO (the ExecCredential's spec) set.
std::vector<std::string> PluginEnvironment(const ExecPlugin& p) {
  json info = {{"apiVersion", p.api_version},
               {"kind", "ExecCredential"},
               {"spec", {{"interactive", false}}}};
  if (!p.cluster_json.empty()) info["spec"]["cluster"] = json::parse(p.cluster_json);
  std::vector<std::pair<std::string, std::string>> set = p.env;
  set.emplace_back("KUBERNETES_EXEC_INFO", info.dump());
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : set) replaced = replaced || k == name;
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

core::Result<ExecOutput> RunPlugin(const ExecPlugin& p) {
  const std::string hint = p.install_hint.empty() ? "" : "; " + OneLine(p.install_hint);
  const std::string cmd = core::EscapeText(p.command);
  std::vector<std::string> argv{p.command};
  argv.insert(argv.end(), p.args.begin(), p.args.end());
  auto run = RunProcess(std::move(argv), PluginEnvironment(p));
  if (!run) {
    return core::Errorf("{}.command: cannot run '{}': {}{}", p.where, cmd, run.error().message,
                        hint);
  }
  const std::string first_err = OneLine(run->err.substr(0, run->err.find('\n')));
  const std::string said = first_err.empty() ? "" : ": " + first_err;
  if (run->timed_out) {
    return core::Errorf("{}: '{}' did not finish within {} s{}{}", p.where, cmd,
                        kPluginTimeoutSeconds, said, hint);
  }
  if (run->signal != 0) {
    return core::Errorf("{}: '{}' was killed by signal {}{}{}", p.where, cmd, run->signal, said,
                        hint);
  }
  if (run->exit_code != 0) {
    return core::Errorf("{}: '{}' exited with status {}{}{}", p.where, cmd, run->exit_code, said,
                        hint);
  }
  auto parsed = ParseExecCredential(run->out, p.api_version);
  if (!parsed) {
    return core::Errorf("{}: '{}' printed no ExecCredential: {}", p.where, cmd,
                        parsed.error().message);
  }
  return parsed;
}

std::string StringAt(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

core::Result<SystemTime> ParseRfc3339(std::string_view text) {
  const std::string t(text);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &used) !=
          6 ||
      used != 19) {
    return core::Errorf("'{}' is not an RFC 3339 time", core::EscapeText(text));
  }
  const std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(mo),
                                        std::chrono::day(d)};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) {
    return core::Errorf("'{}' is not an RFC 3339 time", core::EscapeText(text));
  }
  std::chrono::nanoseconds frac{0};
  size_t at = 19;
  if (at < t.size() && t[at] == '.') {
    long long scale = 100'000'000;
    for (++at; at < t.size() && std::isdigit(static_cast<unsigned char>(t[at])); ++at) {
      frac += std::chrono::nanoseconds((t[at] - '0') * scale);
      scale /= 10;
    }
  }
  std::chrono::minutes offset{0};
  const std::string zone = t.substr(at);
  int oh = 0, om = 0;
  char sign = 0;
  if (zone == "Z" || zone == "z") {
  } else if (zone.size() == 6 && std::sscanf(zone.c_str(), "%c%2d:%2d", &sign, &oh, &om) == 3 &&
             (sign == '+' || sign == '-') && oh < 24 && om < 60) {
    offset = std::chrono::minutes((sign == '-' ? -1 : 1) * (oh * 60 + om));
  } else {
    return core::Errorf("'{}' is not an RFC 3339 time (its zone)", core::EscapeText(text));
  }
  const std::chrono::sys_seconds utc = std::chrono::sys_days(ymd) + std::chrono::hours(h) +
                                       std::chrono::minutes(mi) + std::chrono::seconds(s) - offset;
  // The clock's nanoseconds end in 2262: a time after that is "never".
  const auto last = std::chrono::floor<std::chrono::seconds>(SystemTime::max());
  if (utc >= last) return SystemTime::max();
  return SystemTime(utc.time_since_epoch() + frac);
}

core::Result<ExecOutput> ParseExecCredential(std::string_view output,
                                             std::string_view api_version) {
  const json j = json::parse(output, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    const std::string start = OneLine(output.substr(0, std::min<size_t>(output.size(), 80)));
    return core::Errorf("not a JSON object (it printed '{}')", start);
  }
  if (const std::string kind = StringAt(j, "kind"); kind != "ExecCredential") {
    return core::Errorf("kind is '{}', not ExecCredential", core::EscapeText(kind));
  }
  if (const std::string v = StringAt(j, "apiVersion"); v != api_version) {
    return core::Errorf("apiVersion is '{}', the kubeconfig's exec.apiVersion is '{}'",
                        core::EscapeText(v), core::EscapeText(api_version));
  }
  const auto status = j.find("status");
  if (status == j.end() || !status->is_object()) return core::Errorf("status: missing");
  ExecOutput o;
  o.credential.token = StringAt(*status, "token");
  o.credential.client_cert_pem = StringAt(*status, "clientCertificateData");
  o.credential.client_key_pem = StringAt(*status, "clientKeyData");
  const Credential& c = o.credential;
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
    return core::Errorf("status: clientCertificateData and clientKeyData go together");
  }
  if (c.token.empty() && c.client_cert_pem.empty()) {
    return core::Errorf("status: neither token nor clientCertificateData and clientKeyData");
  }
  if (const std::string e = StringAt(*status, "expirationTimestamp"); !e.empty()) {
    auto t = ParseRfc3339(e);
    if (!t) return core::Errorf("status.expirationTimestamp: {}", t.error().message);
    o.expires = *t;
  }
  return o;
}

TokenFileSource::TokenFileSource(std::string path, std::string token)
    : path_(std::move(path)), token_(std::move(token)) {}

std::optional<TokenFileSource::Stamp> TokenFileSource::StampOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return Stamp{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
               static_cast<uint64_t>(st.st_size),
               static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

core::Result<Credential> TokenFileSource::Current() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  const std::optional<Stamp> stamp = StampOf(path_);
  if (force_ || !stamp_ || stamp != stamp_ || now - read_at_ >= kTokenFileMaxAge) {
    if (std::optional<std::string> token = ReadToken(path_)) {
      token_ = std::move(*token);
      stamp_ = stamp;
      read_at_ = now;
      force_ = false;
    } else if (token_.empty()) {
      return core::Errorf("{}: cannot read the token file", core::EscapeText(path_));
    }
  }
  return Credential{token_, {}, {}};
}

bool TokenFileSource::Rejected(const Credential& used) {
  std::lock_guard lock(mu_);
  force_ = true;
  const std::optional<std::string> token = ReadToken(path_);
  return token.has_value() && *token != used.token;
}

ExecCredentialSource::ExecCredentialSource(ExecPlugin plugin) : plugin_(std::move(plugin)) {}

core::Result<Credential> ExecCredentialSource::Current() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::system_clock::now();
  if (cached_ && (!expires_ || now + kRefreshBefore < *expires_)) return *cached_;
  ++runs_;
  DLSCHED_TRY_LET(out, RunPlugin(plugin_));
  cached_ = out->credential;
  expires_ = out->expires;
  return *cached_;
}

bool ExecCredentialSource::Rejected(const Credential& used) {
  std::lock_guard lock(mu_);
  if (cached_ && *cached_ == used) cached_.reset();
  return true;  // the next Current runs the plugin (or another thread already did)
}

int ExecCredentialSource::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

}  // namespace dlsched::k8s
