#include "dlsched/cli/report_command.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "dlsched/core/text.h"
#include "dlsched/report/html.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/report/run_data.h"

namespace dlsched::cli {
namespace {

constexpr int kOk = 0;
constexpr int kWriteFailed = 1;
constexpr int kBadInput = 2;

void PrintError(std::string_view message) {
  std::fflush(stdout);
  std::fprintf(stderr, "dlsched: %s\n", core::EscapeText(message, 4096).c_str());
}

core::Status Write(const std::string& file, const std::string& html) {
  const report::FileContent content{file, html};
  return report::ReplaceFiles({&content, 1});
}

// Refuses a directory as the report's file before anything runs.
std::string NotADirectory(std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return fmt::format("{} is a directory; give a file name such as {}/report.html", path, path);
  }
  return "";
}

}  // namespace

CLI::App* AddReportCommand(CLI::App& app, ReportArgs* args) {
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page (inline SVG and CSS, nothing fetched, no script) "
      "charting the results in each directory: GPU and CPU utilisation over time, each job's "
      "time queueing / launching / running, CDFs of JCT and queueing delay, allocations per "
      "node, workers of elastic jobs, the comparison table and, with a sweep.csv, JCT against "
      "load; and how the results were made (command, inputs with their SHA-256, profiles). A "
      "DIR is a `simulate --out` or `compare --out` directory (or one holding "
      "sweep.csv); a file it lacks (an older run has no events.csv) leaves its chart out with "
      "a note");
  cmd->footer(
      "Examples:\n"
      "  dlsched compare -c examples/cluster-kod2-elastic.yaml \\\n"
      "      -w examples/workload-kod2-elastic.yaml -p k8s-default,gang-binpack,kod2 -o out/cmp\n"
      "  dlsched report out/cmp                   # writes out/cmp/report.html\n"
      "  dlsched report out/gang-binpack out/kod2 -o both.html\n"
      "  dlsched simulate -c C -w W -p kod2 --report kod2.html   # the same, right after a run\n"
      "Exit codes: 0 written; 2 a directory or a file in it is bad (one line naming the file "
      "and line; nothing is written); 1 the page cannot be written.");
  cmd->add_option("dirs", args->dirs, "Result directories, one section of the page each")
      ->required();
  cmd->add_option("--out,-o", args->out,
                  "The HTML file to write (default: DIR/report.html for one DIR, else "
                  "report.html); replaced only once completely written")
      ->check(CLI::Validator(NotADirectory, "FILE"));
  return cmd;
}

CLI::Option* AddReportOption(CLI::App* cmd, std::string* file) {
  return cmd
      ->add_option("--report", *file,
                   "Also write the HTML report of the results to this file (as `dlsched "
                   "report`), e.g. --report report.html")
      ->check(CLI::Validator(NotADirectory, "FILE"));
}

core::Status WriteReport(std::span<const std::string> dirs, const std::string& file) {
  auto loaded = report::LoadReportDirs(dirs);
  if (!loaded) return std::unexpected(loaded.error());
  return Write(file, report::RenderHtml(*loaded));
}

int RunReport(const ReportArgs& args) {
  auto loaded = report::LoadReportDirs(args.dirs);
  if (!loaded) {
    PrintError(loaded.error().message);
    return kBadInput;
  }
  const std::string file = !args.out.empty() ? args.out
                           : args.dirs.size() == 1
                               ? (std::filesystem::path(args.dirs[0]) / "report.html").string()
                               : std::string("report.html");
  if (auto st = Write(file, report::RenderHtml(*loaded)); !st) {
    PrintError(st.error().message);
    return kWriteFailed;
  }
  std::printf("report: %s\n", core::EscapeText(file, 4096).c_str());
  return kOk;
}

}  // namespace dlsched::cli
