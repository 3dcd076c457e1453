#pragma once

// Text for the HTML report (html.h): numbers as the page shows them, names
// shortened and escaped, and the CSV a figure links. Shared by report/'s
// html*.cc files; not an interface of the layer.

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/report/format.h"

namespace dlsched::report::html {

// `v` with `decimals` decimals, trailing zeros dropped ("-0" reads "0");
// a number too large for that in %g.
std::string Fixed(double v, int decimals);

// An SVG coordinate: a tenth of a unit is finer than a pixel.
std::string C(double v);

std::string Percent(double fraction);

// A duration for a tooltip, in the unit that reads best.
std::string HumanTime(double s);

// At most `max_chars` characters of HtmlText-safe `text`, with "…" when cut.
std::string Shorten(std::string_view text, size_t max_chars);

std::string Join(const std::vector<std::string>& parts, std::string_view sep);

// A number as a CSV cell (FormatNumber).
std::string Num(double v);

// A time in seconds as a CSV cell: empty for none.
std::string OptNum(const std::optional<double>& v);

// `text` as a data: URI's payload: everything but letters, digits and
// - _ . ~ , percent-encoded, so the attribute holds no markup either.
std::string PercentEncode(std::string_view text);

// A file name from `text`: letters, digits, . - _ kept, anything else '_'.
std::string Slug(std::string_view text);

// The CSV of one chart, for its download link: a header, then rows.
class CsvText {
 public:
  explicit CsvText(std::initializer_list<std::string_view> header) {
    std::vector<std::string> h(header.begin(), header.end());
    Row(h);
  }
  explicit CsvText(const std::vector<std::string>& header) { Row(header); }
  void Row(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text_ += ',';
      AppendCsvField(text_, cells[i]);
    }
    text_ += '\n';
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace dlsched::report::html
