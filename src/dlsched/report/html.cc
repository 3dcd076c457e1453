#include "dlsched/report/html.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/core/text.h"

namespace dlsched::report {
namespace {

// Tableau 10: distinct for most colour-blind readers, readable on white.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
const char* Color(size_t i) { return kPalette[i % std::size(kPalette)]; }

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

// ---- axes -----------------------------------------------------------------

struct Axis {
  double lo = 0;
  double hi = 1;
  double scale = 1;      // tick label = value * scale
  std::string suffix;    // after each tick label ("%")
  std::string label;     // the axis title, with its unit
  bool integer = false;  // ticks at whole numbers only
  std::vector<double> ticks;
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
  std::string TickLabel(double v) const { return Fixed(v * scale, decimals) + suffix; }
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

  double X(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * (width - left - right); }
  double Y(double v) const {
    return height - bottom - (v - y.lo) / (y.hi - y.lo) * (height - top - bottom);
  }
  double PlotBottom() const { return height - bottom; }
  double PlotRight() const { return width - right; }
};

// <svg data-chart=...> with its grid, ticks and axis titles; the y axis is
// drawn only when it has ticks (rows of bars label themselves).
std::string OpenChart(std::string_view id, const Frame& f, std::string_view aria,
                      std::string_view extra_attrs = "") {
  std::string out = fmt::format(
      "<svg data-chart=\"{}\"{} viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\n<g class=\"axes\">",
      id, extra_attrs, C(f.width), C(f.height), C(f.width), C(f.height), HtmlText(aria));
  for (double t : f.x.ticks) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
        C(f.X(t)), C(f.top), C(f.PlotBottom()), C(f.PlotBottom() + 16), f.x.TickLabel(t));
  }
  for (double t : f.y.ticks) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>"
        "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>",
        C(f.left), C(f.PlotRight()), C(f.Y(t)), C(f.left - 6), C(f.Y(t) + 4), f.y.TickLabel(t));
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

// ---- page pieces ----------------------------------------------------------

struct LegendItem {
  std::string label;  // HTML-escaped already
  std::string color;
  enum Kind { kLine, kDash, kBox } kind = kLine;
};

std::string Legend(const std::vector<LegendItem>& items) {
  if (items.empty()) return "";
  std::string out = "<div class=\"legend\">";
  for (const auto& it : items) {
    const char* cls = it.kind == LegendItem::kBox    ? "box"
                      : it.kind == LegendItem::kDash ? "dash"
                                                     : "line";
    out += fmt::format("<span><i class=\"{}\" style=\"--c:{}\"></i>{}</span>", cls, it.color,
                       it.label);
  }
  return out + "</div>\n";
}

// A chart that is not drawn, and why, on one line.
std::string Note(std::string_view id, std::string_view text) {
  return fmt::format("<p class=\"note\" data-note=\"{}\">{}</p>\n", id, text);
}

std::string Figure(std::string_view title, std::string_view about, std::string_view legend,
                   std::string_view body, const std::vector<std::string>& notes) {
  std::string out = fmt::format(
      "<figure>\n<figcaption><b>{}</b> <span class=\"about\">{}</span></figcaption>\n{}{}", title,
      about, legend, body);
  for (const auto& n : notes) out += fmt::format("<p class=\"cap\">{}</p>\n", n);
  return out + "</figure>\n";
}

std::string SeriesOpen(std::string_view name, std::string_view color) {
  return fmt::format("<g data-series=\"{}\" style=\"color:{}\">", HtmlText(name), color);
}

// A line series `k` of `n`, its lines drawn wider the earlier it comes, so
// profiles that behave alike (often the case) still show every colour.
std::string LineSeriesOpen(std::string_view name, std::string_view color, size_t k, size_t n) {
  const double width = n > 1 ? 1.5 + 3.0 * static_cast<double>(n - 1 - k) / (n - 1) : 1.8;
  return fmt::format("<g data-series=\"{}\" style=\"color:{};--w:{}\">", HtmlText(name), color,
                     Fixed(width, 2));
}

