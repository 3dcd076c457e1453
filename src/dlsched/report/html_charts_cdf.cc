#include "dlsched/report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace dlsched::report::html {
namespace {

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

// The CDFs of the runs that have a jobs.csv, and the range of their values.
struct CdfSet {
  std::vector<CdfSeries> series;
  std::vector<std::string> missing;                         // the runs not drawn, and why
  double hi = 0;                                            // the largest value
  double lo_pos = std::numeric_limits<double>::infinity();  // the smallest above 0
};

CdfSet CollectCdfs(const CdfSpec& spec, const Section& sec) {
  CdfSet set;
  for (const RunView& v : sec.runs) {
    if (!v.run->jobs) {
      set.missing.push_back(HtmlText(v.name()) + " (no jobs.csv)");
      continue;
    }
    Cdf c = MakeCdf(v.jobs, spec.of);
    for (double x : c.values) {
      if (x > 0) set.lo_pos = std::min(set.lo_pos, x);
    }
    if (!c.values.empty()) set.hi = std::max(set.hi, c.values.back());
    set.series.push_back({&v, std::move(c)});
  }
  return set;
}

// The chart's SVG on a linear x axis and, when any value is above 0, on a
// log one, switched by a checkbox.
struct CdfBody {
  std::string svg;
  std::string toggle;  // the switch's id ("": no log variant)
  bool log_first = false;
};

// Draws `set` (its rows into `csv`, from the variant shown first); a note
// on how the log axis draws values of 0 goes to `notes`.
CdfBody DrawCdfs(const CdfSpec& spec, const Section& sec, const CdfSet& set, CsvText* csv,
                 std::vector<std::string>* notes) {
  const std::vector<CdfSeries>& series = set.series;
  const double hi = set.hi;
  const double lo_pos = set.lo_pos;
  const bool any_window = std::any_of(sec.runs.begin(), sec.runs.end(),
                                      [](const RunView& v) { return v.m.window.has_value(); });
  Frame lin;
  lin.x = spec.time ? TimeAxis(0, std::max(hi, 1e-9), spec.value) : Axis{};
  if (!spec.time) {
    // Slowdown is at least 1; finish-time fairness below 1 is a job sharing
    // sped up.
    lin.x.lo = spec.of == CdfOf::kFtf && std::isfinite(lo_pos) ? std::min(lo_pos, 1.0) : 1;
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
  CdfBody out;
  out.log_first =
      can_log && (mode == LogAxis::kOn || (mode == LogAxis::kAuto && WideRange(lo_pos, hi)));
  const bool log_first = out.log_first;
  if (!can_log) {
    out.svg = CdfSvg(spec, lin, series, "data-chart", "", csv);
    return out;
  }
  Frame log = lin;
  log.x.lo = lo_pos;
  log.x.hi = hi;
  log.x.LogTicks(spec.time ? LogTimeTicks() : LogNumberTicks());
  log.x.label = fmt::format("{} (log scale)", spec.value);
  out.toggle = sec.NewId("log");
  const std::string lin_svg = CdfSvg(spec, lin, series, log_first ? "data-chart-alt" : "data-chart",
                                     "v-lin", log_first ? nullptr : csv);
  const std::string log_svg = CdfSvg(spec, log, series, log_first ? "data-chart" : "data-chart-alt",
                                     "v-log", log_first ? csv : nullptr);
  out.svg = log_first ? log_svg + lin_svg : lin_svg + log_svg;
  bool zeros = false;
  for (const auto& s : series) zeros = zeros || (!s.cdf.values.empty() && s.cdf.values[0] <= 0);
  if (zeros) {
    notes->push_back(
        fmt::format("<span class=\"v-log\">On the log axis, values of 0 are drawn at its left "
                    "edge ({}).</span>",
                    spec.time ? HumanTime(log.x.lo) : Fixed(log.x.lo, 2)));
  }
  return out;
}

// A line per run (a censored one says where it stops, and a note under
// the chart says why), and what the marks mean.
std::vector<LegendItem> CdfLegend(const CdfSpec& spec, const std::vector<CdfSeries>& series,
                                  const std::string& population, std::vector<std::string>* notes) {
  std::vector<LegendItem> legend;
  bool censored = false;
  bool incomplete = false;
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
    notes->push_back(fmt::format(
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
  return legend;
}

// The warning when the runs completed different sets of jobs (of
// completion and slowdown, not queueing); nullopt when they did not.
std::optional<std::string> DifferentJobsWarning(const CdfSpec& spec,
                                                const std::vector<CdfSeries>& series) {
  if (spec.of == CdfOf::kQueueing || series.size() <= 1) return std::nullopt;
  std::vector<std::vector<const JobRow*>> sets;
  for (const auto& s : series) sets.push_back(s.view->jobs);
  if (!DifferentJobsCompleted(sets)) return std::nullopt;
  std::vector<std::string> counts;
  for (const auto& s : series) {
    counts.push_back(
        fmt::format("{} {} of {}", HtmlText(s.view->name()), s.cdf.values.size(), s.cdf.total));
  }
  return fmt::format(
      "<span data-warn=\"different-jobs\">The profiles completed different sets of jobs ({}): "
      "each curve counts every job it was given, so one that finished fewer stops lower "
      "instead of looking faster.</span>",
      Join(counts, ", "));
}

// The jobs a CDF of `of` is over.
std::string_view Population(CdfOf of) {
  return of == CdfOf::kSlowdown ? "jobs with a known ideal runtime"
         : of == CdfOf::kFtf    ? "jobs with a JCT alone (--alone)"
                                : "jobs";
}

}  // namespace

std::string CdfChart(const CdfSpec& spec, const Section& sec) {
  const CdfSet set = CollectCdfs(spec, sec);
  const std::vector<CdfSeries>& series = set.series;
  if (series.empty()) {
    return Note(spec.id, fmt::format("{}: not shown, {}.", spec.title, Join(set.missing, ", ")));
  }
  size_t jobs = 0;
  for (const auto& s : series) jobs += s.cdf.total;
  if (jobs == 0) {
    return Note(spec.id,
                fmt::format("{}: not shown, no {} in any run.", spec.title, Population(spec.of)));
  }
  const std::string population(Population(spec.of));
  CsvText csv({"profile",
               std::string(spec.of == CdfOf::kJct        ? "jct"
                           : spec.of == CdfOf::kQueueing ? "queueing"
                           : spec.of == CdfOf::kSlowdown ? "slowdown"
                                                         : "ftf"),
               "share", "jobs", "not_reached"});
  std::vector<std::string> notes;
  const CdfBody body = DrawCdfs(spec, sec, set, &csv, &notes);
  const std::vector<LegendItem> legend = CdfLegend(spec, series, population, &notes);
  std::vector<std::string> warnings;
  if (auto w = DifferentJobsWarning(spec, series)) warnings.push_back(std::move(*w));
  if (!set.missing.empty()) notes.push_back("Not shown: " + Join(set.missing, ", ") + ".");
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
                 .body = body.svg,
                 .notes = notes,
                 .warnings = warnings,
                 .csv_name = std::string(spec.id) + ".csv",
                 .csv = csv.text(),
                 .toggle = body.toggle,
                 .log_first = body.log_first});
}

}  // namespace dlsched::report::html
