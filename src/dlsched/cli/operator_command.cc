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

#include "dlsched/config/specs.h"
#include "dlsched/core/text.h"
#include "dlsched/k8s/http_endpoints.h"
#include "dlsched/k8s/leader.h"
#include "dlsched/k8s/objects.h"
#include "dlsched/k8s/operator.h"
#include "dlsched/k8s/rest_client.h"
#include "dlsched/k8s/rest_config.h"
#include "dlsched/report/output_dir.h"
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
  std::fprintf(stderr, "dlsched: %s\n", core::EscapeText(message, 4096).c_str());
}

// As kubectl and client-go: --kubeconfig, else $KUBECONFIG, else the
// in-cluster service account when running in a pod, else ~/.kube/config.
core::Result<k8s::RestConfig> Connect(const OperatorArgs& a) {
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

std::string DefaultIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device rd;
  return fmt::format("{}_{:08x}", host[0] != '\0' ? host : "dlsched", rd());
}

}  // namespace

std::string SnapshotJson(const k8s::OperatorSnapshot& snap) {
  return nlohmann::json{{"start", snap.workload.start},
                        {"cluster", sim::ClusterToYaml(snap.cluster)},
                        {"workload", sim::WorkloadToYaml(snap.workload)},
                        {"withoutProgress", snap.without_progress}}
      .dump();
}

CLI::App* AddOperatorCommand(CLI::App& app, OperatorArgs* a) {
  CLI::App* cmd = app.add_subcommand(
      "operator",
      "Run as a Kubernetes operator: manage TrainingJob objects (deploy/crd.yaml) and place "
      "their pods with the same engine, profile and life cycle as the simulator");
  cmd->footer(
      "Example (outside the cluster, one replica):\n"
      "  kubectl apply -f deploy/crd.yaml\n"
      "  dlsched operator --kubeconfig ~/.kube/config --profile kod2 --leader-elect=false\n"
      "In a pod it uses its service account; deploy/ has the RBAC and a Deployment.\n"
      "See docs/operator.md for every flag and what the operator does.");
  cmd->add_option("--kubeconfig", a->kubeconfig,
                  "Kubeconfig file (default: $KUBECONFIG, else the in-cluster service account "
                  "inside a pod, else ~/.kube/config)");
  cmd->add_option("--context", a->context, "Kubeconfig context (default: its current-context)");
  cmd->add_option("--profile,-p", a->profile,
                  "Scheduler profile: a built-in name (see `dlsched profiles`) or a profile YAML")
      ->capture_default_str();
  cmd->add_option("--namespace,-n", a->namespace_name,
                  "Manage TrainingJobs of this namespace only (default: all namespaces)");
  cmd->add_option("--scheduler-name", a->scheduler_name,
                  "spec.schedulerName of the pods it creates")
      ->capture_default_str();
  cmd->add_flag("--bind-with-node-name", a->bind_with_node_name,
                "Create pods with spec.nodeName set instead of binding them through the "
                "pods/binding subresource (as the KOD2 operator did)");
  cmd->add_flag("--leader-elect", a->leader_elect,
                "Take a coordination.k8s.io Lease before acting, so several replicas run "
                "safely (default on, as kube-scheduler; --leader-elect=false to turn off)")
      ->capture_default_str();
  cmd->add_option("--leader-elect-lease-duration", a->lease_duration,
                  "Seconds a standby waits after the last renewal it saw before taking over")
      ->capture_default_str();
  cmd->add_option("--leader-elect-renew-deadline", a->renew_deadline,
                  "Seconds the leader keeps acting without a successful renewal, then exits")
      ->capture_default_str();
  cmd->add_option("--leader-elect-retry-period", a->retry_period,
                  "Seconds between attempts to acquire or renew the lease")
      ->capture_default_str();
  cmd->add_option("--leader-elect-resource-namespace", a->lease_namespace,
                  "Namespace of the Lease (default: the kubeconfig context's, or the pod's)");
  cmd->add_option("--leader-elect-resource-name", a->lease_name, "Name of the Lease")
      ->capture_default_str();
  cmd->add_option("--identity", a->identity,
                  "This replica's name in the Lease (default: host name and a random suffix)");
  cmd->add_option("--metrics-bind-address", a->metrics_address,
                  "Serve /metrics (Prometheus text format) on host:port or :port; 0 turns it off")
      ->capture_default_str();
  cmd->add_option("--health-probe-bind-address", a->probe_address,
                  "Serve /healthz and /readyz on host:port or :port; 0 turns it off")
      ->capture_default_str();
  cmd->add_option("--resync", a->resync,
                  "Seconds between scheduling cycles while jobs wait and nothing changes")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--release-wait", a->release_wait,
                  "Seconds a due cycle waits for the pods the operator deleted to be gone, so "
                  "the resources they free are placed as free (0: place around them at once)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  return cmd;
}

