#include "dlsched/config/trace.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/config/csv.h"
#include "dlsched/config/job_checks.h"
#include "dlsched/config/job_codec.h"
#include "dlsched/config/pollux.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/affinity.h"
#include "dlsched/core/job.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/quantity.h"
#include "dlsched/core/resources.h"
#include "dlsched/core/spec_limits.h"
#include "dlsched/core/text.h"

namespace dlsched::config {
namespace {

using internal::Bad;
using internal::CsvReader;
using internal::IntField;
using internal::kMaxLineBytes;
using internal::NumberField;
using internal::RowError;
using internal::RowResult;

// A rigid (or, with the factors, elastic) gang of `gpus` one-GPU workers,
// its work still to give.
core::JobSpec GangShape(std::string name, core::Time submit, int gpus, const TraceOptions& o) {
  core::JobSpec job;
  job.name = std::move(name);
  job.submit_time = submit;
  core::RoleSpec& w = job.role(core::Role::kWorker);
  w.replicas = gpus;
  w.min_replicas = std::max(1, static_cast<int>(std::ceil(gpus * o.min_factor - 1e-9)));
  w.max_replicas = std::max(gpus, static_cast<int>(std::floor(gpus * o.max_factor + 1e-9)));
  w.max_replicas = std::min(w.max_replicas, core::kMaxTasksPerJob);
  w.resources[core::kGpu] = 1;
  return job;
}

// The gang that runs `duration` seconds at its size.
core::JobSpec GangJob(std::string name, core::Time submit, int gpus, core::Time duration,
                      const TraceOptions& o) {
  core::JobSpec job = GangShape(std::move(name), submit, gpus, o);
  job.SetDuration(duration, o.scaling);
  return job;
}

// A field of a job (as the workload YAML names it) and the column of a
// trace format that gives it, for messages.
using Columns = std::span<const std::pair<std::string_view, std::string_view>>;

// What every importer shares: reading rows, counting, skipping, limits.
class Importer {
 public:
  // `columns` name the fields of a job's limits (core::CheckJobLimits) by
  // this format's columns where it has them.
  Importer(const TraceOptions& o, Columns columns) : o_(o), csv_(o.path), columns_(columns) {}

  // `optional` columns may be missing from the header: their fields are
  // then empty in every row.
  core::Status Open(std::span<const std::string_view> columns,
                    std::span<const std::string_view> optional = {}) {
    if (auto st = csv_.Open(); !st) return st;
    DLSCHED_TRY_LET(pos, csv_.Header(columns, optional));
    pos_ = std::move(*pos);
    return {};
  }

  // The next well-formed row's fields in the order of Open's columns (then
  // its optional ones);
  // false at the end (or when the limit is reached). A row with the wrong
  // number of fields is a bad row.
  core::Result<bool> Next() {
    while (true) {
      if (o_.limit > 0 && static_cast<int64_t>(out_.workload.jobs.size()) >= o_.limit) {
        while (csv_.Next()) {  // counted, not parsed
          if (++out_.filtered % kStopCheckRows == 0 && Stopped()) return Interrupted();
        }
        DLSCHED_TRY(csv_.ReadError());
        return false;
      }
      if (!csv_.Next()) {
        DLSCHED_TRY(csv_.ReadError());
        return false;
      }
      if (++out_.rows % kStopCheckRows == 0 && Stopped()) return Interrupted();
      if (csv_.TooLong()) {
        DLSCHED_TRY(Skip(fmt::format("the line is longer than {} bytes", kMaxLineBytes)));
        continue;
      }
      const std::vector<std::string_view>& all = csv_.fields();
      if (csv_.Quoted() || all.size() != csv_.width()) {
        DLSCHED_TRY(Skip(fmt::format("expected {} comma-separated fields (no quotes), got {}",
                                     csv_.width(), all.size())));
        continue;
      }
      fields_.clear();
      for (int p : pos_) fields_.push_back(p == CsvReader::kAbsent ? std::string_view() : all[p]);
      return true;
    }
  }

  std::string_view field(size_t i) const { return fields_[i]; }

  bool Stopped() const { return o_.stop != nullptr && o_.stop->load(std::memory_order_relaxed); }
  std::unexpected<core::Error> Interrupted() const {
    return std::unexpected(csv_.At("interrupted while reading"));
  }

  // A bad row: an error, or skipped and counted.
  core::Status Skip(std::string_view what) {
    core::Error e = csv_.At(what);
    if (!o_.skip_bad_rows) return std::unexpected(std::move(e));
    if (out_.skipped++ == 0) out_.first_skipped = std::move(e.message);
    return {};
  }
  core::Status Skip(const RowError& e) { return Skip(e.what); }

  // Adds a job, within every limit a job has (core::CheckJobLimits, as a
  // job of a workload file; a bad row otherwise); its name must be new.
  // `later_arrival`: its submit time is not its arrival yet (philly's epoch
  // seconds), which the caller checks once it is.
  core::Status Add(core::JobSpec job, bool later_arrival = false) {
    const core::Time submit = job.submit_time;
    if (later_arrival) job.submit_time = 0;
    if (auto p = core::CheckJobLimits(job)) return Skip(Named(*p));
    job.submit_time = submit;
    if (!names_.insert(job.name).second) {
      return Skip(fmt::format("job '{}' appears twice", job.name));
    }
    tasks_ += job.NumTasks(job.role(core::Role::kWorker).max_replicas);
    if (tasks_ > core::kMaxWorkloadTasks) {
      return std::unexpected(csv_.At(fmt::format(
          "the trace has more than {} tasks (PS and maxReplicas workers over all jobs), the limit",
          core::kMaxWorkloadTasks)));
    }
    roles_.Share(job);
    out_.workload.jobs.push_back(std::move(job));
    return {};
  }
  void Filtered() { ++out_.filtered; }

