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

#include "dlsched/config/yaml_util.h"
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

inline std::unexpected<RowError> Bad(std::string_view column, std::string_view expected,
                                     std::string_view got) {
  return std::unexpected(RowError{
      fmt::format("{}: expected {}, got {}", column, expected, core::internal::QuoteInput(got))});
}

inline RowResult<int64_t> IntField(std::string_view s, std::string_view column, int64_t min,
                                   int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    return Bad(column, fmt::format("an integer in [{}, {}]", min, max), s);
  }
  return v;
}

// A decimal number; traces write integers as "164" or "66.0".
inline RowResult<double> NumberField(std::string_view s, std::string_view column,
                                     const NumberRange& range) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool ok = ec == std::errc() && end == s.data() + s.size() && std::isfinite(v) &&
                  (range.min_exclusive ? v > range.min : v >= range.min) &&
                  (!range.max || v <= *range.max);
  if (!ok) return Bad(column, range.Describe(), s);
  return v;
}

// Splits a CSV line on commas. Trace files quote nothing; a quote is a bad
// row rather than a field silently misread.
inline bool SplitCsv(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  if (line.find('"') != std::string_view::npos) return false;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return true;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

// Reads a CSV file line by line: the header, then one row at a time. Every
// CSV input (a trace, a Tiresias cluster, Pollux's measurements) is a
// regular file of at most core::kMaxCsvBytes: checked as every input file
// is (OpenInputFile) before a byte is read, and counted as it is read (a
// file that grows past it fails there).
class CsvReader {
 public:
  explicit CsvReader(std::string path) : path_(std::move(path)) {}

  core::Status Open() {
    DLSCHED_TRY_LET(file, OpenInputFile(path_, core::kMaxCsvBytes, kLimited));
    ::close(file->fd);
    in_.open(path_, std::ios::binary);
    if (!in_) return core::Errorf("{}: cannot read file: {}", path_, std::strerror(errno));
    return {};
  }

  // The next line, without its line ending; false at the end of the file
  // (or on a read error: ReadError). Blank lines are skipped. A line longer
  // than kMaxLineBytes is read as its first kMaxLineBytes + 1 bytes (so
  // TooLong() holds) and the rest skipped unread: memory stays bounded
  // whatever the file holds (a 3 GB line used to be read whole, failing as
  // "I/O error" when memory ran out).
  bool Next() {
    if (buf_.empty()) buf_.resize(kMaxLineBytes + 2);
    while (true) {
      in_.getline(buf_.data(), static_cast<std::streamsize>(buf_.size()));
      const auto got = static_cast<size_t>(in_.gcount());
      if (in_.bad()) return false;
      size_t len = got;
      bytes_ += got;
      const bool cut = in_.fail() && got > 0;
      if (in_.fail()) {
        // Nothing read: the end of the file. Else the buffer filled before
        // the line ended: skip to its end.
        if (got == 0) return false;
        in_.clear();
        in_.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
        bytes_ += static_cast<uint64_t>(in_.gcount());
        if (in_.bad()) return false;
      } else if (!in_.eof()) {
        --len;  // the line break, counted by gcount
      }
      if (bytes_ > core::kMaxCsvBytes) {
        error_ = TooLargeFile(path_, bytes_, core::kMaxCsvBytes, kLimited).error();
        return false;
      }
      ++line_no_;
      line_.assign(buf_.data(), len);
      // (A cut line keeps its last byte, so that it stays too long.)
      if (!cut && !line_.empty() && line_.back() == '\r') line_.pop_back();
      if (!line_.empty()) return true;
    }
  }
  // The line read is longer than kMaxLineBytes (and cut).
  bool TooLong() const { return line_.size() > kMaxLineBytes; }
  core::Error TooLongError() const {
    return At(fmt::format("the line is longer than {} bytes", kMaxLineBytes));
  }
  core::Status ReadError() const {
    if (error_) return std::unexpected(*error_);
    if (in_.bad()) return core::Errorf("{}: cannot read file: I/O error", path_);
    return {};
  }

  const std::string& line() const { return line_; }
  int64_t line_no() const { return line_no_; }
  const std::string& path() const { return path_; }

  // "<file>:<line>: <what>"
  core::Error At(std::string_view what) const {
    return core::Error{fmt::format("{}:{}: {}", path_, line_no_, what)};
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
    // A byte order mark, as spreadsheets save CSV (the report's reader
    // skips it too): not part of the first column's name.
    if (line_no_ == 1 && line_.starts_with("\xEF\xBB\xBF")) line_.erase(0, 3);
    std::vector<std::string_view> fields;
    SplitCsv(line_, fields);
    std::vector<int> pos;
    for (std::string_view c : columns) {
      auto it = std::find(fields.begin(), fields.end(), c);
      if (it == fields.end()) {
        return std::unexpected(At(fmt::format("header: no column '{}' (expected the columns {})", c,
                                              fmt::join(columns, ","))));
      }
      pos.push_back(static_cast<int>(it - fields.begin()));
    }
    for (std::string_view c : optional) {
      auto it = std::find(fields.begin(), fields.end(), c);
      pos.push_back(it == fields.end() ? kAbsent : static_cast<int>(it - fields.begin()));
    }
    width_ = fields.size();
    return pos;
  }
  size_t width() const { return width_; }

 private:
  static constexpr std::string_view kLimited = "CSV inputs";

  std::string path_;
  std::ifstream in_;
  std::vector<char> buf_;
  uint64_t bytes_ = 0;                // read so far
  std::optional<core::Error> error_;  // the file grew past kMaxCsvBytes
  std::string line_;
  int64_t line_no_ = 0;
  size_t width_ = 0;
};

}  // namespace dlsched::config::internal
