#pragma once

// `dlsched compare` (cli/ internal): one workload under several profiles,
// their headline numbers side by side; each profile's files in
// OUT/<profile>/, the table in OUT/compare.csv and OUT/compare.json.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dlsched/cli/options.h"

namespace dlsched::cli {

struct CompareArgs {
  RunArgs run;  // its profile unused: --profiles
  std::vector<std::string> profiles;
  std::string out = "out/compare";
  int threads = 0;  // 0: one per core
  bool quiet = false;
};

// Registers `dlsched compare`; returns it (parsed() tells whether it ran).
CLI::App* AddCompareCommand(CLI::App& app, CompareArgs* args);

// Jobs left stuck are a result here, not an error. Exit 0; 1 the results
// could not be written; 2 bad input; 130 interrupted (what was computed is
// written). `command`: as provenance records it.
int Compare(const CompareArgs& args, const std::vector<std::string>& command);

}  // namespace dlsched::cli
