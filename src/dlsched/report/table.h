#pragma once

#include <string>

#include "dlsched/metrics/records.h"
#include "dlsched/metrics/summary.h"

namespace dlsched::report {

// The terminal report of a run: an aligned key/value summary (profile, job
// counts, JCT, makespan, phase means, utilisation per resource, slowdown,
// fairness, event counts) followed by one aligned row per job of `input`, in
// input order. Times are seconds with one decimal; a time that never happened
// is "-"; a job's JCT is shown only when it completed. Stuck jobs read
// "STUCK (<phase>)" and the summary says the run deadlocked. Ends with '\n'.
// JCT, makespan and slowdown read ">= " when some job did not complete
// (they count it at the run's end). FormatSummary and FormatJobs are its
// two parts.
std::string FormatTable(const metrics::RunSummary& summary, const metrics::RunInput& input);
std::string FormatSummary(const metrics::RunSummary& summary);
std::string FormatJobs(const metrics::RunInput& input);

}  // namespace dlsched::report
