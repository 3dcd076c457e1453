#pragma once
// The one CSV reader: records read from a stream line by line and split into
// fields. Its callers choose what their format allows (CsvOptions) and word
// its faults themselves: config/'s trace and measurement files (config/csv.h:
// no quotes, a line and a file size cap, blank lines skipped) and report/'s
// result files (report/run_data.h: RFC 4180 quoted fields, read whole).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace dlsched::core {

struct CsvOptions {
  // Quoted fields (RFC 4180: commas, doubled quotes and line breaks inside
  // quotes) are read; else a quote anywhere makes the record bad
  // (CsvFault::kQuote), rather than a field silently misread.
  bool quotes = false;
  // A line holding nothing (or only "\r") is skipped, not an empty record.
  bool skip_blank_lines = false;
  // Where a '\r' ends a line: true, the last byte of every line read whole
  // (the last line of the file too); false, only a '\r' before a '\n' (inside
  // a quoted field, "\r\n" is kept).
  bool cr_ends_every_line = false;
  // Longer lines are cut: read as their first max_line_bytes + 1 bytes
  // (TooLong()), the rest skipped unread, so that memory stays bounded
  // whatever the file holds. 0: lines are read whole.
  size_t max_line_bytes = 0;
  // More bytes read than this ends the reading (TooLarge()). 0: no cap.
  uint64_t max_bytes = 0;
};

enum class CsvFault {
  kNone,
  kQuote,              // a quote, when CsvOptions::quotes is off (no fields)
  kUnclosedQuote,      // a quoted field never closed before the end
  kAfterClosingQuote,  // a closing quote followed by neither a comma nor a line end
  kQuoteInField,       // a quote inside an unquoted field
};

class CsvReader {
 public:
  CsvReader(std::istream& in, CsvOptions options) : in_(&in), o_(options) {}

  // Reads the next record; false at the end of the stream, or when the
  // reading failed (TooLarge(), IoError()). A UTF-8 byte order mark before
  // the first line (as spreadsheets save CSV) is not part of it.
  bool Next();

  // The record read: its fields (none when TooLong(); views that stay valid
  // until the next Next()), or what is wrong with it, and where.
  const std::vector<std::string_view>& fields() const { return fields_; }
  CsvFault fault() const { return fault_; }
  int64_t fault_line() const { return fault_line_; }
  // The line the record starts on, 1-based; and its text (its lines joined
  // by '\n', the last without its line ending).
  int64_t line_no() const { return line_no_; }
  const std::string& line() const { return record_; }
  // The line was longer than CsvOptions::max_line_bytes: cut, not split.
  bool TooLong() const { return cut_; }

  bool TooLarge() const { return too_large_; }
  bool IoError() const { return in_->bad(); }
  uint64_t bytes() const { return bytes_; }

 private:
  // One line, without its '\n', into `out`; false at the end (or failure).
  bool ReadLine(std::string& out, bool& cut, bool& line_break);
  void Split(bool line_break);

  std::istream* in_;
  CsvOptions o_;
  std::vector<char> buf_;  // bounded lines are read through it
  std::string record_;
  std::string more_;  // a further line of a record
  std::vector<std::string_view> fields_;
  std::deque<std::string> unescaped_;  // quoted fields with doubled quotes
  CsvFault fault_ = CsvFault::kNone;
  int64_t fault_line_ = 0;
  int64_t line_no_ = 0;
  int64_t lines_ = 0;   // read so far
  uint64_t bytes_ = 0;  // read so far
  bool cut_ = false;
  bool too_large_ = false;
};

}  // namespace dlsched::core
