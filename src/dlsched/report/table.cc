#include "dlsched/report/table.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/report/format.h"

namespace dlsched::report {
namespace {

enum class Align { kLeft, kRight };

// Renders rows as columns separated by two spaces, each as wide as its widest
// cell. The last column is never padded so lines carry no trailing blanks.
// Widths count bytes: names are expected to be ASCII (Kubernetes names are).
std::string RenderColumns(const std::vector<std::vector<std::string>>& rows,
                          const std::vector<Align>& align, bool header_rule) {
  std::vector<size_t> width(align.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    const auto& row = rows[r];
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      const bool last = c + 1 == row.size();
      const size_t pad = width[c] - row[c].size();
      if (align[c] == Align::kRight) line.append(pad, ' ');
      line += row[c];
      if (align[c] == Align::kLeft && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
    if (r == 0 && header_rule) {
      size_t total = 0;
      for (size_t c = 0; c < width.size(); ++c) total += width[c] + (c > 0 ? 2 : 0);
      out.append(total, '-');
      out += '\n';
    }
  }
  return out;
}

// Keeps each job on one line whatever its reason says.
std::string OneLine(std::string_view text) {
  std::string out(text);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  return out;
}

std::string Seconds(core::Time t) { return FormatSeconds(t) + " s"; }

std::string SummaryRows(const metrics::RunSummary& s) {
  std::vector<std::vector<std::string>> rows;
  auto add = [&rows](std::string key, std::string value) {
    rows.push_back({std::move(key), std::move(value)});
  };
  add("profile", s.profile.empty() ? "-" : s.profile);
  std::string jobs = fmt::format("{} total, {} completed, {} failed, {} stuck", s.total_jobs,
                                 s.completed_jobs, s.failed_jobs, s.stuck_jobs);
  if (s.unfinished_jobs > 0) jobs += fmt::format(", {} unfinished", s.unfinished_jobs);
  add("jobs", jobs);
  if (s.deadlocked) add("deadlocked", fmt::format("yes (stuck jobs: {})", s.stuck_jobs));
  // Values that count unfinished jobs at the run's end are lower bounds.
  const std::string at_least = s.jct_censored > 0 ? ">= " : "";
  auto censored = [&](core::Time t) { return at_least + Seconds(t); };
  add("JCT mean", censored(s.jct_mean));
  add("JCT p50", censored(s.jct_p50));
  add("JCT p95", censored(s.jct_p95));
  add("JCT p99", censored(s.jct_p99));
  if (s.jct_censored > 0) {
    add("censored",
        fmt::format("{} jobs did not complete: their JCT counts to the run's end", s.jct_censored));
  }
  add("makespan", censored(s.makespan));
  add("mean queueing", Seconds(s.mean_queueing));
  add("mean launching", Seconds(s.mean_launching));
  add("mean running", Seconds(s.mean_running));
  for (const auto& u : s.utilization) {
    add("util " + u.name,
        FormatPercent(u.allocated) + " allocated, " + FormatPercent(u.effective) + " effective");
  }
  add("slowdown mean",
      fmt::format("{}{:.3f} (JCT / ideal, n={})", at_least, s.slowdown_mean, s.slowdown_jobs));
  add("slowdown p95", fmt::format("{}{:.3f}", at_least, s.slowdown_p95));
  add("slowdown variance", fmt::format("{:.4f}", s.slowdown_variance));
  add("Jain's index", fmt::format("{:.3f}", s.jain_index));
  if (s.ftf_jobs > 0) {
    add("finish-time fairness", fmt::format("{}{:.3f} mean, {}{:.3f} max (JCT / JCT alone on its "
                                            "queue's quota, n={})",
                                            at_least, s.ftf_mean, at_least, s.ftf_max, s.ftf_jobs));
  }
  add("preemptions", std::to_string(s.preemptions));
  add("scale events", std::to_string(s.scale_events));
  add("reallocations", std::to_string(s.reallocations));
  add("work lost", fmt::format("{:.3f} GPU-hours (checkpoints and relaunches)", s.lost_gpu_hours));
  add("spread",
      fmt::format("{} job{} over several nodes, {} over several switches", s.jobs_across_nodes,
                  s.jobs_across_nodes == 1 ? "" : "s", s.jobs_across_switches));
  add("cycles", std::to_string(s.cycles));
  add("end time", Seconds(s.end_time));
  return RenderColumns(rows, {Align::kLeft, Align::kLeft}, /*header_rule=*/false);
}

std::string JobRows(const metrics::RunInput& input) {
  if (input.jobs.empty()) return "(no jobs)\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"name", "state", "submit", "start", "end", "JCT", "queue", "workers", "reason"});
  for (const auto& job : input.jobs) {
    const std::optional<core::Time> jct = metrics::Jct(job);
    // Queueing is only meaningful once the job got its first allocation.
    const bool started = job.first_start < core::kNever;
    rows.push_back({
        OneLine(job.name),
        JobStateLabel(job),
        FormatSeconds(job.submit),
        FormatSeconds(job.first_start),
        FormatSeconds(job.completion),
        jct ? FormatSeconds(*jct) : "-",
        started ? FormatSeconds(job.queueing) : "-",
        std::to_string(job.final_workers),
        job.reason.empty() ? "-" : OneLine(job.reason),
    });
  }
  return RenderColumns(rows,
                       {Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight,
                        Align::kRight, Align::kRight, Align::kRight, Align::kLeft},
                       /*header_rule=*/true);
}

}  // namespace

std::string FormatSummary(const metrics::RunSummary& summary) { return SummaryRows(summary); }

std::string FormatJobs(const metrics::RunInput& input) { return JobRows(input); }

std::string FormatTable(const metrics::RunSummary& summary, const metrics::RunInput& input) {
  return FormatSummary(summary) + "\n" + FormatJobs(input);
}

}  // namespace dlsched::report
