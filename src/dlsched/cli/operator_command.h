#pragma once

// `dlsched operator`: the Kubernetes backend as a command (cli/ internal).

#include <memory>
#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "dlsched/core/error.h"
#include "dlsched/engine/engine.h"
#include "dlsched/k8s/operator.h"

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

struct SnapshotArgs {
  std::string from = "http://127.0.0.1:8080";
  std::string out;
  double timeout = 60;
};

// A built-in profile name or a profile YAML file, built into an engine.
core::Result<std::unique_ptr<engine::Engine>> LoadEngine(
    const std::string& profile_arg, std::span<const std::string> overrides = {});

// Registers the subcommand; returns it (parsed() tells whether it ran).
CLI::App* AddOperatorCommand(CLI::App& app, OperatorArgs* args);
// Runs until SIGTERM or SIGINT (exit 0), or until leadership is lost (1).
int Operate(const OperatorArgs& args);

// `dlsched snapshot`: fetches /snapshot from a running operator and writes
// <out>/cluster.yaml and <out>/workload.yaml. Exit 0, 1 (no answer, nothing
// to replay), 2 (bad --out).
CLI::App* AddSnapshotCommand(CLI::App& app, SnapshotArgs* args);
int TakeSnapshot(const SnapshotArgs& args);

// The body of GET /snapshot: {"start", "cluster", "workload", "withoutProgress"}.
std::string SnapshotJson(const k8s::OperatorSnapshot& snapshot);

}  // namespace dlsched::cli
