#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dlsched/core/resources.h"
#include "dlsched/core/time.h"
#include "dlsched/metrics/records.h"

namespace dlsched::metrics {

// Time-weighted mean use of one resource over the utilisation window, as a
// fraction of the cluster capacity (0..1, may exceed 1 only if the backend
// over-commits).
struct ResourceUtilization {
  core::ResourceId id = 0;
  std::string name;  // "cpu", "memory", "nvidia.com/gpu", or an extended name
  int64_t capacity = 0;
  double allocated = 0;  // held by any job
  double effective = 0;  // held by jobs making progress
};

// A measurement window: the run's figures over the jobs submitted in
// [from, to), its utilisation averaged over [from, min(to, end_time)] (to
// drop a warm-up, or a drain at the end). The default covers every job.
struct Window {
  core::Time from = 0;
  core::Time to = core::kNever;  // kNever: to the run's end

  bool Contains(core::Time submit) const { return submit >= from && submit < to; }
  bool operator==(const Window&) const = default;
};

// One queue's figures over a run (queues.csv).
struct QueueSummary {
  std::string name;
  std::string cohort;
  int64_t nominal_gpus = 0;
  int jobs = 0;
  int completed = 0;
  // Over its completed jobs; nullopt when none completed.
  std::optional<core::Time> jct_mean;
  std::optional<core::Time> jct_p95;
  std::optional<core::Time> queueing_mean;
  // GPU-hours its jobs held; of those, above its nominal quota (borrowed).
  double gpu_hours = 0;
  double borrowed_gpu_hours = 0;
  // GPU-hours of its unused lendable quota its cohort's borrowers used: at
  // each instant the cohort's borrowed GPUs are charged to the lenders in
  // proportion to each one's unused lendable GPUs.
  double lent_gpu_hours = 0;
  int preemptions_suffered = 0;  // its jobs' preemptions (jobs.csv)
  int preemptions_caused = 0;    // preemptions and shrinks its jobs caused
  // Its jobs' lost_gpu_seconds (jobs.csv), in GPU-hours.
  double lost_gpu_hours = 0;
  // Reclaims: starts of its jobs that took room from jobs of other queues
  // (a preempted or resized event of such a job `by` it); for those, the
  // mean and largest time from when the job last began to wait (its
  // submission, or its last stop) to when it ran; nullopt when none.
  int reclaims = 0;
  std::optional<core::Time> reclaim_wait_mean;
  std::optional<core::Time> reclaim_wait_max;
  // Finish-time fairness over its completed jobs with a JCT alone
  // (FinishTimeFairness): mean and largest; nullopt when none.
  std::optional<double> ftf_mean;
  std::optional<double> ftf_max;
};

// The per-run numbers of a run. Every field is finite: an empty run
// (no jobs, no completed jobs, zero-length window) gives zeros, never NaN.
struct RunSummary {
  std::string profile;
  // The window the figures are over, when one was given (Summarize's
  // `window`); the jobs outside it are left out of every figure below
  // except deadlocked, partial, cycles and end_time, which are the run's.
  std::optional<Window> window;

  // Job counts. Each job is counted in exactly one of completed, stuck,
  // failed, unfinished, with that precedence: a job whose final phase is
  // Completed is completed; otherwise a job flagged `stuck` is stuck (even if
  // a deadline then failed it); otherwise a Failed job is failed; anything
  // else (the run ended while it waited or ran) is unfinished.
  int total_jobs = 0;
  int completed_jobs = 0;
  int failed_jobs = 0;
  int stuck_jobs = 0;
  int unfinished_jobs = 0;

  // Job completion time (completion - submit) over every job. A job that
  // did not complete counts as censored at the run's end (end_time -
  // submit, a lower bound on its JCT), so a profile that leaves jobs
  // unfinished is not flattered; `jct_censored` says how many did.
  // Percentiles interpolate linearly as numpy's (see Percentile).
  core::Time jct_mean = 0;
  core::Time jct_p50 = 0;
  core::Time jct_p95 = 0;
  core::Time jct_p99 = 0;
  int jct_censored = 0;
  // Last completion (or the run's end, for a job that did not complete)
  // - first submit, over every job; 0 for no jobs.
  core::Time makespan = 0;

  // Mean time per phase over completed jobs (so jct_mean equals their sum
  // when every job completed and the backend fills the phases
  // consistently).
  core::Time mean_queueing = 0;
  core::Time mean_launching = 0;
  core::Time mean_running = 0;

