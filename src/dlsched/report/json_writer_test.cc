#include "dlsched/report/json_writer.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace dlsched::report {
namespace {

std::string Num(double x) {
  std::string out;
  AppendJsonNumber(&out, x);
  return out;
}

std::string Str(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

std::string Nlohmann(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Each layout of nlohmann's dtoa (format_buffer with kMinExp -4, kMaxExp
// 15), worked by hand: digits then zeros and ".0" up to 15 integer digits,
// a point inside the digits, "0." and up to 3 zeros, else d.ddde+XX.
TEST(JsonNumberTest, LayoutsAsNlohmann) {
  const std::pair<double, const char*> cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {164.0, "164.0"},
      {-3.25, "-3.25"},
      {0.333333, "0.333333"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {0.000015, "1.5e-05"},
      {1e-6, "1e-06"},
      {123456789012345.0, "123456789012345.0"},
      {1e15, "1e+15"},
      {1e16, "1e+16"},
      {12345678901234.5, "12345678901234.5"},
      {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"},
  };
  for (const auto& [x, text] : cases) {
    EXPECT_EQ(Num(x), text) << x;
    EXPECT_EQ(Num(x), Nlohmann(x)) << x;
  }
  EXPECT_EQ(Num(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(Num(std::numeric_limits<double>::infinity()), "null");
}

// Over many magnitudes, the text reads back as the same double. Its digits
// are the shortest that do (std::to_chars); nlohmann's grisu2 sometimes
// gives one digit more, or another last digit of the same length, which
// read back the same.
TEST(JsonNumberTest, RandomValuesReadBackAsNlohmanns) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-10, 10);
  std::uniform_int_distribution<int> exponent(-12, 20);
  for (int i = 0; i < 20000; ++i) {
    double x = mantissa(rng) * std::pow(10.0, exponent(rng));
    if (i % 3 == 0) x = std::round(x * 1e6) / 1e6;  // as RoundForOutput leaves them
    const std::string ours = Num(x);
    const std::string theirs = Nlohmann(x);
    EXPECT_EQ(nlohmann::json::parse(ours).get<double>(), x) << ours;
    EXPECT_EQ(nlohmann::json::parse(theirs).get<double>(), x) << theirs;
    EXPECT_LE(ours.size(), theirs.size()) << ours << " " << theirs;
    // The same layout: a point, an exponent, or both, where nlohmann puts them.
    EXPECT_EQ(ours.find('e') == std::string::npos, theirs.find('e') == std::string::npos) << x;
  }
}

TEST(JsonStringTest, EscapesAsNlohmann) {
  const std::string cases[] = {
      "plain",
      "quote \" and backslash \\",
      "controls \b\f\n\r\t \x01\x1f\x7f",
      std::string("nul \0 inside", 12),
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80",  // 2-, 3- and 4-byte characters
      "bad \xff byte",
      "lone \x80 continuation",
      "overlong \xC0\xAF and \xE0\x80\xAF",
      "surrogate \xED\xA0\x80",
      "above \xF4\x90\x80\x80 max",
      "broken \xE2\x28\xA1 three",
      "cut at the end \xE2\x82",
      "\xF0\x9F\x98",
  };
  for (const std::string& s : cases) EXPECT_EQ(Str(s), Nlohmann(s)) << s;
  EXPECT_EQ(Str("bad \xff byte"), "\"bad \xEF\xBF\xBD byte\"");
}

TEST(JsonStringTest, RandomBytesMatchNlohmann) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 12);
  for (int i = 0; i < 20000; ++i) {
    std::string s(static_cast<size_t>(length(rng)), '\0');
    for (char& c : s) c = static_cast<char>(byte(rng));
    EXPECT_EQ(Str(s), Nlohmann(s));
  }
}

// Longer strings, mostly printable with escapes, UTF-8 and malformed bytes
// among them: the runs copied as they are end where they should.
TEST(JsonStringTest, MixedRunsMatchNlohmann) {
  const std::string alphabet[] = {"a",           "Z",
                                  " ",           "~",
                                  "\x7f",        "\"",
                                  "\\",          "\n",
                                  "\t",          "\x01",
                                  "\x1f",        "\xC3",
                                  "\xC3\xA9",    "\xE2\x82\xAC",
                                  "\xE2",        "\xF0\x9F\x98\x80",
                                  "\xF0\x9F",    "\xFF",
                                  "\xED\xA0\x80"};
  std::mt19937 rng(13);
  std::uniform_int_distribution<size_t> pick(0, std::size(alphabet) - 1);
  std::uniform_int_distribution<int> length(0, 40);
  std::uniform_int_distribution<int> plain(0, 3);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (int n = length(rng); n > 0; --n) s += plain(rng) > 0 ? "abc" : alphabet[pick(rng)];
    EXPECT_EQ(Str(s), Nlohmann(s));
  }
}

// Nesting, separators and empty containers as dump(2) writes them.
TEST(JsonWriterTest, LayoutAsDump) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("a");
  w.Int(1);
  w.Key("empty object");
  w.BeginObject();
  w.EndObject();
  w.Key("list");
  w.BeginArray();
  w.Number(0.5);
  w.Null();
  w.BeginArray();
  w.EndArray();
  w.BeginObject();
  w.Key("b");
  w.Bool(false);
  w.EndObject();
  w.EndArray();
  w.Key("s");
  w.String("x");
  w.EndObject();
  nlohmann::ordered_json j;
  j["a"] = 1;
  j["empty object"] = nlohmann::ordered_json::object();
  j["list"] = {0.5, nullptr, nlohmann::ordered_json::array(), {{"b", false}}};
  j["s"] = "x";
  EXPECT_EQ(out, j.dump(2));
}

}  // namespace
}  // namespace dlsched::report
