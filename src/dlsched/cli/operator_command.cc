#include "dlsched/cli/operator_command.h"

#include "dlsched/cli/options.h"

namespace dlsched::cli {
namespace {

// The leader election's durations, in seconds: NaN, negative and zero
// durations were taken (NaN passes every comparison, so the check that the
// lease outlasts the renew deadline let it through).
constexpr double kMinLeaseSeconds = 0.01;
constexpr double kMaxLeaseSeconds = 86400;

}  // namespace

CLI::App* AddOperatorCommand(CLI::App& app, OperatorArgs* a) {
  CLI::App* cmd = app.add_subcommand(
      "operator",
      "Run as a Kubernetes operator: manage TrainingJob objects (deploy/crd.yaml) and place "
      "their pods with the same engine, profile and life cycle as the simulator");
  cmd->footer(
      "Example (outside the cluster, one replica):\n"
      "  kubectl apply -f deploy/crd.yaml\n"
      "  dlsched operator --kubeconfig ~/.kube/config --profile kod2 --leader-elect=false\n"
      "Kubeconfigs of EKS, GKE and AKS work as kubectl's: their exec credential plugins\n"
      "(aws, gke-gcloud-auth-plugin, kubelogin) run when a token is due.\n"
      "In a pod it uses its service account; `kubectl apply -k deploy/` installs the CRD,\n"
      "the RBAC and a Deployment (overlays in deploy/overlays/).\n"
      "See docs/operator.md for every flag and what the operator does.");
  cmd->add_option("--kubeconfig", a->kubeconfig,
                  "Kubeconfig file: tokens, token files, client certificates or exec credential "
                  "plugins (default: $KUBECONFIG, else the in-cluster service account inside a "
                  "pod, else ~/.kube/config)");
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
      ->capture_default_str()
      ->check(NumberIn(kMinLeaseSeconds, kMaxLeaseSeconds));
  cmd->add_option("--leader-elect-renew-deadline", a->renew_deadline,
                  "Seconds the leader keeps acting without a successful renewal, then exits")
      ->capture_default_str()
      ->check(NumberIn(kMinLeaseSeconds, kMaxLeaseSeconds));
  cmd->add_option("--leader-elect-retry-period", a->retry_period,
                  "Seconds between attempts to acquire or renew the lease")
      ->capture_default_str()
      ->check(NumberIn(kMinLeaseSeconds, kMaxLeaseSeconds));
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
                  "Seconds between resyncs: every TrainingJob reconciled whatever its phase, and a "
                  "scheduling cycle while jobs wait (Waiting, Starving, Standby) and nothing "
                  "changes")
      ->capture_default_str()
      ->check(NumberIn(0.1, 3600));
  cmd->add_option("--release-wait", a->release_wait,
                  "Seconds a due cycle waits for the pods the operator deleted to be gone, so "
                  "the resources they free are placed as free (0: place around them at once)")
      ->capture_default_str()
      ->check(NumberIn(0, 3600));
  return cmd;
}

}  // namespace dlsched::cli
