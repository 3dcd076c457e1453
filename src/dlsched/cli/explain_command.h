#pragma once

// `dlsched explain` (cli/ internal): one job's timeline, and every cycle
// that considered it: the nodes scored, the node chosen for each task, or
// why the job waited.

#include <string>

#include <CLI/CLI.hpp>

#include "dlsched/cli/options.h"

namespace dlsched::cli {

struct ExplainArgs {
  RunArgs run;
  std::string job;
  std::string format = "text";  // or json
};

// Registers `dlsched explain`; returns it (parsed() tells whether it ran).
CLI::App* AddExplainCommand(CLI::App& app, ExplainArgs* args);

// Exit 0, or 2 for bad input (a job the workload does not have).
int Explain(const ExplainArgs& args);

}  // namespace dlsched::cli