int Operate(const OperatorArgs& a) {
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
  std::unique_ptr<k8s::Operator> op;
  std::atomic<bool> leading{false};
  std::atomic<bool> synced{false};

  // The endpoints read the operator's snapshot, which is thread-safe.
  std::mutex op_mu;
  auto metrics = [&] {
    std::lock_guard lock(op_mu);
    return k8s::PrometheusText(op ? op->Stats() : k8s::OperatorStats{}, leading);
  };
  // /snapshot: the operator's own thread builds it between steps.
  std::mutex snapshot_mu;
  std::vector<std::promise<std::string>> snapshot_requests;
  auto snapshot = [&]() -> std::optional<std::string> {
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
  };
  k8s::HttpEndpoints metrics_server, probe_server;
  if (a.metrics_address != "0") {
    if (auto st = metrics_server.Start(a.metrics_address, {metrics, nullptr, nullptr, snapshot});
        !st) {
      Fail(fmt::format("--metrics-bind-address: {}", st.error().message));
      return 2;
    }
  }
  if (a.probe_address != "0") {
    auto ready = [&] { return !leading || synced; };
    if (auto st = probe_server.Start(a.probe_address, {nullptr, nullptr, ready, nullptr}); !st) {
      Fail(fmt::format("--health-probe-bind-address: {}", st.error().message));
      return 2;
    }
  }

  k8s::RestClient lease_client(*config);
  k8s::LeaderOptions lo;
  lo.namespace_name = a.lease_namespace.empty() ? config->namespace_name : a.lease_namespace;
  lo.lease_name = a.lease_name;
  lo.identity = a.identity.empty() ? DefaultIdentity() : a.identity;
  lo.lease_duration_seconds = a.lease_duration;
  lo.renew_deadline_seconds = a.renew_deadline;
  lo.retry_period_seconds = a.retry_period;
  k8s::LeaderElector elector(lease_client, lo);
  Log("dlsched operator starting", {{"profile", engine->get()->profile().name},
                                    {"identity", lo.identity},
                                    {"leaderElect", a.leader_elect},
                                    {"metricsPort", metrics_server.Port()},
                                    {"probePort", probe_server.Port()}});

  using Clock = std::chrono::steady_clock;
  Clock::time_point next_renew = Clock::now();
  int code = 0;
  while (!g_stop) {
    if (a.leader_elect && Clock::now() >= next_renew) {
      elector.TryAcquireOrRenew();
      next_renew = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(a.retry_period));
      if (leading && !elector.IsLeader()) {
        // As kube-scheduler: a leader that lost its lease exits, and its
        // restart rebuilds everything from the API server.
        Fail("lost the leader lease; exiting");
        code = 1;
        break;
      }
    }
    const bool lead = !a.leader_elect || elector.IsLeader();
    if (lead && !op) {
      leading = true;
      Log("leading", {{"identity", lo.identity}});
      std::lock_guard lock(op_mu);
      op = std::make_unique<k8s::Operator>(*config, **engine, options);
      if (auto st = op->Start(); !st) {
        Fail(st.error().message);
        code = 1;
        break;
      }
      synced = true;
    }
    if (op) {
      op->Step(a.leader_elect ? std::min(0.5, a.retry_period / 2) : 0.5);
      std::lock_guard lock(snapshot_mu);
      if (!snapshot_requests.empty()) {
        const std::string body = SnapshotJson(op->Snapshot());
        for (auto& request : snapshot_requests) request.set_value(body);
        snapshot_requests.clear();
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  {
    std::lock_guard lock(op_mu);
    if (op) op->Stop();
  }
  {
    // Anyone still waiting for a snapshot is told no.
    std::lock_guard lock(snapshot_mu);
    leading = false;
    for (auto& request : snapshot_requests) {
      request.set_exception(std::make_exception_ptr(std::runtime_error("stopping")));
    }
    snapshot_requests.clear();
  }
  if (a.leader_elect) elector.Release();
  metrics_server.Stop();
  probe_server.Stop();
  return code;
}

CLI::App* AddSnapshotCommand(CLI::App& app, SnapshotArgs* a) {
  CLI::App* cmd = app.add_subcommand(
      "snapshot",
      "Write the live queue of a running `dlsched operator` (nodes, running and waiting "
      "TrainingJobs with their progress) as cluster and workload YAML that `simulate` and "
      "`compare` continue from now: what-if on the live queue");
  cmd->footer(
      "Example (the leader's metrics port, e.g. through kubectl port-forward):\n"
      "  kubectl -n dlsched-system port-forward deploy/dlsched-operator 8080 &\n"
      "  dlsched snapshot --out now/\n"
      "  dlsched compare --cluster now/cluster.yaml --workload now/workload.yaml \\\n"
      "      -p gang-binpack -p kod2 -p fsched --out whatif/\n"
      "See docs/operator.md#what-if-on-the-live-queue for what is and is not carried over.");
  cmd->add_option("--from", a->from,
                  "The operator's metrics address (it serves /snapshot there); only the leader "
                  "answers")
      ->capture_default_str();
  cmd->add_option("--out,-o", a->out,
                  "Directory to write cluster.yaml and workload.yaml to (replaced as a whole)")
      ->required();
  cmd->add_option("--timeout", a->timeout, "Seconds to wait for the operator's answer")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 600.0));
  return cmd;
}

