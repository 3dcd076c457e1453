// `dlsched operator` itself: the Kubernetes client and servers. Linked into
// dlsched-k8s only (see operator_exec.cc).
#include "dlsched/cli/operator_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dlsched/cli/inputs.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/http_endpoints.h"
#include "dlsched/k8s/leader.h"
#include "dlsched/k8s/objects.h"
#include "dlsched/k8s/operator.h"
#include "dlsched/k8s/rest_client.h"
#include "dlsched/k8s/rest_config.h"
#include "dlsched/sim/generate.h"

namespace dlsched::cli {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

// One JSON object per line on stderr, as the operator's own log.
void Log(std::string_view msg, nlohmann::json fields) {
  fields["ts"] = k8s::NowRfc3339();
  fields["level"] = "info";
  fields["msg"] = msg;
  std::fprintf(stderr, "%s\n", fields.dump().c_str());
}

void Fail(std::string_view message) {
  std::fprintf(stderr, "dlsched: %s\n", core::EscapeMessage(message).c_str());
}

// As kubectl and client-go: --kubeconfig, else $KUBECONFIG, else the
// in-cluster service account when running in a pod, else ~/.kube/config.
core::Result<k8s::RestConfig> ReadConfig(const OperatorArgs& a) {
  std::string path = a.kubeconfig;
  if (path.empty()) {
    if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') path = env;
  }
  if (path.empty() && std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) {
    return k8s::InClusterConfig();
  }
  if (path.empty()) {
    const char* home = std::getenv("HOME");
    path = fmt::format("{}/.kube/config", home != nullptr ? home : "");
  }
  return k8s::LoadKubeconfig(path, a.context);
}

// The configuration ReadConfig finds. An exec credential plugin runs once
// here, so a missing or failing one is a kubeconfig error (exit 2) before
// anything starts.
core::Result<k8s::RestConfig> Connect(const OperatorArgs& a) {
  DLSCHED_TRY_LET(config, ReadConfig(a));
  if (config->credentials != nullptr) DLSCHED_TRY(config->credentials->Current());
  return config;
}

std::string DefaultIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device rd;
  return fmt::format("{}_{:08x}", host[0] != '\0' ? host : "dlsched", rd());
}

// The body of GET /snapshot: {"start", "cluster", "workload", "withoutProgress"}.
std::string SnapshotJson(const k8s::OperatorSnapshot& snap) {
  return nlohmann::json{{"start", snap.workload.start},
                        {"cluster", sim::ClusterToYaml(snap.cluster)},
                        {"workload", sim::WorkloadToYaml(snap.workload)},
                        {"withoutProgress", snap.without_progress}}
      .dump();
}

// What the operator's loop shares with the threads of its HTTP endpoints.
struct Shared {
  std::unique_ptr<k8s::Operator> op;
  std::atomic<bool> leading{false};
  std::atomic<bool> synced{false};
  // The endpoints read the operator's snapshot, which is thread-safe.
  std::mutex op_mu;
  // /snapshot: the operator's own thread builds it between steps.
  std::mutex snapshot_mu;
  std::vector<std::promise<std::string>> snapshot_requests;

  std::string Metrics() {
    std::lock_guard lock(op_mu);
    return k8s::PrometheusText(op ? op->Stats() : k8s::OperatorStats{}, leading);
  }

  std::optional<std::string> Snapshot() {
    std::future<std::string> answer;
    {
      std::lock_guard lock(snapshot_mu);
      if (!leading) return std::nullopt;
      answer = snapshot_requests.emplace_back().get_future();
    }
    if (answer.wait_for(std::chrono::seconds(30)) != std::future_status::ready) return std::nullopt;
    try {
      return answer.get();
    } catch (const std::exception&) {
      return std::nullopt;  // stopping
    }
  }

