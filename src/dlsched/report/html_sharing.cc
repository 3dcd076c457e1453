#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dlsched/report/html_charts.h"
#include "dlsched/report/html_figure.h"

namespace dlsched::report::html {

// One trace's chart of `figure` (unallocated or fragmented GPU share)
// against the share of the workload arrived, a line per policy.
std::string SharingChart(std::string_view id, std::string_view trace,
                         const std::vector<const SharingCurve*>& curves, bool fragmented) {
  const auto value = [&](const SharingCurve& c, size_t i) {
    return (fragmented ? c.fragmented[i] : 100 - c.allocated[i]) / 100;
  };
  double top = 0.01;
  double right = 0.01;
  for (const SharingCurve* c : curves) {
    for (size_t i = 0; i < c->arrived.size(); ++i) {
      top = std::max(top, value(*c, i));
      right = std::max(right, c->arrived[i] / 100);
    }
  }
  const std::string what =
      fmt::format("{} GPU share, {}", fragmented ? "Fragmented" : "Unallocated", trace);
  Frame f;
  f.width = kHalfWidth;
  f.x = FractionAxis("workload arrived, of the cluster's GPUs", right);
  f.x.Nice(6);
  f.y = FractionAxis(fragmented ? "GPUs fragmented" : "GPUs unallocated", top);
  f.y.Nice(5);
  std::string svg = OpenChart(id, f, what);
  CsvText csv({"trace", "policy", "arrived", fragmented ? "fragmented" : "unallocated"});
  std::vector<LegendItem> legend;
  for (size_t k = 0; k < curves.size(); ++k) {
    const SharingCurve& c = *curves[k];
    const Style st = StyleOf(k);
    std::string d;
    std::string points;
    for (size_t i = 0; i < c.arrived.size(); ++i) {
      const double x = c.arrived[i] / 100;
      const double y = value(c, i);
      d += fmt::format("{}{} {}", d.empty() ? "M" : "L", C(f.X(x)), C(f.Y(y)));
      points += fmt::format(
          "<g data-point=\"\"><title>{} at {} arrived: {}</title><circle class=\"pt\" cx=\"{}\" "
          "cy=\"{}\" r=\"3\"/></g>",
          HtmlText(c.policy), Percent(x), Percent(y), C(f.X(x)), C(f.Y(y)));
      csv.Row({c.trace, c.policy, Num(c.arrived[i]), Num(y * 100)});
    }
    svg += LineSeriesOpen(c.policy, st, k, curves.size(), "") + LinePath(d, st) + points + "</g>";
    legend.push_back({.label = HtmlText(c.policy), .style = st});
  }
  svg += "</svg>\n";
  return Figure({.title = HtmlText(what),
                 .about = fragmented
                              ? "the free GPU capacity the target workload's tasks cannot use"
                              : "100% minus the GPUs allocated, as pods arrive until the workload "
                                "asks for 1.3 times the cluster's GPUs",
                 .legend = Legend(legend),
                 .body = svg,
                 .csv_name = std::string(id) + ".csv",
                 .csv = csv.text()});
}

}  // namespace dlsched::report::html
