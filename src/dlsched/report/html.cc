#include "dlsched/report/html.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "dlsched/core/quantity.h"
#include "dlsched/core/text.h"
#include "dlsched/report/analysis.h"
#include "dlsched/report/first_seen.h"
#include "dlsched/report/format.h"
#include "dlsched/report/outputs.h"

namespace dlsched::report {
namespace {

constexpr const char* kPhaseColors[] = {"#c9ced6", "#f28e2b", "#4e79a7"};
constexpr const char* kPhaseNames[] = {"queueing", "launching", "running"};

// Chart widths in SVG units: a full-width chart, and one of a pair side by
// side, about their width in CSS pixels on a wide screen, so text in the
// charts reads at the page's size.
constexpr double kFullWidth = 1140;
constexpr double kHalfWidth = 562;

std::string TrimZeros(std::string s) {
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string Fixed(double v, int decimals) {
  // Only a hand-made file has numbers this large; they stay short.
  if (!(std::fabs(v) < 1e15)) return fmt::format("{:.6g}", v);
  return TrimZeros(fmt::format("{:.{}f}", v, std::max(0, decimals)));
}

// An SVG coordinate: a tenth of a unit is finer than a pixel.
std::string C(double v) { return Fixed(v, 1); }

std::string Percent(double fraction) { return Fixed(100 * fraction, 1) + "%"; }

// A duration for a tooltip, in the unit that reads best.
std::string HumanTime(double s) {
  const double a = std::fabs(s);
  if (a < 120) return Fixed(s, a < 10 ? 2 : 1) + " s";
  if (a < 7200) return Fixed(s / 60, 1) + " min";
  if (a < 48 * 3600) return Fixed(s / 3600, 2) + " h";
  return Fixed(s / 86400, 2) + " d";
}

// At most `max_chars` characters of HtmlText-safe `text`, with "…" when cut.
std::string Shorten(std::string_view text, size_t max_chars) {
  const std::string safe = core::EscapeText(text, 4 * max_chars + 16);
  size_t chars = 0;
  for (size_t i = 0; i < safe.size(); ++i) {
    if ((static_cast<unsigned char>(safe[i]) & 0xC0) == 0x80) continue;
    if (++chars > max_chars) return HtmlText(safe.substr(0, i)) + "…";
  }
  return HtmlText(safe);
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

// The CSV of one chart, for its download link: a header, then rows.
class CsvText {
 public:
  explicit CsvText(std::initializer_list<std::string_view> header) {
    std::vector<std::string> h(header.begin(), header.end());
    Row(h);
  }
  void Row(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text_ += ',';
      AppendCsvField(text_, cells[i]);
    }
    text_ += '\n';
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

std::string Num(double v) { return FormatNumber(v); }

// `text` as a data: URI's payload: everything but letters, digits and
// - _ . ~ , percent-encoded, so the attribute holds no markup either.
std::string PercentEncode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~' || c == ',') {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// A file name from `text`: letters, digits, . - _ kept, anything else '_'.
std::string Slug(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    out += std::isalnum(c) != 0 || c == '.' || c == '-' || c == '_' ? ch : '_';
    if (out.size() >= 60) break;
  }
  return out.empty() ? "data" : out;
}

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

Axis FractionAxis(std::string_view what, double hi = 1) {
  Axis a;
  a.hi = hi;
  a.scale = 100;
  a.suffix = "%";
  a.label = std::string(what);
  return a;
}

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
                      std::string_view cls = "") {
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

// ---- series styles --------------------------------------------------------

// Tableau 10: distinct for most colour-blind readers, readable on white.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
// Beyond 10 series the colours come round again, each round with a dash
// pattern of its own (none of them the perforation of an incomplete run).
constexpr const char* kDashes[] = {"10 3", "3 2.5", "10 3 2 3", "16 3 3 3 3 3"};

// How series `k` of a chart is drawn: its colour, its dash pattern, and
// whether it is perforated (white dots along it): an incomplete result.
struct Style {
  std::string color;
  std::string dash;  // "" solid
  bool incomplete = false;
};

Style StyleOf(size_t k, bool incomplete = false) {
  Style s;
  s.color = kPalette[k % std::size(kPalette)];
  if (k >= std::size(kPalette)) {
    s.dash = kDashes[(k / std::size(kPalette) - 1) % std::size(kDashes)];
  }
  s.incomplete = incomplete;
  return s;
}

const Style kGrey{"#59636e", "", false};

// The attributes of a series' <g>: colour, line width, dash pattern, and
// data-incomplete with why (for scripts and tests).
std::string SeriesAttrs(std::string_view name, const Style& st, double width,
                        std::string_view why = "") {
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
                           std::string_view why = "") {
  const double width = n > 1 ? 1.5 + 3.0 * static_cast<double>(n - 1 - k) / (n - 1) : 1.8;
  return fmt::format("<g {}>", SeriesAttrs(name, st, width, why));
}

// A line through `d`; perforated when the series is incomplete.
std::string LinePath(std::string_view d, const Style& st, std::string_view cls = "") {
  if (d.empty()) return "";
  std::string out =
      fmt::format("<path class=\"line{}{}\" d=\"{}\"/>", cls.empty() ? "" : " ", cls, d);
  if (st.incomplete) out += fmt::format("<path class=\"perf\" d=\"{}\"/>", d);
  return out;
}

// ---- page pieces ----------------------------------------------------------

struct LegendItem {
  std::string label{};  // HTML-escaped already
  Style style{};
  enum Kind {
    kLine,      // a series' line
    kDash,      // the dashed line of a second figure (effective, p95)
    kBox,       // a bar
    kMarker,    // an incomplete point: a hollow triangle
    kCensor,    // where a censored CDF stops
    kOutside,   // the time outside the measurement window
    kErrorBar,  // mean with +-1 sd
  } kind = kLine;
  std::string what{};  // data-legend: what the entry explains ("incomplete", ...)
};

std::string Swatch(const LegendItem& it) {
  const Style& st = it.style;
  std::string body;
  switch (it.kind) {
    case LegendItem::kLine:
    case LegendItem::kDash: {
      const std::string dash = it.kind == LegendItem::kDash ? "5 3" : st.dash;
      body = fmt::format(
          "<line x1=\"1\" y1=\"6\" x2=\"25\" y2=\"6\" stroke=\"{}\" stroke-width=\"{}\"{}/>",
          st.color, st.incomplete ? 3.2 : 2.5,
          dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash));
      if (st.incomplete) {
        body +=
            "<line x1=\"1\" y1=\"6\" x2=\"25\" y2=\"6\" stroke=\"#fff\" stroke-width=\"1.8\" "
            "stroke-dasharray=\"0 6\" stroke-linecap=\"round\"/>";
      }
      break;
    }
    case LegendItem::kBox:
      body = st.incomplete ? fmt::format(
                                 "<rect x=\"7\" y=\"1\" width=\"12\" height=\"10\" fill=\"{0}\" "
                                 "fill-opacity=\".3\" stroke=\"{0}\" stroke-dasharray=\"2 1.5\"/>",
                                 st.color)
                           : fmt::format(
                                 "<rect x=\"7\" y=\"1\" width=\"12\" height=\"10\" rx=\"2\" "
                                 "fill=\"{}\"/>",
                                 st.color);
      break;
    case LegendItem::kMarker:
      body = fmt::format(
          "<path d=\"M13 1.5L18 10.5H8Z\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"1.6\"/>",
          st.color);
      break;
    case LegendItem::kCensor:
      body = fmt::format(
          "<line x1=\"1\" y1=\"9\" x2=\"13\" y2=\"9\" stroke=\"{0}\" stroke-width=\"2.5\"/>"
          "<path d=\"M13 4V11M13 4H25\" fill=\"none\" stroke=\"{0}\" stroke-width=\"1.4\" "
          "stroke-dasharray=\"2 2\"/>",
          st.color);
      break;
    case LegendItem::kOutside:
      body =
          "<rect x=\"1\" y=\"1\" width=\"24\" height=\"10\" fill=\"#8c959f\" "
          "fill-opacity=\".16\"/>";
      break;
    case LegendItem::kErrorBar:
      body = fmt::format(
          "<path d=\"M13 1V11M10 1H16M10 11H16\" fill=\"none\" stroke=\"{0}\" "
          "stroke-width=\"1.3\"/><circle cx=\"13\" cy=\"6\" r=\"2.6\" fill=\"{0}\"/>",
          st.color);
      break;
  }
  return "<svg class=\"sw\" width=\"26\" height=\"12\" viewBox=\"0 0 26 12\" "
         "aria-hidden=\"true\">" +
         body + "</svg>";
}

std::string Legend(const std::vector<LegendItem>& items) {
  if (items.empty()) return "";
  std::string out = "<div class=\"legend\">";
  for (const auto& it : items) {
    out += fmt::format("<span{}>{}{}</span>",
                       it.what.empty() ? "" : fmt::format(" data-legend=\"{}\"", it.what),
                       Swatch(it), it.label);
  }
  return out + "</div>\n";
}

// The legend entry that says what a perforated line is.
LegendItem IncompleteLegend(std::string_view what_is_bound) {
  return {fmt::format("perforated: an incomplete run (interrupted, or jobs not completed by its "
                      "end){}",
                      what_is_bound),
          Style{"#59636e", "", true}, LegendItem::kLine, "incomplete"};
}

// A chart that is not drawn, and why, on one line.
std::string Note(std::string_view id, std::string_view text) {
  return fmt::format("<p class=\"note\" data-note=\"{}\">{}</p>\n", id, text);
}

// What a figure is made of. `body` is its SVG (or table); with `toggle`
// it holds a linear and a log variant (classes v-lin, v-log), switched by
// a checkbox, the log one shown first when `log_first`.
struct FigureParts {
  std::string title{};  // HTML
  std::string about{};  // HTML
  std::string legend{};
  std::string body{};
  std::vector<std::string> notes{};     // HTML, each a line under the chart
  std::vector<std::string> warnings{};  // HTML, said first and louder
  std::string csv_name{};               // the downloaded file's name
  std::string csv{};                    // its text ("": no link)
  std::string toggle{};                 // the checkbox's id ("": none)
  bool log_first = false;
};

std::string Figure(const FigureParts& p) {
  std::string out = "<figure>\n";
  if (!p.toggle.empty()) {
    out += fmt::format("<input type=\"checkbox\" class=\"logsw\" id=\"{}\"{}>", p.toggle,
                       p.log_first ? " checked" : "");
  }
  out += fmt::format("<figcaption><b>{}</b> <span class=\"about\">{}</span>", p.title, p.about);
  if (!p.toggle.empty()) {
    out += fmt::format(
        "<label class=\"logbtn\" for=\"{}\" title=\"switch the x axis between linear and "
        "log\">log x axis</label>",
        p.toggle);
  }
  if (!p.csv.empty()) {
    out += fmt::format(
        "<a class=\"csv\" data-csv=\"{0}\" download=\"{0}\" "
        "href=\"data:text/csv;charset=utf-8,{1}\" "
        "title=\"the data of this chart, as CSV\">CSV</a>",
        HtmlText(p.csv_name), PercentEncode(p.csv));
  }
  out += "</figcaption>\n";
  for (const auto& w : p.warnings) out += fmt::format("<p class=\"warn\">{}</p>\n", w);
  out += p.legend + p.body;
  for (const auto& n : p.notes) out += fmt::format("<p class=\"cap\">{}</p>\n", n);
  return out + "</figure>\n";
}

// A time in seconds as a CSV cell: empty for none.
std::string OptNum(const std::optional<double>& v) { return v ? Num(*v) : ""; }

// ---- a comparison: the runs of one section --------------------------------

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

// ---- time series ------------------------------------------------------------

// Step functions on one time base: values[s][i] holds from time[i] to
// time[i + 1].
struct Steps {
  std::vector<double> time;
  std::vector<std::vector<double>> values;
};

// At most `max_points` steps: beyond that, the time-weighted means over
// equal time buckets of [time[0], end], so a long run's chart stays small
// and its averages stay right.
Steps Bucket(const std::vector<double>& time, const std::vector<const std::vector<double>*>& values,
             double end, size_t max_points) {
  Steps s;
  const size_t n = time.size();
  const double t0 = n > 0 ? time[0] : 0;
  if (n <= max_points || !(end > t0)) {
    s.time = time;
    for (const auto* v : values) s.values.push_back(*v);
    return s;
  }
  const double width = (end - t0) / static_cast<double>(max_points);
  auto bucket = [&](double t) -> size_t {
    const double k = std::floor((t - t0) / width);
    if (!(k > 0)) return 0;
    return k >= static_cast<double>(max_points - 1) ? max_points - 1 : static_cast<size_t>(k);
  };
  s.values.assign(values.size(), std::vector<double>(max_points, 0));
  for (size_t i = 0; i < n; ++i) {
    const double from = std::max(time[i], t0);
    const double to = std::min(i + 1 < n ? time[i + 1] : end, end);
    if (!(to > from)) continue;
    // Each bucket the sample's interval overlaps gets its share.
    for (size_t k = bucket(from), last = bucket(to); k <= last; ++k) {
      const double lo = t0 + static_cast<double>(k) * width;
      const double hi = k + 1 == max_points ? end : t0 + static_cast<double>(k + 1) * width;
      const double overlap = std::min(to, hi) - std::max(from, lo);
      if (!(overlap > 0)) continue;
      for (size_t v = 0; v < values.size(); ++v) {
        s.values[v][k] += (*values[v])[i] * overlap / width;
      }
    }
  }
  for (size_t k = 0; k < max_points; ++k) s.time.push_back(t0 + static_cast<double>(k) * width);
  return s;
}

// "M x y H .. V .. H end": a step line through values[i] from time[i].
std::string StepPath(const Frame& f, const std::vector<double>& time,
                     const std::vector<double>& values, double end) {
  std::string d;
  for (size_t i = 0; i < time.size(); ++i) {
    d += i == 0 ? fmt::format("M{} {}", C(f.X(time[0])), C(f.Y(values[0])))
                : fmt::format("H{}V{}", C(f.X(time[i])), C(f.Y(values[i])));
  }
  if (!time.empty() && end > time.back()) d += "H" + C(f.X(end));
  return d;
}

std::string BucketNote() {
  return fmt::format(
      "Runs with more than {} samples are drawn as time-weighted means over {} equal time "
      "buckets.",
      kMaxUtilizationPoints, kMaxUtilizationPoints);
}

std::string UtilizationChart(std::string_view id, std::string_view resource, std::string_view title,
                             const Section& sec) {
  struct Series {
    const RunView* view;
    Steps steps;
    double end;
  };
  std::vector<Series> series;
  std::vector<std::string> missing;
  double top = 1;
  for (const RunView& v : sec.runs) {
    const RunData& run = *v.run;
    const Utilization::Resource* r = run.utilization ? run.utilization->Find(resource) : nullptr;
    if (r == nullptr || run.utilization->time.empty()) {
      missing.push_back(fmt::format("{} ({})", HtmlText(run.name),
                                    run.utilization ? fmt::format("no {} capacity", resource)
                                                    : std::string("no utilization.csv")));
      continue;
    }
    const double end = std::max(run.EndTime(), run.utilization->time.back());
    Steps steps =
        Bucket(run.utilization->time, {&r->allocated, &r->effective}, end, kMaxUtilizationPoints);
    for (const auto& vals : steps.values) {
      for (double x : vals) top = std::max(top, x);
    }
    series.push_back({&v, std::move(steps), end});
  }
  const std::string what = fmt::format("{} utilisation over time", title);
  if (series.empty()) {
    return Note(id, fmt::format("{}: not shown, {}.", what, Join(missing, ", ")));
  }
  Frame f;
  f.x = SectionTimeAxis(sec, 8);
  f.y = FractionAxis(fmt::format("{} of capacity", title), top);
  f.y.Nice(5);
  std::string svg = OpenChart(id, f, what) + OutsideWindow(f, sec);
  std::vector<LegendItem> legend;
  CsvText csv({"profile", "time", "allocated", "effective"});
  bool bucketed = false;
  bool incomplete = false;
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const RunView& v = *s.view;
    const Style st = v.style();
    incomplete = incomplete || v.incomplete;
    legend.push_back({v.Label(), st});
    svg += LineSeriesOpen(v.name(), st, k, series.size(), v.why);
    const auto& alloc = s.steps.values[0];
    const auto& eff = s.steps.values[1];
    svg += LinePath(StepPath(f, s.steps.time, alloc, s.end), st) +
           LinePath(StepPath(f, s.steps.time, eff, s.end), st, "dash");
    for (size_t i = 0; i < s.steps.time.size(); ++i) {
      const double t = s.steps.time[i];
      svg += fmt::format(
          "<g data-point=\"\"><title>{} at {}: {} allocated, {} effective</title>"
          "<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"/>"
          "<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"/></g>",
          HtmlText(v.name()), HumanTime(t), Percent(alloc[i]), Percent(eff[i]), C(f.X(t)),
          C(f.Y(alloc[i])), C(f.X(t)), C(f.Y(eff[i])));
      csv.Row({v.name(), Num(t), Num(alloc[i]), Num(eff[i])});
    }
    svg += "</g>\n";
    bucketed = bucketed || s.steps.time.size() < v.run->utilization->time.size();
  }
  svg += "</svg>\n";
  legend.push_back({"allocated", kGrey, LegendItem::kLine});
  legend.push_back({"effective (jobs making progress)", kGrey, LegendItem::kDash});
  if (incomplete) legend.push_back(IncompleteLegend(""));
  if (sec.window) legend.push_back(OutsideLegend(sec));
  std::vector<std::string> notes;
  if (bucketed) notes.push_back(BucketNote());
  if (!missing.empty()) notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  return Figure({.title = HtmlText(what),
                 .about = "allocated: held by any job; effective: held by running jobs",
                 .legend = Legend(legend),
                 .body = svg,
                 .notes = notes,
                 .csv_name = std::string(id) + ".csv",
                 .csv = csv.text()});
}

// A chart of one step function per run over the section's time axis.
struct StepChartSpec {
  std::string_view id;
  std::string_view title;
  std::string_view about;
  std::string_view y_label;
  std::string_view column;  // the CSV's value column
  std::string_view unit;    // after a value in a tooltip
  // The run's series, or nullopt with why not ("no events.csv").
  std::function<std::optional<StepSeries>(const RunView&, std::string* why)> of;
};

std::string StepChart(const StepChartSpec& spec, const Section& sec) {
  struct Series {
    const RunView* view;
    Steps steps;
    double end;
    size_t raw;
  };
  std::vector<Series> series;
  std::vector<std::string> missing;
  double top = 1;
  for (const RunView& v : sec.runs) {
    std::string why;
    std::optional<StepSeries> s = spec.of(v, &why);
    if (!s || s->time.empty()) {
      missing.push_back(
          fmt::format("{} ({})", HtmlText(v.name()), HtmlText(s ? std::string("no events") : why)));
      continue;
    }
    const double end = std::max(v.run->EndTime(), s->time.back());
    Steps steps = Bucket(s->time, {&s->value}, end, kMaxUtilizationPoints);
    for (double x : steps.values[0]) top = std::max(top, x);
    series.push_back({&v, std::move(steps), end, s->time.size()});
  }
  if (series.empty()) {
    return Note(spec.id, fmt::format("{}: not shown, {}.", spec.title, Join(missing, ", ")));
  }
  Frame f;
  f.x = SectionTimeAxis(sec, 8);
  f.y.hi = top;
  f.y.label = std::string(spec.y_label);
  f.y.integer = true;
  f.y.Nice(5);
  std::string svg = OpenChart(spec.id, f, spec.title) + OutsideWindow(f, sec);
  std::vector<LegendItem> legend;
  CsvText csv({"profile", "time", spec.column});
  bool bucketed = false;
  bool incomplete = false;
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const RunView& v = *s.view;
    const Style st = v.style();
    incomplete = incomplete || v.incomplete;
    legend.push_back({v.Label(), st});
    svg += LineSeriesOpen(v.name(), st, k, series.size(), v.why);
    const auto& vals = s.steps.values[0];
    svg += LinePath(StepPath(f, s.steps.time, vals, s.end), st);
    for (size_t i = 0; i < s.steps.time.size(); ++i) {
      const double t = s.steps.time[i];
      svg += fmt::format(
          "<circle data-point=\"\" class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"><title>{} at {}: {}{}"
          "</title></circle>",
          C(f.X(t)), C(f.Y(vals[i])), HtmlText(v.name()), HumanTime(t), Fixed(vals[i], 2),
          spec.unit);
      csv.Row({v.name(), Num(t), Num(vals[i])});
    }
    svg += "</g>\n";
    bucketed = bucketed || s.steps.time.size() < s.raw;
  }
  svg += "</svg>\n";
  if (incomplete) legend.push_back(IncompleteLegend(""));
  if (sec.window) legend.push_back(OutsideLegend(sec));
  std::vector<std::string> notes;
  if (bucketed) notes.push_back(BucketNote());
  if (!missing.empty()) notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  return Figure({.title = std::string(spec.title),
                 .about = std::string(spec.about),
                 .legend = Legend(legend),
                 .body = svg,
                 .notes = notes,
                 .csv_name = std::string(spec.id) + ".csv",
                 .csv = csv.text()});
}

// ---- CDFs -----------------------------------------------------------------

struct CdfSpec {
  std::string_view id;
  std::string_view title;
  std::string_view value;      // "job completion time"
  std::string_view event;      // the event: "completed"
  std::string_view not_event;  // "had not completed"
  CdfOf of;
  bool time = true;  // values in seconds (else plain numbers: slowdown)
};

// The CDF of one run, as drawn.
struct CdfSeries {
  const RunView* view;
  Cdf cdf;
};

// Whether an axis over [lo, hi] (lo the smallest value above 0) is best
// drawn in log: more than two decades.
bool WideRange(double lo, double hi) { return lo > 0 && hi / lo > 100; }

std::string CdfSvg(const CdfSpec& spec, const Frame& f, const std::vector<CdfSeries>& series,
                   std::string_view attr, std::string_view cls, CsvText* csv) {
  std::string svg = OpenChart(spec.id, f, spec.title, "", attr, cls);
  auto shown = [&](double v) { return spec.time ? HumanTime(v) : Fixed(v, 2); };
  for (size_t k = 0; k < series.size(); ++k) {
    const CdfSeries& s = series[k];
    const RunView& v = *s.view;
    // Perforated: the run is incomplete, or (under a window) jobs of it
    // never got there.
    const Style st = StyleOf(v.k, v.incomplete || s.cdf.Censored() > 0);
    const size_t n = s.cdf.values.size();
    const double total = static_cast<double>(s.cdf.total);
    svg += fmt::format(
        "<g {} data-total=\"{}\" data-censored=\"{}\" data-reaches=\"{}\">",
        SeriesAttrs(v.name(), st,
                    series.size() > 1 ? 1.5 + 3.0 * static_cast<double>(series.size() - 1 - k) /
                                                  static_cast<double>(series.size() - 1)
                                      : 1.8,
                    !st.incomplete ? ""
                    : v.incomplete ? v.why
                                   : "jobs not completed"),
        s.cdf.total, s.cdf.Censored(), Fixed(s.cdf.Reaches(), 6));
    const size_t drawn = std::min(n, kMaxCdfPoints);
    std::string d;
    std::string points;
    for (size_t i = 0; i < drawn; ++i) {
      // Evenly spaced ranks when sampled; every job otherwise.
      const size_t idx = drawn == n ? i : i * (n - 1) / (drawn - 1);
      const double x = s.cdf.values[idx];
      const double p = static_cast<double>(idx + 1) / total;
      d += i == 0 ? fmt::format("M{} {}V{}", C(f.X(x)), C(f.Y(0)), C(f.Y(p)))
                  : fmt::format("H{}V{}", C(f.X(x)), C(f.Y(p)));
      points += fmt::format(
          "<circle data-point=\"\" class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"><title>{}: {} of "
          "{} jobs {} within {}</title></circle>",
          C(f.X(x)), C(f.Y(p)), HtmlText(v.name()), Percent(p), s.cdf.total, spec.event, shown(x));
      if (csv != nullptr) {
        csv->Row({v.name(), Num(x), Num(p), std::to_string(s.cdf.total),
                  std::to_string(s.cdf.Censored())});
      }
    }
    svg += LinePath(d, st);
    if (s.cdf.Censored() > 0) {
      // The share that never got there: a dashed gap from where the curve
      // stops up to 100%, ended by a bar.
      const double x = n > 0 ? f.X(s.cdf.values.back()) : f.left;
      const double y = f.Y(s.cdf.Reaches());
      svg += fmt::format(
          "<g class=\"censor\" data-gap=\"{}\"><title>{}: stops at {}: {} of {} jobs ({}) {} "
          "by the run's end</title><path d=\"M{} {}V{}M{} {}H{}\"/></g>",
          HtmlText(v.name()), HtmlText(v.name()), Percent(s.cdf.Reaches()), s.cdf.Censored(),
          s.cdf.total, Percent(1 - s.cdf.Reaches()), spec.not_event, C(x), C(y), C(f.Y(1)),
          C(x - 5), C(f.Y(1)), C(x + 5));
    }
    svg += points + "</g>\n";
  }
  return svg + "</svg>\n";
}

std::string CdfChart(const CdfSpec& spec, const Section& sec) {
  std::vector<CdfSeries> series;
  std::vector<std::string> missing;
  double hi = 0;
  double lo_pos = std::numeric_limits<double>::infinity();
  size_t values = 0;
  for (const RunView& v : sec.runs) {
    if (!v.run->jobs) {
      missing.push_back(HtmlText(v.name()) + " (no jobs.csv)");
      continue;
    }
    Cdf c = MakeCdf(v.jobs, spec.of);
    for (double x : c.values) {
      if (x > 0) lo_pos = std::min(lo_pos, x);
    }
    if (!c.values.empty()) hi = std::max(hi, c.values.back());
    values += c.values.size();
    series.push_back({&v, std::move(c)});
  }
  if (series.empty()) {
    return Note(spec.id, fmt::format("{}: not shown, {}.", spec.title, Join(missing, ", ")));
  }
  size_t jobs = 0;
  for (const auto& s : series) jobs += s.cdf.total;
  if (jobs == 0) {
    return Note(spec.id,
                fmt::format("{}: not shown, no jobs{} in any run.", spec.title,
                            spec.of == CdfOf::kSlowdown ? " with a known ideal runtime" : ""));
  }
  const bool any_window = std::any_of(sec.runs.begin(), sec.runs.end(),
                                      [](const RunView& v) { return v.m.window.has_value(); });
  const std::string population =
      spec.of == CdfOf::kSlowdown ? "jobs with a known ideal runtime" : "jobs";
  Frame lin;
  lin.x = spec.time ? TimeAxis(0, std::max(hi, 1e-9), spec.value) : Axis{};
  if (!spec.time) {
    lin.x.lo = 1;
    lin.x.hi = std::max(hi, 1.0) > 1 ? hi : 2;
    lin.x.label = std::string(spec.value);
  }
  lin.x.Nice(8);
  lin.y = FractionAxis(any_window ? "share of the jobs in the window" : "share of all jobs");
  lin.y.Nice(4);
  // A log variant when any value is above 0; shown first when asked, or
  // (auto) when the values span more than two decades.
  const bool can_log = std::isfinite(lo_pos) && hi > 0;
  const LogAxis mode = sec.options->log_axis;
  const bool log_first =
      can_log && (mode == LogAxis::kOn || (mode == LogAxis::kAuto && WideRange(lo_pos, hi)));
  CsvText csv({"profile",
               std::string(spec.id == "jct-cdf"        ? "jct"
                           : spec.id == "queueing-cdf" ? "queueing"
                                                       : "slowdown"),
               "share", "jobs", "not_reached"});
  std::string body;
  std::string toggle;
  std::vector<std::string> notes;
  if (can_log) {
    Frame log = lin;
    log.x.lo = lo_pos;
    log.x.hi = hi;
    log.x.LogTicks(spec.time ? LogTimeTicks() : LogNumberTicks());
    log.x.label = fmt::format("{} (log scale)", spec.value);
    toggle = sec.NewId("log");
    const std::string lin_svg =
        CdfSvg(spec, lin, series, log_first ? "data-chart-alt" : "data-chart", "v-lin",
               log_first ? nullptr : &csv);
    const std::string log_svg =
        CdfSvg(spec, log, series, log_first ? "data-chart" : "data-chart-alt", "v-log",
               log_first ? &csv : nullptr);
    body = log_first ? log_svg + lin_svg : lin_svg + log_svg;
    bool zeros = false;
    for (const auto& s : series) zeros = zeros || (!s.cdf.values.empty() && s.cdf.values[0] <= 0);
    if (zeros) {
      notes.push_back(
          fmt::format("<span class=\"v-log\">On the log axis, values of 0 are drawn at its left "
                      "edge ({}).</span>",
                      spec.time ? HumanTime(log.x.lo) : Fixed(log.x.lo, 2)));
    }
  } else {
    body = CdfSvg(spec, lin, series, "data-chart", "", &csv);
  }
  std::vector<LegendItem> legend;
  bool censored = false;
  bool incomplete = false;
  std::vector<std::string> warnings;
  for (const auto& s : series) {
    const RunView& v = *s.view;
    const Cdf& c = s.cdf;
    const Style st = StyleOf(v.k, v.incomplete || c.Censored() > 0);
    incomplete = incomplete || st.incomplete;
    if (c.Censored() == 0) {
      legend.push_back({fmt::format("{} ({} {})", v.Label(), c.total, population), st});
      continue;
    }
    censored = true;
    legend.push_back({fmt::format("{} ({} of {} {}; stops at {})", v.Label(), c.values.size(),
                                  c.total, population, Percent(c.Reaches())),
                      st, LegendItem::kLine, "censored"});
    notes.push_back(fmt::format(
        "<span data-censor=\"{}\"><b>{}</b>: the curve stops at {}, short of 100% by {}: {} of "
        "{} {} {} when the run ended at {}.</span>",
        HtmlText(v.name()), HtmlText(v.name()), Percent(c.Reaches()), Percent(1 - c.Reaches()),
        c.Censored(), c.total, population, spec.not_event, HumanTime(v.run->EndTime())));
  }
  if (censored) {
    legend.push_back({"where a curve stops short of 100%: the jobs that never got there", kGrey,
                      LegendItem::kCensor, "censor"});
  }
  if (incomplete) legend.push_back(IncompleteLegend(""));
  if (spec.of != CdfOf::kQueueing && series.size() > 1) {
    std::vector<std::vector<const JobRow*>> sets;
    for (const auto& s : series) sets.push_back(s.view->jobs);
    if (DifferentJobsCompleted(sets)) {
      std::vector<std::string> counts;
      for (const auto& s : series) {
        counts.push_back(
            fmt::format("{} {} of {}", HtmlText(s.view->name()), s.cdf.values.size(), s.cdf.total));
      }
      warnings.push_back(fmt::format(
          "<span data-warn=\"different-jobs\">The profiles completed different sets of jobs ({}): "
          "each curve counts every job it was given, so one that finished fewer stops lower "
          "instead of looking faster.</span>",
          Join(counts, ", ")));
    }
  }
  if (!missing.empty()) notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  bool sampled = false;
  for (const auto& s : series) sampled = sampled || s.cdf.values.size() > kMaxCdfPoints;
  if (sampled) {
    notes.push_back(
        fmt::format("Runs with more than {} values are drawn through {} evenly spaced quantiles.",
                    kMaxCdfPoints, kMaxCdfPoints));
  }
  return Figure({.title = std::string(spec.title),
                 .about = fmt::format("one line per profile, over all {}; jobs not {} by the "
                                      "run's end keep it below 100%",
                                      population, spec.event),
                 .legend = Legend(legend),
                 .body = body,
                 .notes = notes,
                 .warnings = warnings,
                 .csv_name = std::string(spec.id) + ".csv",
                 .csv = csv.text(),
                 .toggle = toggle,
                 .log_first = log_first});
}

// ---- per-run charts -------------------------------------------------------

std::string RunAttr(const RunData& run) {
  return fmt::format(" data-run=\"{}\"", HtmlText(run.name));
}

// Room on the left for row labels.
constexpr double kLabelWidth = 150;

// The jobs the phases chart shows: the first kMaxPhaseJobs by submit time.
std::vector<const JobRow*> PhaseJobs(const RunData& run) {
  std::vector<const JobRow*> jobs;
  if (!run.jobs) return jobs;
  for (const JobRow& j : *run.jobs) jobs.push_back(&j);
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const JobRow* a, const JobRow* b) { return a->submit < b->submit; });
  if (jobs.size() > kMaxPhaseJobs) jobs.resize(kMaxPhaseJobs);
  return jobs;
}

