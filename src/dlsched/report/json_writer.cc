#include "dlsched/report/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace dlsched::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at s[i], or, when there is
// none, how many bytes the malformed one spans as nlohmann's decoder reads
// it (the bytes before the one that broke it, at least 1) with ok false.
size_t Utf8Sequence(std::string_view s, size_t i, bool* ok) {
  const auto b = static_cast<unsigned char>(s[i]);
  *ok = true;
  if (b < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;  // no overlong forms
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    *ok = false;
    return 1;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) {
      *ok = false;  // cut short at the end: one replacement for the rest
      return s.size() - i;
    }
    const auto c = static_cast<unsigned char>(s[i + k]);
    const bool in = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!in) {
      *ok = false;
      return k;  // the breaking byte starts over
    }
  }
  return len;
}

// The bytes JSON strings hold as they are: printable ASCII but '"' and
// '\\'.
constexpr auto kPlain = [] {
  std::array<bool, 256> plain{};
  for (int b = 0x20; b < 0x80; ++b) plain[b] = b != '"' && b != '\\';
  return plain;
}();

}  // namespace

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // The longest run written as it is (printable ASCII but '"' and '\\',
    // and well-formed UTF-8), in one append: names and reasons are mostly
    // that.
    size_t end = i;
    size_t malformed = 0;  // the length of the malformed sequence at `end`
    while (end < s.size()) {
      const auto b = static_cast<unsigned char>(s[end]);
      if (kPlain[b]) {
        ++end;
      } else if (b >= 0x80) {
        bool ok = false;
        const size_t len = Utf8Sequence(s, end, &ok);
        if (!ok) {
          malformed = len;
          break;
        }
        end += len;
      } else {
        break;
      }
    }
    out->append(s.data() + i, end - i);
    i = end;
    if (i == s.size()) break;
    if (malformed > 0) {
      // One replacement for the bytes nlohmann's decoder spans.
      out->append(kReplacement);
      i += malformed;
      continue;
    }
    const char c = s[i++];
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:  // the other control characters
        fmt::format_to(std::back_inserter(*out), "\\u{:04x}", static_cast<unsigned>(c));
    }
  }
  out->push_back('"');
}

void AppendJsonNumber(std::string* out, double x) {
  if (!std::isfinite(x)) {
    out->append("null");
    return;
  }
  if (x == 0) {
    out->append(std::signbit(x) ? "-0.0" : "0.0");
    return;
  }
  // A whole number of up to 15 digits is its digits and ".0" (the first
  // layout below), without the digit search.
  if (x == std::trunc(x) && std::fabs(x) < 1e15) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(x));
    out->append(buf, static_cast<size_t>(r.ptr - buf));
    out->append(".0");
    return;
  }
  // The shortest digits that read back as x, d.ddde[+-]X, laid out as
  // nlohmann's dtoa lays out its digits (format_buffer, with its kMinExp
  // -4 and kMaxExp 15).
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  if (sci.front() == '-') {
    out->push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  // At most 17 significant digits: no string of their own.
  char digit_buf[24];
  size_t k_digits = 0;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digit_buf[k_digits++] = c;
  }
  const std::string_view digits(digit_buf, k_digits);
  const int k = static_cast<int>(k_digits);
  int exp10 = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (exp_text.front() == '+') exp_text.remove_prefix(1);
  // to_chars wrote it: it parses.
  (void)std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp10);
  const int n = exp10 + 1;
  constexpr int kMinExp = -4;
  constexpr int kMaxExp = 15;
  if (k <= n && n <= kMaxExp) {
    out->append(digits);
    out->append(static_cast<size_t>(n - k), '0');
    out->append(".0");
  } else if (0 < n && n <= kMaxExp) {
    out->append(digits.substr(0, static_cast<size_t>(n)));
    out->push_back('.');
    out->append(digits.substr(static_cast<size_t>(n)));
  } else if (kMinExp < n && n <= 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-n), '0');
    out->append(digits);
  } else {
    out->push_back(digits[0]);
    if (k > 1) {
      out->push_back('.');
      out->append(digits.substr(1));
    }
    fmt::format_to(std::back_inserter(*out), "e{}{:02d}", n - 1 < 0 ? '-' : '+', std::abs(n - 1));
  }
}

void JsonWriter::Newline(size_t depth) {
  // One append at the usual depths.
  static constexpr std::string_view kNewlineSpaces = "\n                                ";
  const size_t width = depth * static_cast<size_t>(indent_);
  if (width < kNewlineSpaces.size()) {
    out_->append(kNewlineSpaces.data(), width + 1);
    return;
  }
  out_->push_back('\n');
  out_->append(width, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_value_.empty()) return;  // the root
  if (has_value_.back()) out_->push_back(',');
  has_value_.back() = true;
  Newline(has_value_.size());
}

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_->push_back(bracket);
  has_value_.push_back(false);
}

void JsonWriter::Close(char bracket) {
  const bool any = has_value_.back();
  has_value_.pop_back();
  if (any) Newline(has_value_.size());
  out_->push_back(bracket);
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(out_, key);
  out_->append(": ");
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendJsonString(out_, s);
}

void JsonWriter::Number(double x) {
  BeforeValue();
  AppendJsonNumber(out_, x);
}

void JsonWriter::Int(int64_t x) {
  BeforeValue();
  char buf[24];  // "-9223372036854775808" is 20
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out_->append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::UInt(uint64_t x) {
  BeforeValue();
  char buf[24];  // "18446744073709551615" is 20
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out_->append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::Bool(bool b) {
  BeforeValue();
  out_->append(b ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

}  // namespace dlsched::report
