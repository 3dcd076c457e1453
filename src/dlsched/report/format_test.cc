#include "dlsched/report/format.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>
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

// AppendNumber writes exactly what fmt::format("{}") writes for the rounded
// value (what the files held before it), whatever the double.
TEST(FormatNumberTest, SameBytesAsFmtFormat) {
  std::vector<double> xs = {0.0,
                            -0.0,
                            0.5,
                            1.0 / 3,
                            2.0 / 3,
                            1e15,
                            1e16,
                            1e17,
                            9007199254740992.0,
                            9007199254740993.0,
                            1e-5,
                            1e-6,
                            4e-7,
                            5e-7,
                            1e-7,
                            0.0001,
                            123456.0000005,
                            1e21,
                            1e300,
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest(),
                            std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
  for (int i = -20000; i <= 20000; ++i) {
    xs.push_back(i);
    xs.push_back(i + 0.5);
    xs.push_back(i / 3.0);
    xs.push_back(i * 0.1);
  }
  for (int e = -30; e <= 30; ++e) {
    for (double m : {1.0, 1.5, 2.0 / 3, 9.999999, 7.0}) xs.push_back(m * std::pow(10.0, e));
  }
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> time(0, 1e7);
  std::uniform_real_distribution<double> fraction(0, 1);
  for (int i = 0; i < 100000; ++i) {
    xs.push_back(time(rng));
    xs.push_back(fraction(rng));
    // Any bit pattern: every exponent, subnormals, NaNs.
    const uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    xs.push_back(d);
  }
  std::string appended = "x";
  for (double x : xs) {
    const std::string expected = fmt::format("{}", RoundForOutput(x));
    ASSERT_EQ(FormatNumber(x), expected) << x;
    appended.resize(1);
    AppendNumber(appended, x);
    ASSERT_EQ(appended, "x" + expected) << x;
  }
}

TEST(FormatNumberTest, AppendIntAsToString) {
  for (int64_t x : {int64_t{0}, int64_t{-1}, int64_t{42}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    std::string out = "x";
    AppendInt(out, x);
    EXPECT_EQ(out, "x" + std::to_string(x));
  }
}

TEST(CsvFieldTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("plain-name"), "plain-name");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField("\""), "\"\"\"\"");
  EXPECT_EQ(CsvField("\"\"a,\""), "\"\"\"\"\"a,\"\"\"");
  std::string out = "x,";
  AppendCsvField(out, "a,\"b\"");
  EXPECT_EQ(out, "x,\"a,\"\"b\"\"\"");
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