  core::Result<TraceLoad> Finish() {
    auto& jobs = out_.workload.jobs;
    if (jobs.empty()) {
      return core::Errorf("{}: no job left to run ({} rows, {} skipped as bad, {} filtered out)",
                          o_.path, out_.rows, out_.skipped, out_.filtered);
    }
    auto by_submit = [](const core::JobSpec& a, const core::JobSpec& b) {
      return a.submit_time < b.submit_time;
    };
    // Traces are usually in arrival order already; a merge sort of them
    // would still move every job about log2(n) times.
    if (!std::is_sorted(jobs.begin(), jobs.end(), by_submit)) {
      std::stable_sort(jobs.begin(), jobs.end(), by_submit);
    }
    out_.workload.source = o_.path;
    return std::move(out_);
  }

  int64_t line_no() const { return csv_.line_no(); }
  core::Error At(std::string_view what) const { return csv_.At(what); }

  // "<column or field>: <what>".
  std::string Named(const core::LimitProblem& p) const {
    std::string_view field = p.field;
    for (const auto& [key, column] : columns_) {
      if (key == field) field = column;
    }
    return field.empty() ? p.what : fmt::format("{}: {}", field, p.what);
  }

 private:
  const TraceOptions& o_;
  CsvReader csv_;
  Columns columns_;
  std::vector<int> pos_;
  std::vector<std::string_view> fields_;
  std::unordered_set<std::string> names_;
  core::RolePool roles_;
  int64_t tasks_ = 0;
  TraceLoad out_;
};

// Tiresias (SymbioticLab/Tiresias, simulator/): 60_job.csv and its kin.
core::Result<TraceLoad> LoadTiresias(const TraceOptions& o) {
  constexpr std::string_view kColumns[] = {"job_id", "num_gpu", "submit_time", "duration"};
  constexpr std::pair<std::string_view, std::string_view> kFields[] = {
      {"arrival", "submit_time"}, {"worker.replicas", "num_gpu"}, {"duration", "duration"}};
  Importer in(o, kFields);
  DLSCHED_TRY(in.Open(kColumns));
  while (true) {
    DLSCHED_TRY_LET(more, in.Next());
    if (!*more) break;
    auto id = IntField(in.field(0), "job_id", 0, int64_t{1} << 53);
    auto gpus = IntField(in.field(1), "num_gpu", 1, core::kMaxTasksPerJob);
    auto submit = NumberField(in.field(2), "submit_time", kTime);
    auto duration = NumberField(in.field(3), "duration", kPositiveTime);
    core::Status st;
    if (!id) {
      st = in.Skip(id.error());
    } else if (!gpus) {
      st = in.Skip(gpus.error());
    } else if (!submit) {
      st = in.Skip(submit.error());
    } else if (!duration) {
      st = in.Skip(duration.error());
    } else {
      st = in.Add(
          GangJob(fmt::format("job-{}", *id), *submit, static_cast<int>(*gpus), *duration, o));
    }
    DLSCHED_TRY(st);
  }
  return in.Finish();
}

// philly.csv (petuum/adaptdl osdi21-artifact, from Microsoft's Philly trace).
core::Result<TraceLoad> LoadPhilly(const TraceOptions& o) {
  constexpr std::string_view kColumns[] = {"timestamp", "duration", "num_gpus", "cluster"};
  constexpr std::pair<std::string_view, std::string_view> kFields[] = {
      {"worker.replicas", "num_gpus"}, {"duration", "duration"}};
  Importer in(o, kFields);
  DLSCHED_TRY(in.Open(kColumns));
  const std::set<std::string, std::less<>> vcs(o.virtual_clusters.begin(),
                                               o.virtual_clusters.end());
  // Arrival = seconds since the earliest kept row: kept rows carry their
  // epoch seconds until the end.
  int64_t earliest = std::numeric_limits<int64_t>::max();
  while (true) {
    DLSCHED_TRY_LET(more, in.Next());
    if (!*more) break;
    auto ts = ParseTimestamp(in.field(0));
    auto duration = NumberField(in.field(1), "duration", kPositiveTime);
    auto gpus = IntField(in.field(2), "num_gpus", 1, core::kMaxTasksPerJob);
    core::Status st;
    if (!ts) {
      st = in.Skip(fmt::format("timestamp: {}", ts.error().message));
    } else if (!duration) {
      st = in.Skip(duration.error());
    } else if (!gpus) {
      st = in.Skip(gpus.error());
    } else if ((!vcs.empty() && !vcs.contains(in.field(3))) || (o.from && *ts < *o.from) ||
               (o.until && *ts >= *o.until)) {
      in.Filtered();
    } else {
      earliest = std::min(earliest, *ts);
      // Named by the file line, which finds the row again; its virtual
      // cluster is its queue.
      core::JobSpec job =
          GangJob(fmt::format("philly-{}", in.line_no()), static_cast<core::Time>(*ts),
                  static_cast<int>(*gpus), *duration, o);
      if (!core::NameProblem(in.field(3))) job.queue = std::string(in.field(3));
      st = in.Add(std::move(job), /*later_arrival=*/true);
    }
    DLSCHED_TRY(st);
  }
  auto out = in.Finish();
  if (!out) return out;
  for (auto& job : out->workload.jobs) {
    job.submit_time -= static_cast<core::Time>(earliest);
    if (auto problem = core::TimeProblem(job.submit_time)) {
      return core::Errorf(
          "{}: job '{}': arrival (its timestamp less the earliest kept row's): {}; keep a "
          "shorter span of the trace with --from and --until",
          o.path, job.name, *problem);
    }
  }
  return out;
}

// Pollux's workloads (petuum/adaptdl osdi21-artifact, simulator/workloads):
// each job runs its batch size over its GPUs and progresses as Pollux's
// measurements say (pollux.h).
core::Result<TraceLoad> LoadPollux(const TraceOptions& o) {
  constexpr std::string_view kColumns[] = {"name", "time", "application", "num_replicas",
                                           "batch_size"};
  constexpr std::pair<std::string_view, std::string_view> kFields[] = {
      {"arrival", "time"}, {"worker.replicas", "num_replicas"}};
  Importer in(o, kFields);
  DLSCHED_TRY(in.Open(kColumns));
  const std::string traces = PolluxTracesDir(o);
  std::map<std::string, internal::PolluxApplication, std::less<>> apps;
  // Measurements that cannot be read fail the import, even with skip_bad_rows.
  std::optional<core::Error> fatal;
  while (true) {
    DLSCHED_TRY_LET(more, in.Next());
    if (!*more) break;
    auto row = [&]() -> RowResult<core::JobSpec> {
      if (auto problem = core::NameProblem(in.field(0))) {
        return std::unexpected(RowError{fmt::format("name: {}", *problem)});
      }
      DLSCHED_TRY_LET(submit, NumberField(in.field(1), "time", kTime));
      const std::string_view app_name = in.field(2);
      auto app = apps.find(app_name);
      if (app == apps.end()) {
        const auto& names = internal::PolluxApplicationNames();
        if (std::find(names.begin(), names.end(), app_name) == names.end()) {
          return Bad("application", fmt::format("one of {}", fmt::join(names, ", ")), app_name);
        }
        auto loaded = internal::PolluxApplication::Load(traces, app_name);
        if (!loaded) {
          fatal = in.At(
              fmt::format("application: {}: {} (Pollux's measurements; give their directory with "
                          "--pollux-traces DIR)",
                          app_name, loaded.error().message));
          return std::unexpected(RowError{});
        }
        app = apps.emplace(std::string(app_name), std::move(*loaded)).first;
      }
      DLSCHED_TRY_LET(gpus, IntField(in.field(3), "num_replicas", 1, core::kMaxTasksPerJob));
      DLSCHED_TRY_LET(batch, IntField(in.field(4), "batch_size", 1, int64_t{1} << 40));
      const internal::PolluxApplication& model = app->second;
      auto seconds = model.Seconds(*batch, static_cast<int>(*gpus));
      if (!seconds) {
        return std::unexpected(RowError{
            fmt::format("batch_size: {} over {} GPUs: {}", *batch, *gpus, seconds.error())});
      }
      core::JobSpec job = GangShape(std::string(in.field(0)), *submit, static_cast<int>(*gpus), o);
      // Progress in Pollux's units (steps at the smallest validated batch)
      // at the rate its model gives at each size it defines.
      core::RoleSpec& w = job.role(core::Role::kWorker);
      const double target = model.TargetProgress();
      job.total_steps = target;
      job.throughput.model = "pollux:" + model.name();
      for (int m = w.min_replicas; m <= w.max_replicas; ++m) {
        auto at = m == *gpus ? seconds : model.Seconds(*batch, m);
        if (at) job.throughput.steps_per_s[m] = target / *at;
      }
      // At its own size, the rate of each placement on Pollux's testbed
      // that its measurements define (a job spread over more nodes is
      // slower, or faster, than packed).
      for (auto& shape : internal::PolluxPlacements(static_cast<int>(*gpus))) {
        if (auto at = model.Seconds(*batch, shape)) {
          job.throughput.placements.emplace(std::move(shape), target / *at);
        }
      }
      w.min_replicas = job.throughput.steps_per_s.begin()->first;
      w.max_replicas = job.throughput.steps_per_s.rbegin()->first;
      job.launch_delay = internal::kPolluxRestartSeconds;
      return job;
    }();
    if (fatal) return std::unexpected(std::move(*fatal));
    const core::Status st = row ? in.Add(std::move(*row)) : in.Skip(row.error());
    DLSCHED_TRY(st);
  }
  return in.Finish();
}

// A Kubernetes quantity of a native row (empty: not set).
RowResult<void> NativeQuantity(std::string_view s, std::string_view column, core::ResourceId id,
                               int64_t& out) {
  if (s.empty()) return {};
  auto v = core::ParseResourceAmount(id, s);
  if (!v || *v > core::kMaxAmount) {
    return std::unexpected(RowError{fmt::format(
        "{}: {}", column, v ? fmt::format("{} is more than the limit", s) : v.error().message)});
  }
  out = *v;
  return {};
}

// The native format: kNativeHeader, one job a line, and optionally the
// columns of kNativeWideHeader beyond it (empty when absent).
constexpr std::string_view kNativeColumns[] = {"name",        "submit", "workers", "min_workers",
                                               "max_workers", "gpus",   "cpu",     "memory",
                                               "duration",    "scaling"};
constexpr std::string_view kNativeOptional[] = {"ps",    "ps_cpu", "ps_memory", "steps",
                                                "model", "queue",  "gpu_type"};
enum NativeField : size_t {
  kName,
  kSubmit,
  kWorkers,
  kMinWorkers,
  kMaxWorkers,
  kGpus,
  kCpu,
  kMemory,
  kDuration,
  kScaling,
  kPs,
  kPsCpu,
  kPsMemory,
  kSteps,
  kModel,
  kQueue,
  kGpuType,
};
// The fields of a job's limits by the native columns that give them.
constexpr std::pair<std::string_view, std::string_view> kNativeFields[] = {
    {"arrival", "submit"},
    {"worker.replicas", "workers"},
    {"worker.minReplicas", "min_workers"},
    {"worker.maxReplicas", "max_workers"},
    {"worker.resources.nvidia.com/gpu", "gpus"},
    {"worker.resources.cpu", "cpu"},
    {"worker.resources.memory", "memory"},
    {"ps.replicas", "ps"},
    {"ps.resources.cpu", "ps_cpu"},
    {"ps.resources.memory", "ps_memory"},
    {"duration", "duration"},
    {"totalSteps", "steps"},
};

// A native row's workers and PS.
RowResult<void> NativeRoles(const Importer& in, core::JobSpec& job) {
  core::RoleSpec& w = job.role(core::Role::kWorker);
  core::RoleSpec& ps = job.role(core::Role::kPS);
  DLSCHED_TRY_LET(workers, IntField(in.field(kWorkers), "workers", 1, core::kMaxTasksPerJob));
  DLSCHED_TRY_LET(min, IntField(in.field(kMinWorkers), "min_workers", 1, *workers));
  DLSCHED_TRY_LET(max,
                  IntField(in.field(kMaxWorkers), "max_workers", *workers, core::kMaxTasksPerJob));
  w.replicas = static_cast<int>(*workers);
  w.min_replicas = static_cast<int>(*min);
  w.max_replicas = static_cast<int>(*max);
  for (auto [f, column, id] :
       {std::tuple{kGpus, "gpus", core::kGpu}, std::tuple{kCpu, "cpu", core::kCpu},
        std::tuple{kMemory, "memory", core::kMemory}}) {
    if (auto r = NativeQuantity(in.field(f), column, id, w.resources[id]); !r) return r;
  }
  // Below one GPU ("0.5", "500m"): a share of one device, in thousandths.
  if (auto q = core::Quantity::Parse(in.field(kGpus)); q && !q->IsNegative()) {
    if (auto milli = q->MilliValue(); milli && *milli > 0 && *milli < core::kMilliPerGpu) {
      w.resources[core::kGpu] = 0;
      w.resources[core::kGpuMilli] = *milli;
    }
  }

  // PS as the YAML's `ps: {replicas: N, resources: {cpu, memory}}`:
  // replicas = minReplicas = maxReplicas = N.
  if (!in.field(kPs).empty()) {
    DLSCHED_TRY_LET(n, IntField(in.field(kPs), "ps", 0, core::kMaxTasksPerJob));
    ps.replicas = ps.min_replicas = ps.max_replicas = static_cast<int>(*n);
  }
  for (auto [f, column, id] : {std::tuple{kPsCpu, "ps_cpu", core::kCpu},
                               std::tuple{kPsMemory, "ps_memory", core::kMemory}}) {
    if (in.field(f).empty()) continue;
    if (ps.replicas == 0) {
      return std::unexpected(
          RowError{fmt::format("{}: given for a job without PS (ps is empty or 0)", column)});
    }
    if (auto r = NativeQuantity(in.field(f), column, id, ps.resources[id]); !r) return r;
  }
  return {};
}

// A native row's work: a duration (and scaling), or steps and a model.
RowResult<void> NativeWork(const Importer& in, core::JobSpec& job) {
  constexpr std::string_view kEither =
      "give either duration (seconds at the job's size) or steps and model, not both";
  const std::string_view duration_field = in.field(kDuration);
  const std::string_view steps_field = in.field(kSteps);
  const std::string_view model_field = in.field(kModel);
  if (!duration_field.empty() || (steps_field.empty() && model_field.empty())) {
    if (!steps_field.empty()) return std::unexpected(RowError{fmt::format("steps: {}", kEither)});
    if (!model_field.empty()) return std::unexpected(RowError{fmt::format("model: {}", kEither)});
    DLSCHED_TRY_LET(duration, NumberField(duration_field, "duration", kPositiveTime));
    core::ScalingCurve curve;
    if (!in.field(kScaling).empty()) {
      auto c = core::ScalingCurve::Parse(in.field(kScaling));
      if (!c) return std::unexpected(RowError{"scaling: " + c.error().message});
      curve = *c;
    }
    job.SetDuration(*duration, curve);
    return {};
  }
  if (!in.field(kScaling).empty()) {
    return std::unexpected(RowError{"scaling: applies only to a job given by its duration"});
  }
  if (steps_field.empty()) {
    return std::unexpected(
        RowError{fmt::format("steps: missing, expected {} (a job with a model gives its steps)",
                             kTotalStepsRange.Describe())});
  }
  DLSCHED_TRY_LET(steps, NumberField(steps_field, "steps", kTotalStepsRange));
  if (model_field.empty()) {
    return std::unexpected(
        RowError{"model: missing, expected a model-zoo name (a job with steps gives its model)"});
  }
  if (auto problem = core::NameProblem(model_field)) {
    return std::unexpected(RowError{fmt::format("model: {}", *problem)});
  }
  // As the YAML's `totalSteps` and `throughput: {model: M}`: the table
  // comes from the model zoo when the workload is resolved.
  job.total_steps = *steps;
  job.throughput.model = std::string(model_field);
  return {};
}

// The GPU types a native row's workers require ("v100", or "v100|p100";
// empty: any), as the YAML's required node affinity on the type label:
// `nvidia.com/gpu.product In [v100, p100]`.
RowResult<void> NativeGpuTypes(std::string_view field, core::RoleSpec& worker) {
  if (field.empty()) return {};
  std::vector<std::string> types;
  for (size_t start = 0;;) {
    const size_t bar = field.find('|', start);
    const std::string_view type = field.substr(start, bar - start);
    if (auto problem = core::NameProblem(type)) {
      return std::unexpected(RowError{fmt::format(
          "gpu_type: {} (expected GPU types separated by '|', e.g. v100|p100)", *problem)});
    }
    if (std::find(types.begin(), types.end(), type) == types.end()) types.emplace_back(type);
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  worker.constraints.required_terms = {GpuTypeTerm(std::move(types))};
  return {};
}

// One native row as a job.
RowResult<void> NativeRow(const Importer& in, core::JobSpec& job) {
  if (auto problem = core::NameProblem(in.field(kName))) {
    return std::unexpected(RowError{fmt::format("name: {}", *problem)});
  }
  job.name = std::string(in.field(kName));
  DLSCHED_TRY_LET(submit, NumberField(in.field(kSubmit), "submit", kTime));
  job.submit_time = *submit;
  if (const std::string_view queue = in.field(kQueue); !queue.empty()) {
    if (auto problem = core::NameProblem(queue)) {
      return std::unexpected(RowError{fmt::format("queue: {}", *problem)});
    }
    job.queue = std::string(queue);
  }
  if (auto r = NativeRoles(in, job); !r) return r;
  if (auto r = NativeGpuTypes(in.field(kGpuType), job.role(core::Role::kWorker)); !r) return r;
  return NativeWork(in, job);
}

core::Result<TraceLoad> LoadNative(const TraceOptions& o) {
  Importer in(o, kNativeFields);
  DLSCHED_TRY(in.Open(kNativeColumns, kNativeOptional));
  while (true) {
    DLSCHED_TRY_LET(more, in.Next());
    if (!*more) break;
    core::JobSpec job;
    const RowResult<void> row = NativeRow(in, job);
    const core::Status st = row ? in.Add(std::move(job)) : in.Skip(row.error());
    DLSCHED_TRY(st);
  }
  return in.Finish();
}

}  // namespace

core::NodeSelectorTerm GpuTypeTerm(std::vector<std::string> types) {
  return core::NodeSelectorTerm{.match_expressions = {{.key = std::string(core::kGpuTypeLabel),
                                                       .op = core::NodeSelectorRequirement::Op::kIn,
                                                       .values = std::move(types)}}};
}

std::string_view TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kTiresias:
      return "tiresias";
    case TraceFormat::kPhilly:
      return "philly";
    case TraceFormat::kPollux:
      return "pollux";
    case TraceFormat::kNative:
      return "native";
  }
  return "native";
}