int TakeSnapshot(const SnapshotArgs& a) {
  k8s::RestConfig config;
  config.server = a.from;
  if (config.server.find("://") == std::string::npos) config.server = "http://" + config.server;
  while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
  config.timeout_seconds = a.timeout;
  k8s::RestClient client(config);
  auto response = client.Request("GET", "/snapshot");
  if (!response) {
    Fail(fmt::format("--from {}: {}", a.from, response.error().message));
    return 1;
  }
  if (response->status != 200) {
    Fail(fmt::format("--from {}: /snapshot answered HTTP {}: {}", a.from, response->status,
                     core::EscapeText(response->body, 200)));
    return 1;
  }
  const nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
  if (!body.is_object() || !body.value("cluster", nlohmann::json()).is_string() ||
      !body.value("workload", nlohmann::json()).is_string()) {
    Fail(
        fmt::format("--from {}: /snapshot: expected a JSON object with cluster and workload "
                    "YAML; is this a dlsched operator?",
                    a.from));
    return 1;
  }
  const std::string cluster_yaml = body["cluster"].get<std::string>();
  const std::string workload_yaml = body["workload"].get<std::string>();
  const std::string cluster_file = a.out + "/cluster.yaml";
  const std::string workload_file = a.out + "/workload.yaml";
  // What is written must read back: the replay starts from these files.
  auto cluster = config::ParseCluster(cluster_yaml, cluster_file);
  if (!cluster) {
    Fail(cluster.error().message);
    return 1;
  }
  if (workload_yaml == "jobs:\n" || workload_yaml.ends_with("\njobs:\n")) {
    Fail(fmt::format("--from {}: the operator has no unfinished TrainingJob: nothing to replay",
                     a.from));
    return 1;
  }
  auto workload = config::ParseWorkload(workload_yaml, workload_file);
  if (!workload) {
    Fail(workload.error().message);
    return 1;
  }
  auto out = report::OutputDir::Open(a.out);
  if (!out) {
    Fail(out.error().message);
    return 2;
  }
  for (auto [name, text] :
       {std::pair{"cluster.yaml", &cluster_yaml}, {"workload.yaml", &workload_yaml}}) {
    if (auto st = out->Add(name, *text); !st) {
      Fail(st.error().message);
      return 1;
    }
  }
  if (auto st = out->Commit(); !st) {
    Fail(st.error().message);
    return 1;
  }
  int running = 0;
  for (const core::JobSpec& job : workload->jobs) running += job.initial ? 1 : 0;
  std::printf("%s: %zu nodes\n%s: %zu jobs (%d placed, %zu waiting), continuing at t=%s s\n",
              cluster_file.c_str(), cluster->nodes.size(), workload_file.c_str(),
              workload->jobs.size(), running, workload->jobs.size() - running,
              fmt::format("{:g}", workload->start).c_str());
  const auto& without = body.value("withoutProgress", nlohmann::json::array());
  if (without.is_array() && !without.empty()) {
    std::fprintf(stderr,
                 "dlsched: note: %zu job(s) give no totalSteps or throughput table (e.g. %s): "
                 "written to train 1 step/s for 1e9 steps, so they never finish in a replay\n",
                 without.size(), core::EscapeText(without[0].dump(), 200).c_str());
  }
  return 0;
}

}  // namespace dlsched::cli