// ---- utilisation ----------------------------------------------------------

// A step function: value[i] holds from time[i] until time[i + 1] (the last
// until `end`).
struct Steps {
  std::vector<double> time;
  std::vector<double> allocated;
  std::vector<double> effective;
};

// At most `max_points` steps: beyond that, the time-weighted means over
// equal time buckets of [time[0], end], so a long run's chart stays small
// and its averages stay right.
Steps Bucket(const std::vector<double>& time, const Utilization::Resource& r, double end,
             size_t max_points) {
  Steps s;
  const size_t n = time.size();
  const double t0 = n > 0 ? time[0] : 0;
  if (n <= max_points || !(end > t0)) {
    s.time = time;
    s.allocated = r.allocated;
    s.effective = r.effective;
    return s;
  }
  const double width = (end - t0) / static_cast<double>(max_points);
  auto bucket = [&](double t) -> size_t {
    const double k = std::floor((t - t0) / width);
    if (!(k > 0)) return 0;
    return k >= static_cast<double>(max_points - 1) ? max_points - 1 : static_cast<size_t>(k);
  };
  s.allocated.assign(max_points, 0);
  s.effective.assign(max_points, 0);
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
      s.allocated[k] += r.allocated[i] * overlap / width;
      s.effective[k] += r.effective[i] * overlap / width;
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

std::string UtilizationChart(std::string_view id, std::string_view resource, std::string_view title,
                             const ReportDir& dir) {
  struct Series {
    const RunData* run;
    size_t color;
    Steps steps;
    double end;
  };
  std::vector<Series> series;
  std::vector<std::string> missing;
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  double top = 1;
  for (size_t i = 0; i < dir.runs.size(); ++i) {
    const RunData& run = dir.runs[i];
    const Utilization::Resource* r = run.utilization ? run.utilization->Find(resource) : nullptr;
    if (r == nullptr || run.utilization->time.empty()) {
      missing.push_back(fmt::format("{} ({})", HtmlText(run.name),
                                    run.utilization ? fmt::format("no {} capacity", resource)
                                                    : std::string("no utilization.csv")));
      continue;
    }
    const double end = std::max(run.EndTime(), run.utilization->time.back());
    Steps steps = Bucket(run.utilization->time, *r, end, kMaxUtilizationPoints);
    lo = std::min(lo, steps.time.front());
    hi = std::max(hi, end);
    for (double v : steps.allocated) top = std::max(top, v);
    for (double v : steps.effective) top = std::max(top, v);
    series.push_back({&run, i, std::move(steps), end});
  }
  const std::string what = fmt::format("{} utilisation over time", title);
  if (series.empty()) {
    return Note(id, fmt::format("{}: not shown, {}.", what, Join(missing, ", ")));
  }
  Frame f;
  f.x = TimeAxis(lo, hi, "time");
  f.x.Nice(8);
  f.y = FractionAxis(fmt::format("{} of capacity", title), top);
  f.y.Nice(5);
  std::string svg = OpenChart(id, f, what);
  std::vector<LegendItem> legend;
  bool bucketed = false;
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const std::string name = s.run->name;
    legend.push_back({HtmlText(name), Color(s.color)});
    svg += LineSeriesOpen(name, Color(s.color), k, series.size());
    svg += fmt::format("<path class=\"line\" d=\"{}\"/><path class=\"line dash\" d=\"{}\"/>",
                       StepPath(f, s.steps.time, s.steps.allocated, s.end),
                       StepPath(f, s.steps.time, s.steps.effective, s.end));
    for (size_t i = 0; i < s.steps.time.size(); ++i) {
      const double t = s.steps.time[i];
      svg += fmt::format(
          "<g data-point=\"\"><title>{} at {}: {} allocated, {} effective</title>"
          "<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"/>"
          "<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"/></g>",
          HtmlText(name), HumanTime(t), Percent(s.steps.allocated[i]),
          Percent(s.steps.effective[i]), C(f.X(t)), C(f.Y(s.steps.allocated[i])), C(f.X(t)),
          C(f.Y(s.steps.effective[i])));
    }
    svg += "</g>\n";
    bucketed = bucketed || s.steps.time.size() < s.run->utilization->time.size();
  }
  svg += "</svg>\n";
  legend.push_back({"allocated", "#59636e", LegendItem::kLine});
  legend.push_back({"effective (jobs making progress)", "#59636e", LegendItem::kDash});
  std::vector<std::string> notes;
  if (bucketed) {
    notes.push_back(fmt::format(
        "Runs with more than {} samples are drawn as time-weighted means over {} equal time "
        "buckets.",
        kMaxUtilizationPoints, kMaxUtilizationPoints));
  }
  if (!missing.empty()) notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  return Figure(what, "allocated: held by any job; effective: held by running jobs", Legend(legend),
                svg, notes);
}