std::string PolluxTracesDir(const TraceOptions& o) {
  if (!o.pollux_traces.empty()) return o.pollux_traces;
  return (std::filesystem::path(o.path).parent_path() / ".." / "traces")
      .lexically_normal()
      .string();
}

core::Result<TraceOptions> ParseTraceArg(std::string_view arg) {
  const size_t colon = arg.find(':');
  TraceOptions o;
  const std::string_view format = colon == std::string_view::npos ? "" : arg.substr(0, colon);
  bool known = false;
  for (auto f :
       {TraceFormat::kTiresias, TraceFormat::kPhilly, TraceFormat::kPollux, TraceFormat::kNative}) {
    if (format == TraceFormatName(f)) {
      o.format = f;
      known = true;
    }
  }
  if (!known || colon + 1 >= arg.size()) {
    constexpr std::string_view kFormats[] = {"tiresias", "philly", "pollux", "native"};
    return core::Errorf(
        "--trace: expected FORMAT:FILE with FORMAT one of tiresias, philly, pollux, native, got "
        "{}{}",
        core::internal::QuoteInput(arg), known ? "" : core::DidYouMean(format, kFormats));
  }
  o.path = std::string(arg.substr(colon + 1));
  return o;
}

core::Status ParseElastic(std::string_view text, TraceOptions& o) {
  const size_t colon = text.find(':');
  double lo = 0;
  double hi = 0;
  bool ok = colon != std::string_view::npos;
  if (ok) {
    auto a = std::from_chars(text.data(), text.data() + colon, lo);
    auto b = std::from_chars(text.data() + colon + 1, text.data() + text.size(), hi);
    ok = a.ec == std::errc() && a.ptr == text.data() + colon && b.ec == std::errc() &&
         b.ptr == text.data() + text.size() && lo > 0 && lo <= 1 && hi >= 1 && hi <= 1024;
  }
  if (!ok) {
    return core::Errorf(
        "--elastic: expected MIN:MAX factors of each job's size with 0 < MIN <= 1 <= MAX <= "
        "1024 (e.g. 0.5:2), got {}",
        core::internal::QuoteInput(text));
  }
  o.min_factor = lo;
  o.max_factor = hi;
  return {};
}