// The span of the jobs PhaseJobs shows: from the first submit to the last
// end of a phase.
std::pair<double, double> PhaseSpan(const std::vector<const JobRow*>& jobs) {
  if (jobs.empty()) return {0, 0};
  double lo = jobs.front()->submit;
  double hi = lo;
  for (const JobRow* j : jobs) {
    hi = std::max(hi, j->submit + j->queueing + j->launching + j->running);
  }
  return {lo, hi};
}

// `span`: the time axis, shared by the phases charts of a comparison.
std::string PhasesChart(const RunData& run, std::pair<double, double> span) {
  constexpr std::string_view kId = "job-phases";
  const std::string title = "Time per phase, per job";
  if (!run.jobs) return Note(kId, title + ": not shown, no jobs.csv in " + HtmlText(run.dir) + ".");
  if (run.jobs->empty()) return Note(kId, title + ": not shown, the run has no jobs.");
  const std::vector<const JobRow*> jobs = PhaseJobs(run);
  const size_t all = run.jobs->size();
  const auto [lo, hi] = span;
  const double row =
      jobs.size() <= 30 ? 18 : std::max(4.5, 600.0 / static_cast<double>(jobs.size()));
  const bool labels = row >= 12;
  Frame f;
  f.width = kFullWidth;
  f.left = labels ? kLabelWidth : 24;
  f.height = f.top + row * static_cast<double>(jobs.size()) + f.bottom;
  f.x = TimeAxis(lo, hi, "time");
  f.x.Nice(10);
  std::string svg = OpenChart(kId, f, title + " of " + run.name, RunAttr(run));
  CsvText csv({"job", "submit", "queueing", "launching", "running", "final_state", "stuck"});
  for (const JobRow* j : jobs) {
    csv.Row({j->name, Num(j->submit), Num(j->queueing), Num(j->launching), Num(j->running),
             j->final_state, j->stuck ? "true" : "false"});
  }
  if (labels) {
    svg += "<g class=\"rows\">";
    for (size_t i = 0; i < jobs.size(); ++i) {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", C(f.left - 6),
                         C(f.top + row * (static_cast<double>(i) + 0.5) + 4),
                         Shorten(jobs[i]->name, 22));
    }
    svg += "</g>\n";
  }
  for (size_t p = 0; p < 3; ++p) {
    svg += SeriesOpen(kPhaseNames[p], kPhaseColors[p]);
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobRow& j = *jobs[i];
      const double parts[] = {j.queueing, j.launching, j.running};
      double x = j.submit;
      for (size_t k = 0; k < p; ++k) x += parts[k];
      const std::string state =
          j.final_state.empty() ? ""
                                : fmt::format(", {}{}", j.stuck ? "stuck, " : "", j.final_state);
      svg += fmt::format(
          "<rect data-point=\"\" class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" "
          "height=\"{}\"><title>{}: {} {} "
          "(submitted at {}{})</title></rect>",
          C(f.X(x)), C(f.top + row * static_cast<double>(i) + row * 0.12),
          C(std::max(0.0, f.X(x + parts[p]) - f.X(x))), C(row * 0.76), HtmlText(j.name),
          kPhaseNames[p], HumanTime(parts[p]), HumanTime(j.submit), HtmlText(state));
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  std::vector<LegendItem> legend;
  for (size_t p = 0; p < 3; ++p) {
    legend.push_back({kPhaseNames[p], Style{kPhaseColors[p], "", false}, LegendItem::kBox});
  }
  std::vector<std::string> notes;
  if (all > jobs.size()) {
    notes.push_back(
        fmt::format("Showing the first {} of {} jobs by submit time.", jobs.size(), all));
  }
  if (!labels) notes.push_back("Jobs from the top in submit order; hover a bar for its job.");
  return Figure({.title = title,
                 .about = "each bar starts at the job's submit time and stacks its seconds "
                          "queueing (every wait for resources: before the first start and after "
                          "each stop), launching (launch, relaunch and checkpoint delays) and "
                          "running",
                 .legend = Legend(legend),
                 .body = svg,
                 .notes = notes,
                 .csv_name = fmt::format("{}-{}.csv", kId, Slug(run.name)),
                 .csv = csv.text()});
}

