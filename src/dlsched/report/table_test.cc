#include "dlsched/report/table.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The per-job part of SampleRun: numbers right-aligned under their headers,
// "-" for times that never happened and for the stuck job's JCT and queue
// (it never started), the stuck job flagged, the reason unpadded last.
TEST(FormatTableTest, JobTableIsAligned) {
  const metrics::RunInput in = testing::SampleRun();
  const std::string table = FormatTable(metrics::Summarize(in), in);
  const size_t split = table.find("\n\n");
  ASSERT_NE(split, std::string::npos);
  const std::string jobs = table.substr(split + 2);
  // The rule spans every column: widths 8+15+6+5+5+5+5+7+53 plus 8 gaps of 2.
  const std::string rule = std::string(125, '-') + "\n";
  const std::string expected =
      "name      state            submit  start    end    JCT  queue  workers  reason\n" + rule +
      "resnet-a  Completed           0.0   12.5  100.0  100.0   12.5        4  -\n"
      "vgg,b     STUCK (Waiting)    30.0      -      -      -      -        0  waiting: needs "
      "\"4 gpu\" on one node, largest free is 2\n";
  EXPECT_EQ(jobs, expected);
}

// Key/value rows: values start in one column; utilisation per resource as
// percentages (gpu 75% allocated, 25% effective: see outputs_test).
TEST(FormatTableTest, SummaryRows) {
  const metrics::RunInput in = testing::SampleRun();
  const std::string table = FormatTable(metrics::Summarize(in), in);
  const std::string summary = table.substr(0, table.find("\n\n") + 1);
  const std::vector<std::string> lines = Lines(summary);
  ASSERT_FALSE(lines.empty());

  const size_t value_col = lines[0].find("kod2");
  ASSERT_NE(value_col, std::string::npos);
  for (const auto& line : lines) {
    ASSERT_GT(line.size(), value_col) << line;
    EXPECT_NE(line[value_col], ' ') << line;
    EXPECT_EQ(line[value_col - 1], ' ') << line;
  }
  EXPECT_NE(summary.find("2 total, 1 completed, 0 failed, 1 stuck\n"), std::string::npos);
  EXPECT_NE(summary.find("yes (stuck jobs: 1)"), std::string::npos);
  EXPECT_NE(summary.find(">= 100.0 s\n"), std::string::npos);
  EXPECT_NE(summary.find("util nvidia.com/gpu"), std::string::npos);
  EXPECT_NE(summary.find("75.0% allocated, 25.0% effective\n"), std::string::npos);
  EXPECT_NE(summary.find("25.0% allocated, 12.5% effective\n"), std::string::npos);  // cpu
  // The stuck job counts to the end: JCT mean (100 + 70) / 2 as a bound.
  EXPECT_NE(summary.find(">= 85.0 s\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("1 jobs did not complete"), std::string::npos);
  EXPECT_NE(summary.find(">= 2.000 (JCT / ideal, n=1)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("Jain's index"), std::string::npos);
  EXPECT_NE(summary.find("scale events"), std::string::npos);
  EXPECT_NE(summary.find("preemptions"), std::string::npos);
}

TEST(FormatTableTest, EmptyRun) {
  const metrics::RunInput in;
  const std::string table = FormatTable(metrics::Summarize(in), in);
  EXPECT_NE(table.find("0 total, 0 completed, 0 failed, 0 stuck"), std::string::npos);
  EXPECT_TRUE(table.ends_with("(no jobs)\n"));
  EXPECT_EQ(table.find("nan"), std::string::npos);
  EXPECT_EQ(table.find("deadlocked"), std::string::npos);
}

// A reason with a newline stays on the job's line.
TEST(FormatTableTest, ReasonKeptOnOneLine) {
  metrics::RunInput in = testing::SampleRun();
  in.jobs[1].reason = "first\nsecond";
  const std::string table = FormatTable(metrics::Summarize(in), in);
  EXPECT_NE(table.find("first second\n"), std::string::npos);
}

}  // namespace
}  // namespace dlsched::report