core::Result<int64_t> ParseTimestamp(std::string_view text) {
  // YYYY-MM-DD, then optionally ' ' or 'T' and HH:MM:SS.
  auto digits = [&](size_t at, size_t n, int& out) {
    if (at + n > text.size()) return false;
    out = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  bool ok = digits(0, 4, y) && text.size() >= 10 && text[4] == '-' && digits(5, 2, mo) &&
            text[7] == '-' && digits(8, 2, d);
  if (ok && text.size() > 10) {
    ok = text.size() == 19 && (text[10] == ' ' || text[10] == 'T') && digits(11, 2, h) &&
         text[13] == ':' && digits(14, 2, mi) && text[16] == ':' && digits(17, 2, s) && h < 24 &&
         mi < 60 && s < 60;
  }
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{unsigned(mo)},
                                        std::chrono::day{unsigned(d)}};
  if (!ok || !ymd.ok()) {
    return core::Errorf("expected a UTC time YYYY-MM-DD[ HH:MM:SS], got {}",
                        core::internal::QuoteInput(text));
  }
  const auto days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return int64_t{days} * 86400 + h * 3600 + mi * 60 + s;
}

core::Result<TraceLoad> LoadTrace(const TraceOptions& options) {
  auto load = [&] {
    switch (options.format) {
      case TraceFormat::kTiresias:
        return LoadTiresias(options);
      case TraceFormat::kPhilly:
        return LoadPhilly(options);
      case TraceFormat::kPollux:
        return LoadPollux(options);
      case TraceFormat::kNative:
        break;
    }
    return LoadNative(options);
  }();
  if (!load) return load;
  // As every workload, whatever read it (each row was checked as it was
  // read; nothing here should be new).
  if (auto p = core::CheckJobsLimits(load->workload.jobs, load->workload.start)) {
    return core::Errorf("{}: {}: {}", options.path, p->field, p->what);
  }
  return load;
}