  // On the operator's thread, between its steps.
  void AnswerSnapshots() {
    std::lock_guard lock(snapshot_mu);
    if (!snapshot_requests.empty()) {
      const std::string body = SnapshotJson(op->Snapshot());
      for (auto& request : snapshot_requests) request.set_value(body);
      snapshot_requests.clear();
    }
  }

  void Stop() {
    {
      std::lock_guard lock(op_mu);
      if (op) op->Stop();
    }
    // Anyone still waiting for a snapshot is told no.
    std::lock_guard lock(snapshot_mu);
    leading = false;
    for (auto& request : snapshot_requests) {
      request.set_exception(std::make_exception_ptr(std::runtime_error("stopping")));
    }
    snapshot_requests.clear();
  }
};

// /metrics and /snapshot, and /healthz and /readyz, each unless its
// address is 0. Errors name the flag.
core::Status StartEndpoints(const OperatorArgs& a, Shared& shared, k8s::HttpEndpoints& metrics,
                            k8s::HttpEndpoints& probe) {
  if (a.metrics_address != "0") {
    auto text = [&shared] { return shared.Metrics(); };
    auto snapshot = [&shared] { return shared.Snapshot(); };
    if (auto st = metrics.Start(a.metrics_address, {text, nullptr, nullptr, snapshot}); !st) {
      return core::Errorf("--metrics-bind-address: {}", st.error().message);
    }
  }
  if (a.probe_address != "0") {
    auto ready = [&shared] { return !shared.leading || shared.synced; };
    if (auto st = probe.Start(a.probe_address, {nullptr, nullptr, ready, nullptr}); !st) {
      return core::Errorf("--health-probe-bind-address: {}", st.error().message);
    }
  }
  return {};
}

// What the operator runs with.
struct Setup {
  const OperatorArgs& args;
  const k8s::RestConfig& config;
  const engine::Engine& engine;
  const k8s::OperatorOptions& options;
  std::string identity;  // in the Lease
  // This replica's pod (the downward API's POD_NAMESPACE and POD_NAME),
  // labelled k8s::kLeaderLabel while it leads; empty: no label.
  std::string pod_namespace, pod_name;
};

// Puts the leader label on this replica's pod, or takes it off; a failure
// is logged (the Service then misses the leader until the next try).
void MarkPod(const Setup& s, bool leading) {
  if (!s.args.leader_elect || s.pod_name.empty() || s.pod_namespace.empty()) return;
  k8s::RestClient client(s.config);
  if (auto st = k8s::MarkLeaderPod(client, s.pod_namespace, s.pod_name, leading); !st) {
    Log("cannot label the pod", {{"pod", s.pod_namespace + "/" + s.pod_name},
                                 {"leading", leading},
                                 {"error", st.error().message}});
  }
}