// ---- CDFs -----------------------------------------------------------------

struct CdfSpec {
  std::string_view id;
  std::string_view title;
  std::string_view value;       // "JCT"
  std::string_view population;  // "completed jobs"
  std::function<std::optional<double>(const JobRow&)> of;
};

std::string CdfChart(const CdfSpec& spec, const ReportDir& dir) {
  struct Series {
    const RunData* run;
    size_t color;
    std::vector<double> values;  // sorted
  };
  std::vector<Series> series;
  std::vector<std::string> missing;
  double hi = 0;
  size_t total = 0;
  for (size_t i = 0; i < dir.runs.size(); ++i) {
    const RunData& run = dir.runs[i];
    if (!run.jobs) {
      missing.push_back(HtmlText(run.name) + " (no jobs.csv)");
      continue;
    }
    Series s{&run, i, {}};
    for (const JobRow& j : *run.jobs) {
      if (auto v = spec.of(j)) s.values.push_back(*v);
    }
    std::sort(s.values.begin(), s.values.end());
    if (!s.values.empty()) hi = std::max(hi, s.values.back());
    total += s.values.size();
    series.push_back(std::move(s));
  }
  if (series.empty()) {
    return Note(spec.id, fmt::format("{}: not shown, {}.", spec.title, Join(missing, ", ")));
  }
  if (total == 0) {
    return Note(spec.id,
                fmt::format("{}: not shown, no {} in any run.", spec.title, spec.population));
  }
  Frame f;
  f.x = TimeAxis(0, hi, spec.value);
  f.x.Nice(8);
  f.y = FractionAxis(fmt::format("share of {}", spec.population));
  f.y.Nice(4);
  std::string svg = OpenChart(spec.id, f, spec.title);
  std::vector<LegendItem> legend;
  bool sampled = false;
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const size_t n = s.values.size();
    legend.push_back({fmt::format("{} ({} jobs)", HtmlText(s.run->name), n), Color(s.color)});
    svg += LineSeriesOpen(s.run->name, Color(s.color), k, series.size());
    const size_t shown = std::min(n, kMaxCdfPoints);
    sampled = sampled || shown < n;
    std::string d;
    std::string points;
    for (size_t k = 0; k < shown; ++k) {
      // Evenly spaced ranks when sampled; every job otherwise.
      const size_t idx = shown == n ? k : k * (n - 1) / (shown - 1);
      const double x = s.values[idx];
      const double p = static_cast<double>(idx + 1) / static_cast<double>(n);
      d += k == 0 ? fmt::format("M{} {}V{}", C(f.X(x)), C(f.Y(0)), C(f.Y(p)))
                  : fmt::format("H{}V{}", C(f.X(x)), C(f.Y(p)));
      points += fmt::format(
          "<circle data-point=\"\" class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"><title>{}: {} of "
          "{} within {}</title></circle>",
          C(f.X(x)), C(f.Y(p)), HtmlText(s.run->name), Percent(p), spec.population, HumanTime(x));
    }
    if (!d.empty()) svg += fmt::format("<path class=\"line\" d=\"{}\"/>", d);
    svg += points + "</g>\n";
  }
  svg += "</svg>\n";
  std::vector<std::string> notes;
  if (sampled) {
    notes.push_back(
        fmt::format("Runs with more than {} jobs are drawn through {} evenly spaced "
                    "quantiles.",
                    kMaxCdfPoints, kMaxCdfPoints));
  }
  if (!missing.empty()) notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  return Figure(spec.title, fmt::format("one line per profile, over {}", spec.population),
                Legend(legend), svg, notes);
}

