#include "dlsched/core/quantity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "dlsched/core/text.h"

namespace dlsched::core {
namespace {

using u128 = unsigned __int128;

constexpr __int128 kMaxNano = static_cast<__int128>(~u128{0} >> 1);
constexpr __int128 kNanoPerUnit = 1'000'000'000;
constexpr __int128 kNanoPerMilli = 1'000'000;
// Long enough for any quantity anyone writes by hand; longer input is cut in
// error messages so they stay one readable line.
constexpr size_t kMaxEchoedChars = 64;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The multiplier a suffix stands for: value = number * 2^binary * 10^decimal.
struct Suffix {
  int binary = 0;
  int64_t decimal = 0;
};

// Interprets everything after the number. Returns nullopt for anything that
// is not one of Kubernetes' suffixes.
std::optional<Suffix> ParseSuffix(std::string_view s) {
  struct Named {
    std::string_view name;
    Suffix value;
  };
  static constexpr Named kNamed[] = {
      {"", {0, 0}},    {"n", {0, -9}},  {"u", {0, -6}},  {"m", {0, -3}},
      {"k", {0, 3}},   {"M", {0, 6}},   {"G", {0, 9}},   {"T", {0, 12}},
      {"P", {0, 15}},  {"E", {0, 18}},  {"Ki", {10, 0}}, {"Mi", {20, 0}},
      {"Gi", {30, 0}}, {"Ti", {40, 0}}, {"Pi", {50, 0}}, {"Ei", {60, 0}},
  };
  for (const auto& n : kNamed) {
    if (s == n.name) return n.value;
  }
  // A decimal exponent: (e|E)[+-]<digits>, which must fit in int64 as in
  // Kubernetes (strconv.ParseInt). "E" alone was matched above as exa.
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return std::nullopt;
  size_t pos = 1;
  bool negative = false;
  if (s[pos] == '+' || s[pos] == '-') {
    negative = s[pos] == '-';
    ++pos;
  }
  if (pos == s.size()) return std::nullopt;
  // Accumulate the magnitude as unsigned so "-9223372036854775808" fits.
  uint64_t magnitude = 0;
  const uint64_t limit =
      negative ? uint64_t{1} << 63 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (; pos < s.size(); ++pos) {
    if (!IsDigit(s[pos])) return std::nullopt;
    uint64_t d = static_cast<uint64_t>(s[pos] - '0');
    if (magnitude > (limit - d) / 10) return std::nullopt;
    magnitude = magnitude * 10 + d;
  }
  Suffix out;
  out.decimal = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return out;
}

// digits = digits * factor, on a decimal string (no leading zeros in, none
// out). Used for binary suffixes, whose factor 2^k (k <= 60) fits in 64 bits.
std::string MultiplyDecimal(std::string_view digits, uint64_t factor) {
  std::string out(digits.size() + 20, '0');
  u128 carry = 0;
  size_t o = out.size();
  for (size_t i = digits.size(); i-- > 0;) {
    u128 cur = static_cast<u128>(digits[i] - '0') * factor + carry;
    out[--o] = static_cast<char>('0' + static_cast<int>(cur % 10));
    carry = cur / 10;
  }
  while (carry != 0) {
    out[--o] = static_cast<char>('0' + static_cast<int>(carry % 10));
    carry /= 10;
  }
  return out.substr(o);
}

// Parses a decimal digit string; nullopt when it exceeds kMaxNano.
std::optional<u128> ParseBounded(std::string_view digits) {
  u128 acc = 0;
  for (char c : digits) {
    u128 d = static_cast<u128>(c - '0');
    if (acc > (static_cast<u128>(kMaxNano) - d) / 10) return std::nullopt;
    acc = acc * 10 + d;
  }
  return acc;
}

std::string U128ToString(u128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

u128 Magnitude(__int128 v) { return v < 0 ? u128{0} - static_cast<u128>(v) : static_cast<u128>(v); }

// v / unit, rounded away from zero (Kubernetes' ScaledValue rounding).
__int128 DivideAwayFromZero(__int128 v, __int128 unit) {
  __int128 q = v / unit;  // truncates toward zero
  if (v % unit != 0) q += v < 0 ? -1 : 1;
  return q;
}

Result<int64_t> ToInt64(const Quantity& q, __int128 unit, std::string_view what) {
  __int128 r = DivideAwayFromZero(q.Nano(), unit);
  if (r > std::numeric_limits<int64_t>::max() || r < std::numeric_limits<int64_t>::min()) {
    return Errorf("'{}' is too large{} for a 64-bit {}", q.ToString(), r < 0 ? " in magnitude" : "",
                  what);
  }
  return static_cast<int64_t>(r);
}

}  // namespace

namespace internal {

std::string QuoteInput(std::string_view text) {
  return "'" + EscapeText(text, kMaxEchoedChars) + "'";
}

}  // namespace internal

Result<Quantity> Quantity::Parse(std::string_view text) {
  auto invalid = [&] {
    return Errorf(
        "{} is not a valid quantity (expected a number with an optional suffix such as 500m, "
        "2Gi, 1.5, 1e3)",
        internal::QuoteInput(text));
  };
  auto too_large = [&](bool negative) {
    return Errorf("{} is too large{}", internal::QuoteInput(text), negative ? " in magnitude" : "");
  };

  // <signedNumber>
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  size_t int_begin = pos;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  std::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    size_t frac_begin = ++pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
  }
  // Kubernetes' scanner takes "", ".", "-" and "Mi" as zero; its grammar (and
  // we) require a digit.
  if (int_digits.empty() && frac_digits.empty()) return invalid();

