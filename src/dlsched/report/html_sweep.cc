#include "dlsched/report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "dlsched/report/first_seen.h"

namespace dlsched::report::html {
namespace {

// How a sweep figure reads: seconds, a fraction of capacity, or a number;
// a queue's (`jct_mean@team-a`) as its figure's.
enum class FigureKind { kTime, kFraction, kNumber };
FigureKind KindOf(std::string_view figure) {
  figure = figure.substr(0, figure.find('@'));
  for (std::string_view t :
       {"jct_mean", "jct_p50", "jct_p95", "jct_p99", "makespan", "mean_queueing", "queueing_mean",
        "mean_launching", "mean_running", "end_time"}) {
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

// A line of a sweep chart: its label, points (in sweep.csv's order) and
// style, and the figures it draws (the second dashed).
struct SweepLine {
  std::string label{};
  std::vector<const SweepPoint*> points{};
  size_t style = 0;  // StyleOf's index
  std::vector<std::string> figures{};
};

// Where a point sits on the x axis: its quota on a sweep of --quota, else
// its load.
double XOf(const SweepPoint& p) { return p.quota ? *p.quota : p.load; }

// "at load 1.5000", or "at quota 8 (load 1.0000)".
std::string AtText(const SweepPoint& p) {
  if (!p.quota) return fmt::format("at load {}", Fixed(p.load, 4));
  return fmt::format("at quota {} (load {})", Num(*p.quota), Fixed(p.load, 4));
}

// A sweep chart: its lines through their points' means, with error bars
// (+-1 sd over seeds).
std::string SweepSvg(std::string_view id, Frame f, const std::vector<SweepLine>& lines,
                     CsvText* csv) {
  std::string svg = OpenChart(id, f, id);
  const size_t n = lines.size();
  for (size_t k = 0; k < n; ++k) {
    const SweepLine& line = lines[k];
    const Style st = StyleOf(line.style);
    svg += fmt::format("<g {}>", SeriesAttrs(line.label, st,
                                             n > 1 ? 1.5 + 2.0 * static_cast<double>(n - 1 - k) /
                                                               static_cast<double>(n - 1)
                                                   : 1.8));
    std::string marks;
    for (size_t fi = 0; fi < line.figures.size(); ++fi) {
      const std::string& figure = line.figures[fi];
      std::string d;
      std::string perf;  // the segments into or out of an incomplete point
      const SweepPoint* prev = nullptr;
      for (const SweepPoint* p : line.points) {
        const SweepStat* s = p->Find(figure);
        if (s == nullptr || s->n == 0) continue;
        const std::string xy = fmt::format("{} {}", C(f.X(XOf(*p))), C(f.Y(s->mean)));
        if (prev != nullptr && (prev->incomplete > 0 || p->incomplete > 0)) {
          perf +=
              fmt::format("M{} {}L{}", C(f.X(XOf(*prev))), C(f.Y(prev->Find(figure)->mean)), xy);
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
    for (const SweepPoint* p : line.points) {
      std::string about;
      std::string shapes;
      for (size_t fi = 0; fi < line.figures.size(); ++fi) {
        const std::string& figure = line.figures[fi];
        const SweepStat* s = p->Find(figure);
        if (s == nullptr || s->n == 0) continue;
        const FigureKind kind = KindOf(figure);
        // A queue's JCT is over its completed jobs: not a bound.
        const bool bound = p->incomplete > 0 && LowerBoundFigure(figure);
        const double x = f.X(XOf(*p));
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
          std::vector<std::string> row = {p->profile, Num(p->load)};
          if (p->quota) row.push_back(Num(*p->quota));
          for (std::string cell :
               {figure, std::to_string(p->cells), std::to_string(p->incomplete), Num(s->mean),
                Num(s->sd), Num(s->min), Num(s->max), std::string(bound ? "true" : "false")}) {
            row.push_back(std::move(cell));
          }
          csv->Row(row);
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
          HtmlText(fmt::format("{} {}: {} ({})", line.label, AtText(*p), about, runs)), shapes);
    }
    svg += marks + "</g>\n";
  }
  return svg + "</svg>\n";
}

// The sweep's lines: a line per profile, in order of its first point; on a
// sweep of --quota over several loads, a line per profile and load. Each
// with its points and its style, and what the points span.
struct SweepLines {
  std::vector<SweepLine> lines;  // figures not set
  double lo = 0;                 // the x values
  double hi = 0;
  bool incomplete = false;  // a point with incomplete cells
  bool spread = false;      // a figure over more than one seed
};

// The sweep's colours follow the comparison's when a profile is a run of
// the same section. One pass over the points, so a sweep of 100,000
// profiles costs no more than one of 100,000 loads.
SweepLines GroupSweep(const SweepData& sweep, const std::vector<RunView>& runs) {
  SweepLines l;
  const bool by_quota = !sweep.quota_of.empty();
  bool loads = false;  // several loads on a sweep of --quota: a line each
  for (const SweepPoint& p : sweep.points) loads = loads || p.load != sweep.points.front().load;
  FirstSeen<> profile_index;
  std::map<std::pair<size_t, double>, size_t> line_index;
  l.lo = XOf(sweep.points.front());
  l.hi = l.lo;
  for (const SweepPoint& p : sweep.points) {
    const size_t profile = profile_index.Number(p.profile);
    const auto [it, added] =
        line_index.emplace(std::pair(profile, by_quota && loads ? p.load : 0), l.lines.size());
    if (added) {
      l.lines.push_back({.label = by_quota && loads
                                      ? fmt::format("{} at load {}", p.profile, Num(p.load))
                                      : p.profile});
    }
    l.lines[it->second].points.push_back(&p);
    l.lo = std::min(l.lo, XOf(p));
    l.hi = std::max(l.hi, XOf(p));
    l.incomplete = l.incomplete || p.incomplete > 0;
    for (const auto& [name, s] : p.stats) l.spread = l.spread || s.n > 1;
  }
  std::unordered_map<std::string_view, size_t> run_style;
  for (const RunView& v : runs) run_style[v.name()] = v.k;  // the last run of a name, as before
  for (size_t k = 0; k < l.lines.size(); ++k) {
    const auto it = run_style.find(l.lines[k].label);
    l.lines[k].style = it != run_style.end() ? it->second : runs.size() + k;
  }
  return l;
}

// `l`'s lines, each drawing `figures`.
std::vector<SweepLine> WithFigures(const SweepLines& l, const std::vector<std::string>& figures) {
  std::vector<SweepLine> out = l.lines;
  for (SweepLine& line : out) line.figures = figures;
  return out;
}

// A line per entry; with `two`, which line is the mean and which the p95;
// with `marks`, what the error bars and triangles say.
std::string SweepLegend(const SweepLines& l, const std::vector<SweepLine>& lines, bool two,
                        bool marks = true) {
  std::vector<LegendItem> legend;
  for (const SweepLine& line : lines) legend.push_back({HtmlText(line.label), StyleOf(line.style)});
  if (!marks) return Legend(legend);
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

// "team-a's nominal nvidia.com/gpu quota" from quota_of "team-a
// nvidia.com/gpu" (a resource name has no space).
std::string QuotaLabel(const std::string& quota_of) {
  const size_t space = quota_of.rfind(' ');
  if (space == std::string::npos) return "nominal quota of " + quota_of;
  return fmt::format("{}'s nominal {} quota", quota_of.substr(0, space),
                     quota_of.substr(space + 1));
}

// The frame of a chart of `lines` (the first figure names the y axis)
// against load, or the quota, its y axis spanning every point's mean ± sd.
Frame SweepFrame(const SweepData& sweep, const SweepLines& l, double width, double height,
                 const std::vector<SweepLine>& lines, std::string_view y_label) {
  Frame f;
  f.width = width;
  f.height = height;
  f.x.lo = l.lo;
  f.x.hi = l.hi > l.lo ? l.hi : l.lo + 1;
  // dlsched sweep's load: a factor on the arrival rate (submit times / L).
  f.x.label = sweep.quota_of.empty() ? "load factor (arrival rate x L; 1 = the workload as given)"
                                     : QuotaLabel(sweep.quota_of);
  f.x.Nice(width > kHalfWidth ? 10 : 5);
  double top = 0;
  double bottom = 0;
  for (const SweepLine& line : lines) {
    for (const SweepPoint* p : line.points) {
      for (const auto& fig : line.figures) {
        if (const SweepStat* s = p->Find(fig); s != nullptr && s->n > 0) {
          top = std::max(top, s->mean + s->sd);
          bottom = std::min(bottom, s->mean - s->sd);
        }
      }
    }
  }
  const std::string label(y_label);
  const FigureKind kind = KindOf(lines.front().figures.front());
  if (kind == FigureKind::kTime) {
    f.y = TimeAxis(bottom, std::max(top, 1e-9), label);
  } else if (kind == FigureKind::kFraction) {
    f.y = FractionAxis(label + " (share of capacity)", std::max(top, 1e-9));
    f.y.lo = bottom;
  } else {
    f.y.lo = bottom;
    f.y.hi = top > bottom ? top : bottom + 1;
    f.y.label = label;
  }
  f.y.Nice(5);
  return f;
}

CsvText SweepCsv(const SweepData& sweep) {
  std::vector<std::string> head = {"profile", "load"};
  if (!sweep.quota_of.empty()) head.emplace_back("quota");
  for (const char* h :
       {"figure", "cells", "incomplete_cells", "mean", "sd", "min", "max", "lower_bound"}) {
    head.emplace_back(h);
  }
  return CsvText(head);
}

// "against load" or "against team-a's nominal nvidia.com/gpu quota".
std::string Against(const SweepData& sweep) {
  return sweep.quota_of.empty() ? "against load" : "against " + QuotaLabel(sweep.quota_of);
}

// JCT against load (or the quota): the mean, and the p95 dashed when
// sweep.csv has it.
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
  CsvText csv = SweepCsv(sweep);
  const std::vector<SweepLine> lines = WithFigures(l, figs);
  const std::string svg = SweepSvg(
      "jct-vs-load",
      SweepFrame(sweep, l, kFullWidth, 340, lines, figs.size() > 1 ? "JCT" : figs[0]), lines, &csv);
  return Figure({.title = HtmlText("JCT " + Against(sweep)),
                 .about = sweep.quota_of.empty()
                              ? "from sweep.csv, the mean over seeds per profile and load"
                              : "from sweep.csv, the mean over seeds per profile and quota",
                 .legend = SweepLegend(l, lines, figs.size() > 1),
                 .body = svg,
                 .csv_name = "jct-vs-load.csv",
                 .csv = csv.text()});
}

// Each queue's figures (sweep.csv's `<figure>@<queue>` columns): a chart per
// figure, a line per queue (and per line of the sweep when it has
// several), drawn for jct_mean, queueing_mean, borrowed_gpu_hours and
// ftf_max; the others are in sweep.csv.
std::string QueueCharts(const SweepData& sweep, const SweepLines& l) {
  std::vector<std::string> queues;  // in column order
  for (const std::string& fig : sweep.figures) {
    if (!fig.starts_with("jct_mean@")) continue;
    queues.push_back(fig.substr(std::string_view("jct_mean@").size()));
  }
  if (queues.empty()) return "";
  std::string grid;
  for (std::string_view base : {"jct_mean", "queueing_mean", "borrowed_gpu_hours", "ftf_max"}) {
    std::vector<SweepLine> lines;
    for (size_t q = 0; q < queues.size(); ++q) {
      const std::string fig = fmt::format("{}@{}", base, queues[q]);
      if (std::find(sweep.figures.begin(), sweep.figures.end(), fig) == sweep.figures.end()) {
        continue;
      }
      for (const SweepLine& line : l.lines) {
        const bool any = std::any_of(line.points.begin(), line.points.end(),
                                     [&](const SweepPoint* p) { return p->Find(fig) != nullptr; });
        if (!any) continue;  // empty in every row (ftf_max without --alone)
        SweepLine ql = line;
        ql.label = l.lines.size() > 1 ? fmt::format("{} · {}", queues[q], line.label) : queues[q];
        ql.style = lines.size();
        ql.figures = {fig};
        lines.push_back(std::move(ql));
      }
    }
    if (lines.empty()) continue;
    const std::string id = fmt::format("sweep-queues-{}", base);
    CsvText csv = SweepCsv(sweep);
    const std::string svg =
        SweepSvg(id, SweepFrame(sweep, l, kHalfWidth, 250, lines, base), lines, &csv);
    grid += Figure({.title = HtmlText(fmt::format("{} by queue", base)),
                    .about = base == "borrowed_gpu_hours" ? "" : "over each queue's completed jobs",
                    .legend = SweepLegend(l, lines, false, false),
                    .body = svg,
                    .csv_name = id + ".csv",
                    .csv = csv.text()});
  }
  return fmt::format(
      "<h3>Each queue {}<small>sweep.csv's &lt;figure&gt;@&lt;queue&gt; columns, a line per "
      "queue, marks as above</small></h3>\n<div class=\"pair\">\n{}</div>\n",
      HtmlText(Against(sweep)), grid);
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
    if (fig == "total" || fig.find('@') != std::string::npos) continue;
    const std::string id = "sweep-" + fig;
    CsvText csv = SweepCsv(sweep);
    const std::vector<SweepLine> lines = WithFigures(l, {fig});
    const std::string svg =
        SweepSvg(id, SweepFrame(sweep, l, kHalfWidth, 250, lines, fig), lines, &csv);
    grid += Figure({.title = HtmlText(fig),
                    .about = LowerBoundFigure(fig) ? "≥ where cells are incomplete" : "",
                    .body = svg,
                    .csv_name = id + ".csv",
                    .csv = csv.text()});
  }
  if (!grid.empty()) {
    out += fmt::format(
        "<h3>Every figure {}<small>sweep.csv's columns, legend as above</small></h3>\n"
        "<div class=\"pair\">\n{}</div>\n",
        HtmlText(Against(sweep)), grid);
  }
  return out + QueueCharts(sweep, l);
}

}  // namespace dlsched::report::html
