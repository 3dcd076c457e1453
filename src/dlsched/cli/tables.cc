#include "dlsched/cli/tables.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "dlsched/report/format.h"

namespace dlsched::cli {
namespace {

double Utilization(const metrics::RunSummary& s, core::ResourceId id, bool effective) {
  for (const auto& u : s.utilization) {
    if (u.id == id) return effective ? u.effective : u.allocated;
  }
  return 0;
}

// A CompareField's value as a CSV cell.
std::string CsvCell(const report::CompareField& f) {
  return std::visit(
      [](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return report::CsvField(v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else {
          return report::FormatNumber(v);
        }
      },
      f.value);
}

}  // namespace

std::vector<std::string> CompareRow(const std::string& profile, const metrics::RunSummary& s) {
  const std::string at_least = s.jct_censored > 0 ? ">=" : "";
  auto secs = [&](double t) {
    return s.total_jobs > 0 ? at_least + fmt::format("{:.1f}", t) : "-";
  };
  auto pct = [&](core::ResourceId id, bool effective) {
    return fmt::format("{:.1f}%", 100 * Utilization(s, id, effective));
  };
  return {profile,
          report::RunStatus(s),
          fmt::format("{}/{}", s.completed_jobs, s.total_jobs),
          secs(s.jct_mean),
          secs(s.jct_p95),
          secs(s.makespan),
          s.slowdown_jobs > 0 ? at_least + fmt::format("{:.2f}", s.slowdown_mean) : "-",
          pct(core::kGpu, false),
          pct(core::kGpu, true),
          pct(core::kCpu, true),
          fmt::format("{:.3f}", s.jain_index),
          std::to_string(s.preemptions),
          std::to_string(s.scale_events)};
}

std::string AlignedTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      // First column left-aligned, numbers right-aligned.
      out +=
          i == 0 ? fmt::format("{:<{}}", r[i], width[i]) : fmt::format("  {:>{}}", r[i], width[i]);
    }
    out += '\n';
  }
  return out;
}

std::string CsvLine(const std::vector<report::CompareField>& fields, bool header) {
  std::string line;
  for (size_t f = 0; f < fields.size(); ++f) {
    line += f == 0 ? "" : ",";
    line += header ? report::CsvField(fields[f].key) : CsvCell(fields[f]);
  }
  return line + "\n";
}

}  // namespace dlsched::cli
