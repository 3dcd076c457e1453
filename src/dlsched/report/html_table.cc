#include "dlsched/report/html_charts.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "dlsched/report/outputs.h"

namespace dlsched::report::html {
namespace {

// A cell as shown: numbers with the decimals their size needs.
std::string CellText(const std::string& raw) {
  double v = 0;
  auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc() || end != raw.data() + raw.size() || !std::isfinite(v)) {
    return HtmlText(raw);
  }
  const double a = std::fabs(v);
  return Fixed(v, a >= 100 ? 1 : a >= 1 ? 2 : 3);
}

// Whether compare.csv's (or sweep.csv's) row is a complete result, by its
// status and counts.
bool CompleteCsvRow(const std::vector<std::string>& header, const std::vector<std::string>& row) {
  for (size_t i = 0; i < header.size() && i < row.size(); ++i) {
    if (header[i] == "status" && !row[i].empty() && row[i] != "all done") return false;
    if (header[i] == "stuck" || header[i] == "failed" || header[i] == "unfinished" ||
        header[i] == "jct_censored") {
      double v = 0;
      auto [end, ec] = std::from_chars(row[i].data(), row[i].data() + row[i].size(), v);
      if (ec == std::errc() && v > 0) return false;
    }
  }
  return true;
}

std::string Table(std::string_view about, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::vector<bool>& incomplete) {
  std::string out = "<div class=\"scroll\"><table data-chart=\"compare-table\"><thead><tr>";
  for (const auto& h : header) out += "<th>" + HtmlText(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  bool any = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    const bool inc = incomplete[r];
    any = any || inc;
    out += fmt::format("<tr data-series=\"{}\"{}>", HtmlText(row.empty() ? "" : row[0]),
                       inc ? " data-incomplete=\"\"" : "");
    for (size_t i = 0; i < row.size(); ++i) {
      const bool bound = inc && i < header.size() && LowerBoundFigure(header[i]);
      std::string shown = i == 0 ? HtmlText(row[i]) : CellText(row[i]);
      if (i == 0 && inc) shown += " <b class=\"incl\">(incomplete)</b>";
      if (bound && !row[i].empty()) shown = "≥ " + shown;
      out += fmt::format("<td data-point=\"\" title=\"{}\">{}</td>", HtmlText(row[i]), shown);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  std::string text;
  for (size_t i = 0; i < header.size(); ++i) {
    if (i > 0) text += ',';
    AppendCsvField(text, header[i]);
  }
  text += '\n';
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) text += ',';
      AppendCsvField(text, row[i]);
    }
    text += '\n';
  }
  std::vector<std::string> notes;
  if (any) {
    notes.push_back(
        "<span data-legend=\"incomplete\">≥: a lower bound. An incomplete run (interrupted, or "
        "with jobs not completed by its end) counts those jobs at the run's end in its JCT, "
        "makespan and slowdown.</span>");
  }
  return Figure({.title = "Comparison",
                 .about = std::string(about),
                 .body = out,
                 .notes = notes,
                 .csv_name = "compare-table.csv",
                 .csv = text});
}

}  // namespace

std::string CompareTable(const Section& sec) {
  const ReportDir& dir = *sec.dir;
  const bool recomputed = std::any_of(sec.runs.begin(), sec.runs.end(),
                                      [](const RunView& v) { return v.m.recomputed; });
  if (dir.compare && dir.overlaid.empty() && !recomputed) {
    std::vector<std::vector<std::string>> rows;
    std::vector<bool> incomplete;
    for (const auto& r : dir.compare->rows) {
      rows.push_back(r.cells);
      incomplete.push_back(!CompleteCsvRow(dir.compare->header, r.cells));
    }
    return Table("from compare.csv, one row per profile", dir.compare->header, rows, incomplete);
  }
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> incomplete;
  for (const RunView& v : sec.runs) {
    if (!v.m.figures) continue;
    const std::vector<CompareField> fields = CompareFields(v.name(), *v.m.figures);
    if (header.empty()) {
      for (const auto& f : fields) header.emplace_back(f.key);
    }
    std::vector<std::string> row;
    for (const auto& f : fields) {
      std::visit(
          [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
              row.push_back(x);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              row.push_back(std::to_string(x));
            } else {
              row.push_back(Num(x));
            }
          },
          f.value);
    }
    rows.push_back(std::move(row));
    incomplete.push_back(v.incomplete);
  }
  if (rows.empty()) {
    return Note("compare-table", "Comparison: not shown, no compare.csv and no summary.json in " +
                                     HtmlText(dir.dir) + ".");
  }
  std::string about = recomputed ? "computed from each run's jobs.csv and utilization.csv"
                                 : "from each run's summary.json";
  about += " (compare.csv's columns; times in seconds, utilisation as a fraction)";
  return Table(about, header, rows, incomplete);
}

}  // namespace dlsched::report::html
