#pragma once

// `dlsched convert` (cli/ internal): a trace (or workload) written as the
// native trace format or as workload YAML.

#include <string>

#include <CLI/CLI.hpp>

#include "dlsched/cli/options.h"

namespace dlsched::cli {

struct ConvertArgs {
  JobSource source;
  std::string out;  // "" or "-": stdout
  std::string to;   // native or yaml; "": yaml for a .yaml/.yml --out, else native
};

// Registers `dlsched convert`; returns it (parsed() tells whether it ran).
CLI::App* AddConvertCommand(CLI::App& app, ConvertArgs* args);

// Exit 0; 1 the file cannot be written; 2 bad input.
int Convert(const ConvertArgs& args);

}  // namespace dlsched::cli
