#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlsched/core/error.h"
#include "dlsched/metrics/records.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/report/json_writer.h"
#include "dlsched/report/output_dir.h"
#include "dlsched/report/provenance.h"

namespace dlsched::report {

// Machine-readable outputs of a run. All of them are deterministic: keys and
// columns in a fixed order, numbers rounded to kOutputDecimals places
// (format.h), so the same input gives byte-identical files.

// The run summary: the run's figures, not its jobs (one row each in
// jobs.csv). Figures that do not apply are null. Key order is insertion
// order (ordered_json); it converts to nlohmann::json (keys then sorted) if
// needed. It is SummaryJsonText read back (for tests and tools): the file
// is written without a document tree.
nlohmann::ordered_json SummaryJson(const metrics::RunSummary& summary);

// summary.json: 2-space indent, trailing newline, invalid UTF-8 replaced
// by U+FFFD; the text nlohmann::json's dump(2) would write (JsonWriter).
// With `provenance` (a simulate run's directory), its last key is
// "provenance" (provenance.h).
std::string SummaryJsonText(const metrics::RunSummary& summary,
                            const Provenance* provenance = nullptr);

// summary.json's and compare.json's "window": {"from": F, "to": T} (T null
// when open-ended), or null for the whole run.
void WindowJson(JsonWriter& w, const std::optional<metrics::Window>& window);

// A run's outcome in a few words: "all done", "3 stuck (deadlocked)",
// "1 failed, 2 unfinished", "partial: ..." (compare's status column).
std::string RunStatus(const metrics::RunSummary& summary);

// Every column of compare.csv and compare.json (and sweep.csv after its
// cell columns), in order: profile, status, total, completed, ... end_time.
struct CompareField {
  std::string key;
  std::variant<std::string, int64_t, double> value;
};
std::vector<CompareField> CompareFields(const std::string& profile,
                                        const metrics::RunSummary& summary);

// The per-queue figures of sweep.csv, for each of `queues` (the cluster's,
// in its order): `<figure>@<queue>` for jct_mean, jct_p95, queueing_mean,
// gpu_hours, borrowed_gpu_hours, lent_gpu_hours, lost_gpu_hours, ftf_mean
// and ftf_max, as queues.csv has them; empty where `summary` has no such
// queue or no value.
std::vector<CompareField> QueueCompareFields(std::span<const std::string> queues,
                                             const metrics::RunSummary& summary);

// jobs.csv: the header
//   name,namespace,queue,submit,first_start,completion,jct,queueing,launching,
//   running,final_state,admission_seq,reallocations,preemptions,scale_events,
//   final_workers,gpus,max_nodes,max_switches,lost_gpu_seconds,ideal_runtime,
//   alone_jct,ftf,stuck,reason
// then one row per job in input order. A time that never happened (and the
// JCT of a job that did not complete) is an empty cell; stuck is true/false;
// final_state is the phase name. Lines end with "\n".
std::string JobsCsv(const metrics::RunInput& input);

// The queues.csv of several runs in one table (compare's queues.csv): a
// `profile` column, then queues.csv's; each run's queues in order.
class QueuesTable {
 public:
  void Add(const std::string& profile, const metrics::RunSummary& summary);
  bool empty() const { return csv_.empty(); }
  const std::string& Csv() const { return csv_; }

 private:
  std::string csv_;
};

// events.csv: the run's timeline, one row per decision about a job or
// change of its phase, in the order they happened:
//   time,job,event,workers,by,detail
// `event` is engine::TimelineKindName's word (or "stuck", at the run's
// end), `workers` the job's workers after it (empty: does not apply), `by`
// the job that caused it (a preemption, a scale-in), `detail` the reason.
std::string EventsCsv(const metrics::RunInput& input);

// allocations.csv: what each job held on each node, one row per maximal
// interval of constant holding: node,job,start,end,tasks,gpus (end empty
// while still held when the run ended).
std::string AllocationsCsv(const metrics::RunInput& input);

// utilization.csv: "time", then <name>_allocated,<name>_effective for each
// resource of summary.utilization (capacity > 0), as fractions of capacity.
// One row per sample (each holds until the next), plus a closing row at
// input.end_time repeating the last sample when the run ends after it.
std::string UtilizationCsv(const metrics::RunSummary& summary, const metrics::RunInput& input);

// Adds summary.json (SummaryJsonText, with `provenance` if given),
// jobs.csv, events.csv, allocations.csv and utilization.csv to `out`,
// under `subdir` ("" or "<profile>/").
core::Status AddRunFiles(OutputDir& out, std::string_view subdir,
                         const metrics::RunSummary& summary, const metrics::RunInput& input,
                         const Provenance* provenance = nullptr);

// Writes a run's files (AddRunFiles's) into `dir` as one unit (OutputDir):
// creates it and its parents if missing, replaces it as a whole otherwise.
// Errors read "<path>: cannot write: <reason>", or come from CheckOutputDir.
core::Status WriteOutputs(const std::string& dir, const metrics::RunSummary& summary,
                          const metrics::RunInput& input, const Provenance* provenance = nullptr);

}  // namespace dlsched::report
