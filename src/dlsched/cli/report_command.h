#pragma once

// `dlsched report` and the `--report FILE` option of simulate and compare
// (cli/ internal): the HTML report of report/html.h over result directories.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "dlsched/core/error.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/html.h"

namespace dlsched::cli {

// How the page draws (the options every command with a report takes).
struct PageArgs {
  std::string log_axis = "auto";  // --log-axis auto|on|off
  std::string baseline;           // --baseline PROFILE
};

struct ReportArgs {
  std::vector<std::string> dirs;
  std::string out;     // default: DIR/report.html for one DIR, else ./report.html
  std::string window;  // --window FROM:TO ("" = each run's own)
  PageArgs page;
};

// Registers `dlsched report`; returns it (parsed() tells whether it ran).
CLI::App* AddReportCommand(CLI::App& app, ReportArgs* args);
// Exit 0; 2 when a directory or a file in it is bad (nothing written); 1
// when the page cannot be written.
int RunReport(const ReportArgs& args);

// Adds `--report FILE` to simulate, compare or sweep, and, with `page`, the
// page's options (--log-axis, --baseline), which need it.
CLI::Option* AddReportOption(CLI::App* cmd, std::string* file, PageArgs* page);

// Adds --log-axis and --baseline.
void AddPageOptions(CLI::App* cmd, PageArgs* page);

// Adds `--window FROM:TO` to simulate, compare, sweep or report.
CLI::Option* AddWindowOption(CLI::App* cmd, std::string* window, std::string_view what);

// `--window`'s text: "FROM:TO" in seconds, 0 <= FROM < TO <= 1e9; "FROM:"
// runs to the end of the run, ":TO" from 0; "" is no window. Errors read
// "--window: ...".
core::Result<std::optional<metrics::Window>> ParseWindow(std::string_view text);

// The page's options from their flags. Errors read "--log-axis: ..."
core::Result<report::RenderOptions> ParsePageArgs(const PageArgs& page,
                                                  std::optional<metrics::Window> window);

// --baseline, when given, must be one of `profiles`: "--baseline: no
// profile 'x' (profiles: a, b)".
core::Status CheckBaseline(const std::string& baseline, std::span<const std::string> profiles);

// Reads `dirs` and writes their report to `file` at once (a temporary file
// renamed into place). Errors are one line: "<file>:<line>: <what>" for a
// result file that does not parse, "<file>: cannot write: <reason>".
core::Status WriteReport(std::span<const std::string> dirs, const std::string& file,
                         const PageArgs& page);

}  // namespace dlsched::cli
