#pragma once
// Reading the CSV files of traces and of Pollux's measurements: a header
// found by column names, then one row at a time, with errors that name the
// file, the line and the column. Internal to config/.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <expected>
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

// Reads a CSV file line by line: the header, then one row at a time. The
// file is streamed a block at a time: memory holds one line, at most
// kMaxLineBytes + 1 bytes of it (the rest of a longer line is skipped, and
// the line, cut, fails the callers' length check), and a file over
// core::kMaxCsvBytes is refused before a byte is read (or when it grows
// past it while being read). A 1.5 GB line used to cost 2-3 GB before the
// error.
class CsvReader {
 public:
  explicit CsvReader(std::string path) : path_(std::move(path)) {}
  ~CsvReader() {
    if (fd_ >= 0) ::close(fd_);
  }
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  core::Status Open() {
    auto fd = OpenInputFile(path_, core::kMaxCsvBytes, kLimited);
    if (!fd) return std::unexpected(fd.error());
    fd_ = *fd;
    return {};
  }

  // The next line, without its line ending; false at the end of the file
  // or on an error (ReadError tells). Blank lines are skipped.
  bool Next() {
    while (ReadLine()) {
      ++line_no_;
      if (!line_.empty() && line_.back() == '\r' && line_.size() <= kMaxLineBytes) {
        line_.pop_back();
      }
      if (!line_.empty()) return true;
    }
    return false;
  }
  core::Status ReadError() const {
    if (error_) return std::unexpected(*error_);
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
      if (auto st = ReadError(); !st) return std::unexpected(st.error());
      return core::Errorf("{}: the file is empty, expected a header: {}", path_,
                          fmt::join(columns, ","));
    }
    if (line_.size() > kMaxLineBytes) {
      return std::unexpected(
          At(fmt::format("header: the line is longer than {} bytes", kMaxLineBytes)));
    }
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
  static constexpr size_t kBlock = 64 * 1024;

  static constexpr std::string_view kLimited = "CSV inputs";

  // Reads up to the next line break (or the end) into line_, keeping at
  // most kMaxLineBytes + 1 bytes; false at the end or on an error.
  bool ReadLine() {
    if (fd_ < 0 || error_) return false;
    line_.clear();
    bool any = false;
    while (true) {
      if (pos_ == end_) {
        if (eof_) return any;
        if (!Fill()) return false;
        continue;
      }
      any = true;
      const char* begin = block_.data() + pos_;
      const char* stop = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_));
      const size_t n = stop == nullptr ? end_ - pos_ : static_cast<size_t>(stop - begin);
      if (line_.size() <= kMaxLineBytes) {
        line_.append(begin, std::min(n, kMaxLineBytes + 1 - line_.size()));
      }
      pos_ += n;
      if (stop != nullptr) {
        ++pos_;
        return true;
      }
    }
  }

  bool Fill() {
    if (block_.empty()) block_.resize(kBlock);
    while (true) {
      const ssize_t n = ::read(fd_, block_.data(), block_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = core::Error{fmt::format("{}: cannot read file: {}", path_, std::strerror(errno))};
        return false;
      }
      pos_ = 0;
      end_ = static_cast<size_t>(n);
      eof_ = n == 0;
      read_ += end_;
      if (read_ > core::kMaxCsvBytes) {
        error_ = TooLargeFile(path_, read_, core::kMaxCsvBytes, kLimited).error();
        return false;
      }
      return true;
    }
  }

  std::string path_;
  int fd_ = -1;
  std::string block_;
  size_t pos_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t read_ = 0;
  std::optional<core::Error> error_;
  std::string line_;
  int64_t line_no_ = 0;
  size_t width_ = 0;
};

}  // namespace dlsched::config::internal
