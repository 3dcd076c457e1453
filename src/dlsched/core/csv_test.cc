#include "dlsched/core/csv.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dlsched::core {
namespace {

std::vector<std::string> Fields(const CsvReader& csv) {
  return {csv.fields().begin(), csv.fields().end()};
}

// The options of config/'s files and of report/'s, on the same text.
TEST(CoreCsvReaderTest, QuotesAreReadOrRefusedAsTheCallerChooses) {
  const std::string text =
      "\xEF\xBB\xBF"
      "a,b\r\n\r\n1,\"x,\"\"y\"\"\n z\"\r\n";
  std::istringstream quoted(text);
  CsvReader q(quoted, {.quotes = true});
  ASSERT_TRUE(q.Next());
  EXPECT_EQ(Fields(q), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(q.Next());  // a blank line is an empty record
  EXPECT_EQ(Fields(q), (std::vector<std::string>{""}));
  ASSERT_TRUE(q.Next());
  EXPECT_EQ(q.fault(), CsvFault::kNone);
  EXPECT_EQ(Fields(q), (std::vector<std::string>{"1", "x,\"y\"\n z"}));
  EXPECT_EQ(q.line_no(), 3);
  EXPECT_FALSE(q.Next());

  std::istringstream plain(text);
  CsvReader p(plain, {.skip_blank_lines = true, .cr_ends_every_line = true});
  ASSERT_TRUE(p.Next());
  EXPECT_EQ(Fields(p), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(p.Next());  // the blank line is skipped; the quote is a fault
  EXPECT_EQ(p.line_no(), 3);
  EXPECT_EQ(p.fault(), CsvFault::kQuote);
  EXPECT_TRUE(p.fields().empty());
  ASSERT_TRUE(p.Next());
  EXPECT_EQ(p.line_no(), 4);
  EXPECT_EQ(p.fault(), CsvFault::kQuote);
  EXPECT_FALSE(p.Next());
}

TEST(CoreCsvReaderTest, CapsAndFaults) {
  std::istringstream big("a,b\n1,2\n");
  CsvReader capped(big, {.max_line_bytes = 3, .max_bytes = 6});
  ASSERT_TRUE(capped.Next());
  EXPECT_FALSE(capped.TooLong());
  EXPECT_FALSE(capped.Next());
  EXPECT_TRUE(capped.TooLarge());

  std::istringstream open("a\n\"b\n");
  CsvReader unclosed(open, {.quotes = true});
  ASSERT_TRUE(unclosed.Next());
  ASSERT_TRUE(unclosed.Next());
  EXPECT_EQ(unclosed.fault(), CsvFault::kUnclosedQuote);
  EXPECT_EQ(unclosed.fault_line(), 2);
}

}  // namespace
}  // namespace dlsched::core