// ---- per-run charts -------------------------------------------------------

std::string RunAttr(const RunData& run) {
  return fmt::format(" data-run=\"{}\"", HtmlText(run.name));
}

// Room on the left for row labels.
constexpr double kLabelWidth = 150;

std::string PhasesChart(const RunData& run) {
  constexpr std::string_view kId = "job-phases";
  const std::string title = "Time per phase, per job";
  if (!run.jobs) return Note(kId, title + ": not shown, no jobs.csv in " + HtmlText(run.dir) + ".");
  if (run.jobs->empty()) return Note(kId, title + ": not shown, the run has no jobs.");
  std::vector<const JobRow*> jobs;
  for (const JobRow& j : *run.jobs) jobs.push_back(&j);
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const JobRow* a, const JobRow* b) { return a->submit < b->submit; });
  const size_t all = jobs.size();
  if (jobs.size() > kMaxPhaseJobs) jobs.resize(kMaxPhaseJobs);
  // The axis spans the jobs shown, not the whole run.
  double lo = jobs.front()->submit;
  double hi = lo;
  for (const JobRow* j : jobs) {
    hi = std::max(hi, j->submit + j->queueing + j->launching + j->running);
  }
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
  for (size_t p = 0; p < 3; ++p)
    legend.push_back({kPhaseNames[p], kPhaseColors[p], LegendItem::kBox});
  std::vector<std::string> notes;
  if (all > jobs.size()) {
    notes.push_back(
        fmt::format("Showing the first {} of {} jobs by submit time.", jobs.size(), all));
  }
  if (!labels) notes.push_back("Jobs from the top in submit order; hover a bar for its job.");
  return Figure(title,
                "each bar starts at the job's submit time and stacks its seconds queueing "
                "(submit to first start), launching and running",
                Legend(legend), svg, notes);
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

std::string GanttChart(const RunData& run) {
  constexpr std::string_view kId = "node-gantt";
  const std::string title = "Allocations per node";
  if (!run.allocations) return NoNewerFile(kId, title, "allocations.csv", run);
  if (run.allocations->empty()) return Note(kId, title + ": not shown, nothing was allocated.");
  const double end = run.EndTime();
  std::vector<std::string> nodes;
  std::map<std::string, size_t> job_color;
  for (const AllocationRow& a : *run.allocations) {
    if (std::find(nodes.begin(), nodes.end(), a.node) == nodes.end()) nodes.push_back(a.node);
    job_color.emplace(a.job, job_color.size());
  }
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
  f.x = TimeAxis(std::min(lo, 0.0), hi, "time");
  f.x.Nice(10);
  std::string svg = OpenChart(kId, f, title + " of " + run.name, RunAttr(run));
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
          C(std::max(0.5, f.X(stop) - f.X(a->start))), C(kLane - 1), Color(job_color[a->job]),
          HtmlText(a->job), HtmlText(node), HumanTime(a->start), HumanTime(stop),
          a->end ? "" : " (end of run)", HumanTime(stop - a->start), a->tasks, Fixed(a->gpus, 3));
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
  return Figure(title,
                "one row per node, one lane per job held at once; a colour per job, hover a bar "
                "for its job, tasks and GPUs",
                "", svg, notes);
}

