#pragma once

// `dlsched rerun DIR` (cli/ internal): runs the command a result directory
// recorded (report/provenance.h) again, into another directory, after
// checking that every input file is as it was, and checks that the files
// it writes are byte for byte DIR's.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dlsched::cli {

struct RerunArgs {
  std::string dir;
  std::string out;  // default: DIR-rerun beside DIR
  bool quiet = false;
  int threads = 0;  // compare and sweep: runs at once (0: one per core)
};

// Registers `dlsched rerun`; returns it (parsed() tells whether it ran).
CLI::App* AddRerunCommand(CLI::App& app, RerunArgs* args);

// Runs a dlsched command line (the words after "dlsched"); its exit code.
using RunCommand = std::function<int(const std::vector<std::string>& args)>;

// Exit codes: 0 the results were reproduced byte for byte; 1 they were not
// (the first file that differs is named) or could not be written; 2 DIR
// records no provenance, holds partial results, an input changed or is
// missing (one line naming it), or the recorded command is refused; 130
// interrupted.
int Rerun(const RerunArgs& args, const RunCommand& run);

// The files `Rerun` compares: every regular file under `dir` by its path
// relative to `dir`, except report.html (it names its directories, and a
// rerun does not write it) and names starting with '.' (temporaries).
std::vector<std::string> ComparedFiles(const std::string& dir);

}  // namespace dlsched::cli
