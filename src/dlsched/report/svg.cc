#include "dlsched/report/svg.h"

#include <algorithm>

#include <fmt/format.h>

#include "dlsched/report/html.h"

namespace dlsched::report::html {
namespace {

// Beyond 10 series the colours come round again, each round with a dash
// pattern of its own (none of them the perforation of an incomplete run).
constexpr const char* kDashes[] = {"10 3", "3 2.5", "10 3 2 3", "16 3 3 3 3 3"};

}  // namespace

// A time axis over [lo, hi] seconds, in seconds, hours or days.
Axis TimeAxis(double lo, double hi, std::string_view what) {
  Axis a;
  a.lo = lo;
  a.hi = hi;
  const double span = hi - lo;
  std::string unit = "s";
  if (span >= 10 * 86400) {
    a.scale = 1 / 86400.0;
    unit = "days";
  } else if (span >= 3 * 3600) {
    a.scale = 1 / 3600.0;
    unit = "hours";
  } else {
    unit = "seconds";
  }
  a.label = fmt::format("{} ({})", what, unit);
  return a;
}

// Ticks of a log time axis: 10 ms to 1000 days, about a decade apart, at
// times a reader knows (1 min, 10 min, 1 h, 10 h, 1 d).
const std::vector<std::pair<double, std::string>>& LogTimeTicks() {
  static const std::vector<std::pair<double, std::string>> ticks = {
      {0.01, "10 ms"},  {0.1, "0.1 s"},     {1, "1 s"},           {10, "10 s"},
      {60, "1 min"},    {600, "10 min"},    {3600, "1 h"},        {86400, "1 d"},
      {864000, "10 d"}, {8640000, "100 d"}, {86400000, "1000 d"}, {1e9, "31.7 y"},
      {1e12, "1e12 s"}, {1e300, "1e300 s"}};
  return ticks;
}

// Ticks of a log axis of plain numbers (slowdown): 1, 2, 5, 10, 20, ...
const std::vector<std::pair<double, std::string>>& LogNumberTicks() {
  static const std::vector<std::pair<double, std::string>> ticks = [] {
    std::vector<std::pair<double, std::string>> t;
    for (int e = -2; e <= 12; ++e) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, e);
        t.emplace_back(v, Fixed(v, std::max(0, -e)));
      }
    }
    t.emplace_back(1e300, "1e300");
    return t;
  }();
  return ticks;
}

Axis FractionAxis(std::string_view what, double hi) {
  Axis a;
  a.hi = hi;
  a.scale = 100;
  a.suffix = "%";
  a.label = std::string(what);
  return a;
}

// <svg data-chart=...> with its grid, ticks and axis titles; the y axis is
// drawn only when it has ticks (rows of bars label themselves). `attr`
// names the chart: "data-chart", or "data-chart-alt" for the variant a
// switch shows instead (a log axis); `cls` its class.
std::string OpenChart(std::string_view id, const Frame& f, std::string_view aria,
                      std::string_view extra_attrs, std::string_view attr, std::string_view cls) {
  std::string out = fmt::format(
      "<svg {}=\"{}\"{}{} viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\n<g class=\"axes\">",
      attr, HtmlText(id), extra_attrs, cls.empty() ? "" : fmt::format(" class=\"{}\"", cls),
      C(f.width), C(f.height), C(f.width), C(f.height), HtmlText(aria));
  for (size_t i = 0; i < f.x.ticks.size(); ++i) {
    const double t = f.x.ticks[i];
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
        C(f.X(t)), C(f.top), C(f.PlotBottom()), C(f.PlotBottom() + 16), f.x.TickLabel(i));
  }
  for (size_t i = 0; i < f.y.ticks.size(); ++i) {
    const double t = f.y.ticks[i];
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>"
        "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>",
        C(f.left), C(f.PlotRight()), C(f.Y(t)), C(f.left - 6), C(f.Y(t) + 4), f.y.TickLabel(i));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>"
      "<text class=\"title\" x=\"{3}\" y=\"{4}\" text-anchor=\"middle\">{5}</text>",
      C(f.left), C(f.PlotRight()), C(f.PlotBottom()), C((f.left + f.PlotRight()) / 2),
      C(f.height - 8), HtmlText(f.x.label));
  if (!f.y.ticks.empty()) {
    out += fmt::format(
        "<line class=\"axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<text class=\"title\" transform=\"translate(14 {3}) rotate(-90)\" "
        "text-anchor=\"middle\">{4}</text>",
        C(f.left), C(f.top), C(f.PlotBottom()), C((f.top + f.PlotBottom()) / 2),
        HtmlText(f.y.label));
  }
  return out + "</g>\n";
}

