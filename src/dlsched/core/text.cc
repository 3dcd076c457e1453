#include "dlsched/core/text.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "dlsched/core/limits.h"

namespace dlsched::core {
namespace {

// Length of the well-formed UTF-8 sequence starting at text[i] (1..4), or 0
// when the bytes there are not one (Unicode 15, table 3-7).
size_t SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) -> unsigned {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0x100;
  };
  const unsigned b0 = byte(0);
  if (b0 < 0x80) return 1;
  auto in = [](unsigned b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
  if (in(b0, 0xC2, 0xDF)) return in(byte(1), 0x80, 0xBF) ? 2 : 0;
  if (in(b0, 0xE0, 0xEF)) {
    const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;  // no surrogates
    return in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    return in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF) && in(byte(3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// True for a well-formed sequence that must still not reach a terminal raw:
// C0 controls and DEL, C1 controls (U+0080..U+009F, which some terminals
// take as escape sequences) and U+2028 / U+2029 (line breaks to some).
bool IsUnsafe(std::string_view seq) {
  const auto b0 = static_cast<unsigned char>(seq[0]);
  if (seq.size() == 1) return b0 < 0x20 || b0 == 0x7F;
  const auto b1 = static_cast<unsigned char>(seq[1]);
  if (seq.size() == 2) return b0 == 0xC2 && b1 < 0xA0;
  if (seq.size() == 3) {
    const auto b2 = static_cast<unsigned char>(seq[2]);
    return b0 == 0xE2 && b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9);
  }
  return false;
}

}  // namespace

std::string EscapeText(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  size_t i = 0;
  while (i < text.size()) {
    const size_t len = SequenceLength(text, i);
    const std::string_view seq = text.substr(i, len == 0 ? 1 : len);
    std::string piece;
    if (len == 0 || IsUnsafe(seq)) {
      for (char c : seq) piece += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      piece = seq;
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "...";
      return out;
    }
    out += piece;
    i += seq.size();
  }
  return out;
}

std::string EscapeMessage(std::string_view text, size_t max_bytes) {
  std::string all = EscapeText(text, std::string::npos);
  if (all.size() <= max_bytes) return all;
  constexpr std::string_view kGap = " ... ";
  const size_t keep = max_bytes > kGap.size() ? max_bytes - kGap.size() : 0;
  // Escaped text is valid UTF-8: cut where no character continues.
  const auto continues = [&](size_t i) {
    return i < all.size() && (static_cast<unsigned char>(all[i]) & 0xC0) == 0x80;
  };
  size_t head = keep / 2;
  while (head > 0 && continues(head)) --head;
  size_t tail = all.size() - (keep - keep / 2);
  while (continues(tail)) ++tail;
  return all.substr(0, head) + std::string(kGap) + all.substr(tail);
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t len = SequenceLength(text, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::optional<std::string> NameProblem(std::string_view name) {
  if (name.empty()) return "a name must not be empty";
  if (name.size() > kMaxNameBytes) {
    return fmt::format("'{}' is {} bytes long; names have at most {}", EscapeText(name, 40),
                       name.size(), kMaxNameBytes);
  }
  for (size_t i = 0; i < name.size();) {
    const size_t len = SequenceLength(name, i);
    if (len == 0) return fmt::format("'{}' is not valid UTF-8", EscapeText(name, 80));
    if (IsUnsafe(name.substr(i, len))) {
      return fmt::format("'{}' contains a control character", EscapeText(name, 80));
    }
    i += len;
  }
  return std::nullopt;
}

namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Damerau-Levenshtein without editing a
// substring twice) between `a` and `b`, case-insensitive.
size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  const size_t m = b.size();
  // Three rows: i - 2, i - 1 and i.
  std::vector<size_t> before(m + 1), prev(m + 1), row(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    row[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[m];
}

}  // namespace

std::optional<std::string_view> ClosestName(std::string_view word,
                                            std::span<const std::string_view> candidates) {
  const size_t limit = word.size() <= 5 ? 1 : word.size() <= 8 ? 2 : 3;
  std::optional<std::string_view> best;
  size_t best_distance = limit + 1;
  for (std::string_view c : candidates) {
    // The distance is at least the difference in length: a long word (a
    // megabyte of key) costs nothing.
    const size_t gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (gap >= best_distance || c.empty()) continue;
    const size_t d = EditDistance(word, c);
    if (d < best_distance && d < c.size()) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, std::span<const std::string_view> candidates) {
  const auto best = ClosestName(word, candidates);
  return best ? fmt::format("; did you mean '{}'?", EscapeText(*best)) : std::string();
}

}  // namespace dlsched::core
