#pragma once

// `dlsched operator`: the Kubernetes backend as a command (cli/ internal).
// The flags are registered here (operator_command.cc); the command runs in
// operator_run.cc (dlsched-k8s) or is handed to it (operator_exec.cc,
// dlsched).

#include <string>

#include <CLI/CLI.hpp>

namespace dlsched::cli {

struct OperatorArgs {
  std::string kubeconfig;
  std::string context;
  std::string profile = "gang-binpack";
  std::string namespace_name;
  std::string scheduler_name = "dlsched";
  bool bind_with_node_name = false;
  bool leader_elect = true;
  double lease_duration = 15;
  double renew_deadline = 10;
  double retry_period = 2;
  std::string lease_namespace;
  std::string lease_name = "dlsched";
  std::string identity;
  std::string metrics_address = ":8080";
  std::string probe_address = ":8081";
  double resync = 5;
  double release_wait = 5;
};

// Registers the subcommand; returns it (parsed() tells whether it ran).
CLI::App* AddOperatorCommand(CLI::App& app, OperatorArgs* args);
// Runs until SIGTERM or SIGINT (exit 0), or until leadership is lost (1).
// `argc`/`argv`: the whole command line. In `dlsched` this replaces the
// process with dlsched-k8s (the same command line), the build of the CLI
// that holds the Kubernetes client and servers, so that no other command
// loads their libraries (16 ms of each start); dlsched-k8s runs it.
int Operate(const OperatorArgs& args, int argc, char** argv);

}  // namespace dlsched::cli
