#include "dlsched/report/format.h"

#include <cmath>

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

std::string FormatNumber(double x) { return fmt::format("{}", RoundForOutput(x)); }

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string JobStateLabel(const metrics::JobRecord& job) {
  std::string phase(core::PhaseName(job.final_phase));
  if (job.stuck && job.final_phase != core::JobPhase::kCompleted) return "STUCK (" + phase + ")";
  return phase;
}

}  // namespace dlsched::report