namespace {

// A Tiresias cluster spec's columns, in TiresiasShape's order, with the
// range of each: GPUs as the free-GPU index allows, memory (GiB) within
// core::kMaxAmount a node.
struct TiresiasColumn {
  std::string_view name;
  int64_t min;
  int64_t max;
};
constexpr TiresiasColumn kTiresiasColumns[] = {
    {"num_switch", 1, 1'000'000},
    {"num_node_p_switch", 1, 1'000'000},
    {"num_gpu_p_node", 0, core::kMaxGpusPerNode},
    {"num_cpu_p_node", 1, 1'000'000},
    {"mem_p_node", 1, core::kMaxAmount >> 30},
};

}  // namespace

core::Result<core::ClusterSpec> TiresiasCluster(const TiresiasShape& shape) {
  const int64_t v[] = {shape.switches, shape.nodes_per_switch, shape.gpus, shape.cpus,
                       shape.memory_gi};
  for (size_t i = 0; i < std::size(kTiresiasColumns); ++i) {
    const TiresiasColumn& c = kTiresiasColumns[i];
    if (v[i] < c.min || v[i] > c.max) {
      return core::Errorf("{}: expected an integer in [{}, {}], got {}", c.name, c.min, c.max,
                          v[i]);
    }
  }
  if (v[0] * v[1] > core::kMaxNodes) {
    return core::Errorf("{} x {} nodes is more than the limit of {}", v[0], v[1], core::kMaxNodes);
  }
  core::ClusterSpec cluster;
  cluster.nodes.reserve(static_cast<size_t>(v[0] * v[1]));
  for (int64_t s = 0; s < v[0]; ++s) {
    for (int64_t n = 0; n < v[1]; ++n) {
      core::NodeSpec node;
      node.name = fmt::format("s{}-n{}", s, n);
      node.labels[std::string(core::kSwitchLabel)] = fmt::format("s{}", s);
      node.allocatable[core::kGpu] = v[2];
      node.allocatable[core::kCpu] = v[3] * 1000;
      node.allocatable[core::kMemory] = v[4] << 30;
      cluster.nodes.push_back(std::move(node));
    }
  }
  // As every cluster (core/spec_limits.h): e.g. its total memory.
  if (auto p = core::CheckClusterLimits(cluster)) {
    constexpr std::pair<std::string_view, std::string_view> kResourceColumns[] = {
        {"resources.nvidia.com/gpu", "num_gpu_p_node"},
        {"resources.cpu", "num_cpu_p_node"},
        {"resources.memory", "mem_p_node"}};
    std::string column = p->field;
    for (const auto& [suffix, name] : kResourceColumns) {
      if (column.ends_with(suffix)) column = name;
    }
    return core::Errorf("{}: {} ({} x {} nodes)", column, p->what, v[0], v[1]);
  }
  return cluster;
}

