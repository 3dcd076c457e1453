#include "dlsched/report/outputs.h"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/report/format.h"
#include "dlsched/report/json_writer.h"
#include "dlsched/report/schema.h"

namespace dlsched::report {
namespace {

using nlohmann::ordered_json;

// Where a run file's text goes: appended to text() and, when it goes to a
// file, moved there whenever it passes kChunkBytes (Chunk(), called after
// each row), so that writing a file of any size takes about that much
// memory; a whole file in one string cost page faults for every MB.
class TextOut {
 public:
  static constexpr size_t kChunkBytes = 64 * 1024;

  // Keeps everything in text() when `file` is null.
  explicit TextOut(OutputFile* file = nullptr) : file_(file) {
    if (file_ != nullptr) text_.reserve(kChunkBytes + kChunkBytes / 4);
  }

  std::string& text() { return text_; }

  void Chunk() {
    if (file_ != nullptr && text_.size() >= kChunkBytes) Flush();
  }

  // Moves what is left to the file.
  void Flush() {
    file_->Write(text_);
    text_.clear();
  }

 private:
  std::string text_;
  OutputFile* file_;
};

// A run file as one string: what `write` makes.
template <typename Write>
std::string Text(Write write) {
  TextOut out;
  write(out);
  return std::move(out.text());
}

// A run file written to `relative` in `dir` a chunk at a time.
template <typename Write>
core::Status AddFile(OutputDir& dir, const std::string& relative, Write write) {
  DLSCHED_TRY_LET(file, dir.Create(relative));
  TextOut out(&*file);
  write(out);
  out.Flush();
  return file->Close();
}

// A time cell: empty for a time that never happened.
void AppendTime(std::string& out, core::Time t) {
  if (t < core::kNever) AppendNumber(out, t);
}

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

using NumberFields = std::initializer_list<std::pair<std::string_view, std::optional<double>>>;
using IntFields = std::initializer_list<std::pair<std::string_view, int64_t>>;

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

// The job's JCT alone, when known.
std::optional<double> AloneJct(const metrics::JobRecord& job) {
  if (job.alone_jct > 0) return job.alone_jct;
  return std::nullopt;
}

}  // namespace

void WindowJson(JsonWriter& w, const std::optional<metrics::Window>& window) {
  if (!window) {
    w.Null();
    return;
  }
  w.BeginObject();
  Numbers(w,
          {{schema::summary::kFrom, window->from}, {schema::summary::kTo, TimeOrNull(window->to)}});
  w.EndObject();
}

namespace {

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

void WriteJobsCsv(TextOut& out, const metrics::RunInput& input) {
  std::string& o = out.text();
  schema::AppendHeader(o, schema::jobs::kColumns);
  for (const auto& job : input.jobs) {
    AppendCsvField(o, job.name);
    o += ',';
    AppendCsvField(o, job.namespace_name);
    o += ',';
    AppendCsvField(o, job.queue);
    for (core::Time t : {job.submit, job.first_start, job.completion}) {
      o += ',';
      AppendTime(o, t);
    }
    o += ',';
    if (const std::optional<core::Time> jct = metrics::Jct(job)) AppendNumber(o, *jct);
    for (double x : {job.queueing, job.launching, job.running}) {
      o += ',';
      AppendNumber(o, x);
    }
    o += ',';
    o += core::PhaseName(job.final_phase);
    for (int64_t n : {job.admission_seq, int64_t{job.reallocations}, int64_t{job.preemptions},
                      int64_t{job.scale_events}, int64_t{job.final_workers}, job.gpus,
                      int64_t{job.max_nodes}, int64_t{job.max_switches}}) {
      o += ',';
      AppendInt(o, n);
    }
    for (double x : {job.lost_gpu_seconds, job.ideal_runtime}) {
      o += ',';
      AppendNumber(o, x);
    }
    for (const std::optional<double> x : {AloneJct(job), metrics::FinishTimeFairness(job)}) {
      o += ',';
      if (x) AppendNumber(o, *x);
    }
    o += job.stuck ? ",true," : ",false,";
    AppendCsvField(o, job.reason);
    o += '\n';
    out.Chunk();
  }
}

// One queue's fields, in queues.csv's column order, as text ("" for none).
std::vector<std::string> QueueFields(const metrics::QueueSummary& q) {
  auto number = [](std::optional<double> x) {
    std::string s;
    if (x) AppendNumber(s, *x);
    return s;
  };
  auto integer = [](int64_t n) {
    std::string s;
    AppendInt(s, n);
    return s;
  };
  return {q.name,
          q.cohort,
          integer(q.nominal_gpus),
          integer(q.jobs),
          integer(q.completed),
          number(q.jct_mean),
          number(q.jct_p95),
          number(q.queueing_mean),
          number(q.gpu_hours),
          number(q.borrowed_gpu_hours),
          number(q.lent_gpu_hours),
          integer(q.preemptions_suffered),
          integer(q.preemptions_caused),
          number(q.lost_gpu_hours),
          integer(q.reclaims),
          number(q.reclaim_wait_mean),
          number(q.reclaim_wait_max),
          number(q.ftf_mean),
          number(q.ftf_max)};
}

// One row of queues.csv per queue of `summary`, each after `prefix`.
void AppendQueueRows(std::string& o, const metrics::RunSummary& summary, std::string_view prefix) {
  for (const metrics::QueueSummary& q : summary.queues) {
    o += prefix;
    const std::vector<std::string> fields = QueueFields(q);
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) o += ',';
      AppendCsvField(o, fields[i]);
    }
    o += '\n';
  }
}

