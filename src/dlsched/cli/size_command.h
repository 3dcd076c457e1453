#pragma once

// `dlsched size` (cli/ internal): the fewest nodes of one shape that the
// jobs load to --load, as cluster YAML or a Tiresias cluster CSV
// (docs/traces.md, "Sizing a cluster for a trace"); the sizing itself is
// size.h's.

#include <string>

#include <CLI/CLI.hpp>

#include "dlsched/cli/options.h"
#include "dlsched/cli/size.h"

namespace dlsched::cli {

struct SizeArgs {
  JobSource source;
  NodeShape shape;  // 0: DefaultShape's
  std::string load = "0.7:0.95";
  std::string out;  // "" or "-": stdout
  std::string to;   // yaml or tiresias; "": tiresias for a .csv --out, else yaml
};

// Registers `dlsched size`; returns it (parsed() tells whether it ran).
CLI::App* AddSizeCommand(CLI::App& app, SizeArgs* args);

// Exit 0 written; 1 the file cannot be written; 2 bad input.
int Size(const SizeArgs& args);

}  // namespace dlsched::cli
