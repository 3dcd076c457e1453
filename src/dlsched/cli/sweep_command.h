#pragma once

// `dlsched sweep` (cli/ internal; docs/sweeps.md): a grid of profiles x
// load factors (x seeds of a generated workload), one cell per core; or one
// cell of it (--cell), the grid as a Kubernetes Indexed Job
// (--emit-k8s-job), or the cells such a Job left joined (--merge). The
// grid, its cells and the Job's manifest are sweep.h's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dlsched/cli/options.h"
#include "dlsched/cli/sweep.h"
#include "dlsched/sim/generate.h"

namespace dlsched::cli {

struct SweepArgs {
  RunArgs run;  // cluster, jobs, --set, --report
  std::vector<std::string> profiles;
  std::vector<double> loads = {1};
  std::vector<uint64_t> seeds;
  std::string quota;  // --quota QUEUE[:RESOURCE]=V1,V2,...
  sim::GenerateOptions gen;
  bool generated = false;  // --jobs N: one generated workload per seed
  std::string out = "out/sweep";
  int threads = 0;
  bool quiet = false;
  bool keep_runs = false;
  std::optional<int64_t> cell;
  std::string merge;
  bool emit_k8s_job = false;
  K8sJobOptions k8s;
  std::vector<std::string> command;  // as provenance records it
};

// Registers `dlsched sweep`; returns it (parsed() tells whether it ran).
CLI::App* AddSweepCommand(CLI::App& app, SweepArgs* args);

// Runs the sweep `cmd` (AddSweepCommand's) parsed into `args`; `command`
// as provenance records it. Stuck jobs are a result, not an error. Exit 0;
// 1 the results could not be written; 2 bad input; 130 interrupted (what
// was computed is written).
int Sweep(const CLI::App& cmd, SweepArgs args, const std::vector<std::string>& command);

}  // namespace dlsched::cli