// Natural order for node names: "node-2" before "node-10".
bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i;
      size_t ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      std::string_view na = a.substr(i, ei - i);
      std::string_view nb = b.substr(j, ej - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// The note for a chart whose file older versions of dlsched did not write.
std::string NoNewerFile(std::string_view id, std::string_view title, std::string_view file,
                        const RunData& run) {
  return Note(id, fmt::format("{}: not shown, no {} in {} (written by newer versions of dlsched).",
                              title, file, HtmlText(run.dir)));
}

// `lo`, `hi`: the section's time axis (shared by every run's chart).
std::string GanttChart(const RunData& run, double t_lo, double t_hi) {
  constexpr std::string_view kId = "node-gantt";
  const std::string title = "Allocations per node";
  if (!run.allocations) return NoNewerFile(kId, title, "allocations.csv", run);
  if (run.allocations->empty()) return Note(kId, title + ": not shown, nothing was allocated.");
  const double end = run.EndTime();
  FirstSeen<> seen;
  std::map<std::string, size_t> job_color;
  for (const AllocationRow& a : *run.allocations) {
    seen.Number(a.node);
    job_color.emplace(a.job, job_color.size());
  }
  std::vector<std::string> nodes(seen.names().begin(), seen.names().end());
  std::sort(nodes.begin(), nodes.end(), NaturalLess);
  const size_t all_nodes = nodes.size();
  if (nodes.size() > kMaxGanttNodes) nodes.resize(kMaxGanttNodes);
  // The earliest allocations on the nodes shown, at most kMaxGanttBars.
  std::vector<const AllocationRow*> bars;
  const std::set<std::string> shown(nodes.begin(), nodes.end());
  for (const AllocationRow& a : *run.allocations) {
    if (shown.contains(a.node)) bars.push_back(&a);
  }
  std::stable_sort(bars.begin(), bars.end(), [](const AllocationRow* a, const AllocationRow* b) {
    return a->start < b->start;
  });
  const size_t all_bars = bars.size();
  if (bars.size() > kMaxGanttBars) bars.resize(kMaxGanttBars);
  // Each node a row of lanes: a job's interval takes the first lane free
  // at its start, so jobs sharing a node sit one above the other.
  std::map<std::string, std::vector<std::pair<const AllocationRow*, size_t>>> per_node;
  std::map<std::string, std::vector<double>> lane_end;
  double lo = std::numeric_limits<double>::infinity();
  double hi = end;
  for (const AllocationRow* a : bars) {
    const double stop = a->end.value_or(end);
    auto& lanes = lane_end[a->node];
    size_t lane = 0;
    while (lane < lanes.size() && lanes[lane] > a->start) ++lane;
    if (lane == lanes.size()) lanes.push_back(0);
    lanes[lane] = stop;
    per_node[a->node].emplace_back(a, lane);
    lo = std::min(lo, a->start);
    hi = std::max(hi, stop);
  }
  constexpr double kLane = 9;
  constexpr double kGap = 6;
  Frame f;
  f.width = kFullWidth;
  f.left = kLabelWidth;
  double rows = 0;
  for (const auto& n : nodes)
    rows += std::max<double>(1, static_cast<double>(lane_end[n].size())) * kLane + kGap;
  f.height = f.top + rows + f.bottom;
  f.x = TimeAxis(std::min({lo, 0.0, t_lo}), std::max(hi, t_hi), "time");
  f.x.Nice(10);
  std::string svg = OpenChart(kId, f, title + " of " + run.name, RunAttr(run));
  CsvText csv({"node", "job", "start", "end", "tasks", "gpus"});
  double y = f.top;
  for (const auto& node : nodes) {
    const double height = std::max<double>(1, static_cast<double>(lane_end[node].size())) * kLane;
    svg += fmt::format(
        "<text class=\"row\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{}</title></text>",
        C(f.left - 6), C(y + height / 2 + 4), Shorten(node, 20), HtmlText(node));
    svg += fmt::format("<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                       C(f.left), C(y), C(f.PlotRight() - f.left), C(height));
    svg += SeriesOpen(node, "#59636e");
    for (const auto& [a, lane] : per_node[node]) {
      const double stop = a->end.value_or(end);
      svg += fmt::format(
          "<rect data-point=\"\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
          "<title>{} on {}: {} to {}{} ({}), {} tasks, {} GPUs</title></rect>",
          C(f.X(a->start)), C(y + static_cast<double>(lane) * kLane + 0.5),
          C(std::max(0.5, f.X(stop) - f.X(a->start))), C(kLane - 1),
          kPalette[job_color[a->job] % std::size(kPalette)], HtmlText(a->job), HtmlText(node),
          HumanTime(a->start), HumanTime(stop), a->end ? "" : " (end of run)",
          HumanTime(stop - a->start), a->tasks, Fixed(a->gpus, 3));
      csv.Row(
          {node, a->job, Num(a->start), OptNum(a->end), std::to_string(a->tasks), Num(a->gpus)});
    }
    svg += "</g>\n";
    y += height + kGap;
  }
  svg += "</svg>\n";
  std::vector<std::string> notes;
  if (all_nodes > nodes.size()) {
    notes.push_back(
        fmt::format("Showing the first {} of {} nodes by name.", nodes.size(), all_nodes));
  }
  if (all_bars > bars.size()) {
    notes.push_back(fmt::format("Showing the earliest {} of {} allocations on these nodes (to {}).",
                                bars.size(), all_bars, HumanTime(bars.back()->start)));
  }
  return Figure({.title = title,
                 .about = "one row per node, one lane per job held at once; a colour per job, "
                          "hover a bar for its job, tasks and GPUs",
                 .body = svg,
                 .notes = notes,
                 .csv_name = fmt::format("{}-{}.csv", kId, Slug(run.name)),
                 .csv = csv.text()});
}

std::string ElasticChart(const RunData& run, double t_lo, double t_hi) {
  constexpr std::string_view kId = "elastic-workers";
  const std::string title = "Workers of elastic jobs over time";
  if (!run.events) return NoNewerFile(kId, title, "events.csv", run);
  // Jobs in order of their first event, with the events that give a
  // worker count; elastic when they ran at more than one size.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const EventRow*>> points;
  for (const EventRow& e : *run.events) {
    if (!points.contains(e.job)) order.push_back(e.job);
    auto& p = points[e.job];
    if (e.workers) p.push_back(&e);
  }
  std::vector<std::string> elastic;
  for (const auto& job : order) {
    std::set<int64_t> sizes;
    for (const EventRow* e : points[job]) {
      if (*e->workers > 0) sizes.insert(*e->workers);
    }
    if (sizes.size() > 1) elastic.push_back(job);
  }
  if (elastic.empty()) {
    return Note(kId, title + ": not shown, no job changed its number of workers.");
  }
  const size_t all = elastic.size();
  if (elastic.size() > kMaxElasticJobs) elastic.resize(kMaxElasticJobs);
  // The axis spans the jobs shown, and the run's end when one of them
  // still holds workers then.
  const double end = run.EndTime();
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  int64_t most = 1;
  for (const auto& job : elastic) {
    for (const EventRow* e : points[job]) {
      lo = std::min(lo, e->time);
      hi = std::max(hi, e->time);
      most = std::max(most, *e->workers);
    }
    if (*points[job].back()->workers > 0) hi = std::max(hi, end);
  }
  Frame f;
  f.width = kFullWidth;
  f.height = 320;
  f.x = TimeAxis(std::min({lo, 0.0, t_lo}), std::max(hi, t_hi), "time");
  f.x.Nice(10);
  f.y.hi = static_cast<double>(most);
  f.y.integer = true;
  f.y.label = "workers";
  f.y.Nice(static_cast<int>(std::min<int64_t>(6, most)));
  std::string svg = OpenChart(kId, f, title + " of " + run.name, RunAttr(run));
  std::vector<LegendItem> legend;
  CsvText csv({"job", "time", "event", "workers", "by"});
  for (size_t k = 0; k < elastic.size(); ++k) {
    const std::string& job = elastic[k];
    const Style st = StyleOf(k);
    legend.push_back({HtmlText(job), st});
    svg += fmt::format("<g {}>", SeriesAttrs(job, st, 1.8));
    const auto& ps = points[job];
    std::string d;
    std::string dots;
    for (size_t i = 0; i < ps.size(); ++i) {
      const EventRow& e = *ps[i];
      const auto w = static_cast<double>(*e.workers);
      d += i == 0 ? fmt::format("M{} {}", C(f.X(e.time)), C(f.Y(w)))
                  : fmt::format("H{}V{}", C(f.X(e.time)), C(f.Y(w)));
      std::string about =
          fmt::format("{} at {}: {}, {} workers", job, HumanTime(e.time), e.event, *e.workers);
      if (!e.by.empty()) about += fmt::format(" (by {})", e.by);
      if (!e.detail.empty()) about += ": " + e.detail;
      dots += fmt::format(
          "<circle data-point=\"\" class=\"dot\" cx=\"{}\" cy=\"{}\" r=\"3\"><title>{}</title>"
          "</circle>",
          C(f.X(e.time)), C(f.Y(w)), HtmlText(about));
      csv.Row({job, Num(e.time), e.event, std::to_string(*e.workers), e.by});
    }
    // A job still holding workers at the end runs on to it.
    if (!ps.empty() && *ps.back()->workers > 0 && end > ps.back()->time) d += "H" + C(f.X(end));
    svg += fmt::format("<path class=\"line\" d=\"{}\"/>", d) + dots + "</g>\n";
  }
  svg += "</svg>\n";
  std::vector<std::string> notes;
  if (all > elastic.size()) {
    notes.push_back(
        fmt::format("Showing the first {} of {} jobs whose size changed.", elastic.size(), all));
  }
  return Figure({.title = title,
                 .about = "jobs that ran at more than one size; a dot per event (start, resize, "
                          "stop), hover it for what happened and why",
                 .legend = Legend(legend),
                 .body = svg,
                 .notes = notes,
                 .csv_name = fmt::format("{}-{}.csv", kId, Slug(run.name)),
                 .csv = csv.text()});
}

// ---- bars -------------------------------------------------------------------

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

// One bar: its height, whether it is a bound rather than a figure (drawn
// hollow, its mark above it), and its tooltip.
struct Bar {
  double value = 0;
  std::string mark;  // "≥ ", "≤ ", "? " or "" (BoundMark)
  std::string title;
};

// Bars grouped along x: groups[g] a label, bars[s][g] series s's bar there
// (nullopt: none). `reference`: a dashed line across at that value.
std::string GroupedBars(std::string_view id, std::string_view aria, Frame f,
                        const std::vector<std::string>& groups,
                        const std::vector<const RunView*>& series,
                        const std::vector<std::vector<std::optional<Bar>>>& bars,
                        std::optional<double> reference) {
  std::string svg = OpenChart(id, f, aria);
  const double plot = f.PlotRight() - f.left;
  const double group_width = plot / static_cast<double>(std::max<size_t>(1, groups.size()));
  const double bar_width =
      group_width * 0.8 / static_cast<double>(std::max<size_t>(1, series.size()));
  for (size_t g = 0; g < groups.size(); ++g) {
    svg += fmt::format("<text class=\"group\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                       C(f.left + group_width * (static_cast<double>(g) + 0.5)),
                       C(f.PlotBottom() + 16), groups[g]);
  }
  for (size_t s = 0; s < series.size(); ++s) {
    const RunView& v = *series[s];
    bool any_bound = false;
    for (const auto& b : bars[s]) any_bound = any_bound || (b && !b->mark.empty());
    const Style st = StyleOf(v.k, any_bound || v.incomplete);
    svg += fmt::format("<g {}>", SeriesAttrs(v.name(), st, 1.8, st.incomplete ? v.why : ""));
    for (size_t g = 0; g < groups.size(); ++g) {
      const auto& b = bars[s][g];
      if (!b) continue;
      const double x = f.left + group_width * static_cast<double>(g) + group_width * 0.1 +
                       bar_width * static_cast<double>(s);
      const double y = f.Y(std::max(b->value, f.y.lo));
      const double h = std::max(0.0, f.PlotBottom() - y);
      svg += fmt::format(
          "<rect data-point=\"\"{} class=\"bar{}\" x=\"{}\" y=\"{}\" width=\"{}\" "
          "height=\"{}\"><title>{}</title></rect>",
          b->mark.empty() ? "" : fmt::format(" data-bound=\"{}\"", b->mark),
          b->mark.empty() ? "" : " hatch", C(x + 0.5), C(y), C(std::max(0.5, bar_width - 1)), C(h),
          b->title);
      if (!b->mark.empty()) svg += BoundGlyph(x + bar_width / 2, y - 3, b->mark);
    }
    svg += "</g>\n";
  }
  if (reference) {
    svg += fmt::format("<line class=\"ref\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>",
                       C(f.left), C(f.PlotRight()), C(f.Y(*reference)));
  }
  return svg + "</svg>\n";
}

// The numbers of compare.csv's row for a run, by column.
std::map<std::string, double> FigureMap(const std::string& name, const metrics::RunSummary& s) {
  std::map<std::string, double> out;
  for (const CompareField& f : CompareFields(name, s)) {
    if (const auto* i = std::get_if<int64_t>(&f.value))
      out[std::string(f.key)] = static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&f.value)) out[std::string(f.key)] = *d;
  }
  return out;
}