void WriteQueuesCsv(TextOut& out, const metrics::RunSummary& summary) {
  std::string& o = out.text();
  schema::AppendHeader(o, schema::queues::kColumns);
  AppendQueueRows(o, summary, "");
}

void WriteEventsCsv(TextOut& out, const metrics::RunInput& input) {
  std::string& o = out.text();
  schema::AppendHeader(o, schema::events::kColumns);
  auto name = [&](int32_t j) {
    if (j >= 0 && j < static_cast<int32_t>(input.jobs.size()))
      AppendCsvField(o, input.jobs[j].name);
  };
  for (const metrics::JobEvent& e : input.events) {
    AppendNumber(o, e.time);
    o += ',';
    name(e.job);
    o += ',';
    o += e.kind;
    o += ',';
    if (e.workers >= 0) AppendInt(o, e.workers);
    o += ',';
    name(e.by);
    o += ',';
    AppendCsvField(o, e.detail);
    o += '\n';
    out.Chunk();
  }
}

void WriteAllocationsCsv(TextOut& out, const metrics::RunInput& input) {
  std::string& o = out.text();
  schema::AppendHeader(o, schema::allocations::kColumns);
  for (const metrics::Allocation& a : input.allocations) {
    AppendCsvField(o, input.nodes.at(static_cast<size_t>(a.node)));
    o += ',';
    AppendCsvField(o, input.jobs.at(static_cast<size_t>(a.job)).name);
    o += ',';
    AppendTime(o, a.start);
    o += ',';
    AppendTime(o, a.end);
    o += ',';
    AppendInt(o, a.tasks);
    o += ',';
    AppendInt(o, a.gpus);
    o += '\n';
    out.Chunk();
  }
}

void WriteUtilizationCsv(TextOut& out, const metrics::RunSummary& summary,
                         const metrics::RunInput& input) {
  std::string& o = out.text();
  o += schema::utilization::kTime;
  for (const auto& u : summary.utilization) {
    o += ',';
    AppendCsvField(o, u.name + std::string(schema::utilization::kAllocatedSuffix));
    o += ',';
    AppendCsvField(o, u.name + std::string(schema::utilization::kEffectiveSuffix));
  }
  o += '\n';
  auto row = [&](core::Time t, const metrics::UtilizationSample& sample) {
    AppendNumber(o, t);
    for (const auto& u : summary.utilization) {
      const double cap = static_cast<double>(u.capacity);
      o += ',';
      AppendNumber(o, static_cast<double>(sample.allocated[u.id]) / cap);
      o += ',';
      AppendNumber(o, static_cast<double>(sample.effective[u.id]) / cap);
    }
    o += '\n';
    out.Chunk();
  };
  for (const auto& sample : input.utilization) row(sample.time, sample);
  if (!input.utilization.empty() && input.end_time > input.utilization.back().time) {
    row(input.end_time, input.utilization.back());
  }
}

