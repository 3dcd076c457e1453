#pragma once
// Reading the CSV files of traces and of Pollux's measurements: a header
// found by column names, then one row at a time, with errors that name the
// file, the line and the column. Internal to config/.

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <expected>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/config/fields.h"
#include "dlsched/config/yaml_util.h"
#include "dlsched/core/csv.h"
#include "dlsched/core/error.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/quantity.h"

namespace dlsched::config::internal {

// Longest line read; a longer one is a bad row (and no CSV of ours comes near).
inline constexpr size_t kMaxLineBytes = 64 * 1024;

// One malformed field of a row: "<column>: <what>".
struct RowError {
  std::string what;
};
template <typename T>
using RowResult = std::expected<T, RowError>;

// CSV fields as the field reader reads them (fields.h): text, numbers as
// from_chars reads them (traces write integers as "164" or "66.0"), shown
// quoted; expectations worded "an integer in [1, 9]", "a number in (0, 9]".
struct CsvFields {
  using Value = std::string_view;
  static constexpr FieldWording kWording{IntegerInBrackets, NumberInterval};
  static std::string Describe(std::string_view s) { return core::internal::QuoteInput(s); }
  static std::optional<int64_t> ToInt(std::string_view s) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
  }
  static std::optional<double> ToNumber(std::string_view s) {
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  }
};
// A row's fields: their path is the column, the row's place ("<file>:<line>")
// is added by the reader (CsvReader::At).
inline FieldReader<CsvFields> RowFields() { return FieldReader<CsvFields>(""); }

inline std::unexpected<RowError> Bad(std::string_view column, std::string_view expected,
                                     std::string_view got) {
  return std::unexpected(RowError{
      RowFields().ExpectedText(column, expected, CsvFields::Describe(got)).error().message});
}

template <typename T>
RowResult<T> AsRow(core::Result<T> r) {
  if (!r) return std::unexpected(RowError{std::move(r.error().message)});
  return *r;
}

inline RowResult<int64_t> IntField(std::string_view s, std::string_view column, int64_t min,
                                   int64_t max) {
  return AsRow(RowFields().Int(s, column, min, max));
}

inline RowResult<double> NumberField(std::string_view s, std::string_view column,
                                     const NumberRange& range) {
  return AsRow(RowFields().Number(s, column, range));
}

// Reads a CSV file with core::CsvReader, line by line: the header, then one
// row at a time. Every CSV input (a trace, a Tiresias cluster, Pollux's
// measurements) is a regular file of at most core::kMaxCsvBytes: checked as
// every input file is (OpenInputFile) before a byte is read, and counted as
// it is read (a file that grows past it fails there). Trace files quote
// nothing: a quote is a bad row (Quoted()) rather than a field silently
// misread. Blank lines are skipped. A line longer than kMaxLineBytes is
// read as its first kMaxLineBytes + 1 bytes (so TooLong() holds) and the
// rest skipped unread: memory stays bounded whatever the file holds (a 3 GB
// line used to be read whole, failing as "I/O error" when memory ran out).
class CsvReader {
 public:
  explicit CsvReader(std::string path) : path_(std::move(path)), csv_(in_, kOptions) {}

  core::Status Open() {
    DLSCHED_TRY_LET(file, OpenInputFile(path_, core::kMaxCsvBytes, kLimited));
    ::close(file->fd);
    in_.open(path_, std::ios::binary);
    if (!in_) return core::Errorf("{}: cannot read file: {}", path_, std::strerror(errno));
    return {};
  }

  // The next line, without its line ending; false at the end of the file
  // (or on a read error: ReadError).
  bool Next() { return csv_.Next(); }
  // The line read is longer than kMaxLineBytes (and cut).
  bool TooLong() const { return csv_.TooLong(); }
  core::Error TooLongError() const {
    return At(fmt::format("the line is longer than {} bytes", kMaxLineBytes));
  }
  core::Status ReadError() const {
    if (csv_.TooLarge()) return TooLargeFile(path_, csv_.bytes(), core::kMaxCsvBytes, kLimited);
    if (csv_.IoError()) return core::Errorf("{}: cannot read file: I/O error", path_);
    return {};
  }

  const std::string& line() const { return csv_.line(); }
  // The line's comma-separated fields: none when it holds a quote (Quoted).
  const std::vector<std::string_view>& fields() const { return csv_.fields(); }
  bool Quoted() const { return csv_.fault() == core::CsvFault::kQuote; }
  int64_t line_no() const { return csv_.line_no(); }
  const std::string& path() const { return path_; }

  // "<file>:<line>: <what>"
  core::Error At(std::string_view what) const {
    return core::Error{fmt::format("{}:{}: {}", path_, line_no(), what)};
  }

  // Reads the header and maps each of `columns` to its position; a missing
  // column is an error naming the columns the format needs. Each of
  // `optional` follows them in the result, at kAbsent when the header does
  // not have it.
  static constexpr int kAbsent = -1;
  core::Result<std::vector<int>> Header(std::span<const std::string_view> columns,
                                        std::span<const std::string_view> optional = {}) {
    if (!Next()) {
      DLSCHED_TRY(ReadError());
      return core::Errorf("{}: the file is empty, expected a header: {}", path_,
                          fmt::join(columns, ","));
    }
    if (TooLong()) return std::unexpected(TooLongError());
    const std::vector<std::string_view>& names = fields();
    std::vector<int> pos;
    for (std::string_view c : columns) {
      auto it = std::find(names.begin(), names.end(), c);
      if (it == names.end()) {
        return std::unexpected(At(fmt::format("header: no column '{}' (expected the columns {})", c,
                                              fmt::join(columns, ","))));
      }
      pos.push_back(static_cast<int>(it - names.begin()));
    }
    for (std::string_view c : optional) {
      auto it = std::find(names.begin(), names.end(), c);
      pos.push_back(it == names.end() ? kAbsent : static_cast<int>(it - names.begin()));
    }
    width_ = names.size();
    return pos;
  }
  size_t width() const { return width_; }

 private:
  static constexpr std::string_view kLimited = "CSV inputs";
  static constexpr core::CsvOptions kOptions{.quotes = false,
                                             .skip_blank_lines = true,
                                             .cr_ends_every_line = true,
                                             .max_line_bytes = kMaxLineBytes,
                                             .max_bytes = core::kMaxCsvBytes};

  std::string path_;
  std::ifstream in_;  // before csv_, which reads it
  core::CsvReader csv_;
  size_t width_ = 0;
};

}  // namespace dlsched::config::internal