// The figures the baseline bars compare, and which way is better.
struct BaselineFigure {
  std::string_view key;
  std::string_view label;
  bool time;
};
constexpr BaselineFigure kBaselineFigures[] = {
    {"jct_mean", "JCT mean", true},
    {"jct_p95", "JCT p95", true},
    {"makespan", "makespan", true},
    {"slowdown_mean", "slowdown mean", false},
    {"gpu_effective", "GPU effective", false},
    {"jain_index", "Jain's index", false},
};

std::string BaselineChart(const Section& sec) {
  constexpr std::string_view kId = "vs-baseline";
  std::vector<const RunView*> series;
  for (const RunView& v : sec.runs) {
    if (v.m.figures) series.push_back(&v);
  }
  const RunView& base = sec.runs[sec.baseline];
  if (series.size() < 2 || !base.m.figures) return "";
  const auto base_figs = FigureMap(base.name(), *base.m.figures);
  std::vector<std::string> groups;
  for (const auto& bf : kBaselineFigures) groups.emplace_back(bf.label);
  std::vector<std::vector<std::optional<Bar>>> bars(series.size());
  CsvText csv({"profile", "figure", "value", "baseline", "baseline_value", "ratio", "bound"});
  double top = 1.1;
  std::vector<std::string> zero;
  bool bounds = false;
  for (size_t s = 0; s < series.size(); ++s) {
    const RunView& v = *series[s];
    const auto figs = FigureMap(v.name(), *v.m.figures);
    for (const auto& bf : kBaselineFigures) {
      const double value = figs.at(std::string(bf.key));
      const double b = base_figs.at(std::string(bf.key));
      const bool lb = v.incomplete && LowerBoundFigure(bf.key);
      const bool base_lb = base.incomplete && LowerBoundFigure(bf.key);
      // The baseline against itself is 1, exactly.
      const bool self = &v == &base;
      Ratio r = Normalise(value, lb && !self, b, base_lb && !self);
      // Figures that are not bounds (utilisation, fairness) of an
      // incomplete run are over another span of time, or over censored
      // slowdowns: not comparable either way.
      if (!self && !LowerBoundFigure(bf.key) && (v.incomplete || base.incomplete)) {
        r.bound = Bound::kUnknown;
      }
      csv.Row({v.name(), std::string(bf.key), Num(value), base.name(), Num(b),
               r.ratio ? Num(*r.ratio) : "", std::string(BoundMark(r.bound))});
      if (!r.ratio) {
        if (s == 0) zero.emplace_back(bf.label);
        bars[s].emplace_back();
        continue;
      }
      bounds = bounds || r.bound != Bound::kExact;
      top = std::max(top, *r.ratio);
      auto shown = [&](double x) { return bf.time ? HumanTime(x) : Fixed(x, 3); };
      bars[s].push_back(Bar{
          *r.ratio, std::string(BoundMark(r.bound)),
          HtmlText(fmt::format("{}: {} {}{} = {}{}x {}'s {}{}", v.name(), bf.label, lb ? "≥ " : "",
                               shown(value), BoundMark(r.bound), Fixed(*r.ratio, 3), base.name(),
                               base_lb ? "≥ " : "", shown(b)))});
    }
  }
  Frame f;
  f.width = kFullWidth;
  f.height = 300;
  f.x.label = "";
  f.y.hi = top;
  f.y.label = fmt::format("x {} (1 = the baseline)", base.name());
  f.y.Nice(5);
  const std::string svg =
      GroupedBars(kId, "figures relative to " + base.name(), f, groups, series, bars, 1.0);
  std::vector<LegendItem> legend;
  for (const RunView* v : series) legend.push_back({v->Label(), v->style(), LegendItem::kBox});
  if (bounds) {
    legend.push_back(
        {"hollow: not a ratio of complete results (a run incomplete): ≥ (≤) a bound, ? "
         "either way (utilisation and fairness are then over another span, or censored "
         "slowdowns)",
         Style{"#59636e", "", true}, LegendItem::kBox, "bound"});
  }
  std::vector<std::string> notes;
  if (!zero.empty()) {
    notes.push_back(
        fmt::format("No bar where {}'s figure is 0: {}.", HtmlText(base.name()), Join(zero, ", ")));
  }
  return Figure(
      {.title = "Relative to a baseline",
       .about = fmt::format("each figure divided by {}'s (--baseline); lower is better for JCT, "
                            "makespan and slowdown, higher for GPU effective and Jain's index",
                            HtmlText(base.name())),
       .legend = Legend(legend),
       .body = svg,
       .notes = notes,
       .csv_name = std::string(kId) + ".csv",
       .csv = csv.text()});
}

