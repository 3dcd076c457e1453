#pragma once

// `dlsched simulate` (cli/ internal): one workload on a simulated cluster
// under one profile; a summary, and the run's files in --out.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dlsched/cli/options.h"

namespace dlsched::cli {

struct SimulateArgs {
  RunArgs run;
  std::string out;  // default: out/<profile name>
  bool quiet = false;
  bool job_table = false;
};

// Registers `dlsched simulate`; returns it (parsed() tells whether it ran).
CLI::App* AddSimulateCommand(CLI::App& app, SimulateArgs* args);

// `simulate --jobs` printed the per-job table until 0.1.0; --jobs is a job
// count on every command now. Whether `argv` (the whole command line) is
// simulate with --jobs: then it has said so on stderr, and the command
// exits 2 without parsing.
bool RefuseSimulateJobs(int argc, char** argv);

// Exit codes: 0 every job finished; 1 jobs stuck, failed or unfinished, or
// the results could not be written; 2 bad input; 130 interrupted (what was
// computed is written). `command`: as provenance records it.
int Simulate(const SimulateArgs& args, const std::vector<std::string>& command);

}  // namespace dlsched::cli
