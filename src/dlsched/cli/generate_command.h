#pragma once

// `dlsched generate` (cli/ internal): a synthetic workload, and optionally
// a cluster for it, for scale tests and benchmarks. The same options give
// the same bytes.

#include <string>

#include <CLI/CLI.hpp>

#include "dlsched/sim/generate.h"

namespace dlsched::cli {

struct GenerateArgs {
  sim::GenerateOptions gen;
  sim::ClusterOptions cluster;
  std::string out;          // "": YAML on stdout; a .csv: the native trace format
  std::string cluster_out;  // "": no cluster
};

// Registers `dlsched generate`; returns it (parsed() tells whether it ran).
CLI::App* AddGenerateCommand(CLI::App& app, GenerateArgs* args);

// Exit 0; 1 a file cannot be written; 2 bad input.
int Generate(const GenerateArgs& args);

}  // namespace dlsched::cli