std::string JctBySizeChart(const Section& sec) {
  constexpr std::string_view kId = "jct-by-size";
  const std::string title = "JCT by job size";
  struct Series {
    const RunView* view;
    std::vector<BucketJct> buckets;
  };
  std::vector<Series> series;
  std::vector<std::string> missing;
  std::map<int64_t, SizeBucket> all;
  double top = 0;
  for (const RunView& v : sec.runs) {
    if (!v.run->jobs) {
      missing.push_back(HtmlText(v.name()) + " (no jobs.csv)");
      continue;
    }
    if (!v.run->jobs->empty() && !v.run->jobs->front().gpus) {
      missing.push_back(HtmlText(v.name()) +
                        " (jobs.csv has no gpus column: written by an older dlsched)");
      continue;
    }
    Series s{&v, JctBySize(v.jobs, v.run->EndTime())};
    for (const auto& b : s.buckets) {
      all[b.bucket.lo] = b.bucket;
      top = std::max(top, b.mean_jct);
    }
    series.push_back(std::move(s));
  }
  if (all.empty()) {
    return Note(kId, fmt::format("{}: not shown, {}.", title,
                                 missing.empty() ? std::string("no jobs") : Join(missing, ", ")));
  }
  std::vector<std::string> groups;
  std::vector<int64_t> los;
  for (const auto& [lo, b] : all) {
    groups.push_back(b.Label());
    los.push_back(lo);
  }
  std::vector<const RunView*> views;
  std::vector<std::vector<std::optional<Bar>>> bars;
  CsvText csv({"profile", "gpus", "jobs", "completed", "mean_jct", "lower_bound"});
  bool bounds = false;
  for (const auto& s : series) {
    views.push_back(s.view);
    std::vector<std::optional<Bar>> row(los.size());
    for (const auto& b : s.buckets) {
      const size_t g =
          static_cast<size_t>(std::find(los.begin(), los.end(), b.bucket.lo) - los.begin());
      const std::string mark = b.LowerBound() ? "≥ " : "";
      bounds = bounds || b.LowerBound();
      row[g] = Bar{b.mean_jct, mark,
                   HtmlText(fmt::format("{}, {} GPUs: mean JCT {}{} over {} jobs ({} completed)",
                                        s.view->name(), b.bucket.Label(), mark,
                                        HumanTime(b.mean_jct), b.jobs, b.completed))};
      csv.Row({s.view->name(), b.bucket.Label(), std::to_string(b.jobs),
               std::to_string(b.completed), Num(b.mean_jct), b.LowerBound() ? "true" : "false"});
    }
    bars.push_back(std::move(row));
  }
  Frame f;
  f.width = kFullWidth;
  f.height = 300;
  f.x.label = "GPUs the job asks for";
  f.y = TimeAxis(0, std::max(top, 1e-9), "mean JCT");
  f.y.Nice(5);
  const std::string svg = GroupedBars(kId, title, f, groups, views, bars, std::nullopt);
  std::vector<LegendItem> legend;
  for (const RunView* v : views) legend.push_back({v->Label(), v->style(), LegendItem::kBox});
  if (bounds) {
    legend.push_back(
        {"hollow, marked ≥: jobs of that size not completed, counted at the run's "
         "end (a lower bound)",
         Style{"#59636e", "", true}, LegendItem::kBox, "bound"});
  }
  std::vector<std::string> warnings;
  if (views.size() > 1) {
    std::vector<std::vector<const JobRow*>> sets;
    for (const RunView* v : views) sets.push_back(v->jobs);
    if (DifferentJobsCompleted(sets)) {
      warnings.push_back(
          "<span data-warn=\"different-jobs\">The profiles completed different sets of jobs: "
          "each bar counts every job of its size, those not completed at the run's end (marked "
          "≥).</span>");
    }
  }
  std::vector<std::string> notes;
  if (!missing.empty()) notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  return Figure({.title = title,
                 .about = "mean JCT per GPU-count bucket (what the job asks for), over every "
                          "job of that size",
                 .legend = Legend(legend),
                 .body = svg,
                 .notes = notes,
                 .warnings = warnings,
                 .csv_name = std::string(kId) + ".csv",
                 .csv = csv.text()});
}

