#include "dlsched/report/outputs.h"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "dlsched/report/format.h"

namespace dlsched::report {
namespace {

using nlohmann::ordered_json;

ordered_json Number(double x) {
  if (!std::isfinite(x)) return nullptr;
  return RoundForOutput(x);
}

ordered_json TimeOrNull(core::Time t) {
  if (t >= core::kNever) return nullptr;
  return Number(t);
}

std::string TimeCell(core::Time t) { return t >= core::kNever ? "" : FormatNumber(t); }

ordered_json JobJson(const metrics::JobRecord& job) {
  const std::optional<core::Time> jct = metrics::Jct(job);
  const std::optional<double> slowdown = metrics::Slowdown(job);
  ordered_json j;
  j["name"] = job.name;
  j["namespace"] = job.namespace_name;
  j["submit"] = TimeOrNull(job.submit);
  j["first_start"] = TimeOrNull(job.first_start);
  j["completion"] = TimeOrNull(job.completion);
  j["jct"] = jct ? Number(*jct) : ordered_json(nullptr);
  j["queueing"] = Number(job.queueing);
  j["launching"] = Number(job.launching);
  j["running"] = Number(job.running);
  j["final_state"] = std::string(core::PhaseName(job.final_phase));
  j["admission_seq"] = job.admission_seq;
  j["reallocations"] = job.reallocations;
  j["preemptions"] = job.preemptions;
  j["scale_events"] = job.scale_events;
  j["final_workers"] = job.final_workers;
  j["stuck"] = job.stuck;
  j["reason"] = job.reason;
  j["ideal_runtime"] = Number(job.ideal_runtime);
  j["slowdown"] = slowdown ? Number(*slowdown) : ordered_json(nullptr);
  return j;
}

}  // namespace

ordered_json SummaryJson(const metrics::RunSummary& s, const metrics::RunInput& input) {
  ordered_json j;
  j["profile"] = s.profile;
  j["counts"] = {
      {"total", s.total_jobs}, {"completed", s.completed_jobs},   {"failed", s.failed_jobs},
      {"stuck", s.stuck_jobs}, {"unfinished", s.unfinished_jobs},
  };
  j["deadlocked"] = s.deadlocked;
  j["partial"] = s.partial;
  j["cycles"] = s.cycles;
  j["end_time"] = Number(s.end_time);
  j["jct"] = {
      {"mean", Number(s.jct_mean)},
      {"p50", Number(s.jct_p50)},
      {"p95", Number(s.jct_p95)},
      {"p99", Number(s.jct_p99)},
  };
  j["makespan"] = Number(s.makespan);
  j["mean_phase_time"] = {
      {"queueing", Number(s.mean_queueing)},
      {"launching", Number(s.mean_launching)},
      {"running", Number(s.mean_running)},
  };
  ordered_json util = ordered_json::object();
  for (const auto& u : s.utilization) {
    util[u.name] = {
        {"capacity", u.capacity},
        {"allocated", Number(u.allocated)},
        {"effective", Number(u.effective)},
    };
  }
  j["utilization"] = {
      {"window_start", Number(s.window_start)},
      {"window_end", Number(s.window_end)},
      {"resources", std::move(util)},
  };
  j["slowdown"] = {
      {"jobs", s.slowdown_jobs},
      {"mean", Number(s.slowdown_mean)},
      {"variance", Number(s.slowdown_variance)},
      {"jain_index", Number(s.jain_index)},
  };
  j["events"] = {
      {"preemptions", s.preemptions},
      {"scale_events", s.scale_events},
      {"reallocations", s.reallocations},
  };
  ordered_json jobs = ordered_json::array();
  for (const auto& job : input.jobs) jobs.push_back(JobJson(job));
  j["jobs"] = std::move(jobs);
  return j;
}

std::string JobsCsv(const metrics::RunInput& input) {
  std::string out =
      "name,namespace,submit,first_start,completion,jct,queueing,launching,running,final_state,"
      "admission_seq,reallocations,preemptions,scale_events,final_workers,stuck,reason\n";
  for (const auto& job : input.jobs) {
    const std::optional<core::Time> jct = metrics::Jct(job);
    const std::string cells[] = {
        CsvField(job.name),
        CsvField(job.namespace_name),
        TimeCell(job.submit),
        TimeCell(job.first_start),
        TimeCell(job.completion),
        jct ? FormatNumber(*jct) : "",
        FormatNumber(job.queueing),
        FormatNumber(job.launching),
        FormatNumber(job.running),
        std::string(core::PhaseName(job.final_phase)),
        std::to_string(job.admission_seq),
        std::to_string(job.reallocations),
        std::to_string(job.preemptions),
        std::to_string(job.scale_events),
        std::to_string(job.final_workers),
        job.stuck ? "true" : "false",
        CsvField(job.reason),
    };
    for (size_t i = 0; i < std::size(cells); ++i) {
      if (i > 0) out += ',';
      out += cells[i];
    }
    out += '\n';
  }
  return out;
}

std::string UtilizationCsv(const metrics::RunSummary& summary, const metrics::RunInput& input) {
  std::string out = "time";
  for (const auto& u : summary.utilization) {
    out += ',' + CsvField(u.name + "_allocated") + ',' + CsvField(u.name + "_effective");
  }
  out += '\n';
  auto row = [&](core::Time t, const metrics::UtilizationSample& sample) {
    out += FormatNumber(t);
    for (const auto& u : summary.utilization) {
      const double cap = static_cast<double>(u.capacity);
      out += ',' + FormatNumber(static_cast<double>(sample.allocated[u.id]) / cap);
      out += ',' + FormatNumber(static_cast<double>(sample.effective[u.id]) / cap);
    }
    out += '\n';
  };
  for (const auto& sample : input.utilization) row(sample.time, sample);
  if (!input.utilization.empty() && input.end_time > input.utilization.back().time) {
    row(input.end_time, input.utilization.back());
  }
  return out;
}

std::string SummaryJsonText(const metrics::RunSummary& summary, const metrics::RunInput& input) {
  // Replace rather than throw on invalid UTF-8 in names or reasons: a report
  // must not abort the run that produced it.
  return SummaryJson(summary, input).dump(2, ' ', false, ordered_json::error_handler_t::replace) +
         "\n";
}

core::Status AddRunFiles(OutputDir& out, std::string_view subdir,
                         const metrics::RunSummary& summary, const metrics::RunInput& input) {
  const std::string prefix(subdir);
  if (auto st = out.Add(prefix + "summary.json", SummaryJsonText(summary, input)); !st) return st;
  if (auto st = out.Add(prefix + "jobs.csv", JobsCsv(input)); !st) return st;
  return out.Add(prefix + "utilization.csv", UtilizationCsv(summary, input));
}

core::Status WriteOutputs(const std::string& dir, const metrics::RunSummary& summary,
                          const metrics::RunInput& input) {
  auto out = OutputDir::Open(dir);
  if (!out) return std::unexpected(out.error());
  if (auto st = AddRunFiles(*out, "", summary, input); !st) return st;
  return out->Commit();
}

}  // namespace dlsched::report