std::string TiresiasClusterCsv(const TiresiasShape& shape) {
  return fmt::format(
      "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n{},{},{},{},{}\n",
      shape.switches, shape.nodes_per_switch, shape.gpus, shape.cpus, shape.memory_gi);
}

core::Result<core::ClusterSpec> LoadTiresiasCluster(const std::string& path) {
  std::vector<std::string_view> columns;
  for (const TiresiasColumn& c : kTiresiasColumns) columns.push_back(c.name);
  CsvReader csv(path);
  DLSCHED_TRY(csv.Open());
  DLSCHED_TRY_LET(pos, csv.Header(columns));
  if (!csv.Next()) {
    DLSCHED_TRY(csv.ReadError());
    return core::Errorf("{}: expected a row after the header", path);
  }
  const int64_t row_line = csv.line_no();
  if (csv.TooLong()) return std::unexpected(csv.TooLongError());
  const std::vector<std::string_view>& f = csv.fields();
  if (csv.Quoted() || f.size() != csv.width()) {
    return std::unexpected(csv.At(fmt::format("expected {} comma-separated fields", csv.width())));
  }
  int64_t v[std::size(kTiresiasColumns)];
  for (size_t i = 0; i < std::size(kTiresiasColumns); ++i) {
    const TiresiasColumn& c = kTiresiasColumns[i];
    auto x = IntField(f[(*pos)[i]], c.name, c.min, c.max);
    if (!x) return std::unexpected(csv.At(x.error().what));
    v[i] = *x;
  }
  if (csv.Next()) {
    return std::unexpected(csv.At("expected one row (one cluster shape), got more"));
  }
  auto cluster = TiresiasCluster({v[0], v[1], v[2], v[3], v[4]});
  if (!cluster) return core::Errorf("{}:{}: {}", path, row_line, cluster.error().message);
  return cluster;
}

