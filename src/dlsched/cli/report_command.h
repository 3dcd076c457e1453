#pragma once

// `dlsched report` and the `--report FILE` option of simulate and compare
// (cli/ internal): the HTML report of report/html.h over result directories.

#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dlsched/core/error.h"

namespace dlsched::cli {

struct ReportArgs {
  std::vector<std::string> dirs;
  std::string out;  // default: DIR/report.html for one DIR, else ./report.html
};

// Registers `dlsched report`; returns it (parsed() tells whether it ran).
CLI::App* AddReportCommand(CLI::App& app, ReportArgs* args);
// Exit 0; 2 when a directory or a file in it is bad (nothing written); 1
// when the page cannot be written.
int RunReport(const ReportArgs& args);

// Adds `--report FILE` to simulate or compare.
CLI::Option* AddReportOption(CLI::App* cmd, std::string* file);

// Reads `dirs` and writes their report to `file` at once (a temporary file
// renamed into place). Errors are one line: "<file>:<line>: <what>" for a
// result file that does not parse, "<file>: cannot write: <reason>".
core::Status WriteReport(std::span<const std::string> dirs, const std::string& file);

}  // namespace dlsched::cli
