#include "dlsched/report/html_charts.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "dlsched/report/first_seen.h"

namespace dlsched::report::html {
namespace {

constexpr const char* kPhaseColors[] = {"#c9ced6", "#f28e2b", "#4e79a7"};
constexpr const char* kPhaseNames[] = {"queueing", "launching", "running"};

std::string RunAttr(const RunData& run) {
  return fmt::format(" data-run=\"{}\"", HtmlText(run.name));
}

// Room on the left for row labels.
constexpr double kLabelWidth = 150;

}  // namespace

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

namespace {

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

// What the chart of allocations per node shows: the first kMaxGanttNodes
// nodes by name and the earliest kMaxGanttBars allocations on them, each
// node a row of lanes: a job's interval takes the first lane free at its
// start, so jobs sharing a node sit one above the other.
struct GanttLayout {
  std::vector<std::string> nodes;
  size_t all_nodes = 0;
  std::vector<const AllocationRow*> bars;
  size_t all_bars = 0;
  std::map<std::string, size_t> job_color;  // by the job's first allocation
  std::map<std::string, std::vector<std::pair<const AllocationRow*, size_t>>> per_node;
  std::map<std::string, std::vector<double>> lane_end;  // per node, where each lane ends
  double lo = std::numeric_limits<double>::infinity();  // the first start
  double hi = 0;                                        // the last end, the run's `end` at least
};

// `end`: the run's end, where an allocation without one stops.
GanttLayout LayOutGantt(const RunData& run, double end) {
  GanttLayout g;
  FirstSeen<> seen;
  for (const AllocationRow& a : *run.allocations) {
    seen.Number(a.node);
    g.job_color.emplace(a.job, g.job_color.size());
  }
  g.nodes.assign(seen.names().begin(), seen.names().end());
  std::sort(g.nodes.begin(), g.nodes.end(), NaturalLess);
  g.all_nodes = g.nodes.size();
  if (g.nodes.size() > kMaxGanttNodes) g.nodes.resize(kMaxGanttNodes);
  // The earliest allocations on the nodes shown, at most kMaxGanttBars.
  const std::set<std::string> shown(g.nodes.begin(), g.nodes.end());
  for (const AllocationRow& a : *run.allocations) {
    if (shown.contains(a.node)) g.bars.push_back(&a);
  }
  std::stable_sort(
      g.bars.begin(), g.bars.end(),
      [](const AllocationRow* a, const AllocationRow* b) { return a->start < b->start; });
  g.all_bars = g.bars.size();
  if (g.bars.size() > kMaxGanttBars) g.bars.resize(kMaxGanttBars);
  g.hi = end;
  for (const AllocationRow* a : g.bars) {
    const double stop = a->end.value_or(end);
    auto& lanes = g.lane_end[a->node];
    size_t lane = 0;
    while (lane < lanes.size() && lanes[lane] > a->start) ++lane;
    if (lane == lanes.size()) lanes.push_back(0);
    lanes[lane] = stop;
    g.per_node[a->node].emplace_back(a, lane);
    g.lo = std::min(g.lo, a->start);
    g.hi = std::max(g.hi, stop);
  }
  return g;
}

}  // namespace

// `lo`, `hi`: the section's time axis (shared by every run's chart).
std::string GanttChart(const RunData& run, double t_lo, double t_hi) {
  constexpr std::string_view kId = "node-gantt";
  const std::string title = "Allocations per node";
  if (!run.allocations) return NoNewerFile(kId, title, "allocations.csv", run);
  if (run.allocations->empty()) return Note(kId, title + ": not shown, nothing was allocated.");
  const double end = run.EndTime();
  GanttLayout g = LayOutGantt(run, end);
  const std::vector<std::string>& nodes = g.nodes;
  const std::vector<const AllocationRow*>& bars = g.bars;
  auto& lane_end = g.lane_end;
  constexpr double kLane = 9;
  constexpr double kGap = 6;
  Frame f;
  f.width = kFullWidth;
  f.left = kLabelWidth;
  double rows = 0;
  for (const auto& n : nodes)
    rows += std::max<double>(1, static_cast<double>(lane_end[n].size())) * kLane + kGap;
  f.height = f.top + rows + f.bottom;
  f.x = TimeAxis(std::min({g.lo, 0.0, t_lo}), std::max(g.hi, t_hi), "time");
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
    for (const auto& [a, lane] : g.per_node[node]) {
      const double stop = a->end.value_or(end);
      svg += fmt::format(
          "<rect data-point=\"\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
          "<title>{} on {}: {} to {}{} ({}), {} tasks, {} GPUs</title></rect>",
          C(f.X(a->start)), C(y + static_cast<double>(lane) * kLane + 0.5),
          C(std::max(0.5, f.X(stop) - f.X(a->start))), C(kLane - 1),
          kPalette[g.job_color[a->job] % std::size(kPalette)], HtmlText(a->job), HtmlText(node),
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
  if (g.all_nodes > nodes.size()) {
    notes.push_back(
        fmt::format("Showing the first {} of {} nodes by name.", nodes.size(), g.all_nodes));
  }
  if (g.all_bars > bars.size()) {
    notes.push_back(fmt::format("Showing the earliest {} of {} allocations on these nodes (to {}).",
                                bars.size(), g.all_bars, HumanTime(bars.back()->start)));
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

std::string QueueUsageChart(const RunData& run, double t_lo, double t_hi) {
  constexpr std::string_view kId = "queue-usage";
  const std::string title = "GPUs each queue held over time";
  std::vector<QueueUsage> queues = QueueUsageOverTime(run);
  if (queues.empty()) return "";
  const size_t all = queues.size();
  if (queues.size() > kMaxUsageQueues) queues.resize(kMaxUsageQueues);
  const double end = run.EndTime();
  double top = 1;
  double lo = t_lo;
  std::vector<Steps> steps;
  for (const QueueUsage& q : queues) {
    steps.push_back(Bucket(q.gpus.time, {&q.gpus.value}, end, kMaxUtilizationPoints));
    for (double v : steps.back().values[0]) top = std::max(top, v);
    if (!q.gpus.time.empty()) lo = std::min(lo, q.gpus.time.front());
    if (q.nominal_gpus) top = std::max(top, static_cast<double>(*q.nominal_gpus));
  }
  Frame f;
  f.width = kFullWidth;
  f.height = 320;
  f.x = TimeAxis(std::min(lo, 0.0), std::max(end, t_hi), "time");
  f.x.Nice(10);
  f.y.hi = top;
  f.y.integer = true;
  f.y.label = "GPUs held";
  f.y.Nice(5);
  std::string svg = OpenChart(kId, f, title + " of " + run.name, RunAttr(run));
  std::vector<LegendItem> legend;
  CsvText csv({"queue", "time", "gpus", "nominal_gpus"});
  bool bucketed = false;
  for (size_t k = 0; k < queues.size(); ++k) {
    const QueueUsage& q = queues[k];
    const Style st = StyleOf(k);
    const std::string nominal = q.nominal_gpus ? std::to_string(*q.nominal_gpus) : "";
    legend.push_back({HtmlText(q.queue), st});
    svg += fmt::format("<g {}>", SeriesAttrs(q.queue, st, 1.8));
    const Steps& s = steps[k];
    const std::vector<double>& v = s.values[0];
    bucketed = bucketed || s.time.size() < q.gpus.time.size();
    if (!s.time.empty()) {
      svg += fmt::format("<path class=\"line\" d=\"{}\"/>", StepPath(f, s.time, v, end));
    }
    // Its nominal quota: a dashed line across the chart.
    if (q.nominal_gpus) {
      const double y = f.Y(static_cast<double>(*q.nominal_gpus));
      svg += fmt::format(
          "<path class=\"line dash\" data-nominal=\"{}\" d=\"M{} {}H{}\"><title>{}: nominal "
          "quota {} GPUs</title></path>",
          *q.nominal_gpus, C(f.X(f.x.lo)), C(y), C(f.X(f.x.hi)), HtmlText(q.queue), nominal);
    }
    for (size_t i = 0; i < s.time.size(); ++i) {
      std::string about =
          fmt::format("{} at {}: {} GPUs", q.queue, HumanTime(s.time[i]), Fixed(v[i], 2));
      if (q.nominal_gpus) {
        const double over = v[i] - static_cast<double>(*q.nominal_gpus);
        about += over > 0
                     ? fmt::format(" ({} above its nominal {}: borrowed)", Fixed(over, 2), nominal)
                     : fmt::format(" (nominal {})", nominal);
      }
      svg += fmt::format(
          "<circle data-point=\"\" class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"3\"><title>{}</title>"
          "</circle>",
          C(f.X(s.time[i])), C(f.Y(v[i])), HtmlText(about));
      csv.Row({q.queue, Num(s.time[i]), Num(v[i]), nominal});
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  legend.push_back({"nominal quota", kGrey, LegendItem::kDash});
  std::vector<std::string> notes;
  if (bucketed) notes.push_back(BucketNote());
  if (all > queues.size()) {
    notes.push_back(fmt::format("Showing the first {} of {} queues.", queues.size(), all));
  }
  return Figure({.title = title,
                 .about = "from allocations.csv and jobs.csv's queue; dashed, each queue's "
                          "nominal GPU quota: above it, the queue borrows from its cohort",
                 .legend = Legend(legend),
                 .body = svg,
                 .notes = notes,
                 .csv_name = fmt::format("{}-{}.csv", kId, Slug(run.name)),
                 .csv = csv.text()});
}

}  // namespace dlsched::report::html
