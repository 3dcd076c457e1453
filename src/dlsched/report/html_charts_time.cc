#include "dlsched/report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace dlsched::report::html {

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

namespace {

// One run's step functions on the section's time axis, as drawn.
struct TimeSeries {
  const RunView* view;
  Steps steps;
  double end;  // where the last step ends
  size_t raw;  // the samples before Bucket
};

// The lines of a time chart after `svg` (its frame): each run a line
// series, its lines and points drawn by `draw`; then the legend (a line
// per run, `marks`, and what perforation and shading mean) and the notes
// (runs bucketed, runs not shown).
struct TimeLines {
  std::string svg;
  std::string legend;
  std::vector<std::string> notes;
};

TimeLines DrawTimeSeries(std::string svg, const Section& sec, const std::vector<TimeSeries>& series,
                         const std::vector<std::string>& missing,
                         const std::vector<LegendItem>& marks,
                         const std::function<std::string(const TimeSeries&, const Style&)>& draw) {
  std::vector<LegendItem> legend;
  bool bucketed = false;
  bool incomplete = false;
  for (size_t k = 0; k < series.size(); ++k) {
    const TimeSeries& s = series[k];
    const RunView& v = *s.view;
    const Style st = v.style();
    incomplete = incomplete || v.incomplete;
    legend.push_back({v.Label(), st});
    svg += LineSeriesOpen(v.name(), st, k, series.size(), v.why);
    svg += draw(s, st);
    svg += "</g>\n";
    bucketed = bucketed || s.steps.time.size() < s.raw;
  }
  svg += "</svg>\n";
  legend.insert(legend.end(), marks.begin(), marks.end());
  if (incomplete) legend.push_back(IncompleteLegend(""));
  if (sec.window) legend.push_back(OutsideLegend(sec));
  TimeLines out{std::move(svg), Legend(legend), {}};
  if (bucketed) out.notes.push_back(BucketNote());
  if (!missing.empty()) out.notes.push_back("Not shown: " + Join(missing, ", ") + ".");
  return out;
}

}  // namespace

std::string UtilizationChart(std::string_view id, std::string_view resource, std::string_view title,
                             const Section& sec) {
  std::vector<TimeSeries> series;
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
    series.push_back({&v, std::move(steps), end, run.utilization->time.size()});
  }
  const std::string what = fmt::format("{} utilisation over time", title);
  if (series.empty()) {
    return Note(id, fmt::format("{}: not shown, {}.", what, Join(missing, ", ")));
  }
  Frame f;
  f.x = SectionTimeAxis(sec, 8);
  f.y = FractionAxis(fmt::format("{} of capacity", title), top);
  f.y.Nice(5);
  CsvText csv({"profile", "time", "allocated", "effective"});
  const TimeLines lines = DrawTimeSeries(
      OpenChart(id, f, what) + OutsideWindow(f, sec), sec, series, missing,
      {{"allocated", kGrey, LegendItem::kLine},
       {"effective (jobs making progress)", kGrey, LegendItem::kDash}},
      [&](const TimeSeries& s, const Style& st) {
        const RunView& v = *s.view;
        const auto& alloc = s.steps.values[0];
        const auto& eff = s.steps.values[1];
        std::string svg = LinePath(StepPath(f, s.steps.time, alloc, s.end), st) +
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
        return svg;
      });
  return Figure({.title = HtmlText(what),
                 .about = "allocated: held by any job; effective: held by running jobs",
                 .legend = lines.legend,
                 .body = lines.svg,
                 .notes = lines.notes,
                 .csv_name = std::string(id) + ".csv",
                 .csv = csv.text()});
}

std::string StepChart(const StepChartSpec& spec, const Section& sec) {
  std::vector<TimeSeries> series;
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
  CsvText csv({"profile", "time", spec.column});
  const TimeLines lines = DrawTimeSeries(
      OpenChart(spec.id, f, spec.title) + OutsideWindow(f, sec), sec, series, missing, {},
      [&](const TimeSeries& s, const Style& st) {
        const RunView& v = *s.view;
        const auto& vals = s.steps.values[0];
        std::string svg = LinePath(StepPath(f, s.steps.time, vals, s.end), st);
        for (size_t i = 0; i < s.steps.time.size(); ++i) {
          const double t = s.steps.time[i];
          svg += fmt::format(
              "<circle data-point=\"\" class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\"><title>{} at {}: "
              "{}{}</title></circle>",
              C(f.X(t)), C(f.Y(vals[i])), HtmlText(v.name()), HumanTime(t), Fixed(vals[i], 2),
              spec.unit);
          csv.Row({v.name(), Num(t), Num(vals[i])});
        }
        return svg;
      });
  return Figure({.title = std::string(spec.title),
                 .about = std::string(spec.about),
                 .legend = lines.legend,
                 .body = lines.svg,
                 .notes = lines.notes,
                 .csv_name = std::string(spec.id) + ".csv",
                 .csv = csv.text()});
}

}  // namespace dlsched::report::html