std::string ElasticChart(const RunData& run) {
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
  f.x = TimeAxis(std::min(lo, 0.0), hi, "time");
  f.x.Nice(10);
  f.y.hi = static_cast<double>(most);
  f.y.integer = true;
  f.y.label = "workers";
  f.y.Nice(static_cast<int>(std::min<int64_t>(6, most)));
  std::string svg = OpenChart(kId, f, title + " of " + run.name, RunAttr(run));
  std::vector<LegendItem> legend;
  for (size_t k = 0; k < elastic.size(); ++k) {
    const std::string& job = elastic[k];
    legend.push_back({HtmlText(job), Color(k)});
    svg += SeriesOpen(job, Color(k));
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
  return Figure(title,
                "jobs that ran at more than one size; a dot per event (start, resize, stop), "
                "hover it for what happened and why",
                Legend(legend), svg, notes);
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

std::string Table(std::string_view about, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<div class=\"scroll\"><table data-chart=\"compare-table\"><thead><tr>";
  for (const auto& h : header) out += "<th>" + HtmlText(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    out += fmt::format("<tr data-series=\"{}\">", HtmlText(r.empty() ? "" : r[0]));
    for (size_t i = 0; i < r.size(); ++i) {
      out += fmt::format("<td data-point=\"\" title=\"{}\">{}</td>", HtmlText(r[i]),
                         i == 0 ? HtmlText(r[i]) : CellText(r[i]));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return Figure("Comparison", about, "", out, {});
}

std::string Optional(const std::optional<double>& v, int decimals = 6) {
  return v ? Fixed(*v, decimals) : "";
}

std::string CompareTable(const ReportDir& dir) {
  if (dir.compare) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : dir.compare->rows) rows.push_back(r.cells);
    return Table("from compare.csv, one row per profile", dir.compare->header, rows);
  }
  std::vector<std::vector<std::string>> rows;
  for (const RunData& run : dir.runs) {
    if (!run.summary) continue;
    const SummaryData& s = *run.summary;
    auto util = [&](std::string_view name, bool effective) -> std::string {
      for (const auto& u : s.utilization) {
        if (u.name == name) return Fixed(effective ? u.effective : u.allocated, 6);
      }
      return "";
    };
    rows.push_back({run.name, std::to_string(s.completed), std::to_string(s.total),
                    std::to_string(s.not_done), Optional(s.jct_mean), Optional(s.jct_p95),
                    Optional(s.makespan), util("nvidia.com/gpu", false),
                    util("nvidia.com/gpu", true), util("cpu", true), Optional(s.jain_index),
                    std::to_string(s.preemptions), std::to_string(s.scale_events)});
  }
  if (rows.empty()) {
    return Note("compare-table", "Comparison: not shown, no compare.csv and no summary.json in " +
                                     HtmlText(dir.dir) + ".");
  }
  return Table("from each run's summary.json (times in seconds, utilisation as a fraction)",
               {"profile", "completed", "total", "not_done", "jct_mean", "jct_p95", "makespan",
                "gpu_alloc", "gpu_eff", "cpu_eff", "jain", "preemptions", "scale_events"},
               rows);
}

// ---- the sweep --------------------------------------------------------------

std::string SweepChart(const ReportDir& dir) {
  constexpr std::string_view kId = "jct-vs-load";
  const std::string title = "JCT against load";
  const auto& points = *dir.sweep;
  if (points.empty()) {
    return Note(kId, title + ": not shown, sweep.csv has no cell with completed jobs.");
  }
  std::vector<std::string> profiles;
  double lo = points.front().load;
  double hi = lo;
  double top = 0;
  for (const SweepPoint& p : points) {
    if (std::find(profiles.begin(), profiles.end(), p.profile) == profiles.end()) {
      profiles.push_back(p.profile);
    }
    lo = std::min(lo, p.load);
    hi = std::max(hi, p.load);
    top = std::max({top, p.jct_mean, p.jct_p95});
  }
  Frame f;
  f.width = kFullWidth;
  f.height = 340;
  f.x.lo = lo;
  f.x.hi = hi > lo ? hi : lo + 1;
  // dlsched sweep's load: a factor on the arrival rate (submit times / L).
  f.x.label = "load factor (arrival rate x L; 1 = the workload as given)";
  f.x.Nice(10);
  f.y = TimeAxis(0, top, "JCT");
  f.y.Nice(5);
  std::string svg = OpenChart(kId, f, title);
  std::vector<LegendItem> legend;
  for (size_t k = 0; k < profiles.size(); ++k) {
    // A profile that is also a run of this directory keeps its colour.
    size_t color = dir.runs.size() + k;
    for (size_t i = 0; i < dir.runs.size(); ++i) {
      if (dir.runs[i].name == profiles[k]) color = i;
    }
    legend.push_back({HtmlText(profiles[k]), Color(color)});
    svg += LineSeriesOpen(profiles[k], Color(color), k, profiles.size());
    std::string mean;
    std::string p95;
    std::string dots;
    for (const SweepPoint& p : points) {
      if (p.profile != profiles[k]) continue;
      const std::string x = C(f.X(p.load));
      mean += fmt::format("{}{} {}", mean.empty() ? "M" : "L", x, C(f.Y(p.jct_mean)));
      p95 += fmt::format("{}{} {}", p95.empty() ? "M" : "L", x, C(f.Y(p.jct_p95)));
      dots += fmt::format(
          "<g data-point=\"\"><title>{} at load {}: JCT mean {}, p95 {} ({} runs)</title>"
          "<circle class=\"dot\" cx=\"{}\" cy=\"{}\" r=\"3.5\"/>"
          "<circle class=\"dot hollow\" cx=\"{}\" cy=\"{}\" r=\"3.5\"/></g>",
          HtmlText(p.profile), Fixed(p.load, 4), HumanTime(p.jct_mean), HumanTime(p.jct_p95),
          p.cells, x, C(f.Y(p.jct_mean)), x, C(f.Y(p.jct_p95)));
    }
    svg += fmt::format("<path class=\"line\" d=\"{}\"/><path class=\"line dash\" d=\"{}\"/>", mean,
                       p95) +
           dots + "</g>\n";
  }
  svg += "</svg>\n";
  legend.push_back({"mean", "#59636e", LegendItem::kLine});
  legend.push_back({"p95", "#59636e", LegendItem::kDash});
  return Figure(title, "from sweep.csv, averaged over seeds per profile and load", Legend(legend),
                svg, {});
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
figure{margin:0 0 14px;min-width:0}
figcaption{margin:0 0 4px}
figcaption .about{color:var(--muted);font-size:12.5px;margin-left:6px}
svg{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:var(--muted)}
svg text.title{font-size:12px;fill:var(--fg)}
svg .grid{stroke:var(--grid);stroke-width:1}
svg .axis{stroke:#8c959f;stroke-width:1}
svg .band{fill:#f6f8fa}
svg .bar{fill:currentColor}
svg .line{fill:none;stroke:currentColor;stroke-width:var(--w,1.8);stroke-linejoin:round}
svg .dash{stroke-dasharray:5 3;stroke-width:calc(var(--w,1.8)*.8)}
svg .pt{fill:currentColor;fill-opacity:0}
svg g[data-point]:hover .pt,svg .pt:hover{fill-opacity:1}
svg .dot{fill:currentColor;stroke:#fff;stroke-width:1}
svg .dot.hollow{fill:#fff;stroke:currentColor;stroke-width:1.5}
svg g[data-series]:hover .line{stroke-width:4}
svg rect[data-point]{stroke:#fff;stroke-width:.5}
svg [data-series] rect[data-point]:hover{stroke:var(--fg);stroke-width:1}
.legend{display:flex;flex-wrap:wrap;gap:2px 16px;font-size:12.5px;color:var(--muted);margin:2px 0 4px}
.legend i{display:inline-block;width:18px;height:0;border-top:2.5px solid var(--c);vertical-align:middle;margin-right:6px}
.legend i.dash{border-top-style:dashed}
.legend i.box{height:10px;border:0;background:var(--c);width:12px;border-radius:2px}
.note{color:var(--muted);margin:4px 0;font-size:13px}
.cap{color:var(--muted);font-size:12.5px;margin:2px 0 0}
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
)css";

std::string RunMeta(const RunData& run) {
  std::string line = fmt::format("<b>{}</b>", HtmlText(run.name));
  if (run.summary) {
    const SummaryData& s = *run.summary;
    line += fmt::format(": {} jobs, {} completed, {} not done", s.total, s.completed, s.not_done);
    if (s.end_time) line += ", ended at " + HumanTime(*s.end_time);
    if (s.deadlocked) line += ", <b>deadlocked</b>";
    if (s.partial) line += ", <b>partial</b> (interrupted)";
  } else {
    line += ": no summary.json";
  }
  return "<li>" + line + "</li>";
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

std::string Section(const ReportDir& dir, size_t index) {
  std::string out =
      fmt::format("<section class=\"dir\" id=\"dir-{}\" data-dir=\"{}\">\n<h2>{}</h2>\n", index + 1,
                  HtmlText(dir.dir), HtmlText(dir.dir));
  std::string kind;
  if (dir.runs.size() == 1 && !dir.compare) {
    kind = "A simulate run.";
  } else if (!dir.runs.empty()) {
    kind = fmt::format("A comparison of {} profiles.", dir.runs.size());
  } else if (dir.sweep) {
    kind = "A sweep (sweep.csv): mean and p95 JCT per profile and load.";
  } else {
    kind = "No run directories here.";
  }
  out += "<div class=\"meta\">" + kind + "<ul>";
  for (const RunData& run : dir.runs) out += RunMeta(run);
  out += "</ul></div>\n";
  out += ProvenanceBlock(dir);
  // A sweep's directory has no runs of its own to compare: its cells are
  // the sweep chart's points.
  if (!dir.runs.empty() || dir.compare || !dir.sweep) out += CompareTable(dir);
  if (dir.sweep) out += "<h3>Sweep</h3>\n" + SweepChart(dir);
  if (!dir.runs.empty()) {
    out += "<h3>Utilisation</h3>\n<div class=\"pair\">\n";
    out += UtilizationChart("gpu-util", "nvidia.com/gpu", "GPU", dir);
    out += UtilizationChart("cpu-util", "cpu", "CPU", dir);
    out += "</div>\n<h3>Completion and queueing</h3>\n<div class=\"pair\">\n";
    out += CdfChart({"jct-cdf", "CDF of job completion time", "job completion time",
                     "completed jobs", [](const JobRow& j) { return j.jct; }},
                    dir);
    out += CdfChart({"queueing-cdf", "CDF of queueing delay", "queueing delay (submit to start)",
                     "started jobs",
                     [](const JobRow& j) {
                       return j.first_start ? std::optional<double>(j.queueing) : std::nullopt;
                     }},
                    dir);
    out += "</div>\n";
  }
  for (const RunData& run : dir.runs) {
    out += fmt::format("<h3>{}<small>{}</small></h3>\n", HtmlText(run.name), HtmlText(run.dir));
    out += PhasesChart(run);
    out += GanttChart(run);
    out += ElasticChart(run);
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

std::string RenderHtml(std::span<const ReportDir> dirs) {
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
  for (size_t i = 0; i < dirs.size(); ++i) out += Section(dirs[i], i);
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace dlsched::report
