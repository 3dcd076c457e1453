#pragma once

// The tables compare and sweep print and write (cli/ internal): a run's
// headline numbers as a row of the terminal's table, rows aligned, and the
// lines of compare.csv, sweep.csv and cell.csv.

#include <string>
#include <vector>

#include "dlsched/metrics/summary.h"
#include "dlsched/report/outputs.h"

namespace dlsched::cli {

// One row of `dlsched compare`'s table: a profile's headline numbers
// (profile, status, done, JCT mean, JCT p95, makespan, slowdown, gpu alloc,
// gpu eff, cpu eff, Jain, preempt, scale). JCT, makespan and slowdown read
// ">=" when jobs did not complete (they count at the run's end).
std::vector<std::string> CompareRow(const std::string& profile, const metrics::RunSummary& s);

// The rows as columns: the first left-aligned, the others right-aligned,
// two spaces between; a line a row.
std::string AlignedTable(const std::vector<std::vector<std::string>>& rows);

// The CSV line of fields' keys (`header`), or of their values.
std::string CsvLine(const std::vector<report::CompareField>& fields, bool header);

}  // namespace dlsched::cli