// ---- the comparison table -------------------------------------------------

// A cell as shown: numbers with the decimals their size needs.
std::string CellText(const std::string& raw) {
  double v = 0;
  auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc() || end != raw.data() + raw.size() || !std::isfinite(v)) {
    return HtmlText(raw);
  }
  const double a = std::fabs(v);
  return Fixed(v, a >= 100 ? 1 : a >= 1 ? 2 : 3);
}

// Whether compare.csv's (or sweep.csv's) row is a complete result, by its
// status and counts.
bool CompleteCsvRow(const std::vector<std::string>& header, const std::vector<std::string>& row) {
  for (size_t i = 0; i < header.size() && i < row.size(); ++i) {
    if (header[i] == "status" && !row[i].empty() && row[i] != "all done") return false;
    if (header[i] == "stuck" || header[i] == "failed" || header[i] == "unfinished" ||
        header[i] == "jct_censored") {
      double v = 0;
      auto [end, ec] = std::from_chars(row[i].data(), row[i].data() + row[i].size(), v);
      if (ec == std::errc() && v > 0) return false;
    }
  }
  return true;
}

std::string Table(std::string_view about, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::vector<bool>& incomplete) {
  std::string out = "<div class=\"scroll\"><table data-chart=\"compare-table\"><thead><tr>";
  for (const auto& h : header) out += "<th>" + HtmlText(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  bool any = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    const bool inc = incomplete[r];
    any = any || inc;
    out += fmt::format("<tr data-series=\"{}\"{}>", HtmlText(row.empty() ? "" : row[0]),
                       inc ? " data-incomplete=\"\"" : "");
    for (size_t i = 0; i < row.size(); ++i) {
      const bool bound = inc && i < header.size() && LowerBoundFigure(header[i]);
      std::string shown = i == 0 ? HtmlText(row[i]) : CellText(row[i]);
      if (i == 0 && inc) shown += " <b class=\"incl\">(incomplete)</b>";
      if (bound && !row[i].empty()) shown = "≥ " + shown;
      out += fmt::format("<td data-point=\"\" title=\"{}\">{}</td>", HtmlText(row[i]), shown);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  std::string text;
  for (size_t i = 0; i < header.size(); ++i) {
    if (i > 0) text += ',';
    AppendCsvField(text, header[i]);
  }
  text += '\n';
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) text += ',';
      AppendCsvField(text, row[i]);
    }
    text += '\n';
  }
  std::vector<std::string> notes;
  if (any) {
    notes.push_back(
        "<span data-legend=\"incomplete\">≥: a lower bound. An incomplete run (interrupted, or "
        "with jobs not completed by its end) counts those jobs at the run's end in its JCT, "
        "makespan and slowdown.</span>");
  }
  return Figure({.title = "Comparison",
                 .about = std::string(about),
                 .body = out,
                 .notes = notes,
                 .csv_name = "compare-table.csv",
                 .csv = text});
}

std::string CompareTable(const Section& sec) {
  const ReportDir& dir = *sec.dir;
  const bool recomputed = std::any_of(sec.runs.begin(), sec.runs.end(),
                                      [](const RunView& v) { return v.m.recomputed; });
  if (dir.compare && dir.overlaid.empty() && !recomputed) {
    std::vector<std::vector<std::string>> rows;
    std::vector<bool> incomplete;
    for (const auto& r : dir.compare->rows) {
      rows.push_back(r.cells);
      incomplete.push_back(!CompleteCsvRow(dir.compare->header, r.cells));
    }
    return Table("from compare.csv, one row per profile", dir.compare->header, rows, incomplete);
  }
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> incomplete;
  for (const RunView& v : sec.runs) {
    if (!v.m.figures) continue;
    const std::vector<CompareField> fields = CompareFields(v.name(), *v.m.figures);
    if (header.empty()) {
      for (const auto& f : fields) header.emplace_back(f.key);
    }
    std::vector<std::string> row;
    for (const auto& f : fields) {
      std::visit(
          [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
              row.push_back(x);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              row.push_back(std::to_string(x));
            } else {
              row.push_back(Num(x));
            }
          },
          f.value);
    }
    rows.push_back(std::move(row));
    incomplete.push_back(v.incomplete);
  }
  if (rows.empty()) {
    return Note("compare-table", "Comparison: not shown, no compare.csv and no summary.json in " +
                                     HtmlText(dir.dir) + ".");
  }
  std::string about = recomputed ? "computed from each run's jobs.csv and utilization.csv"
                                 : "from each run's summary.json";
  about += " (compare.csv's columns; times in seconds, utilisation as a fraction)";
  return Table(about, header, rows, incomplete);
}

// ---- the sweep --------------------------------------------------------------

// How a sweep figure reads: seconds, a fraction of capacity, or a number.
enum class FigureKind { kTime, kFraction, kNumber };
FigureKind KindOf(std::string_view figure) {
  for (std::string_view t : {"jct_mean", "jct_p50", "jct_p95", "jct_p99", "makespan",
                             "mean_queueing", "mean_launching", "mean_running", "end_time"}) {
    if (figure == t) return FigureKind::kTime;
  }
  for (std::string_view t : {"gpu_allocated", "gpu_effective", "cpu_allocated", "cpu_effective"}) {
    if (figure == t) return FigureKind::kFraction;
  }
  return FigureKind::kNumber;
}

std::string FigureValue(FigureKind kind, double v) {
  switch (kind) {
    case FigureKind::kTime:
      return HumanTime(v);
    case FigureKind::kFraction:
      return Percent(v);
    case FigureKind::kNumber:
      break;
  }
  return Fixed(v, std::fabs(v) >= 100 ? 1 : 3);
}

// A sweep chart: one line per profile through its points' means, with
// error bars (+-1 sd over seeds); `figures` its figures, the second dashed.
// `by_profile[k]`: profile k's points, in sweep.csv's order.
std::string SweepSvg(std::string_view id, Frame f,
                     const std::vector<std::vector<const SweepPoint*>>& by_profile,
                     const std::vector<std::string>& profiles, const std::vector<size_t>& styles,
                     const std::vector<std::string>& figures, CsvText* csv) {
  std::string svg = OpenChart(id, f, id);
  for (size_t k = 0; k < profiles.size(); ++k) {
    const Style st = StyleOf(styles[k]);
    const std::vector<const SweepPoint*>& points = by_profile[k];
    svg += fmt::format(
        "<g {}>",
        SeriesAttrs(profiles[k], st,
                    profiles.size() > 1 ? 1.5 + 2.0 * static_cast<double>(profiles.size() - 1 - k) /
                                                    static_cast<double>(profiles.size() - 1)
                                        : 1.8));
    std::string marks;
    for (size_t fi = 0; fi < figures.size(); ++fi) {
      const std::string& figure = figures[fi];
      std::string d;
      std::string perf;  // the segments into or out of an incomplete point
      const SweepPoint* prev = nullptr;
      for (const SweepPoint* p : points) {
        const SweepStat* s = p->Find(figure);
        if (s == nullptr || s->n == 0) continue;
        const std::string xy = fmt::format("{} {}", C(f.X(p->load)), C(f.Y(s->mean)));
        if (prev != nullptr && (prev->incomplete > 0 || p->incomplete > 0)) {
          perf +=
              fmt::format("M{} {}L{}", C(f.X(prev->load)), C(f.Y(prev->Find(figure)->mean)), xy);
        }
        d += (d.empty() ? "M" : "L") + xy;
        prev = p;
      }
      svg += fmt::format("<path class=\"line{}\" d=\"{}\"/>", fi > 0 ? " dash" : "", d);
      // Segments into an incomplete point: thicker, perforated.
      if (!perf.empty()) {
        svg +=
            fmt::format("<path class=\"line{} incseg\" d=\"{}\"/><path class=\"perf\" d=\"{}\"/>",
                        fi > 0 ? " dash" : "", perf, perf);
      }
    }
    for (const SweepPoint* p : points) {
      std::string about;
      std::string shapes;
      for (size_t fi = 0; fi < figures.size(); ++fi) {
        const std::string& figure = figures[fi];
        const SweepStat* s = p->Find(figure);
        if (s == nullptr || s->n == 0) continue;
        const FigureKind kind = KindOf(figure);
        const bool bound = p->incomplete > 0 && LowerBoundFigure(figure);
        const double x = f.X(p->load);
        const double y = f.Y(s->mean);
        if (s->n > 1 && s->sd > 0) {
          const double y0 = f.Y(s->mean - s->sd);
          const double y1 = f.Y(s->mean + s->sd);
          shapes += fmt::format("<path class=\"err\" d=\"M{0} {1}V{2}M{3} {1}H{4}M{3} {2}H{4}\"/>",
                                C(x), C(y0), C(y1), C(x - 3.5), C(x + 3.5));
        }
        const bool hollow = fi > 0;
        if (p->incomplete > 0) {
          shapes += fmt::format("<path class=\"tri{}\" d=\"M{} {}l5 8.5h-10Z\"/>",
                                hollow ? " hollow" : "", C(x), C(y - 5.5));
          if (bound) {
            shapes += BoundGlyph(x + 11, y + 4, "≥ ");
          }
        } else {
          shapes += fmt::format("<circle class=\"dot{}\" cx=\"{}\" cy=\"{}\" r=\"3.5\"/>",
                                hollow ? " hollow" : "", C(x), C(y));
        }
        about += fmt::format("{}{} {}{}", about.empty() ? "" : ", ", figure, bound ? "≥ " : "",
                             FigureValue(kind, s->mean));
        if (s->sd > 0) about += fmt::format(" ± {}", FigureValue(kind, s->sd));
        if (csv != nullptr) {
          csv->Row({p->profile, Num(p->load), figure, std::to_string(p->cells),
                    std::to_string(p->incomplete), Num(s->mean), Num(s->sd), Num(s->min),
                    Num(s->max), bound ? "true" : "false"});
        }
      }
      if (shapes.empty()) continue;
      std::string runs = fmt::format("{} run{}", p->cells, p->cells == 1 ? "" : "s");
      if (p->incomplete > 0) {
        std::vector<std::string> st(p->statuses.begin(), p->statuses.end());
        std::sort(st.begin(), st.end());
        st.erase(std::unique(st.begin(), st.end()), st.end());
        runs += fmt::format("; {} incomplete: {}", p->incomplete, Join(st, "; "));
      }
      marks += fmt::format(
          "<g data-point=\"\"{}><title>{}</title>{}</g>",
          p->incomplete > 0 ? fmt::format(" data-incomplete=\"{}\"", p->incomplete) : "",
          HtmlText(
              fmt::format("{} at load {}: {} ({})", p->profile, Fixed(p->load, 4), about, runs)),
          shapes);
    }
    svg += marks + "</g>\n";
  }
  return svg + "</svg>\n";
}

