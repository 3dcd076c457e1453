#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dlsched/core/time.h"
#include "dlsched/metrics/records.h"

namespace dlsched::report {

// Number of decimal places kept in machine-readable output (JSON, CSV).
// Rounding there makes the files byte-identical across runs and platforms
// even when the last bits of a double differ.
inline constexpr int kOutputDecimals = 6;

// Rounds to kOutputDecimals places; -0 becomes 0.
double RoundForOutput(double x);

// Seconds with one decimal ("12.3"); kNever (or anything beyond it) is "-".
std::string FormatSeconds(core::Time t);

// A fraction as a percentage with one decimal ("45.2%").
std::string FormatPercent(double fraction);

// RoundForOutput(x) in its shortest exact form ("30", "0.125", "1e+21").
std::string FormatNumber(double x);
// Appends FormatNumber(x) to `out` without a string of its own: the run
// files hold millions of numbers.
void AppendNumber(std::string& out, double x);
// Appends `x` in decimal ("-12").
void AppendInt(std::string& out, int64_t x);

// One CSV cell (RFC 4180): quoted when it contains a comma, a double quote,
// CR or LF, with embedded quotes doubled.
std::string CsvField(std::string_view text);
// Appends CsvField(text) to `out`.
void AppendCsvField(std::string& out, std::string_view text);

// "Completed", "Failed", ... and "STUCK (Waiting)" for a stuck job.
std::string JobStateLabel(const metrics::JobRecord& job);

}  // namespace dlsched::report
