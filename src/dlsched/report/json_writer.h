#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlsched::report {

// Writes JSON text as it goes, without building a document tree: a run's
// summary.json lists every job, and a tree of 100,000 jobs costs more time
// and memory than the simulation. The text is what nlohmann::json's
// dump(indent) writes for the same values (keys in the order written,
// `indent` spaces a level, "key": value, empty containers as {} and [],
// numbers as its dtoa writes them, invalid UTF-8 replaced by U+FFFD), so
// either may read or write the files.
class JsonWriter {
 public:
  explicit JsonWriter(std::string* out, int indent = 2) : out_(out), indent_(indent) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // The key of the next value in the current object.
  void Key(std::string_view key);

  void String(std::string_view s);
  // A finite number as nlohmann writes a double (164.0, 0.333333, 1e-06);
  // NaN and infinities as null.
  void Number(double x);
  void Int(int64_t x);
  void UInt(uint64_t x);
  void Bool(bool b);
  void Null();

 private:
  void Open(char bracket);
  void Close(char bracket);
  // Before a value: the separator and indentation its container needs.
  void BeforeValue();
  void Newline(size_t depth);

  std::string* out_;
  int indent_;
  // Per open container: whether it has a value yet.
  std::vector<bool> has_value_;
  bool after_key_ = false;
};

// `s` as a JSON string literal (quotes included), as JsonWriter writes it.
void AppendJsonString(std::string* out, std::string_view s);
// `x` as nlohmann::json writes a double.
void AppendJsonNumber(std::string* out, double x);

}  // namespace dlsched::report
