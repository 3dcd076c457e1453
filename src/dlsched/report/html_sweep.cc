#include "dlsched/report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "dlsched/report/first_seen.h"

namespace dlsched::report::html {
namespace {

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

// The sweep's profiles in order of their first point, each with its
// points and its style, and what the points span.
struct SweepLines {
  std::vector<std::string> profiles;
  std::vector<std::vector<const SweepPoint*>> by_profile;
  std::vector<size_t> styles;  // StyleOf's index, per profile
  double lo = 0;               // the loads
  double hi = 0;
  bool incomplete = false;  // a point with incomplete cells
  bool spread = false;      // a figure over more than one seed
};

// The sweep's colours follow the comparison's when a profile is a run of
// the same section. One pass over the points, so a sweep of 100,000
// profiles costs no more than one of 100,000 loads.
SweepLines GroupSweep(const SweepData& sweep, const std::vector<RunView>& runs) {
  SweepLines l;
  FirstSeen<> profile_index;
  l.lo = sweep.points.front().load;
  l.hi = l.lo;
  for (const SweepPoint& p : sweep.points) {
    const size_t k = profile_index.Number(p.profile);
    if (k == l.profiles.size()) {
      l.profiles.push_back(p.profile);
      l.by_profile.emplace_back();
    }
    l.by_profile[k].push_back(&p);
    l.lo = std::min(l.lo, p.load);
    l.hi = std::max(l.hi, p.load);
    l.incomplete = l.incomplete || p.incomplete > 0;
    for (const auto& [name, s] : p.stats) l.spread = l.spread || s.n > 1;
  }
  std::unordered_map<std::string_view, size_t> run_style;
  for (const RunView& v : runs) run_style[v.name()] = v.k;  // the last run of a name, as before
  for (size_t k = 0; k < l.profiles.size(); ++k) {
    const auto it = run_style.find(l.profiles[k]);
    l.styles.push_back(it != run_style.end() ? it->second : runs.size() + k);
  }
  return l;
}

// A line per profile; with `two`, which line is the mean and which the p95.
std::string SweepLegend(const SweepLines& l, bool two) {
  std::vector<LegendItem> legend;
  for (size_t k = 0; k < l.profiles.size(); ++k) {
    legend.push_back({HtmlText(l.profiles[k]), StyleOf(l.styles[k])});
  }
  if (two) {
    legend.push_back({"mean", kGrey, LegendItem::kLine});
    legend.push_back({"p95", kGrey, LegendItem::kDash});
  }
  if (l.spread) {
    legend.push_back({"mean over seeds, bars ±1 standard deviation", kGrey, LegendItem::kErrorBar,
                      "error-bars"});
  }
  if (l.incomplete) {
    legend.push_back(
        {"▲ and perforated: a point with incomplete cells (interrupted, or jobs "
         "not completed): its JCT, makespan and slowdown are lower bounds (≥)",
         kGrey, LegendItem::kMarker, "incomplete"});
  }
  return Legend(legend);
}

// The frame of a chart of `figures` (the first names the y axis) against
// load, its y axis spanning every point's mean ± sd.
Frame SweepFrame(const SweepData& sweep, const SweepLines& l, double width, double height,
                 const std::vector<std::string>& figures) {
  Frame f;
  f.width = width;
  f.height = height;
  f.x.lo = l.lo;
  f.x.hi = l.hi > l.lo ? l.hi : l.lo + 1;
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
}

CsvText SweepCsv() {
  return CsvText({"profile", "load", "figure", "cells", "incomplete_cells", "mean", "sd", "min",
                  "max", "lower_bound"});
}

// JCT against load: the mean, and the p95 dashed when sweep.csv has it.
std::string JctAgainstLoad(const SweepData& sweep, const SweepLines& l) {
  const bool has_jct =
      std::find(sweep.figures.begin(), sweep.figures.end(), "jct_mean") != sweep.figures.end();
  if (!has_jct) {
    return Note("jct-vs-load", "JCT against load: not shown, sweep.csv has no jct_mean column.");
  }
  std::vector<std::string> figs = {"jct_mean"};
  if (std::find(sweep.figures.begin(), sweep.figures.end(), "jct_p95") != sweep.figures.end()) {
    figs.emplace_back("jct_p95");
  }
  CsvText csv = SweepCsv();
  const std::string svg = SweepSvg("jct-vs-load", SweepFrame(sweep, l, kFullWidth, 340, figs),
                                   l.by_profile, l.profiles, l.styles, figs, &csv);
  return Figure({.title = "JCT against load",
                 .about = "from sweep.csv, the mean over seeds per profile and load",
                 .legend = SweepLegend(l, figs.size() > 1),
                 .body = svg,
                 .csv_name = "jct-vs-load.csv",
                 .csv = csv.text()});
}

}  // namespace

std::string SweepCharts(const ReportDir& dir, const std::vector<RunView>& runs) {
  const SweepData& sweep = *dir.sweep;
  if (sweep.points.empty()) {
    return Note("jct-vs-load", "Sweep: not shown, sweep.csv has no rows.");
  }
  const SweepLines l = GroupSweep(sweep, runs);
  std::string out = JctAgainstLoad(sweep, l);
  // Every other figure of compare.csv, small: the same lines and marks.
  std::string grid;
  for (const std::string& fig : sweep.figures) {
    if (fig == "total") continue;
    const std::string id = "sweep-" + fig;
    CsvText csv = SweepCsv();
    const std::string svg = SweepSvg(id, SweepFrame(sweep, l, kHalfWidth, 250, {fig}), l.by_profile,
                                     l.profiles, l.styles, {fig}, &csv);
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

}  // namespace dlsched::report::html
