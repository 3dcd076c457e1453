#include "dlsched/cli/report_command.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/core/quantity.h"
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
  std::fprintf(stderr, "dlsched: %s\n", core::EscapeMessage(message).c_str());
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

// Loads, overlays and checks what the page needs.
core::Result<std::string> Render(std::span<const std::string> dirs, const PageArgs& page,
                                 std::optional<metrics::Window> window) {
  DLSCHED_TRY_LET(options, ParsePageArgs(page, window));
  DLSCHED_TRY_LET(loaded, report::LoadReport(dirs));
  DLSCHED_TRY(report::CheckRenderOptions(*loaded, *options));
  return report::RenderHtml(*loaded, *options);
}

constexpr std::string_view kWindowExpected =
    "expected FROM:TO in seconds with 0 <= FROM < TO <= 1e9 (e.g. 3600:86400; 3600: runs to "
    "the end of the run)";

std::optional<double> WindowEnd(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v < 0 || v > 1e9) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

core::Result<std::optional<metrics::Window>> ParseWindow(std::string_view text) {
  if (text.empty()) return std::nullopt;
  auto bad = [&] {
    return core::Errorf("--window: {}, got {}", kWindowExpected, core::internal::QuoteInput(text));
  };
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad();
  const std::string_view from = text.substr(0, colon);
  const std::string_view to = text.substr(colon + 1);
  if (from.empty() && to.empty()) return bad();
  metrics::Window w;
  if (!from.empty()) {
    auto v = WindowEnd(from);
    if (!v) return bad();
    w.from = *v;
  }
  if (!to.empty()) {
    auto v = WindowEnd(to);
    if (!v || !(*v > w.from)) return bad();
    w.to = *v;
  }
  return w;
}

core::Result<report::RenderOptions> ParsePageArgs(const PageArgs& page,
                                                  std::optional<metrics::Window> window) {
  report::RenderOptions o;
  o.window = window;
  o.baseline = page.baseline;
  if (page.log_axis == "auto") {
    o.log_axis = report::LogAxis::kAuto;
  } else if (page.log_axis == "on") {
    o.log_axis = report::LogAxis::kOn;
  } else if (page.log_axis == "off") {
    o.log_axis = report::LogAxis::kOff;
  } else {
    return core::Errorf("--log-axis: expected auto, on or off, got {}",
                        core::internal::QuoteInput(page.log_axis));
  }
  return o;
}

core::Status CheckBaseline(const std::string& baseline, std::span<const std::string> profiles) {
  if (baseline.empty()) return {};
  for (const auto& p : profiles) {
    if (p == baseline) return {};
  }
  return core::Errorf("--baseline: no profile {} (profiles: {})",
                      core::internal::QuoteInput(baseline), fmt::join(profiles, ", "));
}

