#pragma once

// Reading dlsched's result directories back, for the HTML report (html.h):
// a `simulate --out` directory (a run's files), a `compare --out` directory
// (compare.csv and one run directory per profile) or a directory holding a
// sweep.csv, or a sweep's cells/ without one (merged as sweep.h says). Files are read by column or
// key name, so columns added later are tolerated. A missing file is not an error (an older run
// directory lacks events.csv); a file that does not parse is, reading
// "<file>:<line>: <what>".

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/core/error.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/provenance.h"

namespace dlsched::report {

// A CSV file (RFC 4180: quoted fields may hold commas, doubled quotes and
// line breaks; lines may end in CRLF), its first line the header.
struct CsvFile {
  struct Row {
    int line = 0;  // where the row starts, 1-based
    std::vector<std::string> cells;
  };
  std::string path;
  std::vector<std::string> header;
  std::vector<Row> rows;

  // The index of column `name`, or nullopt.
  std::optional<size_t> Find(std::string_view name) const;
};

// Errors read "<path>:<line>: <what>".
core::Result<CsvFile> ParseCsv(std::string_view text, const std::string& path);

// One row of jobs.csv (docs/formats.md), times in seconds.
struct JobRow {
  std::string name;
  double submit = 0;
  std::optional<double> first_start;
  std::optional<double> completion;
  std::optional<double> jct;  // completed jobs only
  double queueing = 0;
  double launching = 0;
  double running = 0;
  std::string final_state;  // "" when the column is absent
  bool stuck = false;
  int64_t reallocations = 0;  // 0 when a column is absent
  int64_t preemptions = 0;
  int64_t scale_events = 0;
  std::optional<int64_t> gpus;          // absent in files of older versions
  std::optional<double> ideal_runtime;  // likewise; 0: unknown
  double lost_gpu_seconds = 0;          // likewise (0 when absent)
  double alone_jct = 0;                 // likewise (0: unknown)
  std::string queue;                    // likewise ("" for none)
};

// utilization.csv: fractions of capacity per resource; row i holds from
// time[i] until time[i + 1].
struct Utilization {
  struct Resource {
    std::string name;  // "cpu", "nvidia.com/gpu", ...
    std::vector<double> allocated;
    std::vector<double> effective;
  };
  std::vector<double> time;
  std::vector<Resource> resources;  // in column order

  // The resource named `name`, or nullptr.
  const Resource* Find(std::string_view name) const;
};

// One row of events.csv.
struct EventRow {
  double time = 0;
  std::string job;
  std::string event;
  std::optional<int64_t> workers;
  std::string by;
  std::string detail;
};

// One row of allocations.csv: what `job` held on `node` over [start, end).
struct AllocationRow {
  std::string node;
  std::string job;
  double start = 0;
  std::optional<double> end;  // held to the end of the run
  int64_t tasks = 0;
  double gpus = 0;
};

// summary.json read back: every figure of metrics::RunSummary (a key an
// older file lacks reads 0; utilisation entries by name, without ids).
struct SummaryData {
  metrics::RunSummary figures;
  bool has_end_time = false;             // older files may lack it
  std::optional<Provenance> provenance;  // a simulate run's

  // Jobs not completed: stuck + failed + unfinished.
  int64_t NotDone() const {
    return int64_t{figures.stuck_jobs} + figures.failed_jobs + figures.unfinished_jobs;
  }
};

// One run's files; each absent when its file is missing.
struct RunData {
  std::string dir;
  // The label of its series: the directory name under a compare directory,
  // else the profile named in summary.json, else the directory name.
  std::string name;
  std::optional<SummaryData> summary;
  std::optional<std::vector<JobRow>> jobs;
  std::optional<Utilization> utilization;
  std::optional<std::vector<EventRow>> events;
  std::optional<std::vector<AllocationRow>> allocations;

  // summary.json's end_time, else the latest time in the files read.
  double EndTime() const;
};

// Mean, spread and range of one figure over the cells (seeds) of a sweep
// point that have it.
struct SweepStat {
  int n = 0;
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1); 0 for one value
  double min = 0;
  double max = 0;
};

// The same over `values`.
SweepStat Stat(std::span<const double> values);

// sweep.csv over seeds: one point per (profile, quota, load).
struct SweepPoint {
  std::string profile;
  double load = 0;
  std::optional<double> quota;  // the --quota value, when the sweep has one
  int cells = 0;                // rows (seeds)
  // Rows that are not complete results: interrupted (status "partial: ..."),
  // or with jobs not completed (stuck, failed, unfinished); their times are
  // lower bounds.
  int incomplete = 0;
  std::vector<std::string> statuses;  // each incomplete row's status
  // Per figure (sweep.csv's numeric columns after `seed`, by name, each
  // queue's `<figure>@<queue>` among them); a figure empty in every row is
  // absent.
  std::map<std::string, SweepStat> stats;

  const SweepStat* Find(std::string_view figure) const;
};

struct SweepData {
  std::vector<std::string> figures;  // numeric columns after `seed`, in file order
  // In order of the profile's first row, then by quota, then by load.
  std::vector<SweepPoint> points;
  // sweep.csv's quota_of ("team-a nvidia.com/gpu"): what the quota column
  // varies; empty without one.
  std::string quota_of;
};

// One directory given to `dlsched report`, or several run directories
// shown as one comparison (Overlay).
struct ReportDir {
  std::string dir;
  std::vector<RunData> runs;          // one for a run directory, one per profile for compare's
  std::optional<CsvFile> compare;     // compare.csv, every column
  std::optional<SweepData> sweep;     // sweep.csv
  std::vector<std::string> overlaid;  // the directories an overlay joined
  // How the results were made (provenance.h): summary.json's, compare.json's
  // or provenance.json's; absent in older directories.
  std::optional<Provenance> provenance;
};

// Loads what `dir` holds. A directory with none of dlsched's files, or one
// that cannot be read, is an error too ("<dir>: ...").
core::Result<ReportDir> LoadReportDir(const std::string& dir);

// Every directory, in order; stops at the first error.
core::Result<std::vector<ReportDir>> LoadReportDirs(std::span<const std::string> dirs);

// Run directories (of simulate or compare) given together are one
// comparison: the directories with runs become one ReportDir, at the first
// one's place, whose runs are theirs in order; a name two runs share is
// told apart by their directory ("kod2 (out/a)", "kod2 (out/b)"). Sweeps
// and lone directories stay as they are.
std::vector<ReportDir> Overlay(std::vector<ReportDir> dirs);

// LoadReportDirs, then Overlay: the sections of the page.
core::Result<std::vector<ReportDir>> LoadReport(std::span<const std::string> dirs);

}  // namespace dlsched::report