namespace {

// A job as the native format holds it: the fields of EncodeJob that have a
// column, and the keys of those that have none (`beyond`, as the YAML
// names them).
struct NativeJob : JobFieldSink {
  std::string_view name;
  std::string arrival, duration, scaling, steps, queue;
  const core::RoleSpec* worker = nullptr;
  const core::RoleSpec* ps = nullptr;
  bool chief = false;
  const core::ThroughputProfile* throughput = nullptr;
  std::vector<std::string_view> beyond;

  void Scalar(std::string_view key, std::string_view text, Text) override {
    if (key == "name") {
      name = text;
    } else if (key == "arrival") {
      arrival = text;
    } else if (key == "duration") {
      duration = text;
    } else if (key == "scaling") {
      scaling = text;
    } else if (key == "totalSteps") {
      steps = text;
    } else if (key == "queue") {
      queue = text;
    } else {
      beyond.push_back(key);
    }
  }
  void Role(std::string_view key, const core::RoleSpec& role, bool is_worker) override {
    if (is_worker) {
      worker = &role;
    } else if (key == core::RoleKey(core::Role::kPS)) {
      ps = &role;
    } else {
      chief = true;
    }
  }
  void Throughput(const core::ThroughputProfile& tp) override { throughput = &tp; }
  void Initial(const core::InitialState&) override { beyond.push_back("running"); }
  void Failures(std::span<const core::ScheduledFailure>) override { beyond.push_back("failures"); }
  void Unwritten(std::string_view key) override { beyond.push_back(key); }
};

// The GPU types that constraints `c` require, when they require nothing
// else (the `gpu_type` column): a nodeSelector of the type label alone, or
// one required term of one `In` on it; else nullptr.
std::optional<std::vector<std::string>> RequiredGpuTypes(const core::NodeConstraints& c) {
  std::vector<std::string> types;
  if (c.required_terms.empty()) {
    if (c.node_selector.size() != 1 || c.node_selector.begin()->first != core::kGpuTypeLabel) {
      return std::nullopt;
    }
    types.push_back(c.node_selector.begin()->second);
  } else {
    if (!c.node_selector.empty() || c.required_terms.size() != 1 ||
        c.required_terms[0].match_expressions.size() != 1) {
      return std::nullopt;
    }
    const core::NodeSelectorRequirement& r = c.required_terms[0].match_expressions[0];
    if (r.key != core::kGpuTypeLabel || r.op != core::NodeSelectorRequirement::Op::kIn) {
      return std::nullopt;
    }
    types = r.values;
  }
  const bool writable =
      !types.empty() && std::none_of(types.begin(), types.end(), [](const std::string& v) {
        return v.find_first_of("|,\"") != std::string::npos || core::NameProblem(v);
      });
  return writable ? std::optional(std::move(types)) : std::nullopt;
}

// Why the native format cannot hold `job` (in words), or nullopt.
std::optional<std::string> NativeProblem(const NativeJob& job, ModelLookup find_model) {
  if (job.chief) return "it has Chief replicas";
  if (job.name.find_first_of(",\"") != std::string::npos) return "its name has a comma or quote";
  if (job.queue.find_first_of(",\"") != std::string::npos) {
    return "its queue name has a comma or quote";
  }
  if (job.throughput != nullptr) {
    const core::ThroughputProfile& tp = *job.throughput;
    if (tp.switch_sensitivity != 0) return "its throughput has a switchSensitivity";
    // The model's own throughput: unresolved (as read from YAML), or the
    // zoo's table.
    const core::ThroughputProfile* zoo =
        tp.model.empty() || find_model == nullptr ? nullptr : find_model(tp.model);
    const bool own = !tp.model.empty() &&
                     (tp.steps_per_s.empty() ||
                      (zoo != nullptr && zoo->steps_per_s == tp.steps_per_s &&
                       zoo->locality_sensitivity == tp.locality_sensitivity &&
                       zoo->placements == tp.placements && zoo->GpuTypes() == tp.GpuTypes()));
    if (!own) {
      return tp.model.empty()
                 ? std::string("its throughput is a table, not a model-zoo model")
                 : fmt::format("its throughput '{}' is a table, not a model-zoo model", tp.model);
    }
    if (tp.model.find_first_of(",\"") != std::string::npos || core::NameProblem(tp.model)) {
      return "its model name has a comma, a quote or a control character";
    }
  }
  // PS without replicas is dropped, as it changes nothing.
  for (auto [role, what] : {std::pair{job.worker, "workers"}, std::pair{job.ps, "PS"}}) {
    if (role == nullptr) continue;
    const core::NodeConstraints& c = role->constraints;
    const bool types_only = role == job.worker && RequiredGpuTypes(c).has_value();
    if ((!types_only && c.HasLabelRules()) || !c.tolerations.empty() || !role->containers.empty() ||
        !role->init_containers.empty()) {
      return fmt::format("its {} have node constraints or containers", what);
    }
    if (role->restart_policy != core::RestartPolicy::kNever) {
      return fmt::format("its {} have restartPolicy {}", what,
                         core::RestartPolicyName(role->restart_policy));
    }
    const int other = core::FirstId(role->resources, [&](core::ResourceId id) {
      const bool held = id == core::kCpu || id == core::kMemory ||
                        (role == job.worker && (id == core::kGpu || id == core::kGpuMilli));
      return !held && role->resources[id] != 0;
    });
    if (other >= 0) {
      return fmt::format("its {} request {}", what,
                         core::ResourceName(static_cast<core::ResourceId>(other)));
    }
  }
  if (!job.beyond.empty()) return fmt::format("it sets {}", fmt::join(job.beyond, ", "));
  return std::nullopt;
}

// The row of `job`, which the native format holds.
void AppendNativeRow(std::string& out, const NativeJob& job, bool wide, bool queues,
                     bool gpu_types) {
  auto emit = std::back_inserter(out);
  auto amount = [](const core::RoleSpec& role, core::ResourceId id) {
    return role.resources[id] == 0 ? std::string()
                                   : core::FormatResourceAmount(id, role.resources[id]);
  };
  const core::RoleSpec& w = *job.worker;
  // A share of one GPU as a quantity below 1 ("500m").
  const std::string gpus = w.resources[core::kGpuMilli] > 0
                               ? fmt::format("{}m", w.resources[core::kGpuMilli])
                               : amount(w, core::kGpu);
  fmt::format_to(emit, "{},{},{},{},{},{},{},{},", job.name, job.arrival, w.replicas,
                 w.min_replicas, w.max_replicas, gpus, amount(w, core::kCpu),
                 amount(w, core::kMemory));
  const bool by_duration = job.throughput == nullptr;
  if (by_duration) {
    fmt::format_to(emit, "{},{}", job.duration,
                   job.scaling.empty() ? core::ScalingCurve{}.ToString() : job.scaling);
  } else {
    out += ',';
  }
  if (wide) {
    if (job.ps != nullptr) {
      fmt::format_to(emit, ",{},{},{}", job.ps->replicas, amount(*job.ps, core::kCpu),
                     amount(*job.ps, core::kMemory));
    } else {
      out += ",,,";
    }
    if (by_duration) {
      out += ",,";
    } else {
      fmt::format_to(emit, ",{},{}", job.steps, job.throughput->model);
    }
  }
  if (queues) fmt::format_to(emit, ",{}", job.queue);
  if (gpu_types) {
    const auto types = RequiredGpuTypes(job.worker->constraints);
    fmt::format_to(emit, ",{}", types ? fmt::format("{}", fmt::join(*types, "|")) : "");
  }
  out += '\n';
}

}  // namespace

