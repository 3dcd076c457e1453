#include "dlsched/report/html_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dlsched/core/text.h"
#include "dlsched/report/html.h"

namespace dlsched::report {
namespace html {
namespace {

std::string TrimZeros(std::string s) {
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

}  // namespace

std::string Fixed(double v, int decimals) {
  // Only a hand-made file has numbers this large; they stay short.
  if (!(std::fabs(v) < 1e15)) return fmt::format("{:.6g}", v);
  return TrimZeros(fmt::format("{:.{}f}", v, std::max(0, decimals)));
}

// An SVG coordinate: a tenth of a unit is finer than a pixel.
std::string C(double v) { return Fixed(v, 1); }

std::string Percent(double fraction) { return Fixed(100 * fraction, 1) + "%"; }

// A duration for a tooltip, in the unit that reads best.
std::string HumanTime(double s) {
  const double a = std::fabs(s);
  if (a < 120) return Fixed(s, a < 10 ? 2 : 1) + " s";
  if (a < 7200) return Fixed(s / 60, 1) + " min";
  if (a < 48 * 3600) return Fixed(s / 3600, 2) + " h";
  return Fixed(s / 86400, 2) + " d";
}

// At most `max_chars` characters of HtmlText-safe `text`, with "…" when cut.
std::string Shorten(std::string_view text, size_t max_chars) {
  const std::string safe = core::EscapeText(text, 4 * max_chars + 16);
  size_t chars = 0;
  for (size_t i = 0; i < safe.size(); ++i) {
    if ((static_cast<unsigned char>(safe[i]) & 0xC0) == 0x80) continue;
    if (++chars > max_chars) return HtmlText(safe.substr(0, i)) + "…";
  }
  return HtmlText(safe);
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

std::string Num(double v) { return FormatNumber(v); }

// `text` as a data: URI's payload: everything but letters, digits and
// - _ . ~ , percent-encoded, so the attribute holds no markup either.
std::string PercentEncode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~' || c == ',') {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// A file name from `text`: letters, digits, . - _ kept, anything else '_'.
std::string Slug(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    out += std::isalnum(c) != 0 || c == '.' || c == '-' || c == '_' ? ch : '_';
    if (out.size() >= 60) break;
  }
  return out.empty() ? "data" : out;
}

// A time in seconds as a CSV cell: empty for none.
std::string OptNum(const std::optional<double>& v) { return v ? Num(*v) : ""; }

}  // namespace html

std::string HtmlText(std::string_view text) {
  const std::string line = core::EscapeText(text, std::numeric_limits<size_t>::max() / 2);
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace dlsched::report
