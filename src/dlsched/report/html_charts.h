#pragma once

// The charts of the HTML report (html.h), each a <figure> (or a note saying
// why it is not drawn) built from a section's runs. Shared by report/'s
// html*.cc files; not an interface of the layer.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlsched/report/analysis.h"
#include "dlsched/report/html.h"
#include "dlsched/report/html_section.h"
#include "dlsched/report/run_data.h"
#include "dlsched/report/svg.h"

namespace dlsched::report::html {

// ---- over time (html_charts_time.cc) ----------------------------------------

// Step functions on one time base: values[s][i] holds from time[i] to
// time[i + 1].
struct Steps {
  std::vector<double> time;
  std::vector<std::vector<double>> values;
};

// At most `max_points` steps: beyond that, the time-weighted means over
// equal time buckets of [time[0], end], so a long run's chart stays small
// and its averages stay right.
Steps Bucket(const std::vector<double>& time, const std::vector<const std::vector<double>*>& values,
             double end, size_t max_points);

// "M x y H .. V .. H end": a step line through values[i] from time[i].
std::string StepPath(const Frame& f, const std::vector<double>& time,
                     const std::vector<double>& values, double end);

// The note under a chart whose steps Bucket averaged.
std::string BucketNote();

// A resource's allocated and effective share of capacity over time, a
// line each per run (utilization.csv).
std::string UtilizationChart(std::string_view id, std::string_view resource, std::string_view title,
                             const Section& sec);

// A chart of one step function per run over the section's time axis.
struct StepChartSpec {
  std::string_view id;
  std::string_view title;
  std::string_view about;
  std::string_view y_label;
  std::string_view column;  // the CSV's value column
  std::string_view unit;    // after a value in a tooltip
  // The run's series, or nullopt with why not ("no events.csv").
  std::function<std::optional<StepSeries>(const RunView&, std::string* why)> of;
};

std::string StepChart(const StepChartSpec& spec, const Section& sec);

// ---- CDFs (html_charts_cdf.cc) ----------------------------------------------

struct CdfSpec {
  std::string_view id;
  std::string_view title;
  std::string_view value;      // "job completion time"
  std::string_view event;      // the event: "completed"
  std::string_view not_event;  // "had not completed"
  CdfOf of;
  bool time = true;  // values in seconds (else plain numbers: slowdown)
};

// A CDF per run over every job (jobs.csv), a censored one stopping short
// of 100%; with a log variant of the x axis when any value is above 0.
std::string CdfChart(const CdfSpec& spec, const Section& sec);

// ---- one run's charts (html_charts_run.cc) -----------------------------------

// The jobs the phases chart shows: the first kMaxPhaseJobs by submit time.
std::vector<const JobRow*> PhaseJobs(const RunData& run);

// The span of the jobs PhaseJobs shows: from the first submit to the last
// end of a phase.
std::pair<double, double> PhaseSpan(const std::vector<const JobRow*>& jobs);

// Each job's time queueing, launching and running, a bar each. `span`: the
// time axis, shared by the phases charts of a comparison.
std::string PhasesChart(const RunData& run, std::pair<double, double> span);

// What each node held, when (allocations.csv); `t_lo`, `t_hi`: the
// section's time axis (shared by every run's chart).
std::string GanttChart(const RunData& run, double t_lo, double t_hi);

// The workers of the jobs that ran at more than one size (events.csv).
std::string ElasticChart(const RunData& run, double t_lo, double t_hi);

// The GPUs each queue's jobs held over time, each against its nominal
// quota (QueueUsageOverTime); "" when no job has a queue.
std::string QueueUsageChart(const RunData& run, double t_lo, double t_hi);

// ---- bars (html_charts_bars.cc) ---------------------------------------------

// Each run's figures divided by the baseline's; "" with fewer than two
// runs with figures.
std::string BaselineChart(const Section& sec);

// Mean JCT per GPU-count bucket, a bar per run.
std::string JctBySizeChart(const Section& sec);
// Mean JCT per queue (jobs.csv's queue), one bar per run; "" when no job
// has a queue.
std::string JctByQueueChart(const Section& sec);

// ---- shared GPUs (html_sharing.cc) -------------------------------------------

// One trace's GPUs unallocated (or, `fragmented`, fragmented) against the
// workload arrived, a line per policy of `curves` (all of that trace).
std::string SharingChart(std::string_view id, std::string_view trace,
                         const std::vector<const SharingCurve*>& curves, bool fragmented);

// ---- the comparison table (html_table.cc) -------------------------------------

// compare.csv as it is, or the runs' figures as compare.csv's columns.
std::string CompareTable(const Section& sec);

// ---- the sweep (html_sweep.cc) ----------------------------------------------

// sweep.csv's figures against load, a line per profile; its colours follow
// `runs`' when a profile is a run of the same section.
std::string SweepCharts(const ReportDir& dir, const std::vector<RunView>& runs);

}  // namespace dlsched::report::html
