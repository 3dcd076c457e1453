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
std::string FormatTable(const metrics::RunSummary& summary, const metrics::RunInput& input);

}  // namespace dlsched::report
