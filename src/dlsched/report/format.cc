#include "dlsched/report/format.h"

#include <charconv>
#include <cmath>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace dlsched::report {

double RoundForOutput(double x) {
  static const double kScale = std::pow(10.0, kOutputDecimals);
  if (!std::isfinite(x)) return x;
  const double scaled = x * kScale;
  // Beyond 2^53 every double is an integer already: nothing to round.
  if (std::fabs(scaled) >= 9007199254740992.0) return x;
  const double r = std::round(scaled) / kScale;
  return r == 0 ? 0.0 : r;
}

std::string FormatSeconds(core::Time t) {
  if (t >= core::kNever) return "-";
  const std::string s = fmt::format("{:.1f}", t);
  return s == "-0.0" ? "0.0" : s;
}

std::string FormatPercent(double fraction) {
  std::string s = fmt::format("{:.1f}", fraction * 100);
  if (s == "-0.0") s = "0.0";
  return s + "%";
}

std::string FormatNumber(double x) {
  std::string out;
  AppendNumber(out, x);
  return out;
}

void AppendNumber(std::string& out, double x) {
  const double r = RoundForOutput(x);
  // Most numbers are whole (times in seconds, counts): fmt writes those
  // below 1e16 as the integer's digits, at a fraction of the cost of its
  // shortest-digits search. RoundForOutput leaves no -0.
  if (r == std::trunc(r) && std::fabs(r) < 1e15) {
    AppendInt(out, static_cast<int64_t>(r));
    return;
  }
  // fmt's "{}" (shortest round-trip digits), compiled so that the format
  // string is not parsed for every number, into a buffer that holds its
  // longest output ("-2.2250738585072014e-308" is 24 characters).
  char buf[32];
  const char* end = fmt::format_to(buf, FMT_COMPILE("{}"), r);
  out.append(buf, static_cast<size_t>(end - buf));
}

void AppendInt(std::string& out, int64_t x) {
  char buf[24];  // "-9223372036854775808" is 20
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

std::string CsvField(std::string_view text) {
  std::string out;
  AppendCsvField(out, text);
  return out;
}

// Whether `text` needs quotes as a CSV cell. (string_view::find_first_of
// calls memchr on its set for every byte.)
bool NeedsQuotes(std::string_view text) {
  for (char c : text) {
    if (c == ',' || c == '"' || c == '\r' || c == '\n') return true;
  }
  return false;
}

void AppendCsvField(std::string& out, std::string_view text) {
  if (!NeedsQuotes(text)) {
    out.append(text);
    return;
  }
  out += '"';
  // Each run up to a quote at once, the quote doubled.
  for (size_t q; (q = text.find('"')) != std::string_view::npos; text.remove_prefix(q + 1)) {
    out.append(text.substr(0, q + 1));
    out += '"';
  }
  out.append(text);
  out += '"';
}

std::string JobStateLabel(const metrics::JobRecord& job) {
  std::string phase(core::PhaseName(job.final_phase));
  if (job.stuck && job.final_phase != core::JobPhase::kCompleted) return "STUCK (" + phase + ")";
  return phase;
}

}  // namespace dlsched::report
