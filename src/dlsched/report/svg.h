#pragma once

// SVG for the HTML report (html.h): axes and their ticks, a chart's frame
// and the <svg> that opens it, the styles of its series, and the marks a
// chart is drawn with. Shared by report/'s html*.cc files; not an
// interface of the layer.

#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlsched/report/html_text.h"

namespace dlsched::report::html {

// Chart widths in SVG units: a full-width chart, and one of a pair side by
// side, about their width in CSS pixels on a wide screen, so text in the
// charts reads at the page's size.
constexpr double kFullWidth = 1140;
constexpr double kHalfWidth = 562;

// ---- axes -----------------------------------------------------------------

struct Axis {
  double lo = 0;
  double hi = 1;
  double scale = 1;      // tick label = value * scale
  std::string suffix;    // after each tick label ("%")
  std::string label;     // the axis title, with its unit
  bool integer = false;  // ticks at whole numbers only
  bool log = false;      // positions by log10 (lo > 0)
  std::vector<double> ticks;
  std::vector<std::string> tick_labels;  // when set, instead of TickLabel's numbers
  int decimals = 0;

  // Picks 1-2-5 ticks over [lo, hi] and widens [lo, hi] to whole ticks.
  void Nice(int target) {
    const double lo_d = lo * scale;
    double hi_d = hi * scale;
    if (!(hi_d > lo_d)) hi_d = lo_d + 1;
    const double raw = (hi_d - lo_d) / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * mag;
    for (double m : {1.0, 2.0, 5.0}) {
      if (m * mag >= raw) {
        step = m * mag;
        break;
      }
    }
    if (integer) step = std::max(1.0, std::round(step));
    const double first = std::floor(lo_d / step + 1e-9);
    const double last = std::ceil(hi_d / step - 1e-9);
    ticks.clear();
    // Values too large or too close for whole steps (a hand-made file):
    // the two ends are the ticks.
    if (!(std::fabs(first) < 1e15 && std::fabs(last) < 1e15 && last - first <= 100)) {
      if (!(hi > lo)) hi = lo + 1;
      ticks = {lo, hi};
      decimals = 3;
      return;
    }
    decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    for (double k = first; k <= last; ++k) ticks.push_back(k * step / scale);
    lo = first * step / scale;
    hi = last * step / scale;
  }

  // Log ticks over [lo, hi] (lo > 0) from `candidates` (ascending), with
  // their labels; [lo, hi] widens to the ticks around it.
  void LogTicks(const std::vector<std::pair<double, std::string>>& candidates) {
    log = true;
    ticks.clear();
    tick_labels.clear();
    size_t first = 0;
    while (first + 1 < candidates.size() && candidates[first + 1].first <= lo) ++first;
    size_t last = first;
    while (last + 1 < candidates.size() && candidates[last].first < hi) ++last;
    for (size_t i = first; i <= last; ++i) {
      ticks.push_back(candidates[i].first);
      tick_labels.push_back(candidates[i].second);
    }
    lo = std::min(lo, candidates[first].first);
    hi = std::max(hi, candidates[last].first);
    if (!(hi > lo)) hi = lo * 10;
  }

  std::string TickLabel(size_t i) const {
    if (i < tick_labels.size()) return tick_labels[i];
    return Fixed(ticks[i] * scale, decimals) + suffix;
  }

  // Where `v` falls, 0 at lo and 1 at hi (outside [lo, hi] for values outside).
  double Pos(double v) const {
    if (log) {
      const double l = std::log10(lo);
      return (std::log10(std::max(v, lo)) - l) / (std::log10(hi) - l);
    }
    return (v - lo) / (hi - lo);
  }
};

// A time axis over [lo, hi] seconds, in seconds, hours or days.
Axis TimeAxis(double lo, double hi, std::string_view what);

// Ticks of a log time axis: 10 ms to 1000 days, about a decade apart, at
// times a reader knows (1 min, 10 min, 1 h, 10 h, 1 d).
const std::vector<std::pair<double, std::string>>& LogTimeTicks();

// Ticks of a log axis of plain numbers (slowdown): 1, 2, 5, 10, 20, ...
const std::vector<std::pair<double, std::string>>& LogNumberTicks();

// A share axis (tick labels in %) from 0 to `hi`.
Axis FractionAxis(std::string_view what, double hi = 1);

// The plot area of one chart and its data-to-SVG mapping.
struct Frame {
  double width = kHalfWidth;
  double height = 300;
  double left = 64;
  double right = 18;
  double top = 14;
  double bottom = 46;
  Axis x;
  Axis y;

  double X(double v) const { return left + x.Pos(v) * (width - left - right); }
  double Y(double v) const { return height - bottom - y.Pos(v) * (height - top - bottom); }
  double PlotBottom() const { return height - bottom; }
  double PlotRight() const { return width - right; }
};

// <svg data-chart=...> with its grid, ticks and axis titles; the y axis is
// drawn only when it has ticks (rows of bars label themselves). `attr`
// names the chart: "data-chart", or "data-chart-alt" for the variant a
// switch shows instead (a log axis); `cls` its class.
std::string OpenChart(std::string_view id, const Frame& f, std::string_view aria,
                      std::string_view extra_attrs = "", std::string_view attr = "data-chart",
                      std::string_view cls = "");

// ---- series styles --------------------------------------------------------

// Tableau 10: distinct for most colour-blind readers, readable on white.
inline constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// How series `k` of a chart is drawn: its colour, its dash pattern, and
// whether it is perforated (white dots along it): an incomplete result.
struct Style {
  std::string color;
  std::string dash;  // "" solid
  bool incomplete = false;
};

// Series `k`'s style: a colour of kPalette, and past its 10 colours a dash
// pattern for each round.
Style StyleOf(size_t k, bool incomplete = false);

inline const Style kGrey{"#59636e", "", false};

// The attributes of a series' <g>: colour, line width, dash pattern, and
// data-incomplete with why (for scripts and tests).
std::string SeriesAttrs(std::string_view name, const Style& st, double width,
                        std::string_view why = "");

std::string SeriesOpen(std::string_view name, std::string_view color);

// A line series `k` of `n`, its lines drawn wider the earlier it comes, so
// profiles that behave alike (often the case) still show every colour.
std::string LineSeriesOpen(std::string_view name, const Style& st, size_t k, size_t n,
                           std::string_view why = "");

// A line through `d`; perforated when the series is incomplete.
std::string LinePath(std::string_view d, const Style& st, std::string_view cls = "");

// A bound's mark in a chart, centred on `cx` above `base`: "≥" and "≤" are
// drawn as strokes (as SVG text, Chromium turns "≥" on its side at some
// scales), "?" as text.
std::string BoundGlyph(double cx, double base, std::string_view mark);

}  // namespace dlsched::report::html