// The sweep's colours follow the comparison's when a profile is a run of
// the same section.
std::string SweepCharts(const ReportDir& dir, const std::vector<RunView>& runs) {
  const SweepData& sweep = *dir.sweep;
  if (sweep.points.empty()) {
    return Note("jct-vs-load", "Sweep: not shown, sweep.csv has no rows.");
  }
  // Profiles in order of their first point, each with its points: one
  // pass, so a sweep of 100,000 profiles costs no more than one of 100,000
  // loads.
  std::vector<std::string> profiles;
  std::vector<std::vector<const SweepPoint*>> by_profile;
  FirstSeen<> profile_index;
  double lo = sweep.points.front().load;
  double hi = lo;
  bool incomplete = false;
  bool spread = false;
  for (const SweepPoint& p : sweep.points) {
    const size_t k = profile_index.Number(p.profile);
    if (k == profiles.size()) {
      profiles.push_back(p.profile);
      by_profile.emplace_back();
    }
    by_profile[k].push_back(&p);
    lo = std::min(lo, p.load);
    hi = std::max(hi, p.load);
    incomplete = incomplete || p.incomplete > 0;
    for (const auto& [name, s] : p.stats) spread = spread || s.n > 1;
  }
  std::unordered_map<std::string_view, size_t> run_style;
  for (const RunView& v : runs) run_style[v.name()] = v.k;  // the last run of a name, as before
  std::vector<size_t> styles;
  for (size_t k = 0; k < profiles.size(); ++k) {
    const auto it = run_style.find(profiles[k]);
    styles.push_back(it != run_style.end() ? it->second : runs.size() + k);
  }
  auto legend_for = [&](bool two) {
    std::vector<LegendItem> legend;
    for (size_t k = 0; k < profiles.size(); ++k) {
      legend.push_back({HtmlText(profiles[k]), StyleOf(styles[k])});
    }
    if (two) {
      legend.push_back({"mean", kGrey, LegendItem::kLine});
      legend.push_back({"p95", kGrey, LegendItem::kDash});
    }
    if (spread) {
      legend.push_back({"mean over seeds, bars ±1 standard deviation", kGrey, LegendItem::kErrorBar,
                        "error-bars"});
    }
    if (incomplete) {
      legend.push_back(
          {"▲ and perforated: a point with incomplete cells (interrupted, or jobs "
           "not completed): its JCT, makespan and slowdown are lower bounds (≥)",
           kGrey, LegendItem::kMarker, "incomplete"});
    }
    return Legend(legend);
  };
  auto frame = [&](double width, double height, const std::vector<std::string>& figures) {
    Frame f;
    f.width = width;
    f.height = height;
    f.x.lo = lo;
    f.x.hi = hi > lo ? hi : lo + 1;
    // dlsched sweep's load: a factor on the arrival rate (submit times / L).
    f.x.label = "load factor (arrival rate x L; 1 = the workload as given)";
    f.x.Nice(width > kHalfWidth ? 10 : 5);
    double top = 0;
    double bottom = 0;
    for (const SweepPoint& p : sweep.points) {
      for (const auto& fig : figures) {
        if (const SweepStat* s = p.Find(fig); s != nullptr && s->n > 0) {
          top = std::max(top, s->mean + s->sd);
          bottom = std::min(bottom, s->mean - s->sd);
        }
      }
    }
    const FigureKind kind = KindOf(figures[0]);
    if (kind == FigureKind::kTime) {
      f.y = TimeAxis(bottom, std::max(top, 1e-9), figures.size() > 1 ? "JCT" : figures[0]);
    } else if (kind == FigureKind::kFraction) {
      f.y = FractionAxis(figures[0] + " (share of capacity)", std::max(top, 1e-9));
      f.y.lo = bottom;
    } else {
      f.y.lo = bottom;
      f.y.hi = top > bottom ? top : bottom + 1;
      f.y.label = figures[0];
    }
    f.y.Nice(5);
    return f;
  };
  auto csv_header = [] {
    return CsvText({"profile", "load", "figure", "cells", "incomplete_cells", "mean", "sd", "min",
                    "max", "lower_bound"});
  };
  std::string out;
  const bool has_jct =
      std::find(sweep.figures.begin(), sweep.figures.end(), "jct_mean") != sweep.figures.end();
  if (has_jct) {
    std::vector<std::string> figs = {"jct_mean"};
    if (std::find(sweep.figures.begin(), sweep.figures.end(), "jct_p95") != sweep.figures.end()) {
      figs.emplace_back("jct_p95");
    }
    CsvText csv = csv_header();
    const std::string svg = SweepSvg("jct-vs-load", frame(kFullWidth, 340, figs), by_profile,
                                     profiles, styles, figs, &csv);
    out += Figure({.title = "JCT against load",
                   .about = "from sweep.csv, the mean over seeds per profile and load",
                   .legend = legend_for(figs.size() > 1),
                   .body = svg,
                   .csv_name = "jct-vs-load.csv",
                   .csv = csv.text()});
  } else {
    out += Note("jct-vs-load", "JCT against load: not shown, sweep.csv has no jct_mean column.");
  }
  // Every other figure of compare.csv, small: the same lines and marks.
  std::string grid;
  for (const std::string& fig : sweep.figures) {
    if (fig == "total") continue;
    const std::string id = "sweep-" + fig;
    CsvText csv = csv_header();
    const std::string svg =
        SweepSvg(id, frame(kHalfWidth, 250, {fig}), by_profile, profiles, styles, {fig}, &csv);
    grid += Figure({.title = HtmlText(fig),
                    .about = LowerBoundFigure(fig) ? "≥ where cells are incomplete" : "",
                    .body = svg,
                    .csv_name = id + ".csv",
                    .csv = csv.text()});
  }
  if (!grid.empty()) {
    out +=
        "<h3>Every figure against load<small>sweep.csv's columns, legend as above</small></h3>\n"
        "<div class=\"pair\">\n" +
        grid + "</div>\n";
  }
  return out;
}

// ---- the page ---------------------------------------------------------------

