#pragma once

// The HTML around a chart of the report (html.h): its legend, the note
// that stands for a chart not drawn, and the <figure> with its caption,
// CSV link and log switch. Shared by report/'s html*.cc files; not an
// interface of the layer.

#include <string>
#include <string_view>
#include <vector>

#include "dlsched/report/svg.h"

namespace dlsched::report::html {

// One entry of a legend: a swatch drawn as `kind` in `style`, and its label.
struct LegendItem {
  std::string label{};  // HTML-escaped already
  Style style{};
  enum Kind {
    kLine,      // a series' line
    kDash,      // the dashed line of a second figure (effective, p95)
    kBox,       // a bar
    kMarker,    // an incomplete point: a hollow triangle
    kCensor,    // where a censored CDF stops
    kOutside,   // the time outside the measurement window
    kErrorBar,  // mean with +-1 sd
  } kind = kLine;
  std::string what{};  // data-legend: what the entry explains ("incomplete", ...)
};

std::string Legend(const std::vector<LegendItem>& items);

// The legend entry that says what a perforated line is.
LegendItem IncompleteLegend(std::string_view what_is_bound);

// A chart that is not drawn, and why, on one line.
std::string Note(std::string_view id, std::string_view text);

// What a figure is made of. `body` is its SVG (or table); with `toggle`
// it holds a linear and a log variant (classes v-lin, v-log), switched by
// a checkbox, the log one shown first when `log_first`.
struct FigureParts {
  std::string title{};  // HTML
  std::string about{};  // HTML
  std::string legend{};
  std::string body{};
  std::vector<std::string> notes{};     // HTML, each a line under the chart
  std::vector<std::string> warnings{};  // HTML, said first and louder
  std::string csv_name{};               // the downloaded file's name
  std::string csv{};                    // its text ("": no link)
  std::string toggle{};                 // the checkbox's id ("": none)
  bool log_first = false;
};

std::string Figure(const FigureParts& p);

}  // namespace dlsched::report::html