Style StyleOf(size_t k, bool incomplete) {
  Style s;
  s.color = kPalette[k % std::size(kPalette)];
  if (k >= std::size(kPalette)) {
    s.dash = kDashes[(k / std::size(kPalette) - 1) % std::size(kDashes)];
  }
  s.incomplete = incomplete;
  return s;
}

// The attributes of a series' <g>: colour, line width, dash pattern, and
// data-incomplete with why (for scripts and tests).
std::string SeriesAttrs(std::string_view name, const Style& st, double width,
                        std::string_view why) {
  std::string cls = st.incomplete ? "inc" : "";
  if (!st.dash.empty()) cls += cls.empty() ? "pat" : " pat";
  return fmt::format("data-series=\"{}\"{}{} style=\"color:{};--w:{}{}\"", HtmlText(name),
                     st.incomplete ? fmt::format(" data-incomplete=\"{}\"", HtmlText(why)) : "",
                     cls.empty() ? "" : fmt::format(" class=\"{}\"", cls), st.color,
                     Fixed(width, 2), st.dash.empty() ? "" : ";--d:" + st.dash);
}

std::string SeriesOpen(std::string_view name, std::string_view color) {
  return fmt::format("<g data-series=\"{}\" style=\"color:{}\">", HtmlText(name), color);
}

// A line series `k` of `n`, its lines drawn wider the earlier it comes, so
// profiles that behave alike (often the case) still show every colour.
std::string LineSeriesOpen(std::string_view name, const Style& st, size_t k, size_t n,
                           std::string_view why) {
  const double width = n > 1 ? 1.5 + 3.0 * static_cast<double>(n - 1 - k) / (n - 1) : 1.8;
  return fmt::format("<g {}>", SeriesAttrs(name, st, width, why));
}

// A line through `d`; perforated when the series is incomplete.
std::string LinePath(std::string_view d, const Style& st, std::string_view cls) {
  if (d.empty()) return "";
  std::string out =
      fmt::format("<path class=\"line{}{}\" d=\"{}\"/>", cls.empty() ? "" : " ", cls, d);
  if (st.incomplete) out += fmt::format("<path class=\"perf\" d=\"{}\"/>", d);
  return out;
}

// A bound's mark in a chart, centred on `cx` above `base`: "≥" and "≤" are
// drawn as strokes (as SVG text, Chromium turns "≥" on its side at some
// scales), "?" as text.
std::string BoundGlyph(double cx, double base, std::string_view mark) {
  if (mark == "≥ " || mark == "≤ ") {
    const double dir = mark == "≥ " ? 1 : -1;
    return fmt::format("<path class=\"bound\" d=\"M{} {}L{} {}L{} {}M{} {}H{}\"/>",
                       C(cx - 3.5 * dir), C(base - 10), C(cx + 3.5 * dir), C(base - 6.5),
                       C(cx - 3.5 * dir), C(base - 3), C(cx - 3.5), C(base - 0.5), C(cx + 3.5));
  }
  return fmt::format("<text class=\"bound\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                     C(cx), C(base), HtmlText(mark));
}

}  // namespace dlsched::report::html
