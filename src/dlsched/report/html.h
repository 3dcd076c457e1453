#pragma once

// The HTML report of `dlsched report` (and `simulate` / `compare` / `sweep
// --report`): one self-contained page (inline CSS and SVG, no script, no
// fonts or anything else fetched) with the charts of docs/formats.md
// "report.html". Every chart is an element with data-chart="<id>"; each of
// its series an element with data-series="<name>" holding one data-point
// element per point or bar, so tests (and scripts) can read the page's
// figures from its DOM. A series that is not a complete result (a run
// interrupted, or with jobs not completed) carries data-incomplete. Each
// figure links its data as CSV (a data: URI, downloaded by the browser);
// a chart with a linear and a log variant has the second as
// data-chart-alt, switched by a checkbox (CSS only).

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/core/error.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/run_data.h"

namespace dlsched::report {

// Caps that keep the page of a 100,000-job run a few megabytes and its
// charts readable; the page says what each one left out.
inline constexpr size_t kMaxPhaseJobs = 200;          // job-phases: the first jobs by submit time
inline constexpr size_t kMaxGanttNodes = 40;          // node-gantt: the first nodes by name
inline constexpr size_t kMaxGanttBars = 3000;         // node-gantt: the earliest allocations
inline constexpr size_t kMaxElasticJobs = 12;         // elastic-workers: the first elastic jobs
inline constexpr size_t kMaxUsageQueues = 12;         // queue-usage: the first queues
inline constexpr size_t kMaxUtilizationPoints = 500;  // more samples: means over time buckets
inline constexpr size_t kMaxCdfPoints = 400;  // more jobs: this many evenly spaced quantiles

// `text` for HTML text or a quoted attribute value: one line of valid UTF-8
// (core::EscapeText) with & < > " ' as character references.
std::string HtmlText(std::string_view text);

// The x axis of the JCT, queueing and slowdown CDFs.
enum class LogAxis {
  kAuto,  // log when the values drawn span more than two decades
  kOn,
  kOff,
};

struct RenderOptions {
  // Every run measured over the jobs submitted in this window (analysis.h
  // Measure); nullopt: each run's own window.
  std::optional<metrics::Window> window{};
  LogAxis log_axis = LogAxis::kAuto;
  // The run the "relative to a baseline" bars divide by ("": the first
  // complete run of each comparison, else its first).
  std::string baseline{};
};

// A baseline that names no run (nor sweep profile) of the page is an
// error: "--baseline: no profile 'x' (profiles: a, b)".
core::Status CheckRenderOptions(std::span<const ReportDir> dirs, const RenderOptions& options);

// The whole page for the directories given (LoadReport's sections), one
// section each.
std::string RenderHtml(std::span<const ReportDir> dirs, const RenderOptions& options = {});

// One policy's curve of `dlsched sharing` (docs/sharing.md): at each
// share of the workload arrived (percent of the cluster's GPUs), the
// percent of the GPUs allocated and fragmented, means over seeds.
struct SharingCurve {
  std::string trace{};
  std::string policy{};
  std::vector<double> arrived{};
  std::vector<double> allocated{};
  std::vector<double> fragmented{};
};

// A page of its own for `dlsched sharing --html`: per trace, the GPUs
// unallocated and fragmented as the workload arrives, a line per policy
// (each chart data-chart="unallocated-<k>" / "fragmented-<k>", a series
// per policy with a data-point per point).
std::string RenderSharingHtml(std::string_view title, std::span<const SharingCurve> curves);

}  // namespace dlsched::report
