#include "dlsched/report/html_charts.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "dlsched/report/outputs.h"

namespace dlsched::report::html {
namespace {

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

}  // namespace

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

namespace {

// A grouping of each run's jobs for GroupedJctChart.
struct JctGrouping {
  std::string_view id;
  std::string title;
  std::string about;
  std::string x_label;
  std::string csv_column;  // the group's column in the chart's CSV
  std::string unit;        // after the label in a tooltip: " GPUs", ""
  // The groups of a run, or nullopt with why not (`missing`).
  std::function<std::optional<std::vector<GroupJct>>(const RunView&, std::string* missing)> groups;
};

// Mean JCT per group of jobs, one bar per run in each group.
std::string GroupedJctChart(const Section& sec, const JctGrouping& g) {
  struct Series {
    const RunView* view;
    std::vector<GroupJct> groups;
  };
  std::vector<Series> series;
  std::vector<std::string> missing;
  std::map<std::pair<int64_t, std::string>, size_t> all;
  double top = 0;
  for (const RunView& v : sec.runs) {
    std::string why;
    std::optional<std::vector<GroupJct>> groups = v.run->jobs ? g.groups(v, &why) : std::nullopt;
    if (!groups) {
      missing.push_back(HtmlText(v.name()) + " (" + (v.run->jobs ? why : "no jobs.csv") + ")");
      continue;
    }
    for (const GroupJct& b : *groups) {
      all[{b.order, b.label}] = 0;
      top = std::max(top, b.mean_jct);
    }
    series.push_back({&v, std::move(*groups)});
  }
  if (all.empty()) {
    return Note(g.id, fmt::format("{}: not shown, {}.", g.title,
                                  missing.empty() ? std::string("no jobs") : Join(missing, ", ")));
  }
  std::vector<std::string> labels;
  for (auto& [key, index] : all) {
    index = labels.size();
    labels.push_back(HtmlText(key.second));
  }
  std::vector<const RunView*> views;
  std::vector<std::vector<std::optional<Bar>>> bars;
  CsvText csv({"profile", g.csv_column, "jobs", "completed", "mean_jct", "lower_bound"});
  bool bounds = false;
  for (const auto& s : series) {
    views.push_back(s.view);
    std::vector<std::optional<Bar>> row(labels.size());
    for (const GroupJct& b : s.groups) {
      const std::string mark = b.LowerBound() ? "≥ " : "";
      bounds = bounds || b.LowerBound();
      row[all.at({b.order, b.label})] =
          Bar{b.mean_jct, mark,
              HtmlText(fmt::format("{}, {}{}: mean JCT {}{} over {} jobs ({} completed)",
                                   s.view->name(), b.label, g.unit, mark, HumanTime(b.mean_jct),
                                   b.jobs, b.completed))};
      csv.Row({s.view->name(), b.label, std::to_string(b.jobs), std::to_string(b.completed),
               Num(b.mean_jct), b.LowerBound() ? "true" : "false"});
    }
    bars.push_back(std::move(row));
  }
  Frame f;
  f.width = kFullWidth;
  f.height = 300;
  f.x.label = g.x_label;
  f.y = TimeAxis(0, std::max(top, 1e-9), "mean JCT");
  f.y.Nice(5);
  const std::string svg = GroupedBars(g.id, g.title, f, labels, views, bars, std::nullopt);
  std::vector<LegendItem> legend;
  for (const RunView* v : views) legend.push_back({v->Label(), v->style(), LegendItem::kBox});
  if (bounds) {
    legend.push_back(
        {"hollow, marked ≥: jobs of the group not completed, counted at the run's "
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
          "each bar counts every job of its group, those not completed at the run's end (marked "
          "≥).</span>");
    }
  }
  std::vector<std::string> notes;
  if (!missing.empty()) notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  return Figure({.title = g.title,
                 .about = g.about,
                 .legend = Legend(legend),
                 .body = svg,
                 .notes = notes,
                 .warnings = warnings,
                 .csv_name = std::string(g.id) + ".csv",
                 .csv = csv.text()});
}

}  // namespace

std::string JctBySizeChart(const Section& sec) {
  return GroupedJctChart(
      sec, {"jct-by-size", "JCT by job size",
            "mean JCT per GPU-count bucket (what the job asks for), over every job of that size",
            "GPUs the job asks for", "gpus", " GPUs",
            [](const RunView& v, std::string* missing) -> std::optional<std::vector<GroupJct>> {
              if (!v.run->jobs->empty() && !v.run->jobs->front().gpus) {
                *missing = "jobs.csv has no gpus column: written by an older dlsched";
                return std::nullopt;
              }
              return JctBySize(v.jobs, v.run->EndTime());
            }});
}

std::string JctByQueueChart(const Section& sec) {
  bool any = false;
  for (const RunView& v : sec.runs) {
    for (const JobRow* j : v.jobs) any = any || !j->queue.empty();
  }
  if (!any) return "";
  return GroupedJctChart(
      sec,
      {"jct-by-queue", "JCT by queue",
       "mean JCT of each team's queue (jobs.csv's queue), over every job in it", "queue", "queue",
       "", [](const RunView& v, std::string*) -> std::optional<std::vector<GroupJct>> {
         return JctByQueue(v.jobs, v.run->EndTime());
       }});
}

}  // namespace dlsched::report::html
