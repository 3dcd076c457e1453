#pragma once

// `dlsched validate` (cli/ internal): cluster, workload and profile files
// checked, a line each.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dlsched::cli {

struct ValidateArgs {
  std::vector<std::string> files;
};

// Registers `dlsched validate`; returns it (parsed() tells whether it ran).
CLI::App* AddValidateCommand(CLI::App& app, ValidateArgs* args);

// "FILE: ok (WHAT)" on stdout for a good file, one error line on stderr for
// a bad one. Exit 0 when every file is good, else 2.
int Validate(const ValidateArgs& args);

}  // namespace dlsched::cli
