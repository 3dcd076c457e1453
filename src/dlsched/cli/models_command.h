#pragma once

// `dlsched models` (cli/ internal): the model zoo, each model's throughput
// by workers.

#include <CLI/CLI.hpp>

namespace dlsched::cli {

// Registers `dlsched models`; returns it (parsed() tells whether it ran).
CLI::App* AddModelsCommand(CLI::App& app);

// Exit 0.
int Models();

}  // namespace dlsched::cli
