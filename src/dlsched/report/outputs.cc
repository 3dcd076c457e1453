#include "dlsched/report/outputs.h"

#include <cmath>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "dlsched/report/format.h"
#include "dlsched/report/json_writer.h"

namespace dlsched::report {
namespace {

using nlohmann::ordered_json;

std::string TimeCell(core::Time t) { return t >= core::kNever ? "" : FormatNumber(t); }

// Numbers as written: rounded; null when absent or not finite.
void OptionalNumber(JsonWriter& w, std::optional<double> x) {
  if (x) {
    w.Number(std::isfinite(*x) ? RoundForOutput(*x) : *x);
  } else {
    w.Null();
  }
}

std::optional<double> TimeOrNull(core::Time t) {
  return t >= core::kNever ? std::nullopt : std::optional<double>(t);
}

using NumberFields = std::initializer_list<std::pair<const char*, std::optional<double>>>;
using IntFields = std::initializer_list<std::pair<const char*, int64_t>>;

void Numbers(JsonWriter& w, NumberFields fields) {
  for (const auto& [key, value] : fields) {
    w.Key(key);
    OptionalNumber(w, value);
  }
}

void Ints(JsonWriter& w, IntFields fields) {
  for (const auto& [key, value] : fields) {
    w.Key(key);
    w.Int(value);
  }
}

void JobJson(JsonWriter& w, const metrics::JobRecord& job) {
  w.BeginObject();
  w.Key("name");
  w.String(job.name);
  w.Key("namespace");
  w.String(job.namespace_name);
  Numbers(w, {{"submit", TimeOrNull(job.submit)},
              {"first_start", TimeOrNull(job.first_start)},
              {"completion", TimeOrNull(job.completion)},
              {"jct", metrics::Jct(job)},
              {"queueing", job.queueing},
              {"launching", job.launching},
              {"running", job.running}});
  w.Key("final_state");
  w.String(core::PhaseName(job.final_phase));
  Ints(w, {{"admission_seq", job.admission_seq},
           {"reallocations", job.reallocations},
           {"preemptions", job.preemptions},
           {"scale_events", job.scale_events},
           {"final_workers", job.final_workers}});
  w.Key("stuck");
  w.Bool(job.stuck);
  w.Key("reason");
  w.String(job.reason);
  Numbers(w, {{"ideal_runtime", job.ideal_runtime}, {"slowdown", metrics::Slowdown(job)}});
  w.EndObject();
}

void NumberObject(JsonWriter& w, NumberFields fields) {
  w.BeginObject();
  Numbers(w, fields);
  w.EndObject();
}

void IntObject(JsonWriter& w, IntFields fields) {
  w.BeginObject();
  Ints(w, fields);
  w.EndObject();
}

}  // namespace

ordered_json SummaryJson(const metrics::RunSummary& s, const metrics::RunInput& input) {
  return ordered_json::parse(SummaryJsonText(s, input));
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

std::string EventsCsv(const metrics::RunInput& input) {
  std::string out = "time,job,event,workers,by,detail\n";
  auto name = [&](int32_t j) {
    return j < 0 || j >= static_cast<int32_t>(input.jobs.size()) ? std::string()
                                                                 : CsvField(input.jobs[j].name);
  };
  for (const metrics::JobEvent& e : input.events) {
    out += FormatNumber(e.time);
    out += ',';
    out += name(e.job);
    out += ',';
    out += e.kind;
    out += ',';
    if (e.workers >= 0) out += std::to_string(e.workers);
    out += ',';
    out += name(e.by);
    out += ',';
    out += CsvField(e.detail);
    out += '\n';
  }
  return out;
}

std::string AllocationsCsv(const metrics::RunInput& input) {
  std::string out = "node,job,start,end,tasks,gpus\n";
  for (const metrics::Allocation& a : input.allocations) {
    out += CsvField(input.nodes.at(static_cast<size_t>(a.node)));
    out += ',';
    out += CsvField(input.jobs.at(static_cast<size_t>(a.job)).name);
    out += ',';
    out += TimeCell(a.start);
    out += ',';
    out += TimeCell(a.end);
    out += fmt::format(",{},{}\n", a.tasks, a.gpus);
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

std::string SummaryJsonText(const metrics::RunSummary& s, const metrics::RunInput& input) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("profile");
  w.String(s.profile);
  w.Key("counts");
  IntObject(w, {{"total", s.total_jobs},
                {"completed", s.completed_jobs},
                {"failed", s.failed_jobs},
                {"stuck", s.stuck_jobs},
                {"unfinished", s.unfinished_jobs}});
  w.Key("deadlocked");
  w.Bool(s.deadlocked);
  w.Key("partial");
  w.Bool(s.partial);
  w.Key("cycles");
  w.Int(s.cycles);
  Numbers(w, {{"end_time", s.end_time}});
  w.Key("jct");
  w.BeginObject();
  Numbers(w, {{"mean", s.jct_mean}, {"p50", s.jct_p50}, {"p95", s.jct_p95}, {"p99", s.jct_p99}});
  Ints(w, {{"censored", s.jct_censored}});
  w.EndObject();
  Numbers(w, {{"makespan", s.makespan}});
  w.Key("mean_phase_time");
  NumberObject(w, {{"queueing", s.mean_queueing},
                   {"launching", s.mean_launching},
                   {"running", s.mean_running}});
  w.Key("utilization");
  w.BeginObject();
  Numbers(w, {{"window_start", s.window_start}, {"window_end", s.window_end}});
  w.Key("resources");
  w.BeginObject();
  for (const auto& u : s.utilization) {
    w.Key(u.name);
    w.BeginObject();
    Ints(w, {{"capacity", u.capacity}});
    Numbers(w, {{"allocated", u.allocated}, {"effective", u.effective}});
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  w.Key("slowdown");
  w.BeginObject();
  Ints(w, {{"jobs", s.slowdown_jobs}});
  Numbers(w, {{"mean", s.slowdown_mean},
              {"p95", s.slowdown_p95},
              {"variance", s.slowdown_variance},
              {"jain_index", s.jain_index}});
  w.EndObject();
  w.Key("events");
  IntObject(w, {{"preemptions", s.preemptions},
                {"scale_events", s.scale_events},
                {"reallocations", s.reallocations}});
  w.Key("jobs");
  w.BeginArray();
  for (const auto& job : input.jobs) JobJson(w, job);
  w.EndArray();
  w.EndObject();
  out += '\n';
  return out;
}

core::Status AddRunFiles(OutputDir& out, std::string_view subdir,
                         const metrics::RunSummary& summary, const metrics::RunInput& input) {
  const std::string prefix(subdir);
  if (auto st = out.Add(prefix + "summary.json", SummaryJsonText(summary, input)); !st) return st;
  if (auto st = out.Add(prefix + "jobs.csv", JobsCsv(input)); !st) return st;
  if (auto st = out.Add(prefix + "events.csv", EventsCsv(input)); !st) return st;
  if (auto st = out.Add(prefix + "allocations.csv", AllocationsCsv(input)); !st) return st;
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
