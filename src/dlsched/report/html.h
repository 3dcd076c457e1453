#pragma once

// The HTML report of `dlsched report` (and `simulate` / `compare --report`):
// one self-contained page (inline CSS and SVG, no script, no fonts or
// anything else fetched) with the charts of docs/formats.md "report.html".
// Every chart is an element with data-chart="<id>"; each of its series an
// element with data-series="<name>" holding one data-point element per point
// or bar, so tests (and scripts) can read the page's figures from its DOM.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "dlsched/report/run_data.h"

namespace dlsched::report {

// Caps that keep the page of a 100,000-job run a few megabytes and its
// charts readable; the page says what each one left out.
inline constexpr size_t kMaxPhaseJobs = 200;          // job-phases: the first jobs by submit time
inline constexpr size_t kMaxGanttNodes = 40;          // node-gantt: the first nodes by name
inline constexpr size_t kMaxGanttBars = 3000;         // node-gantt: the earliest allocations
inline constexpr size_t kMaxElasticJobs = 12;         // elastic-workers: the first elastic jobs
inline constexpr size_t kMaxUtilizationPoints = 500;  // more samples: means over time buckets
inline constexpr size_t kMaxCdfPoints = 400;  // more jobs: this many evenly spaced quantiles

// `text` for HTML text or a quoted attribute value: one line of valid UTF-8
// (core::EscapeText) with & < > " ' as character references.
std::string HtmlText(std::string_view text);

// The whole page for the directories given, one section each.
std::string RenderHtml(std::span<const ReportDir> dirs);

}  // namespace dlsched::report
