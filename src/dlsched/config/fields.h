#pragma once
// The one field reader: a value of some input format checked against what
// its field expects, with an error that names the field:
//   "<source>: <path>: expected <what>, got <value>".
// The mechanism is one (FieldReader); what differs between formats is data
// of the format, a traits struct: how a value converts (ToInt, ToNumber,
// ToBool), how it is shown after "got" (Describe) and how an expectation is
// worded (kWording). The formats: YAML inputs (config::internal::YamlFields:
// workload, cluster and profile files), CSV fields (config/csv.h), plugin
// arguments (policy/framework/args.h) and TrainingJob objects in JSON
// (k8s/trainingjob.cc, which keeps nlohmann out of config/).

#include <cstdint>
#include <expected>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "dlsched/core/error.h"
#include "dlsched/core/limits.h"

namespace dlsched::config {

// Field paths: Key("jobs[2]", "worker") is "jobs[2].worker"; Index("jobs", 2)
// is "jobs[2]". An empty parent means the top level.
std::string Key(std::string_view parent, std::string_view key);
std::string Index(std::string_view parent, size_t i);

// Bounds of a number, with the words used in messages ("a number > 0").
struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  std::optional<double> max;  // inclusive

  // Within the bounds (NaN never is).
  bool Contains(double v) const {
    return (min_exclusive ? v > min : v >= min) && (!max || v <= *max);
  }
  // "a number in [0, 1]", "a number in (0, 1]", "a number >= 0", "a number > 0",
  // "a number".
  std::string Describe() const;
};
inline constexpr NumberRange kNonNegative{0, false, std::nullopt};
inline constexpr NumberRange kPositive{0, true, std::nullopt};
// Seconds: arrivals, delays, deadlines (core::kMaxTime).
inline constexpr NumberRange kTime{0, false, core::kMaxTime};
inline constexpr NumberRange kPositiveTime{0, true, core::kMaxTime};

inline constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

// How a format words what a field expects: the text after "expected".
struct FieldWording {
  std::string (*integer)(int64_t min, int64_t max);
  std::string (*number)(const NumberRange& range);
};
// The wordings in use, each a function of the bounds:
// "an integer between 1 and 9", "an integer >= 1" (max kMaxInt), "0 or 1";
std::string IntegerBetween(int64_t min, int64_t max);
// "an integer in [1, 9]";
std::string IntegerInBrackets(int64_t min, int64_t max);
// "an integer in 1..9";
std::string IntegerInDots(int64_t min, int64_t max);
// NumberRange::Describe ("a number in (0, 10000000]");
std::string NumberInterval(const NumberRange& range);
// "a number in (0, 1e+07]" (bounded ranges; shortest form, "%g");
std::string NumberIntervalShort(const NumberRange& range);
// "a number in 0..1" (closed, bounded ranges).
std::string NumberInDots(const NumberRange& range);

// Reads fields of one input, its values those of `Format`:
//   using Value = ...;                          // a value of the format
//   static constexpr FieldWording kWording;     // its expectations' words
//   static std::string Describe(const Value&);  // a value after "got"
//   static std::optional<int64_t> ToInt(const Value&);
//   static std::optional<double> ToNumber(const Value&);
//   static std::optional<bool> ToBool(const Value&);
// and, when a bad boolean is shown otherwise than Describe shows it,
//   static std::string DescribeBool(const Value&);
template <typename Format>
class FieldReader {
 public:
  using Value = typename Format::Value;

  // An empty source: messages are "<path>: <what>" (the path names the
  // input already).
  explicit FieldReader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  // "<source>: <path>: <what>", without the parts that are empty.
  std::unexpected<core::Error> Fail(std::string_view path, std::string_view what) const {
    std::string out = source_;
    if (!path.empty()) out.append(out.empty() ? "" : ": ").append(path);
    out.append(out.empty() ? "" : ": ").append(what);
    return std::unexpected(core::Error{std::move(out)});
  }
  // "<source>: <path>: expected <expected>, got <got>".
  std::unexpected<core::Error> ExpectedText(std::string_view path, std::string_view expected,
                                            std::string_view got) const {
    std::string what = "expected ";
    what.append(expected).append(", got ").append(got);
    return Fail(path, what);
  }
  std::unexpected<core::Error> Expected(std::string_view path, std::string_view expected,
                                        const Value& got) const {
    return ExpectedText(path, expected, Format::Describe(got));
  }
  // "<source>: <path>: missing, expected <expected>".
  std::unexpected<core::Error> Missing(std::string_view path, std::string_view expected) const {
    return Fail(path, std::string("missing, expected ").append(expected));
  }

  // An integer in [min, max].
  core::Result<int64_t> Int(const Value& v, std::string_view path, int64_t min,
                            int64_t max = kMaxInt) const {
    const std::optional<int64_t> x = Format::ToInt(v);
    if (!x || *x < min || *x > max) return Expected(path, Format::kWording.integer(min, max), v);
    return *x;
  }
  // A number within `range` (finite, unless the format reads infinities and
  // the range holds them).
  core::Result<double> Number(const Value& v, std::string_view path,
                              const NumberRange& range) const {
    const std::optional<double> x = Format::ToNumber(v);
    if (!x || !range.Contains(*x)) return Expected(path, Format::kWording.number(range), v);
    return *x;
  }
  core::Result<bool> Bool(const Value& v, std::string_view path) const {
    const std::optional<bool> x = Format::ToBool(v);
    if (x) return *x;
    if constexpr (requires { Format::DescribeBool(v); }) {
      return ExpectedText(path, "true or false", Format::DescribeBool(v));
    } else {
      return Expected(path, "true or false", v);
    }
  }

 private:
  std::string source_;
};

}  // namespace dlsched::config