void WriteSummaryJson(TextOut& out, const metrics::RunSummary& s, const Provenance* provenance) {
  namespace key = schema::summary;
  JsonWriter w(&out.text());
  w.BeginObject();
  w.Key(key::kProfile);
  w.String(s.profile);
  w.Key(key::kCounts);
  IntObject(w, {{key::kTotal, s.total_jobs},
                {key::kCompleted, s.completed_jobs},
                {key::kFailed, s.failed_jobs},
                {key::kStuck, s.stuck_jobs},
                {key::kUnfinished, s.unfinished_jobs}});
  w.Key(key::kDeadlocked);
  w.Bool(s.deadlocked);
  w.Key(key::kPartial);
  w.Bool(s.partial);
  w.Key(key::kCycles);
  w.Int(s.cycles);
  Numbers(w, {{key::kEndTime, s.end_time}});
  w.Key(key::kWindow);
  WindowJson(w, s.window);
  w.Key(key::kJct);
  w.BeginObject();
  Numbers(w, {{key::kMean, s.jct_mean},
              {key::kP50, s.jct_p50},
              {key::kP95, s.jct_p95},
              {key::kP99, s.jct_p99}});
  Ints(w, {{key::kCensored, s.jct_censored}});
  w.EndObject();
  Numbers(w, {{key::kMakespan, s.makespan}});
  w.Key(key::kMeanPhaseTime);
  NumberObject(w, {{key::kQueueing, s.mean_queueing},
                   {key::kLaunching, s.mean_launching},
                   {key::kRunning, s.mean_running}});
  w.Key(key::kUtilization);
  w.BeginObject();
  Numbers(w, {{key::kWindowStart, s.window_start}, {key::kWindowEnd, s.window_end}});
  w.Key(key::kResources);
  w.BeginObject();
  for (const auto& u : s.utilization) {
    w.Key(u.name);
    w.BeginObject();
    Ints(w, {{key::kCapacity, u.capacity}});
    Numbers(w, {{key::kAllocated, u.allocated}, {key::kEffective, u.effective}});
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  w.Key(key::kSlowdown);
  w.BeginObject();
  Ints(w, {{key::kJobs, s.slowdown_jobs}});
  Numbers(w, {{key::kMean, s.slowdown_mean},
              {key::kP95, s.slowdown_p95},
              {key::kVariance, s.slowdown_variance},
              {key::kJainIndex, s.jain_index}});
  w.EndObject();
  w.Key(key::kFinishTimeFairness);
  w.BeginObject();
  Ints(w, {{key::kJobs, s.ftf_jobs}});
  Numbers(w, {{key::kMean, s.ftf_mean}, {key::kMax, s.ftf_max}});
  w.EndObject();
  w.Key(key::kEvents);
  w.BeginObject();
  Ints(w, {{key::kPreemptions, s.preemptions},
           {key::kScaleEvents, s.scale_events},
           {key::kReallocations, s.reallocations}});
  Numbers(w, {{key::kLostGpuHours, s.lost_gpu_hours}});
  w.EndObject();
  w.Key(key::kPlacement);
  IntObject(w, {{key::kJobsAcrossNodes, s.jobs_across_nodes},
                {key::kJobsAcrossSwitches, s.jobs_across_switches}});
  if (!s.queues.empty()) {
    w.Key(key::kQueues);
    w.BeginArray();
    for (const metrics::QueueSummary& q : s.queues) {
      w.BeginObject();
      w.Key(schema::queues::kQueue);
      w.String(q.name);
      w.Key(schema::queues::kCohort);
      w.String(q.cohort);
      Ints(w, {{schema::queues::kNominalGpus, q.nominal_gpus},
               {schema::queues::kJobs, q.jobs},
               {schema::queues::kCompleted, q.completed}});
      Numbers(w, {{schema::queues::kJctMean, q.jct_mean},
                  {schema::queues::kJctP95, q.jct_p95},
                  {schema::queues::kQueueingMean, q.queueing_mean},
                  {schema::queues::kGpuHours, q.gpu_hours},
                  {schema::queues::kBorrowedGpuHours, q.borrowed_gpu_hours},
                  {schema::queues::kLentGpuHours, q.lent_gpu_hours}});
      Ints(w, {{schema::queues::kPreemptionsSuffered, q.preemptions_suffered},
               {schema::queues::kPreemptionsCaused, q.preemptions_caused}});
      Numbers(w, {{schema::queues::kLostGpuHours, q.lost_gpu_hours}});
      Ints(w, {{schema::queues::kReclaims, q.reclaims}});
      Numbers(w, {{schema::queues::kReclaimWaitMean, q.reclaim_wait_mean},
                  {schema::queues::kReclaimWaitMax, q.reclaim_wait_max},
                  {schema::queues::kFtfMean, q.ftf_mean},
                  {schema::queues::kFtfMax, q.ftf_max}});
      w.EndObject();
    }
    w.EndArray();
  }
  if (provenance != nullptr) {
    w.Key(key::kProvenance);
    WriteProvenance(w, *provenance);
  }
  w.EndObject();
  out.text() += '\n';
}

}  // namespace