  // Utilisation window [first submit over all jobs, end_time] (with a
  // Window: [from, min(to, end_time)]) and the time-weighted means over it,
  // one entry per resource with capacity > 0, in ResourceId order.
  core::Time window_start = 0;
  core::Time window_end = 0;
  std::vector<ResourceUtilization> utilization;

  // Each declared queue's figures (SummarizeQueues), over the whole run
  // whatever the window; empty without queues.
  std::vector<QueueSummary> queues;

  // Slowdown as the literature uses it: JCT / ideal_runtime, at least 1
  // (1: as fast as alone with its best allocation), over jobs with a known
  // ideal runtime, censored as the JCT is. Variance is the population
  // variance (divide by n). Jain's index is of the jobs' normalised speeds
  // 1 / slowdown (their share of their ideal speed): (sum x)^2 / (n sum
  // x^2), 1 = perfectly even. (F-scheduling's own S = f(alloc) / f_best,
  // docs/policies/fsched.md, is a different quantity.)
  int slowdown_jobs = 0;
  double slowdown_mean = 0;
  double slowdown_p95 = 0;
  double slowdown_variance = 0;
  double jain_index = 0;
  // Finish-time fairness as Themis defines it: JCT / JCT alone on its
  // queue's nominal quota (JobRecord::alone_jct), over the jobs with one,
  // censored as the JCT; below 1 a job gained from sharing, above 1 it
  // lost. 0 when no job has one.
  int ftf_jobs = 0;
  double ftf_mean = 0;
  double ftf_max = 0;

  // Totals over all jobs.
  int64_t preemptions = 0;
  int64_t scale_events = 0;
  int64_t reallocations = 0;
  // Jobs' lost_gpu_seconds, in GPU-hours.
  double lost_gpu_hours = 0;
  // Jobs whose tasks were ever on more than one node, and under more than
  // one switch (JobRecord::max_nodes, max_switches).
  int64_t jobs_across_nodes = 0;
  int64_t jobs_across_switches = 0;

  bool deadlocked = false;
  bool partial = false;  // RunInput::partial
  int64_t cycles = 0;
  core::Time end_time = 0;
};

// The figures of each declared queue, in RunInput::queues order, from the
// jobs' records, allocations and events.
std::vector<QueueSummary> SummarizeQueues(const RunInput& input);

// Computes the run summary. `input.utilization` must be in ascending time;
// each sample holds until the next one, the last until `input.end_time`, and
// the amounts before the first sample are zero. With a `window`, over the
// jobs it contains (Window) and its utilisation window.
RunSummary Summarize(const RunInput& input, std::optional<Window> window = std::nullopt);

// Classification used by Summarize (same precedence).
enum class JobOutcome { kCompleted, kStuck, kFailed, kUnfinished };
JobOutcome Outcome(const JobRecord& job);
// completion - submit for a completed job; nullopt otherwise.
std::optional<core::Time> Jct(const JobRecord& job);
// JCT / ideal_runtime, at least 1, for a completed job with a known ideal
// runtime (a JCT at or below the ideal counts as 1); nullopt otherwise.
std::optional<double> Slowdown(const JobRecord& job);
// JCT / alone_jct for a completed job with a JCT alone; nullopt otherwise.
std::optional<double> FinishTimeFairness(const JobRecord& job);

// Percentile of ascending `sorted` values as numpy.percentile computes it
// by default (method "linear", what the research simulators report): the
// value at 0-based position h = (n - 1) * percent / 100, interpolated
// linearly between sorted[floor(h)] and sorted[floor(h) + 1]. Returns 0 for
// no values.
double Percentile(std::span<const double> sorted, double percent);

// Jain's fairness index (sum x)^2 / (n * sum x^2); 0 for no values or all
// zeros.
double JainIndex(std::span<const double> values);

// Time-weighted mean of amount(sample) over [start, end] for the step
// function `samples`, divided by `capacity`. 0 when capacity <= 0 or the
// window is empty.
enum class UtilizationKind { kAllocated, kEffective };
double TimeWeightedUtilization(std::span<const UtilizationSample> samples, core::ResourceId id,
                               UtilizationKind kind, int64_t capacity, core::Time start,
                               core::Time end);

// Name of resource `id` for reports ("cpu", "nvidia.com/gpu", ...).
std::string ResourceLabel(core::ResourceId id);

}  // namespace dlsched::metrics
