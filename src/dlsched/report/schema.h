#pragma once

// The result files' names and the columns of their CSV files, declared
// once: the writers (outputs.cc) write these headers in this order, and
// the readers (run_data.cc, the report) find columns by these names, so a
// column renamed here is renamed for both (docs/formats.md describes them).

#include <string>
#include <string_view>

namespace dlsched::report::schema {

// The files of one run.
inline constexpr std::string_view kSummaryJson = "summary.json";
inline constexpr std::string_view kJobsCsv = "jobs.csv";
inline constexpr std::string_view kUtilizationCsv = "utilization.csv";
inline constexpr std::string_view kEventsCsv = "events.csv";
inline constexpr std::string_view kAllocationsCsv = "allocations.csv";
// Written only for a cluster that declares queues.
inline constexpr std::string_view kQueuesCsv = "queues.csv";
inline constexpr std::string_view kRunFiles[] = {kSummaryJson, kJobsCsv, kUtilizationCsv,
                                                 kEventsCsv, kAllocationsCsv};
// ... of a comparison and a sweep (and its cells), and the others.
inline constexpr std::string_view kCompareCsv = "compare.csv";
inline constexpr std::string_view kCompareJson = "compare.json";
inline constexpr std::string_view kSweepCsv = "sweep.csv";
inline constexpr std::string_view kCellCsv = "cell.csv";
inline constexpr std::string_view kReportHtml = "report.html";
inline constexpr std::string_view kProvenanceJson = "provenance.json";

// jobs.csv: one row per job.
namespace jobs {
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kNamespace = "namespace";
inline constexpr std::string_view kQueue = "queue";
inline constexpr std::string_view kSubmit = "submit";
inline constexpr std::string_view kFirstStart = "first_start";
inline constexpr std::string_view kCompletion = "completion";
inline constexpr std::string_view kJct = "jct";
inline constexpr std::string_view kQueueing = "queueing";
inline constexpr std::string_view kLaunching = "launching";
inline constexpr std::string_view kRunning = "running";
inline constexpr std::string_view kFinalState = "final_state";
inline constexpr std::string_view kAdmissionSeq = "admission_seq";
inline constexpr std::string_view kReallocations = "reallocations";
inline constexpr std::string_view kPreemptions = "preemptions";
inline constexpr std::string_view kScaleEvents = "scale_events";
inline constexpr std::string_view kFinalWorkers = "final_workers";
inline constexpr std::string_view kGpus = "gpus";
inline constexpr std::string_view kMaxNodes = "max_nodes";
inline constexpr std::string_view kMaxSwitches = "max_switches";
inline constexpr std::string_view kLostGpuSeconds = "lost_gpu_seconds";
inline constexpr std::string_view kIdealRuntime = "ideal_runtime";
inline constexpr std::string_view kAloneJct = "alone_jct";
inline constexpr std::string_view kFtf = "ftf";
inline constexpr std::string_view kStuck = "stuck";
inline constexpr std::string_view kReason = "reason";
inline constexpr std::string_view kColumns[] = {
    kName,         kNamespace,    kQueue,         kSubmit,      kFirstStart,
    kCompletion,   kJct,          kQueueing,      kLaunching,   kRunning,
    kFinalState,   kAdmissionSeq, kReallocations, kPreemptions, kScaleEvents,
    kFinalWorkers, kGpus,         kMaxNodes,      kMaxSwitches, kLostGpuSeconds,
    kIdealRuntime, kAloneJct,     kFtf,           kStuck,       kReason};
}  // namespace jobs

// utilization.csv: time, then <resource>_allocated and <resource>_effective
// for each resource.
namespace utilization {
inline constexpr std::string_view kTime = "time";
inline constexpr std::string_view kAllocatedSuffix = "_allocated";
inline constexpr std::string_view kEffectiveSuffix = "_effective";
}  // namespace utilization

// events.csv: a job's timeline.
namespace events {
inline constexpr std::string_view kTime = "time";
inline constexpr std::string_view kJob = "job";
inline constexpr std::string_view kEvent = "event";
inline constexpr std::string_view kWorkers = "workers";
inline constexpr std::string_view kBy = "by";
inline constexpr std::string_view kDetail = "detail";
inline constexpr std::string_view kColumns[] = {kTime, kJob, kEvent, kWorkers, kBy, kDetail};
}  // namespace events

// allocations.csv: what each job held on each node, and when.
namespace allocations {
inline constexpr std::string_view kNode = "node";
inline constexpr std::string_view kJob = "job";
inline constexpr std::string_view kStart = "start";
inline constexpr std::string_view kEnd = "end";
inline constexpr std::string_view kTasks = "tasks";
inline constexpr std::string_view kGpus = "gpus";
inline constexpr std::string_view kMaxNodes = "max_nodes";
inline constexpr std::string_view kMaxSwitches = "max_switches";
inline constexpr std::string_view kColumns[] = {kNode, kJob, kStart, kEnd, kTasks, kGpus};
}  // namespace allocations

namespace queues {
inline constexpr std::string_view kQueue = "queue";
inline constexpr std::string_view kCohort = "cohort";
inline constexpr std::string_view kNominalGpus = "nominal_gpus";
inline constexpr std::string_view kJobs = "jobs";
inline constexpr std::string_view kCompleted = "completed";
inline constexpr std::string_view kJctMean = "jct_mean";
inline constexpr std::string_view kJctP95 = "jct_p95";
inline constexpr std::string_view kQueueingMean = "queueing_mean";
inline constexpr std::string_view kGpuHours = "gpu_hours";
inline constexpr std::string_view kBorrowedGpuHours = "borrowed_gpu_hours";
inline constexpr std::string_view kLentGpuHours = "lent_gpu_hours";
inline constexpr std::string_view kPreemptionsSuffered = "preemptions_suffered";
inline constexpr std::string_view kPreemptionsCaused = "preemptions_caused";
inline constexpr std::string_view kLostGpuHours = "lost_gpu_hours";
inline constexpr std::string_view kReclaims = "reclaims";
inline constexpr std::string_view kReclaimWaitMean = "reclaim_wait_mean";
inline constexpr std::string_view kReclaimWaitMax = "reclaim_wait_max";
inline constexpr std::string_view kFtfMean = "ftf_mean";
inline constexpr std::string_view kFtfMax = "ftf_max";
inline constexpr std::string_view kColumns[] = {kQueue,
                                                kCohort,
                                                kNominalGpus,
                                                kJobs,
                                                kCompleted,
                                                kJctMean,
                                                kJctP95,
                                                kQueueingMean,
                                                kGpuHours,
                                                kBorrowedGpuHours,
                                                kLentGpuHours,
                                                kPreemptionsSuffered,
                                                kPreemptionsCaused,
                                                kLostGpuHours,
                                                kReclaims,
                                                kReclaimWaitMean,
                                                kReclaimWaitMax,
                                                kFtfMean,
                                                kFtfMax};
}  // namespace queues

// summary.json: a run's figures (metrics::RunSummary) and its jobs. Keys
// are char arrays, for the writer (outputs.cc) and the readers alike
// (run_data.cc's key paths, provenance.cc's and rerun's look-ups).
namespace summary {
inline constexpr char kProfile[] = "profile";
inline constexpr char kCounts[] = "counts";  // an object of:
inline constexpr char kTotal[] = "total";
inline constexpr char kCompleted[] = "completed";
inline constexpr char kFailed[] = "failed";
inline constexpr char kStuck[] = "stuck";
inline constexpr char kUnfinished[] = "unfinished";
inline constexpr char kDeadlocked[] = "deadlocked";
inline constexpr char kPartial[] = "partial";
inline constexpr char kCycles[] = "cycles";
inline constexpr char kEndTime[] = "end_time";
inline constexpr char kWindow[] = "window";  // null or an object of:
inline constexpr char kFrom[] = "from";
inline constexpr char kTo[] = "to";
inline constexpr char kJct[] = "jct";  // an object of:
inline constexpr char kMean[] = "mean";
inline constexpr char kP50[] = "p50";
inline constexpr char kP95[] = "p95";
inline constexpr char kP99[] = "p99";
inline constexpr char kCensored[] = "censored";
inline constexpr char kMakespan[] = "makespan";
inline constexpr char kMeanPhaseTime[] = "mean_phase_time";  // an object of:
inline constexpr char kQueueing[] = "queueing";
inline constexpr char kLaunching[] = "launching";
inline constexpr char kRunning[] = "running";
inline constexpr char kUtilization[] = "utilization";  // an object of:
inline constexpr char kWindowStart[] = "window_start";
inline constexpr char kWindowEnd[] = "window_end";
inline constexpr char kResources[] = "resources";  // by name, an object of:
inline constexpr char kCapacity[] = "capacity";
inline constexpr char kAllocated[] = "allocated";
inline constexpr char kEffective[] = "effective";
inline constexpr char kSlowdown[] = "slowdown";  // an object of:
inline constexpr char kJobs[] = "jobs";
// mean, p95 and:
inline constexpr char kVariance[] = "variance";
inline constexpr char kJainIndex[] = "jain_index";
inline constexpr char kFinishTimeFairness[] = "finish_time_fairness";  // jobs, mean, max:
inline constexpr char kMax[] = "max";
inline constexpr char kEvents[] = "events";  // an object of:
inline constexpr char kPreemptions[] = "preemptions";
inline constexpr char kScaleEvents[] = "scale_events";
inline constexpr char kReallocations[] = "reallocations";
inline constexpr char kLostGpuHours[] = "lost_gpu_hours";
inline constexpr char kPlacement[] = "placement";  // an object of:
inline constexpr char kJobsAcrossNodes[] = "jobs_across_nodes";
inline constexpr char kJobsAcrossSwitches[] = "jobs_across_switches";
inline constexpr char kProvenance[] = "provenance";  // provenance.h
// Only for a cluster that declares queues: one object a queue, its keys
// those of queues.csv's columns in their order.
inline constexpr char kQueues[] = "queues";
}  // namespace summary

// Appends a CSV header line of `columns` (names that need no quoting).
template <size_t N>
void AppendHeader(std::string& out, const std::string_view (&columns)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += ',';
    out += columns[i];
  }
  out += '\n';
}

}  // namespace dlsched::report::schema