std::string RunStatus(const metrics::RunSummary& s) {
  std::vector<std::string> parts;
  if (s.stuck_jobs > 0) {
    parts.push_back(fmt::format("{} stuck{}", s.stuck_jobs, s.deadlocked ? " (deadlocked)" : ""));
  }
  if (s.failed_jobs > 0) parts.push_back(fmt::format("{} failed", s.failed_jobs));
  if (s.unfinished_jobs > 0) parts.push_back(fmt::format("{} unfinished", s.unfinished_jobs));
  std::string status = parts.empty() ? "all done" : fmt::format("{}", fmt::join(parts, ", "));
  return s.partial ? "partial: " + status : status;
}

namespace {

double UtilizationOf(const metrics::RunSummary& s, std::string_view resource, bool effective) {
  for (const auto& u : s.utilization) {
    if (u.name == resource) return effective ? u.effective : u.allocated;
  }
  return 0;
}

}  // namespace

std::vector<CompareField> CompareFields(const std::string& profile, const metrics::RunSummary& s) {
  const std::string gpu = metrics::ResourceLabel(core::kGpu);
  const std::string cpu = metrics::ResourceLabel(core::kCpu);
  return {
      {"profile", profile},
      {"status", RunStatus(s)},
      {"total", int64_t{s.total_jobs}},
      {"completed", int64_t{s.completed_jobs}},
      {"failed", int64_t{s.failed_jobs}},
      {"stuck", int64_t{s.stuck_jobs}},
      {"unfinished", int64_t{s.unfinished_jobs}},
      {"jct_censored", int64_t{s.jct_censored}},
      {"jct_mean", s.jct_mean},
      {"jct_p50", s.jct_p50},
      {"jct_p95", s.jct_p95},
      {"jct_p99", s.jct_p99},
      {"makespan", s.makespan},
      {"mean_queueing", s.mean_queueing},
      {"mean_launching", s.mean_launching},
      {"mean_running", s.mean_running},
      {"slowdown_mean", s.slowdown_mean},
      {"slowdown_p95", s.slowdown_p95},
      {"slowdown_variance", s.slowdown_variance},
      {"jain_index", s.jain_index},
      {"ftf_mean", s.ftf_mean},
      {"ftf_max", s.ftf_max},
      {"gpu_allocated", UtilizationOf(s, gpu, false)},
      {"gpu_effective", UtilizationOf(s, gpu, true)},
      {"cpu_allocated", UtilizationOf(s, cpu, false)},
      {"cpu_effective", UtilizationOf(s, cpu, true)},
      {"preemptions", s.preemptions},
      {"scale_events", s.scale_events},
      {"reallocations", s.reallocations},
      {"lost_gpu_hours", s.lost_gpu_hours},
      {"cycles", s.cycles},
      {"end_time", s.end_time},
  };
}

