// The report groups rows by name in time linear in the rows: FirstSeen
// hashes each name a bounded number of times (a search of the names seen
// so far, as before, compares each new name with all of them), and the
// pages of many distinct names come out whole.
#include "dlsched/report/first_seen.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/report/html.h"
#include "dlsched/report/run_data.h"
#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

using testing::TempDir;
using testing::WriteFile;

// std::hash, counting its calls.
struct CountingHash {
  int64_t* calls;
  size_t operator()(std::string_view s) const {
    ++*calls;
    return std::hash<std::string_view>()(s);
  }
};

TEST(FirstSeenTest, NumbersNamesInOrderWithBoundedWorkPerName) {
  constexpr int kNames = 20'000;
  std::vector<std::string> names;
  for (int i = 0; i < kNames; ++i) names.push_back(fmt::format("node-{}", kNames - i));
  int64_t calls = 0;
  FirstSeen<CountingHash> seen(CountingHash{&calls});
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kNames; ++i) ASSERT_EQ(seen.Number(names[i]), static_cast<size_t>(i));
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kNames));
  EXPECT_EQ(seen.names().front(), names.front());
  EXPECT_EQ(seen.names().back(), names.back());
  EXPECT_TRUE(seen.Seen("node-1"));
  EXPECT_FALSE(seen.Seen("node-0"));
  // One hash a lookup, and each name hashed again when the table grows
  // (about twice in all): linear. A search per row would make 2 * 10^8
  // comparisons here.
  EXPECT_LE(calls, 3 * kNames + 3 * kNames + 1);
}

// A run on 5,000 nodes and a sweep of 5,000 profiles: every name arrives,
// in order (the Gantt chart keeps the first nodes by name; the sweep's
// legend lists every profile). These took 12-37 s and over a minute at
// 100,000 names.
TEST(FirstSeenTest, ManyNodesAndProfilesRenderWhole) {
  constexpr int kNames = 5000;
  TempDir tmp;
  testing::WriteFixtureRun(tmp.path() / "run", "fifo");
  std::string allocations = "node,job,start,end,tasks,gpus\n";
  for (int i = 0; i < kNames; ++i) {
    allocations += fmt::format("node-{},job-1,{},{},1,1\n", kNames - i, i, i + 10);
  }
  WriteFile(tmp.path() / "run" / "allocations.csv", allocations);
  auto run = LoadReport(std::vector<std::string>{(tmp.path() / "run").string()});
  ASSERT_TRUE(run) << run.error().message;
  const std::string page = RenderHtml(*run, {});
  EXPECT_NE(
      page.find(fmt::format("Showing the first {} of {} nodes by name.", kMaxGanttNodes, kNames)),
      std::string::npos);
  EXPECT_NE(page.find(">node-1<"), std::string::npos);

  std::string sweep = "cell,cells,profile,load,seed,status,total,completed,jct_mean\n";
  for (int i = 0; i < kNames; ++i) {
    for (double load : {1.0, 2.0}) {
      sweep += fmt::format("{},{},p{},{},,all done,3,3,{}\n", 2 * i + (load > 1), 2 * kNames,
                           kNames - i, load, 100 + i);
    }
  }
  WriteFile(tmp.path() / "sweep" / "sweep.csv", sweep);
  auto dirs = LoadReport(std::vector<std::string>{(tmp.path() / "sweep").string()});
  ASSERT_TRUE(dirs) << dirs.error().message;
  const SweepData& data = *(*dirs)[0].sweep;
  ASSERT_EQ(data.points.size(), static_cast<size_t>(2 * kNames));
  EXPECT_EQ(data.points.front().profile, fmt::format("p{}", kNames));  // the first row's
  EXPECT_EQ(data.points.back().profile, "p1");
  const std::string html = RenderHtml(*dirs, {});
  for (int i : {1, kNames / 2, kNames}) {
    EXPECT_NE(html.find(fmt::format("p{} at load 2: ", i)), std::string::npos) << i;
  }
}

}  // namespace
}  // namespace dlsched::report
