#pragma once

// A section of the HTML report (html.h): the runs of one directory as a
// comparison draws them, and what their charts share (the time axis, the
// measurement window). Shared by report/'s html*.cc files; not an
// interface of the layer.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dlsched/metrics/summary.h"
#include "dlsched/report/analysis.h"
#include "dlsched/report/html.h"
#include "dlsched/report/html_figure.h"
#include "dlsched/report/run_data.h"
#include "dlsched/report/svg.h"

namespace dlsched::report::html {

// One run as a comparison draws it.
struct RunView {
  const RunData* run = nullptr;
  size_t k = 0;  // its place: colour and pattern
  Measured m;
  std::vector<const JobRow*> jobs;  // jobs.csv's rows its window counts
  bool incomplete = false;
  std::string why;  // IncompleteText, when incomplete

  const std::string& name() const { return run->name; }
  Style style() const { return StyleOf(k, incomplete); }
  // Its name in a legend: "fsched (incomplete)".
  std::string Label() const {
    return HtmlText(name()) + (incomplete ? " <b class=\"incl\">(incomplete)</b>" : "");
  }
};

struct Section {
  const ReportDir* dir = nullptr;
  const RenderOptions* options = nullptr;
  int* ids = nullptr;  // the page's counter, for element ids
  std::vector<RunView> runs;
  // The time axis every time chart of the comparison shares.
  double t_lo = 0;
  double t_hi = 1;
  // The window the runs share, shaded on the time charts; `mixed` when
  // they were measured over different windows.
  std::optional<metrics::Window> window;
  bool mixed_windows = false;
  size_t baseline = 0;  // index into runs

  std::string NewId(std::string_view prefix) const { return fmt::format("{}-{}", prefix, ++*ids); }
};

// The section of directory `dir`: its runs measured (RenderOptions'
// window), the time axis they share, the baseline; `ids` counts the page's
// element ids.
Section MakeSection(const ReportDir& dir, const RenderOptions& options, int* ids);

// The window in words: "jobs submitted in [1 h, 10 h)".
std::string WindowText(const metrics::Window& w);

// The time outside the section's window, shaded, under the series.
std::string OutsideWindow(const Frame& f, const Section& sec);

LegendItem OutsideLegend(const Section& sec);

// A time axis for the section: the same for every chart over the runs.
Axis SectionTimeAxis(const Section& sec, int ticks);

}  // namespace dlsched::report::html