  // <suffix>
  std::optional<Suffix> suffix = ParseSuffix(text.substr(pos));
  if (!suffix) return invalid();

  // The value is digits * 2^binary * 10^scale nano, with digits the number
  // without its decimal point.
  std::string digits;
  digits.reserve(int_digits.size() + frac_digits.size());
  digits.append(int_digits).append(frac_digits);
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return Quantity(0);  // "0e999" is 0 too
  digits.erase(0, first);
  if (suffix->binary > 0) digits = MultiplyDecimal(digits, uint64_t{1} << suffix->binary);
  // Widened: the exponent may be anywhere in int64.
  __int128 scale =
      static_cast<__int128>(suffix->decimal) - static_cast<__int128>(frac_digits.size()) + 9;

  u128 magnitude = 0;
  if (scale >= 0) {
    // kMaxNano has 39 digits, so anything longer overflows; this also keeps
    // the string below short whatever the exponent.
    if (static_cast<__int128>(digits.size()) + scale > 39) return too_large(negative);
    digits.append(static_cast<size_t>(scale), '0');
    auto v = ParseBounded(digits);
    if (!v) return too_large(negative);
    magnitude = *v;
  } else {
    // Drop the digits finer than 1n; if any of them is non-zero, round the
    // magnitude up, as Kubernetes does (inf.RoundUp on the absolute value).
    __int128 drop = -scale;
    bool inexact;
    std::string_view kept;
    if (drop >= static_cast<__int128>(digits.size())) {
      inexact = true;  // digits has no leading zero, so it is non-zero
    } else {
      size_t keep = digits.size() - static_cast<size_t>(drop);
      kept = std::string_view(digits).substr(0, keep);
      inexact = digits.find_first_not_of('0', keep) != std::string::npos;
    }
    auto v = ParseBounded(kept);
    if (!v) return too_large(negative);
    magnitude = *v;
    if (inexact) {
      if (magnitude == static_cast<u128>(kMaxNano)) return too_large(negative);
      ++magnitude;
    }
  }
  __int128 nano = static_cast<__int128>(magnitude);
  return Quantity(negative ? -nano : nano);
}

Result<int64_t> Quantity::MilliValue() const {
  return ToInt64(*this, kNanoPerMilli, "count of milli-units");
}

Result<int64_t> Quantity::Value() const { return ToInt64(*this, kNanoPerUnit, "integer"); }

std::string Quantity::ToString() const {
  u128 m = Magnitude(nano_);
  std::string out = nano_ < 0 ? "-" : "";
  out += U128ToString(m / static_cast<u128>(kNanoPerUnit));
  auto frac = static_cast<uint64_t>(m % static_cast<u128>(kNanoPerUnit));
  if (frac != 0) {
    std::string f = fmt::format("{:09d}", frac);
    f.erase(f.find_last_not_of('0') + 1);
    out += "." + f;
  }
  return out;
}

}  // namespace dlsched::core