std::vector<CompareField> QueueCompareFields(std::span<const std::string> queues,
                                             const metrics::RunSummary& s) {
  namespace col = schema::queues;
  std::vector<CompareField> out;
  for (const std::string& name : queues) {
    const metrics::QueueSummary* q = nullptr;
    for (const metrics::QueueSummary& x : s.queues) {
      if (x.name == name) q = &x;
    }
    auto add = [&](std::string_view figure, std::optional<double> v) {
      CompareField f{fmt::format("{}@{}", figure, name), std::string()};
      if (q != nullptr && v) f.value = *v;
      out.push_back(std::move(f));
    };
    const metrics::QueueSummary none;
    const metrics::QueueSummary& x = q != nullptr ? *q : none;
    add(col::kJctMean, x.jct_mean);
    add(col::kJctP95, x.jct_p95);
    add(col::kQueueingMean, x.queueing_mean);
    add(col::kGpuHours, x.gpu_hours);
    add(col::kBorrowedGpuHours, x.borrowed_gpu_hours);
    add(col::kLentGpuHours, x.lent_gpu_hours);
    add(col::kLostGpuHours, x.lost_gpu_hours);
    add(col::kFtfMean, x.ftf_mean);
    add(col::kFtfMax, x.ftf_max);
  }
  return out;
}

ordered_json SummaryJson(const metrics::RunSummary& s) {
  return ordered_json::parse(SummaryJsonText(s));
}

std::string SummaryJsonText(const metrics::RunSummary& s, const Provenance* provenance) {
  return Text([&](TextOut& out) { WriteSummaryJson(out, s, provenance); });
}

std::string JobsCsv(const metrics::RunInput& input) {
  return Text([&](TextOut& out) { WriteJobsCsv(out, input); });
}

void QueuesTable::Add(const std::string& profile, const metrics::RunSummary& summary) {
  if (summary.queues.empty()) return;
  if (csv_.empty()) {
    csv_ = "profile,";
    schema::AppendHeader(csv_, schema::queues::kColumns);
  }
  std::string prefix;
  AppendCsvField(prefix, profile);
  AppendQueueRows(csv_, summary, prefix + ",");
}

std::string EventsCsv(const metrics::RunInput& input) {
  return Text([&](TextOut& out) { WriteEventsCsv(out, input); });
}

std::string AllocationsCsv(const metrics::RunInput& input) {
  return Text([&](TextOut& out) { WriteAllocationsCsv(out, input); });
}

std::string UtilizationCsv(const metrics::RunSummary& summary, const metrics::RunInput& input) {
  return Text([&](TextOut& out) { WriteUtilizationCsv(out, summary, input); });
}

core::Status AddRunFiles(OutputDir& out, std::string_view subdir,
                         const metrics::RunSummary& summary, const metrics::RunInput& input,
                         const Provenance* provenance) {
  const std::string prefix(subdir);
  auto st = AddFile(out, prefix + std::string(schema::kSummaryJson),
                    [&](TextOut& o) { WriteSummaryJson(o, summary, provenance); });
  if (st)
    st = AddFile(out, prefix + std::string(schema::kJobsCsv),
                 [&](TextOut& o) { WriteJobsCsv(o, input); });
  if (st)
    st = AddFile(out, prefix + std::string(schema::kEventsCsv),
                 [&](TextOut& o) { WriteEventsCsv(o, input); });
  if (st) {
    st = AddFile(out, prefix + std::string(schema::kAllocationsCsv),
                 [&](TextOut& o) { WriteAllocationsCsv(o, input); });
  }
  if (st) {
    st = AddFile(out, prefix + std::string(schema::kUtilizationCsv),
                 [&](TextOut& o) { WriteUtilizationCsv(o, summary, input); });
  }
  if (st && !summary.queues.empty()) {
    st = AddFile(out, prefix + std::string(schema::kQueuesCsv),
                 [&](TextOut& o) { WriteQueuesCsv(o, summary); });
  }
  return st;
}

core::Status WriteOutputs(const std::string& dir, const metrics::RunSummary& summary,
                          const metrics::RunInput& input, const Provenance* provenance) {
  DLSCHED_TRY_LET(out, OutputDir::Open(dir));
  if (auto st = AddRunFiles(*out, "", summary, input, provenance); !st) return st;
  return out->Commit();
}

}  // namespace dlsched::report