core::Result<std::string> ToNativeCsv(const WorkloadSpec& workload, ModelLookup find_model) {
  const bool gpu_types =
      std::any_of(workload.jobs.begin(), workload.jobs.end(), [](const core::JobSpec& job) {
        return job.role(core::Role::kWorker).constraints.HasLabelRules();
      });
  const bool queues =
      gpu_types || std::any_of(workload.jobs.begin(), workload.jobs.end(),
                               [](const core::JobSpec& job) { return job.queue != "default"; });
  const bool wide =
      queues ||
      std::any_of(workload.jobs.begin(), workload.jobs.end(), [](const core::JobSpec& job) {
        return job.role(core::Role::kPS).replicas > 0 || !job.duration;
      });
  std::string out(gpu_types ? kNativeGpuTypeHeader
                  : queues  ? kNativeQueueHeader
                  : wide    ? kNativeWideHeader
                            : kNativeHeader);
  out += '\n';
  for (const auto& job : workload.jobs) {
    NativeJob native;
    EncodeJob(job, native);
    if (auto problem = NativeProblem(native, find_model)) {
      return core::Errorf(
          "{}: job '{}': {}; the native format holds workers and PS with gpus, cpu and memory, "
          "and a duration or steps and a model-zoo model (write YAML instead)",
          workload.source, job.name, *problem);
    }
    AppendNativeRow(out, native, wide, queues, gpu_types);
  }
  return out;
}

}  // namespace dlsched::config