constexpr std::string_view kStyle = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--grid:#eef1f4}
*{box-sizing:border-box}
body{margin:0;background:#f6f8fa;color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans","Liberation Sans",sans-serif}
main{max-width:1240px;margin:0 auto;padding:20px 24px 40px}
header h1{font-size:22px;margin:0 0 2px}
header p{margin:0 0 16px;color:var(--muted)}
nav a{margin-right:14px}
section.dir{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 24px 10px;margin:0 0 24px}
section.dir>h2{font-size:18px;margin:0 0 4px;word-break:break-all}
h3{font-size:15px;margin:22px 0 8px;padding-top:10px;border-top:1px solid var(--grid)}
h3 small{font-weight:400;color:var(--muted);margin-left:8px}
.meta{color:var(--muted);margin:0 0 6px}
.meta li{margin:1px 0}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:8px 16px}
figure{margin:0 0 14px;min-width:0;position:relative}
figcaption{margin:0 0 4px}
figcaption .about{color:var(--muted);font-size:12.5px;margin-left:6px}
figcaption a.csv,figcaption label.logbtn{margin-left:10px;font-size:12px;border:1px solid var(--line);border-radius:10px;padding:0 8px;white-space:nowrap}
figcaption a.csv{color:#0969da;text-decoration:none}
figcaption a.csv:hover{background:#ddf4ff}
label.logbtn{color:var(--muted);cursor:pointer;user-select:none}
label.logbtn::before{content:"\2610  "}
figure>input.logsw{position:absolute;opacity:0;width:1px;height:1px;margin:0}
.logsw:checked~figcaption label.logbtn{color:#0969da;border-color:#54aeff;background:#ddf4ff}
.logsw:checked~figcaption label.logbtn::before{content:"\2611  "}
.logsw:focus-visible~figcaption label.logbtn{outline:2px solid #0969da}
.logsw:checked~.v-lin,.logsw:checked~* .v-lin,.logsw:not(:checked)~.v-log,.logsw:not(:checked)~* .v-log{display:none}
svg{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:var(--muted)}
svg text.title{font-size:12px;fill:var(--fg)}
svg text.group{font-size:12px;fill:var(--fg)}
svg text.bound{font-size:13px;fill:var(--fg)}
svg path.bound{fill:none;stroke:var(--fg);stroke-width:1.4;stroke-linecap:round;stroke-linejoin:round}
svg .grid{stroke:var(--grid);stroke-width:1}
svg .axis{stroke:#8c959f;stroke-width:1}
svg .band{fill:#f6f8fa}
svg .outside{fill:#8c959f;fill-opacity:.14}
svg .bar{fill:currentColor}
svg .bar.hatch{fill-opacity:.22;stroke:currentColor;stroke-width:1.4;stroke-dasharray:3 2}
svg .ref{stroke:var(--fg);stroke-width:1;stroke-dasharray:4 3}
svg .line{fill:none;stroke:currentColor;stroke-width:var(--w,1.8);stroke-linejoin:round;stroke-dasharray:var(--d,none)}
svg .dash{stroke-dasharray:5 3;stroke-width:calc(var(--w,1.8)*.8)}
svg .pat .line.dash{stroke-dasharray:var(--d);stroke-opacity:.55}
svg .inc .line,svg .line.incseg{stroke-width:calc(var(--w,1.8) + 1.4)}
svg .perf{fill:none;stroke:#fff;stroke-width:calc(var(--w,1.8)*.45 + .9);stroke-dasharray:0 7;stroke-linecap:round;pointer-events:none}
svg .censor path{fill:none;stroke:currentColor;stroke-width:1.5;stroke-dasharray:3 2.5}
svg .err{fill:none;stroke:currentColor;stroke-width:1.2}
svg .pt{fill:currentColor;fill-opacity:0}
svg g[data-point]:hover .pt,svg .pt:hover{fill-opacity:1}
svg .dot{fill:currentColor;stroke:#fff;stroke-width:1}
svg .dot.hollow{fill:#fff;stroke:currentColor;stroke-width:1.5}
svg .tri{fill:currentColor;stroke:var(--fg);stroke-width:.8}
svg .tri.hollow{fill:#fff;stroke:currentColor;stroke-width:1.6}
svg g[data-series]:hover .line{stroke-width:4}
svg rect[data-point]{stroke:#fff;stroke-width:.5}
svg [data-series] rect[data-point]:hover{stroke:var(--fg);stroke-width:1}
.legend{display:flex;flex-wrap:wrap;gap:2px 16px;font-size:12.5px;color:var(--muted);margin:2px 0 4px}
.legend .sw{display:inline;vertical-align:middle;margin-right:5px;width:26px;height:12px}
b.incl{color:#9a6700;font-weight:600}
.note{color:var(--muted);margin:4px 0;font-size:13px}
.cap{color:var(--muted);font-size:12.5px;margin:2px 0 0}
.warn{color:#7d4e00;background:#fff8c5;border:1px solid #eac54f;border-radius:6px;padding:3px 8px;margin:4px 0;font-size:12.5px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:4px 12px;border-bottom:1px solid var(--grid);text-align:right;white-space:nowrap}
th{border-bottom:1px solid var(--line);font-weight:600}
th:first-child,td:first-child{text-align:left}
tbody tr:hover{background:#f6f8fa}
.provenance{margin:0 0 8px;font-size:13px}
.provenance summary{cursor:pointer;color:var(--muted)}
.provenance td{text-align:left;white-space:normal;word-break:break-all}
.provenance pre{background:#f6f8fa;padding:6px 10px;margin:4px 0;overflow-x:auto;font-size:12px}
tbody tr[data-incomplete]{background:#fffbea}
)css";

// A run's line in the section's list; its window when the runs' differ
// (else the section says it once).
std::string RunMeta(const RunView& v, bool mixed_windows) {
  const RunData& run = *v.run;
  std::string line = fmt::format("<b>{}</b>", HtmlText(run.name));
  if (v.m.figures) {
    const metrics::RunSummary& s = *v.m.figures;
    const int64_t not_done = int64_t{s.stuck_jobs} + s.failed_jobs + s.unfinished_jobs;
    line += fmt::format(": {} jobs, {} completed, {} not done", s.total_jobs, s.completed_jobs,
                        not_done);
    if (run.summary && run.summary->has_end_time) line += ", ended at " + HumanTime(s.end_time);
    if (s.deadlocked) line += ", <b>deadlocked</b>";
    if (s.partial) line += ", <b>partial</b> (interrupted)";
  } else {
    line += ": no summary.json";
  }
  if (v.m.window && mixed_windows) {
    line += fmt::format(", measured over {}{}", HtmlText(WindowText(*v.m.window)),
                        v.m.recomputed ? " (computed from jobs.csv and utilization.csv)" : "");
  }
  if (v.m.window_unapplied) {
    line += ", <b>--window not applied</b> (no jobs.csv: figures from summary.json)";
  }
  if (v.incomplete) {
    line += fmt::format(
        " <b class=\"incl\">incomplete: {}; its JCT, makespan and slowdown are "
        "lower bounds (≥)</b>",
        HtmlText(v.why));
  }
  return fmt::format("<li{}>{}</li>",
                     v.incomplete ? fmt::format(" data-incomplete=\"{}\"", HtmlText(v.why)) : "",
                     line);
}

// `text`'s lines, each escaped: line breaks kept, for <pre>.
std::string HtmlLines(std::string_view text) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    out += HtmlText(text.substr(at, end - at)) + "\n";
    at = end + 1;
  }
  return out;
}

// How the directory's results were made (provenance.h), and the command
// that makes them again.
std::string ProvenanceBlock(const ReportDir& dir) {
  if (!dir.provenance) return "";
  const Provenance& p = *dir.provenance;
  std::string out = fmt::format(
      "<details class=\"provenance\" data-provenance>\n<summary>How these results were made: "
      "dlsched {}, <code>{}</code> (<code>dlsched rerun {}</code> runs it again and checks the "
      "files are the same)</summary>\n",
      HtmlText(p.version), HtmlText(ShellCommand(p.command)), HtmlText(dir.dir));
  out +=
      "<div class=\"scroll\"><table><thead><tr><th>input</th><th>format</th><th>file</th>"
      "<th>SHA-256</th></tr></thead><tbody>\n";
  for (const auto& in : p.inputs) {
    out += fmt::format(
        "<tr data-input=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>\n",
        HtmlText(in.role), HtmlText(in.role), in.format.empty() ? "YAML" : HtmlText(in.format),
        HtmlText(in.path), HtmlText(in.sha256));
  }
  out += "</tbody></table></div>\n";
  for (const auto& pr : p.profiles) {
    std::string from =
        !pr.builtin.empty() ? "built-in " + HtmlText(pr.builtin) : "file " + HtmlText(pr.file);
    for (const auto& set : pr.set) from += ", --set " + HtmlText(set);
    out += fmt::format(
        "<details data-profile=\"{}\"><summary>profile <b>{}</b> ({})</summary><pre>{}</pre>"
        "</details>\n",
        HtmlText(pr.name), HtmlText(pr.name), from, HtmlLines(pr.yaml));
  }
  std::vector<std::string> seeds;
  if (p.seeds) {
    for (uint64_t seed : *p.seeds) seeds.push_back(std::to_string(seed));
  }
  out += fmt::format("<p>seeds: {}; window: {}</p>\n</details>\n",
                     p.seeds ? Join(seeds, ", ") : "none (jobs from a file)",
                     p.window ? HtmlText(*p.window) : "none (the whole run)");
  return out;
}

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

std::string SectionHtml(const ReportDir& dir, size_t index, const RenderOptions& options,
                        int* ids) {
  const Section sec = MakeSection(dir, options, ids);
  std::string out =
      fmt::format("<section class=\"dir\" id=\"dir-{}\" data-dir=\"{}\">\n<h2>{}</h2>\n", index + 1,
                  HtmlText(dir.dir), HtmlText(dir.dir));
  std::string kind;
  if (!dir.overlaid.empty()) {
    kind = fmt::format("A comparison of {} runs from {} directories, on one time axis.",
                       dir.runs.size(), dir.overlaid.size());
  } else if (dir.runs.size() == 1 && !dir.compare) {
    kind = "A simulate run.";
  } else if (!dir.runs.empty()) {
    kind = fmt::format("A comparison of {} profiles, on one time axis.", dir.runs.size());
  } else if (dir.sweep) {
    kind = "A sweep (sweep.csv): every figure per profile and load, the mean over seeds.";
  } else {
    kind = "No run directories here.";
  }
  if (sec.window) {
    const bool recomputed = std::any_of(sec.runs.begin(), sec.runs.end(),
                                        [](const RunView& v) { return v.m.recomputed; });
    kind += fmt::format(" Figures over {}{}{}.", HtmlText(WindowText(*sec.window)),
                        options.window ? " (--window)" : "",
                        recomputed ? ", computed from jobs.csv and utilization.csv" : "");
  }
  if (sec.mixed_windows) kind += " <b>The runs were measured over different windows.</b>";
  if (options.window && dir.sweep) {
    kind +=
        " The sweep's figures are sweep.csv's: --window does not apply to them (run the "
        "sweep with --window).";
  }
  out += "<div class=\"meta\">" + kind + "<ul>";
  for (const RunView& v : sec.runs) out += RunMeta(v, sec.mixed_windows);
  out += "</ul></div>\n";
  out += ProvenanceBlock(dir);
  // A sweep's directory has no runs of its own to compare: its cells are
  // the sweep chart's points.
  if (!dir.runs.empty() || dir.compare || !dir.sweep) out += CompareTable(sec);
  if (sec.runs.size() > 1) out += BaselineChart(sec);
  if (dir.sweep) out += "<h3>Sweep</h3>\n" + SweepCharts(dir, sec.runs);
  if (!dir.runs.empty()) {
    out += "<h3>Utilisation</h3>\n<div class=\"pair\">\n";
    out += UtilizationChart("gpu-util", "nvidia.com/gpu", "GPU", sec);
    out += UtilizationChart("cpu-util", "cpu", "CPU", sec);
    out += "</div>\n<h3>Queue</h3>\n<div class=\"pair\">\n";
    out += StepChart({"queue-length", "Jobs waiting over time",
                      "jobs submitted and not yet placed, or stopped and waiting to relaunch "
                      "(from events.csv)",
                      "jobs waiting", "jobs", " jobs",
                      [](const RunView& v, std::string* why) -> std::optional<StepSeries> {
                        auto q = QueueOverTime(*v.run);
                        if (!q) {
                          *why = "no events.csv";
                          return std::nullopt;
                        }
                        return q->jobs;
                      }},
                     sec);
    out += StepChart({"pending-gpus", "Pending GPU demand over time",
                      "GPUs asked for by the jobs waiting (jobs.csv's gpus, events.csv)",
                      "GPUs asked for", "gpus", " GPUs",
                      [](const RunView& v, std::string* why) -> std::optional<StepSeries> {
                        auto q = QueueOverTime(*v.run);
                        if (!q || !q->gpus) {
                          *why = !q ? "no events.csv"
                                    : "jobs.csv has no gpus column: written by an older dlsched";
                          return std::nullopt;
                        }
                        return *q->gpus;
                      }},
                     sec);
    out += "</div>\n<h3>Completion and queueing</h3>\n<div class=\"pair\">\n";
    out += CdfChart({"jct-cdf", "CDF of job completion time", "job completion time", "completed",
                     "had not completed", CdfOf::kJct, true},
                    sec);
    out += CdfChart(
        {"queueing-cdf", "CDF of queueing delay", "queueing delay (every wait for resources)",
         "completed", "had not completed", CdfOf::kQueueing, true},
        sec);
    out += CdfChart({"slowdown-cdf", "CDF of slowdown", "slowdown (JCT / ideal runtime)",
                     "completed", "had not completed", CdfOf::kSlowdown, false},
                    sec);
    out += StepChart({"preemptions", "Preemptions over time",
                      "jobs stopped or shrunk for another job so far (from events.csv)",
                      "preemptions so far", "preemptions", " preemptions",
                      [](const RunView& v, std::string* why) -> std::optional<StepSeries> {
                        auto p = PreemptionsOverTime(*v.run);
                        if (!p) *why = "no events.csv";
                        return p;
                      }},
                     sec);
    out += "</div>\n";
    out += JctBySizeChart(sec);
  }
  // The phases charts share one axis: the span of the jobs each shows.
  std::pair<double, double> span{std::numeric_limits<double>::infinity(), 0};
  for (const RunView& v : sec.runs) {
    const auto jobs = PhaseJobs(*v.run);
    if (jobs.empty()) continue;
    const auto [lo, hi] = PhaseSpan(jobs);
    span = {std::min(span.first, lo), std::max(span.second, hi)};
  }
  for (const RunView& v : sec.runs) {
    const RunData& run = *v.run;
    out +=
        fmt::format("<h3>{}{}<small>{}</small></h3>\n", HtmlText(run.name),
                    v.incomplete ? " <b class=\"incl\">(incomplete)</b>" : "", HtmlText(run.dir));
    out += PhasesChart(run, span);
    out += GanttChart(run, sec.t_lo, sec.t_hi);
    out += ElasticChart(run, sec.t_lo, sec.t_hi);
  }
  return out + "</section>\n";
}

}  // namespace

std::string HtmlText(std::string_view text) {
  const std::string line = core::EscapeText(text, std::numeric_limits<size_t>::max() / 2);
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

core::Status CheckRenderOptions(std::span<const ReportDir> dirs, const RenderOptions& options) {
  if (options.baseline.empty()) return {};
  std::vector<std::string> names;
  for (const ReportDir& d : dirs) {
    for (const RunData& run : d.runs) names.push_back(run.name);
    if (d.sweep) {
      for (const SweepPoint& p : d.sweep->points) names.push_back(p.profile);
    }
  }
  for (const auto& n : names) {
    if (n == options.baseline) return {};
  }
  FirstSeen<> unique;
  for (const auto& n : names) unique.Number(n);
  return core::Errorf("--baseline: no profile {} in the report (profiles: {})",
                      core::internal::QuoteInput(options.baseline),
                      Join({unique.names().begin(), unique.names().end()}, ", "));
}

std::string RenderHtml(std::span<const ReportDir> dirs, const RenderOptions& options) {
  std::vector<std::string> names;
  for (const auto& d : dirs) names.push_back(HtmlText(d.dir));
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      // Nothing is fetched, and no script runs, whatever the names hold.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>dlsched report: {}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n"
      "<header><h1>dlsched report</h1><p>{}</p></header>\n",
      Join(names, ", "), kStyle, Join(names, ", "));
  if (dirs.size() > 1) {
    out += "<nav>";
    for (size_t i = 0; i < dirs.size(); ++i) {
      out += fmt::format("<a href=\"#dir-{}\">{}</a>", i + 1, names[i]);
    }
    out += "</nav>\n";
  }
  int ids = 0;
  for (size_t i = 0; i < dirs.size(); ++i) out += SectionHtml(dirs[i], i, options, &ids);
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace dlsched::report
