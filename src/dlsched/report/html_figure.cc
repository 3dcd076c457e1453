#include "dlsched/report/html_figure.h"

#include <fmt/format.h>

#include "dlsched/report/html.h"

namespace dlsched::report::html {
namespace {

std::string Swatch(const LegendItem& it) {
  const Style& st = it.style;
  std::string body;
  switch (it.kind) {
    case LegendItem::kLine:
    case LegendItem::kDash: {
      const std::string dash = it.kind == LegendItem::kDash ? "5 3" : st.dash;
      body = fmt::format(
          "<line x1=\"1\" y1=\"6\" x2=\"25\" y2=\"6\" stroke=\"{}\" stroke-width=\"{}\"{}/>",
          st.color, st.incomplete ? 3.2 : 2.5,
          dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash));
      if (st.incomplete) {
        body +=
            "<line x1=\"1\" y1=\"6\" x2=\"25\" y2=\"6\" stroke=\"#fff\" stroke-width=\"1.8\" "
            "stroke-dasharray=\"0 6\" stroke-linecap=\"round\"/>";
      }
      break;
    }
    case LegendItem::kBox:
      body = st.incomplete ? fmt::format(
                                 "<rect x=\"7\" y=\"1\" width=\"12\" height=\"10\" fill=\"{0}\" "
                                 "fill-opacity=\".3\" stroke=\"{0}\" stroke-dasharray=\"2 1.5\"/>",
                                 st.color)
                           : fmt::format(
                                 "<rect x=\"7\" y=\"1\" width=\"12\" height=\"10\" rx=\"2\" "
                                 "fill=\"{}\"/>",
                                 st.color);
      break;
    case LegendItem::kMarker:
      body = fmt::format(
          "<path d=\"M13 1.5L18 10.5H8Z\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"1.6\"/>",
          st.color);
      break;
    case LegendItem::kCensor:
      body = fmt::format(
          "<line x1=\"1\" y1=\"9\" x2=\"13\" y2=\"9\" stroke=\"{0}\" stroke-width=\"2.5\"/>"
          "<path d=\"M13 4V11M13 4H25\" fill=\"none\" stroke=\"{0}\" stroke-width=\"1.4\" "
          "stroke-dasharray=\"2 2\"/>",
          st.color);
      break;
    case LegendItem::kOutside:
      body =
          "<rect x=\"1\" y=\"1\" width=\"24\" height=\"10\" fill=\"#8c959f\" "
          "fill-opacity=\".16\"/>";
      break;
    case LegendItem::kErrorBar:
      body = fmt::format(
          "<path d=\"M13 1V11M10 1H16M10 11H16\" fill=\"none\" stroke=\"{0}\" "
          "stroke-width=\"1.3\"/><circle cx=\"13\" cy=\"6\" r=\"2.6\" fill=\"{0}\"/>",
          st.color);
      break;
  }
  return "<svg class=\"sw\" width=\"26\" height=\"12\" viewBox=\"0 0 26 12\" "
         "aria-hidden=\"true\">" +
         body + "</svg>";
}

}  // namespace

std::string Legend(const std::vector<LegendItem>& items) {
  if (items.empty()) return "";
  std::string out = "<div class=\"legend\">";
  for (const auto& it : items) {
    out += fmt::format("<span{}>{}{}</span>",
                       it.what.empty() ? "" : fmt::format(" data-legend=\"{}\"", it.what),
                       Swatch(it), it.label);
  }
  return out + "</div>\n";
}

// The legend entry that says what a perforated line is.
LegendItem IncompleteLegend(std::string_view what_is_bound) {
  return {fmt::format("perforated: an incomplete run (interrupted, or jobs not completed by its "
                      "end){}",
                      what_is_bound),
          Style{"#59636e", "", true}, LegendItem::kLine, "incomplete"};
}

// A chart that is not drawn, and why, on one line.
std::string Note(std::string_view id, std::string_view text) {
  return fmt::format("<p class=\"note\" data-note=\"{}\">{}</p>\n", id, text);
}

std::string Figure(const FigureParts& p) {
  std::string out = "<figure>\n";
  if (!p.toggle.empty()) {
    out += fmt::format("<input type=\"checkbox\" class=\"logsw\" id=\"{}\"{}>", p.toggle,
                       p.log_first ? " checked" : "");
  }
  out += fmt::format("<figcaption><b>{}</b> <span class=\"about\">{}</span>", p.title, p.about);
  if (!p.toggle.empty()) {
    out += fmt::format(
        "<label class=\"logbtn\" for=\"{}\" title=\"switch the x axis between linear and "
        "log\">log x axis</label>",
        p.toggle);
  }
  if (!p.csv.empty()) {
    out += fmt::format(
        "<a class=\"csv\" data-csv=\"{0}\" download=\"{0}\" "
        "href=\"data:text/csv;charset=utf-8,{1}\" "
        "title=\"the data of this chart, as CSV\">CSV</a>",
        HtmlText(p.csv_name), PercentEncode(p.csv));
  }
  out += "</figcaption>\n";
  for (const auto& w : p.warnings) out += fmt::format("<p class=\"warn\">{}</p>\n", w);
  out += p.legend + p.body;
  for (const auto& n : p.notes) out += fmt::format("<p class=\"cap\">{}</p>\n", n);
  return out + "</figure>\n";
}

}  // namespace dlsched::report::html
