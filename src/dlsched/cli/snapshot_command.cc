#include "dlsched/cli/snapshot_command.h"

#include "dlsched/cli/options.h"

namespace dlsched::cli {

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
      ->check(NumberIn(1, 600));
  return cmd;
}

}  // namespace dlsched::cli
