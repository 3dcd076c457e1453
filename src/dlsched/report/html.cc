#include "dlsched/report/html.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/core/quantity.h"
#include "dlsched/report/analysis.h"
#include "dlsched/report/first_seen.h"
#include "dlsched/report/html_charts.h"
#include "dlsched/report/html_section.h"
#include "dlsched/report/html_text.h"
#include "dlsched/report/provenance.h"

// The page: its style sheet, and a section per directory (html_section.h)
// holding the charts of html_charts.h, drawn with svg.h and html_figure.h;
// HtmlText is in html_text.cc.

namespace dlsched::report {
namespace html {
namespace {

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

// What the section is (a simulate run, a comparison, a sweep), and the
// window its figures are over.
std::string SectionKind(const ReportDir& dir, const Section& sec, const RenderOptions& options) {
  std::string kind;
  if (!dir.overlaid.empty()) {
    kind = fmt::format("A comparison of {} runs from {} directories, on one time axis.",
                       dir.runs.size(), dir.overlaid.size());
  } else if (dir.runs.size() == 1 && !dir.compare) {
    kind = "A simulate run.";
  } else if (!dir.runs.empty()) {
    kind = fmt::format("A comparison of {} profiles, on one time axis.", dir.runs.size());
  } else if (dir.sweep) {
    kind = dir.sweep->quota_of.empty()
               ? "A sweep (sweep.csv): every figure per profile and load, the mean over seeds."
               : "A sweep (sweep.csv): every figure per profile, quota and load, the mean over "
                 "seeds.";
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
  return kind;
}

// The charts of the runs of a section together: utilisation, the queue,
// the CDFs, JCT by job size.
std::string ComparisonCharts(const Section& sec) {
  std::string out = "<h3>Utilisation</h3>\n<div class=\"pair\">\n";
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
  out += CdfChart({"slowdown-cdf", "CDF of slowdown", "slowdown (JCT / ideal runtime)", "completed",
                   "had not completed", CdfOf::kSlowdown, false},
                  sec);
  // Finish-time fairness, only when some job has a JCT alone (--alone).
  bool alone = false;
  for (const RunView& v : sec.runs) {
    for (const JobRow* j : v.jobs) alone = alone || j->alone_jct > 0;
  }
  if (alone) {
    out += CdfChart({"ftf-cdf", "CDF of finish-time fairness",
                     "finish-time fairness (JCT / JCT alone on its queue's nominal quota)",
                     "completed", "had not completed", CdfOf::kFtf, false},
                    sec);
  }
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
  out += JctByQueueChart(sec);
  return out;
}

// Each run's own charts under its name: phases per job, allocations per
// node, elastic jobs' workers.
std::string RunCharts(const Section& sec) {
  // The phases charts share one axis: the span of the jobs each shows.
  std::pair<double, double> span{std::numeric_limits<double>::infinity(), 0};
  for (const RunView& v : sec.runs) {
    const auto jobs = PhaseJobs(*v.run);
    if (jobs.empty()) continue;
    const auto [lo, hi] = PhaseSpan(jobs);
    span = {std::min(span.first, lo), std::max(span.second, hi)};
  }
  std::string out;
  for (const RunView& v : sec.runs) {
    const RunData& run = *v.run;
    out +=
        fmt::format("<h3>{}{}<small>{}</small></h3>\n", HtmlText(run.name),
                    v.incomplete ? " <b class=\"incl\">(incomplete)</b>" : "", HtmlText(run.dir));
    out += PhasesChart(run, span);
    out += GanttChart(run, sec.t_lo, sec.t_hi);
    out += ElasticChart(run, sec.t_lo, sec.t_hi);
    out += QueueUsageChart(run, sec.t_lo, sec.t_hi);
  }
  return out;
}

std::string SectionHtml(const ReportDir& dir, size_t index, const RenderOptions& options,
                        int* ids) {
  const Section sec = MakeSection(dir, options, ids);
  std::string out =
      fmt::format("<section class=\"dir\" id=\"dir-{}\" data-dir=\"{}\">\n<h2>{}</h2>\n", index + 1,
                  HtmlText(dir.dir), HtmlText(dir.dir));
  out += "<div class=\"meta\">" + SectionKind(dir, sec, options) + "<ul>";
  for (const RunView& v : sec.runs) out += RunMeta(v, sec.mixed_windows);
  out += "</ul></div>\n";
  out += ProvenanceBlock(dir);
  // A sweep's directory has no runs of its own to compare: its cells are
  // the sweep chart's points.
  if (!dir.runs.empty() || dir.compare || !dir.sweep) out += CompareTable(sec);
  if (sec.runs.size() > 1) out += BaselineChart(sec);
  if (dir.sweep) out += "<h3>Sweep</h3>\n" + SweepCharts(dir, sec.runs);
  if (!dir.runs.empty()) out += ComparisonCharts(sec);
  out += RunCharts(sec);
  return out + "</section>\n";
}

}  // namespace
}  // namespace html

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
                      html::Join({unique.names().begin(), unique.names().end()}, ", "));
}

namespace {

// A page's head and header: `what` ("report") in its title and heading,
// `about` (HTML) under the heading.
std::string PageOpen(std::string_view what, std::string_view about) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      // Nothing is fetched, and no script runs, whatever the names hold.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>dlsched {}: {}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n"
      "<header><h1>dlsched {}</h1><p>{}</p></header>\n",
      what, about, html::kStyle, what, about);
}

constexpr std::string_view kPageClose = "</main>\n</body>\n</html>\n";

}  // namespace

std::string RenderHtml(std::span<const ReportDir> dirs, const RenderOptions& options) {
  std::vector<std::string> names;
  for (const auto& d : dirs) names.push_back(HtmlText(d.dir));
  std::string out = PageOpen("report", html::Join(names, ", "));
  if (dirs.size() > 1) {
    out += "<nav>";
    for (size_t i = 0; i < dirs.size(); ++i) {
      out += fmt::format("<a href=\"#dir-{}\">{}</a>", i + 1, names[i]);
    }
    out += "</nav>\n";
  }
  int ids = 0;
  for (size_t i = 0; i < dirs.size(); ++i) out += html::SectionHtml(dirs[i], i, options, &ids);
  out += kPageClose;
  return out;
}

std::string RenderSharingHtml(std::string_view title, std::span<const SharingCurve> curves) {
  FirstSeen<> traces;
  std::vector<std::vector<const SharingCurve*>> by_trace;
  for (const SharingCurve& c : curves) {
    const size_t t = traces.Number(c.trace);
    if (t == by_trace.size()) by_trace.emplace_back();
    by_trace[t].push_back(&c);
  }
  std::string out = PageOpen("sharing", HtmlText(title));
  for (size_t t = 0; t < by_trace.size(); ++t) {
    const std::string_view name = traces.names()[t];
    out += fmt::format("<section><h2>{}</h2>\n<div class=\"pair\">\n", HtmlText(name));
    out += html::SharingChart(fmt::format("unallocated-{}", t + 1), name, by_trace[t], false);
    out += html::SharingChart(fmt::format("fragmented-{}", t + 1), name, by_trace[t], true);
    out += "</div>\n</section>\n";
  }
  out += kPageClose;
  return out;
}

}  // namespace dlsched::report