// Takes or renews the lease every retry period on a thread of its own
// (so a leader busy with the API still renews) until `done`.
void Renew(const OperatorArgs& a, k8s::LeaderElector& elector, const std::atomic<bool>& done) {
  using Clock = std::chrono::steady_clock;
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.retry_period));
  while (!done && !g_stop) {
    const Clock::time_point next = Clock::now() + period;
    elector.TryAcquireOrRenew();
    while (!done && !g_stop && Clock::now() < next) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

// Leads once this replica holds the lease (or at once without leader
// election), and steps the operator, until a signal (0) or a lease lost or
// an operator that could not start (1).
int Lead(const Setup& s, k8s::LeaderElector& elector, Shared& shared) {
  const OperatorArgs& a = s.args;
  while (!g_stop) {
    if (a.leader_elect && shared.leading && !elector.IsLeader()) {
      // As kube-scheduler: a leader that lost its lease (or could not renew
      // it within the renew deadline) exits, and its restart rebuilds
      // everything from the API server. Its writes stopped at the deadline
      // (OperatorOptions::may_write).
      Fail("lost the leader lease; exiting");
      return 1;
    }
    const bool lead = !a.leader_elect || elector.IsLeader();
    if (lead && !shared.op) {
      shared.leading = true;
      Log("leading", {{"identity", s.identity}});
      std::lock_guard lock(shared.op_mu);
      shared.op = std::make_unique<k8s::Operator>(s.config, s.engine, s.options);
      if (auto st = shared.op->Start(); !st) {
        Fail(st.error().message);
        return 1;
      }
      shared.synced = true;
      MarkPod(s, true);
    }
    if (shared.op) {
      shared.op->Step(a.leader_elect ? std::min(0.5, a.retry_period / 2) : 0.5);
      shared.AnswerSnapshots();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return 0;
}

// Lead, with the lease renewed beside it when leader election is on.
int Loop(const Setup& s, k8s::LeaderElector& elector, Shared& shared) {
  std::atomic<bool> done{false};
  std::thread renewer;
  MarkPod(s, false);  // a restarted former leader's pod keeps its labels
  if (s.args.leader_elect) renewer = std::thread([&] { Renew(s.args, elector, done); });
  const int code = Lead(s, elector, shared);
  done = true;
  if (renewer.joinable()) renewer.join();
  return code;
}

}  // namespace

int Operate(const OperatorArgs& a, int /*argc*/, char** /*argv*/) {
  auto engine = LoadEngine(a.profile);
  if (!engine) {
    Fail(engine.error().message);
    return 2;
  }
  auto config = Connect(a);
  if (!config) {
    Fail(config.error().message);
    return 2;
  }
  if (a.lease_duration <= a.renew_deadline || a.renew_deadline <= a.retry_period) {
    Fail(fmt::format(
        "--leader-elect-lease-duration ({} s) must exceed --leader-elect-renew-deadline "
        "({} s), which must exceed --leader-elect-retry-period ({} s)",
        a.lease_duration, a.renew_deadline, a.retry_period));
    return 2;
  }
  ::signal(SIGTERM, OnSignal);
  ::signal(SIGINT, OnSignal);

  k8s::OperatorOptions options;
  options.namespace_name = a.namespace_name;
  options.scheduler_name = a.scheduler_name;
  options.bind_with_node_name = a.bind_with_node_name;
  options.resync_seconds = a.resync;
  options.release_wait_seconds = a.release_wait;
  const std::string identity = a.identity.empty() ? DefaultIdentity() : a.identity;
  // The audit log names the replica.
  config->user_agent = fmt::format("dlsched/{} (operator {})", DLSCHED_VERSION, identity);
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  const Setup s{a, *config, **engine, options, identity, env("POD_NAMESPACE"), env("POD_NAME")};
  Shared shared;
  k8s::HttpEndpoints metrics_server, probe_server;
  if (auto st = StartEndpoints(a, shared, metrics_server, probe_server); !st) {
    Fail(st.error().message);
    return 2;
  }

  k8s::RestClient lease_client(*config);
  k8s::LeaderOptions lo;
  lo.namespace_name = a.lease_namespace.empty() ? config->namespace_name : a.lease_namespace;
  lo.lease_name = a.lease_name;
  lo.identity = s.identity;
  lo.lease_duration_seconds = a.lease_duration;
  lo.renew_deadline_seconds = a.renew_deadline;
  lo.retry_period_seconds = a.retry_period;
  k8s::LeaderElector elector(lease_client, lo);
  // Writes stop once this replica no longer holds the lease (the operator,
  // made when it leads, copies the options then).
  if (a.leader_elect) options.may_write = [&elector] { return elector.IsLeader(); };
  Log("dlsched operator starting", {{"profile", engine->get()->profile().name},
                                    {"identity", lo.identity},
                                    {"leaderElect", a.leader_elect},
                                    {"metricsPort", metrics_server.Port()},
                                    {"probePort", probe_server.Port()}});
  const int code = Loop(s, elector, shared);
  shared.Stop();
  if (a.leader_elect) elector.Release();
  metrics_server.Stop();
  probe_server.Stop();
  return code;
}

}  // namespace dlsched::cli
