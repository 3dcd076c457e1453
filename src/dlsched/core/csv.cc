#include "dlsched/core/csv.h"

#include <limits>

namespace dlsched::core {

namespace {
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
}  // namespace

bool CsvReader::ReadLine(std::string& out, bool& cut, bool& line_break) {
  cut = false;
  line_break = false;
  if (o_.max_line_bytes == 0) {
    if (!std::getline(*in_, out)) return false;
    line_break = !in_->eof();
    bytes_ += out.size() + (line_break ? 1 : 0);
  } else {
    if (buf_.empty()) buf_.resize(o_.max_line_bytes + 2);
    in_->getline(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    const auto got = static_cast<size_t>(in_->gcount());
    if (in_->bad()) return false;
    size_t len = got;
    bytes_ += got;
    cut = in_->fail() && got > 0;
    if (in_->fail()) {
      // Nothing read: the end of the stream. Else the buffer filled before
      // the line ended: skip to its end.
      if (got == 0) return false;
      in_->clear();
      in_->ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      bytes_ += static_cast<uint64_t>(in_->gcount());
      if (in_->bad()) return false;
    } else if (!in_->eof()) {
      --len;  // the line break, counted by gcount
      line_break = true;
    }
    out.assign(buf_.data(), len);
  }
  if (o_.max_bytes != 0 && bytes_ > o_.max_bytes) {
    too_large_ = true;
    return false;
  }
  ++lines_;
  // (A cut line keeps its last byte, so that it stays too long.)
  if (!cut && o_.cr_ends_every_line && !out.empty() && out.back() == '\r') out.pop_back();
  return true;
}

bool CsvReader::Next() {
  fields_.clear();
  fault_ = CsvFault::kNone;
  bool line_break = false;
  do {
    if (!ReadLine(record_, cut_, line_break)) return false;
  } while (o_.skip_blank_lines && record_.empty());
  line_no_ = lines_;
  if (cut_) return true;
  if (lines_ == 1 && record_.starts_with(kByteOrderMark)) record_.erase(0, kByteOrderMark.size());
  Split(line_break);
  // A quoted field still open at the end of the line goes on over the next.
  while (fault_ == CsvFault::kUnclosedQuote && line_break) {
    bool cut = false;
    if (!ReadLine(more_, cut, line_break)) {
      if (too_large_ || IoError()) return false;
      break;
    }
    if (cut) {
      fields_.clear();
      fault_ = CsvFault::kNone;
      cut_ = true;
      return true;
    }
    record_ += '\n';
    record_ += more_;
    Split(line_break);
  }
  return true;
}

void CsvReader::Split(bool line_break) {
  fields_.clear();
  if (!unescaped_.empty()) unescaped_.clear();
  fault_ = CsvFault::kNone;
  fault_line_ = line_no_;
  const std::string_view text = record_;
  if (!o_.quotes) {
    // Fields between commas, as they are (the loop below, without its
    // quotes: a trace's files are read a fifth faster).
    if (text.find('"') != std::string_view::npos) {
      fault_ = CsvFault::kQuote;
      return;
    }
    size_t start = 0;
    for (size_t comma; (comma = text.find(',', start)) != std::string_view::npos;
         start = comma + 1) {
      fields_.push_back(text.substr(start, comma - start));
    }
    std::string_view last = text.substr(start);
    if (last.ends_with('\r') && line_break && !o_.cr_ends_every_line) last.remove_suffix(1);
    fields_.push_back(last);
    return;
  }
  int64_t line = line_no_;  // the line at i
  size_t i = 0;
  while (true) {
    if (o_.quotes && i < text.size() && text[i] == '"') {
      const size_t open = ++i;
      bool doubled = false;
      while (true) {
        if (i >= text.size()) {
          fault_ = CsvFault::kUnclosedQuote;
          return;
        }
        const char ch = text[i++];
        if (ch == '"') {
          if (i < text.size() && text[i] == '"') {
            doubled = true;
            ++i;
            continue;
          }
          break;
        }
        if (ch == '\n') ++line;
      }
      std::string_view field = text.substr(open, i - 1 - open);
      if (doubled) {
        std::string& s = unescaped_.emplace_back();
        for (size_t k = 0; k < field.size(); ++k) {
          s += field[k];
          if (field[k] == '"') ++k;  // the second of a doubled quote
        }
        field = s;
      }
      // A comma, the end of the record, or its "\r" before a line break.
      if (i < text.size() && text[i] != ',' &&
          !(text[i] == '\r' && i + 1 == text.size() && line_break)) {
        fault_ = CsvFault::kAfterClosingQuote;
        fault_line_ = line;
        return;
      }
      fields_.push_back(field);
    } else {
      const size_t comma = text.find(',', i);
      std::string_view raw = text.substr(i, comma == std::string_view::npos ? comma : comma - i);
      i += raw.size();
      if (raw.ends_with('\r') && i == text.size() && line_break && !o_.cr_ends_every_line) {
        raw.remove_suffix(1);
      }
      if (o_.quotes && raw.find('"') != std::string_view::npos) {
        fault_ = CsvFault::kQuoteInField;
        fault_line_ = line;
        return;
      }
      fields_.push_back(raw);
    }
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    return;
  }
}

}  // namespace dlsched::core
