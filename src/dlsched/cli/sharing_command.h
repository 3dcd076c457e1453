#pragma once

// `dlsched sharing` (cli/ internal): the FGD paper's experiment on shared
// GPUs (docs/sharing.md).

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dlsched::cli {

struct SharingArgs {
  std::string nodes;
  std::vector<std::string> pods;
  std::vector<std::string> policies;
  std::string seeds = "42";
  double tune = 1.3;
  int at = 100;
  bool exact = false;
  std::string csv;
  std::string html;
};

// Registers `dlsched sharing`; returns it (parsed() tells whether it ran).
CLI::App* AddSharingCommand(CLI::App& app, SharingArgs* args);

// Exit 0, or kBadInput on a bad file or flag (one line, naming it).
int Sharing(const SharingArgs& args);

}  // namespace dlsched::cli
