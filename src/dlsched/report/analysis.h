#pragma once

// The figures the HTML report (html.h) draws, computed from the result
// files read back (run_data.h): a run's figures under a measurement
// window, censored CDFs, the queue over time, preemptions over time, JCT
// by job size and ratios to a baseline. No drawing here: these are the
// numbers, tested on their own.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/metrics/summary.h"
#include "dlsched/report/run_data.h"

namespace dlsched::report {

// A run's figures as the page shows them, and the window its per-job
// charts count.
struct Measured {
  // The jobs counted: those submitted in this window (nullopt: every job).
  std::optional<metrics::Window> window;
  // compare.csv's figures (nullopt: no summary.json and no jobs.csv).
  std::optional<metrics::RunSummary> figures;
  // Computed here from jobs.csv and utilization.csv, not read from
  // summary.json (a window summary.json was not computed over).
  bool recomputed = false;
  // A window was asked for but the run has no jobs.csv to apply it to: its
  // figures are summary.json's, over its own window.
  bool window_unapplied = false;
};

// `forced`: the window of `dlsched report --window`, over every run; else
// each run's own (summary.json's "window"), else none. With a window that
// summary.json was not computed over, the figures are those
// metrics::Summarize gives over jobs.csv's rows, and utilisation the
// time-weighted mean of utilization.csv over the window.
Measured Measure(const RunData& run, const std::optional<metrics::Window>& forced);

// Whether figures are not a complete result: the run was interrupted, or
// jobs counted in them did not complete (their JCT, makespan and slowdown
// are then lower bounds).
bool Incomplete(const metrics::RunSummary& figures);

// How a run falls short, in a few words for a legend: "partial
// (interrupted), 77 of 300 jobs not completed".
std::string IncompleteText(const metrics::RunSummary& figures);

// jobs.csv's rows submitted in `window` (every row without one), in file
// order.
std::vector<const JobRow*> JobsIn(const RunData& run, const std::optional<metrics::Window>& window);

// A CDF over every job counted, censored: jobs the event did not happen to
// by the run's end (not completed; not started) are in `total` but have no
// value, so the curve stops at values.size() / total.
struct Cdf {
  std::vector<double> values;  // ascending
  size_t total = 0;

  size_t Censored() const { return total - values.size(); }
  // The share the curve reaches, 0..1 (0 for no jobs).
  double Reaches() const {
    return total == 0 ? 0 : static_cast<double>(values.size()) / static_cast<double>(total);
  }
};

enum class CdfOf {
  kJct,       // completion - submit of completed jobs, over every job
  kQueueing,  // queueing of the jobs that started, over every job
  kSlowdown,  // JCT / ideal runtime (at least 1), over the jobs with a known ideal runtime
  kFtf,       // finish-time fairness, JCT / JCT alone, over the jobs with a JCT alone
};
Cdf MakeCdf(std::span<const JobRow* const> jobs, CdfOf of);

// Whether the jobs completed differ between runs (by name): a comparison
// of their JCTs alone would not be over the same jobs.
bool DifferentJobsCompleted(std::span<const std::vector<const JobRow*>> runs);

// A step function over time: value[i] holds from time[i] to time[i + 1].
struct StepSeries {
  std::vector<double> time;
  std::vector<double> value;
};

// The jobs waiting to be placed over time, from events.csv: a job waits
// from `submitted` and from `standby` (stopped after a preemption, a resize
// with restart or a lost task) until `started` or `relaunching` (or its
// end, `completed` or `failed`). One sample per time the count changes,
// the first at the first event. `gpus`: the same, each job counted by its
// GPUs (jobs.csv's `gpus`). nullopt without events.csv (or, for gpus,
// without jobs.csv's gpus column).
struct QueueSeries {
  StepSeries jobs;
  std::optional<StepSeries> gpus;
};
std::optional<QueueSeries> QueueOverTime(const RunData& run);

// Preemptions so far over time, from events.csv: `preempted` events and
// resizes made for another job (`resized` with `by`), as jobs.csv's
// preemptions counts them. nullopt without events.csv.
std::optional<StepSeries> PreemptionsOverTime(const RunData& run);

// Jobs by the GPUs they ask for (jobs.csv's `gpus`): 0 (no GPU), 1, 2,
// 3-4, 5-8, ..., a power of two wide.
struct SizeBucket {
  int64_t lo = 0;  // GPUs, inclusive
  int64_t hi = 0;
  std::string Label() const;  // "0", "1", "2", "3-4", "5-8"
};
// The bucket of `gpus` (>= 0).
SizeBucket BucketOf(int64_t gpus);

// One run's JCT over a group of its jobs (a size bucket, a queue): the
// mean over every job in it, a job not completed counted at the run's end
// (`end` - submit), as summary.json's jct.mean counts it.
struct GroupJct {
  std::string label;  // "3-4" (GPUs), "team-a" (a queue)
  int64_t order = 0;  // groups sort by (order, label): a bucket's first GPU count
  size_t jobs = 0;
  size_t completed = 0;
  double mean_jct = 0;

  bool LowerBound() const { return completed < jobs; }
};
// The size buckets that hold jobs, in order of size; jobs without a gpus
// value are left out. Empty without jobs.csv's gpus column.
std::vector<GroupJct> JctBySize(std::span<const JobRow* const> jobs, double end);
// The queues that hold jobs (jobs.csv's `queue`), by name; jobs of no
// queue are left out. Empty without queues.
std::vector<GroupJct> JctByQueue(std::span<const JobRow* const> jobs, double end);

// The GPUs one queue's jobs held over time (allocations.csv's rows of its
// jobs, by jobs.csv's `queue`), and its nominal GPUs (summary.json's
// queues; nullopt for a queue it does not declare).
struct QueueUsage {
  std::string queue{};
  std::optional<int64_t> nominal_gpus{};
  // From its first allocation, a sample each time the sum changes; empty
  // when its jobs held no GPU.
  StepSeries gpus{};
};
// Every queue: the declared ones in summary.json's order, then the others
// jobs.csv names, in order of their first job. Empty when no job has a
// queue, or without allocations.csv.
std::vector<QueueUsage> QueueUsageOverTime(const RunData& run);

// A figure relative to a baseline's: value / base, and whether that is a
// bound rather than a ratio of exact figures.
enum class Bound {
  kExact,
  kAtLeast,  // the value is a lower bound, the base exact: the ratio is at least this
  kAtMost,   // the base is a lower bound, the value exact: the ratio is at most this
  kUnknown,  // both lower bounds: no bound on the ratio
};
struct Ratio {
  std::optional<double> ratio;  // nullopt when the base is 0
  Bound bound = Bound::kExact;
};
Ratio Normalise(double value, bool value_lower_bound, double base, bool base_lower_bound);

// The text before a value of this bound: "≥ ", "≤ ", "? " or "".
std::string_view BoundMark(Bound bound);

// Whether compare.csv's column `figure` is a lower bound in a run that is
// not complete: JCT, makespan and slowdown count a job not completed at
// the run's end.
bool LowerBoundFigure(std::string_view figure);

}  // namespace dlsched::report