CLI::App* AddReportCommand(CLI::App& app, ReportArgs* args) {
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page (inline SVG and CSS, nothing fetched, no script) "
      "charting the results in each directory: the comparison table and each figure relative "
      "to a baseline; GPU and CPU utilisation, jobs waiting, pending GPU demand and preemptions "
      "over time (one time axis for every run); CDFs of JCT, queueing delay and slowdown over "
      "all jobs (those not completed keep a curve short of 100%), with a log-axis switch; JCT "
      "by job size; each job's time queueing / launching / running, allocations per node, "
      "workers of elastic jobs; with a sweep.csv, every figure against load (mean over seeds, "
      "error bars). Runs that were interrupted or left jobs unfinished are marked wherever they "
      "are drawn, their times read >= (lower bounds). Every chart links its data as CSV. "
      "Run directories given together (simulate or compare --out) are overlaid as one "
      "comparison. Each section says how its results were made (command, inputs with their "
      "SHA-256, profiles). A file a DIR lacks (an older run has no events.csv) leaves its chart "
      "out "
      "with a note");
  cmd->footer(
      "Examples:\n"
      "  dlsched compare -c examples/cluster-kod2-elastic.yaml \\\n"
      "      -w examples/workload-kod2-elastic.yaml -p k8s-default,gang-binpack,kod2 -o out/cmp\n"
      "  dlsched report out/cmp                   # writes out/cmp/report.html\n"
      "  dlsched report out/gang-binpack out/kod2 -o both.html   # two runs, one comparison\n"
      "  dlsched report out/cmp --window 3600: --baseline gang-binpack --log-axis on\n"
      "  dlsched simulate -c C -w W -p kod2 --report kod2.html   # the same, right after a run\n"
      "Exit codes: 0 written; 2 a directory or a file in it is bad, or an option (one line "
      "naming the file and line, or the option; nothing is written); 1 the page cannot be "
      "written.");
  cmd->add_option("dirs", args->dirs,
                  "Result directories: run directories (simulate or compare --out) make one "
                  "comparison; a sweep directory a section of its own")
      ->required();
  cmd->add_option("--out,-o", args->out,
                  "The HTML file to write (default: DIR/report.html for one DIR, else "
                  "report.html); replaced only once completely written")
      ->check(CLI::Validator(NotADirectory, "FILE"));
  AddWindowOption(cmd, &args->window,
                  "Measure over the jobs submitted in [FROM, TO) and utilisation over [FROM, "
                  "TO] (seconds; FROM: to the end), e.g. --window 3600: to drop a warm-up: "
                  "the table, CDFs, bars and job sizes are recomputed from jobs.csv and "
                  "utilization.csv, and the time charts shade what is outside. Default: each "
                  "run's own window (simulate/compare --window), else the whole run");
  AddPageOptions(cmd, &args->page);
  return cmd;
}

void AddPageOptions(CLI::App* cmd, PageArgs* page) {
  cmd->add_option("--log-axis", page->log_axis,
                  "The x axis of the JCT, queueing and slowdown CDFs: auto (log when the values "
                  "span more than two decades), on (log) or off (linear); the page has a switch "
                  "on each chart too")
      ->capture_default_str();
  cmd->add_option("--baseline", page->baseline,
                  "The profile the 'relative to a baseline' bars divide by (default: the first run "
                  "that completed every job, else the first)");
}

CLI::Option* AddReportOption(CLI::App* cmd, std::string* file, PageArgs* page) {
  CLI::Option* report =
      cmd->add_option("--report", *file,
                      "Also write the HTML report of the results to this file (as `dlsched "
                      "report`), e.g. --report report.html")
          ->check(CLI::Validator(NotADirectory, "FILE"));
  // A sweep's page has neither CDFs nor a comparison of runs to draw them in.
  if (page == nullptr) return report;
  AddPageOptions(cmd, page);
  cmd->get_option("--log-axis")->needs(report);
  cmd->get_option("--baseline")->needs(report);
  return report;
}

CLI::Option* AddWindowOption(CLI::App* cmd, std::string* window, std::string_view what) {
  return cmd->add_option("--window", *window, std::string(what));
}

core::Status WriteReport(std::span<const std::string> dirs, const std::string& file,
                         const PageArgs& page) {
  DLSCHED_TRY_LET(html, Render(dirs, page, std::nullopt));
  return Write(file, *html);
}

int RunReport(const ReportArgs& args) {
  auto window = ParseWindow(args.window);
  if (!window) {
    PrintError(window.error().message);
    return kBadInput;
  }
  auto html = Render(args.dirs, args.page, *window);
  if (!html) {
    PrintError(html.error().message);
    return kBadInput;
  }
  const std::string file = !args.out.empty() ? args.out
                           : args.dirs.size() == 1
                               ? (std::filesystem::path(args.dirs[0]) / "report.html").string()
                               : std::string("report.html");
  if (auto st = Write(file, *html); !st) {
    PrintError(st.error().message);
    return kWriteFailed;
  }
  std::printf("report: %s\n", core::EscapeText(file, 4096).c_str());
  return kOk;
}

}  // namespace dlsched::cli
