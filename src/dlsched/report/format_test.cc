#include "dlsched/report/format.h"

#include <gtest/gtest.h>

namespace dlsched::report {
namespace {

TEST(FormatSecondsTest, OneDecimalAndNever) {
  EXPECT_EQ(FormatSeconds(0), "0.0");
  EXPECT_EQ(FormatSeconds(12.34), "12.3");
  EXPECT_EQ(FormatSeconds(99.96), "100.0");
  EXPECT_EQ(FormatSeconds(-0.01), "0.0");  // no "-0.0"
  EXPECT_EQ(FormatSeconds(core::kNever), "-");
}

TEST(FormatPercentTest, OneDecimal) {
  EXPECT_EQ(FormatPercent(0.4523), "45.2%");
  EXPECT_EQ(FormatPercent(1), "100.0%");
  EXPECT_EQ(FormatPercent(0), "0.0%");
}

// Machine-readable numbers keep 6 decimals in their shortest form.
TEST(FormatNumberTest, RoundedShortest) {
  EXPECT_EQ(FormatNumber(30), "30");
  EXPECT_EQ(FormatNumber(0.125), "0.125");
  EXPECT_EQ(FormatNumber(1.0 / 3), "0.333333");
  EXPECT_EQ(FormatNumber(2.0 / 3), "0.666667");
  EXPECT_EQ(FormatNumber(0.1 + 0.2), "0.3");  // 0.30000000000000004 rounds away
  EXPECT_EQ(FormatNumber(-1e-9), "0");        // and never "-0"
  EXPECT_EQ(FormatNumber(1234567.25), "1234567.25");
}

TEST(CsvFieldTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("plain-name"), "plain-name");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField("\""), "\"\"\"\"");
}

TEST(JobStateLabelTest, FlagsStuckJobs) {
  metrics::JobRecord job;
  job.final_phase = core::JobPhase::kCompleted;
  EXPECT_EQ(JobStateLabel(job), "Completed");
  job.final_phase = core::JobPhase::kWaiting;
  job.stuck = true;
  EXPECT_EQ(JobStateLabel(job), "STUCK (Waiting)");
  job.final_phase = core::JobPhase::kFailed;
  EXPECT_EQ(JobStateLabel(job), "STUCK (Failed)");
}

}  // namespace
}  // namespace dlsched::report
