#include "dlsched/core/text.h"

#include <algorithm>

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

}  // namespace dlsched::core
