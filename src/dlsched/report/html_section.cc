#include "dlsched/report/html_section.h"

#include <algorithm>

namespace dlsched::report::html {

Section MakeSection(const ReportDir& dir, const RenderOptions& options, int* ids) {
  Section sec;
  sec.dir = &dir;
  sec.options = &options;
  sec.ids = ids;
  double lo = 0;
  double hi = 0;
  for (size_t i = 0; i < dir.runs.size(); ++i) {
    const RunData& run = dir.runs[i];
    RunView v;
    v.run = &run;
    v.k = i;
    v.m = Measure(run, options.window);
    v.jobs = JobsIn(run, v.m.window);
    if (v.m.figures && Incomplete(*v.m.figures)) {
      v.incomplete = true;
      v.why = IncompleteText(*v.m.figures);
    }
    if (run.utilization && !run.utilization->time.empty()) {
      lo = std::min(lo, run.utilization->time.front());
    }
    if (run.jobs) {
      for (const JobRow& j : *run.jobs) lo = std::min(lo, j.submit);
    }
    if (run.events && !run.events->empty()) lo = std::min(lo, run.events->front().time);
    hi = std::max(hi, run.EndTime());
    if (run.utilization && !run.utilization->time.empty()) {
      hi = std::max(hi, run.utilization->time.back());
    }
    sec.runs.push_back(std::move(v));
  }
  // The baseline: the one asked for, else the first complete run (a run
  // that is a lower bound is a poor yardstick), else the first.
  auto named = std::find_if(sec.runs.begin(), sec.runs.end(),
                            [&](const RunView& v) { return v.name() == options.baseline; });
  if (options.baseline.empty() || named == sec.runs.end()) {
    named = std::find_if(sec.runs.begin(), sec.runs.end(),
                         [](const RunView& v) { return v.m.figures && !v.incomplete; });
  }
  if (named != sec.runs.end()) sec.baseline = static_cast<size_t>(named - sec.runs.begin());
  sec.t_lo = lo;
  sec.t_hi = hi > lo ? hi : lo + 1;
  if (!sec.runs.empty()) {
    sec.window = sec.runs[0].m.window;
    for (const RunView& v : sec.runs) {
      if (v.m.window != sec.window) sec.mixed_windows = true;
    }
    if (sec.mixed_windows) sec.window.reset();
  }
  return sec;
}

// The window in words: "jobs submitted in [1 h, 10 h)".
std::string WindowText(const metrics::Window& w) {
  return fmt::format("jobs submitted in [{}, {})", HumanTime(w.from),
                     w.to >= core::kNever ? std::string("the end") : HumanTime(w.to));
}

// The time outside the section's window, shaded, under the series.
std::string OutsideWindow(const Frame& f, const Section& sec) {
  if (!sec.window) return "";
  std::string out;
  const std::string what =
      HtmlText(fmt::format("outside the measurement window ({})", WindowText(*sec.window)));
  auto band = [&](double from, double to) {
    const double x0 = std::clamp(f.X(from), f.left, f.PlotRight());
    const double x1 = std::clamp(f.X(to), f.left, f.PlotRight());
    if (x1 - x0 < 0.5) return;
    out += fmt::format(
        "<rect class=\"outside\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title>"
        "</rect>",
        C(x0), C(f.top), C(x1 - x0), C(f.PlotBottom() - f.top), what);
  };
  band(f.x.lo, sec.window->from);
  if (sec.window->to < core::kNever) band(sec.window->to, f.x.hi);
  return out;
}

LegendItem OutsideLegend(const Section& sec) {
  return {HtmlText(fmt::format("outside the window ({})", WindowText(*sec.window))), kGrey,
          LegendItem::kOutside, "outside-window"};
}

// A time axis for the section: the same for every chart over the runs.
Axis SectionTimeAxis(const Section& sec, int ticks) {
  Axis a = TimeAxis(sec.t_lo, sec.t_hi, "time");
  a.Nice(ticks);
  return a;
}

}  // namespace dlsched::report::html
