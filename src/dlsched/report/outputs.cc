#include "dlsched/report/outputs.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <iterator>
#include <system_error>

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

core::Status CannotWrite(const std::string& path, const std::string& reason) {
  return core::MakeError(path + ": cannot write: " + reason);
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

core::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path tmp = target;
  // Same directory, so the rename cannot cross file systems; the pid keeps
  // concurrent writers of the same directory apart.
  // (fmt rather than operator+: GCC 12 -O3 warns falsely on "." + string.)
  tmp.replace_filename(fmt::format(".{}.{}.tmp", target.filename().string(), ::getpid()));

  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return CannotWrite(path, std::strerror(errno));
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  int err = ok ? 0 : errno;
  if (std::fflush(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  std::error_code ec;
  if (!ok) {
    fs::remove(tmp, ec);
    return CannotWrite(path, std::strerror(err != 0 ? err : EIO));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return CannotWrite(path, ec.message());
  }
  return {};
}

core::Status WriteOutputs(const std::string& dir, const metrics::RunSummary& summary,
                          const metrics::RunInput& input) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return CannotWrite(dir, ec.message());
  if (!fs::is_directory(dir, ec)) return CannotWrite(dir, "not a directory");

  const fs::path base(dir);
  if (auto s =
          WriteFileAtomically((base / "summary.json").string(), SummaryJsonText(summary, input));
      !s) {
    return s;
  }
  if (auto s = WriteFileAtomically((base / "jobs.csv").string(), JobsCsv(input)); !s) return s;
  return WriteFileAtomically((base / "utilization.csv").string(), UtilizationCsv(summary, input));
}

}  // namespace dlsched::report
