#include "dlsched/config/fields.h"

#include <cmath>

#include <fmt/format.h>

namespace dlsched::config {

std::string Key(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return fmt::format("{}.{}", parent, key);
}

std::string Index(std::string_view parent, size_t i) { return fmt::format("{}[{}]", parent, i); }

std::string NumberRange::Describe() const {
  // "%g"-like but exact for the integers and simple decimals found in configs.
  if (max.has_value()) {
    return fmt::format("a number in {}{}, {}]", min_exclusive ? "(" : "[", min, *max);
  }
  if (std::isinf(min)) return "a number";
  return fmt::format("a number {} {}", min_exclusive ? ">" : ">=", min);
}

std::string IntegerBetween(int64_t min, int64_t max) {
  if (max >= kMaxInt) return fmt::format("an integer >= {}", min);
  if (max == min + 1) return fmt::format("{} or {}", min, max);
  return fmt::format("an integer between {} and {}", min, max);
}

std::string IntegerInBrackets(int64_t min, int64_t max) {
  return fmt::format("an integer in [{}, {}]", min, max);
}

std::string IntegerInDots(int64_t min, int64_t max) {
  return fmt::format("an integer in {}..{}", min, max);
}

std::string NumberInterval(const NumberRange& range) { return range.Describe(); }

std::string NumberIntervalShort(const NumberRange& range) {
  return fmt::format("a number in {}{:g}, {:g}]", range.min_exclusive ? "(" : "[", range.min,
                     range.max.value_or(std::numeric_limits<double>::infinity()));
}

std::string NumberInDots(const NumberRange& range) {
  return fmt::format("a number in {}..{}", range.min,
                     range.max.value_or(std::numeric_limits<double>::infinity()));
}

}  // namespace dlsched::config
