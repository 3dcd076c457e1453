// Merging a sweep's cells (what `dlsched sweep --cell N` leaves) into
// sweep.csv, and the report reading such a directory.
#include "dlsched/report/sweep.h"

#include <gtest/gtest.h>

#include "dlsched/report/output_dir.h"
#include "dlsched/report/run_data.h"
#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteFile;

constexpr const char* kHeader = "cell,cells,profile,load,seed,status,jct_mean,jct_p95\n";

void WriteCell(const fs::path& dir, const std::string& sub, const std::string& row) {
  WriteFile(dir / "cells" / sub / "cell.csv", kHeader + row);
}

TEST(SweepCellsTest, MergesInCellOrderWhateverTheDirectories) {
  TempDir tmp;
  const fs::path d = tmp.path() / "s";
  // Directory names sort otherwise than the cells: the `cell` column rules.
  WriteCell(d, "b/load-1", "0,3,b,1,,all done,10,20\n");
  WriteCell(d, "a/load-2", "2,3,a,2,,all done,30,\"4,0\"\n");
  WriteCell(d, "a/load-1", "1,3,a,1,,partial: all done,20,40\n");
  // A cell still being written (a temporary directory) is not read.
  WriteFile(d / "cells/a/.load-3.dlsched-tmp-7/cell.csv", std::string(kHeader) + "garbage\n");
  auto merged = MergeSweepCells(d.string());
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(*merged, std::string(kHeader) +
                         "0,3,b,1,,all done,10,20\n"
                         "1,3,a,1,,partial: all done,20,40\n"
                         "2,3,a,2,,all done,30,\"4,0\"\n");
  // Such a directory may be replaced by the next run.
  EXPECT_TRUE(CheckOutputDir(d.string()).has_value());
}

TEST(SweepCellsTest, RefusesIncompleteOrMixedCells) {
  TempDir tmp;
  const fs::path d = tmp.path() / "s";
  WriteCell(d, "x", "0,4,a,1,,all done,10,20\n");
  WriteCell(d, "y", "2,4,a,2,,all done,10,20\n");
  EXPECT_EQ(MergeSweepCells(d.string()).error().message,
            (d / "cells").string() + ": 2 of 4 cells have no cell.csv yet: 1, 3");
  WriteCell(d, "z", "2,4,a,2,,all done,10,20\n");
  EXPECT_NE(MergeSweepCells(d.string()).error().message.find(": cell 2 again (also in "),
            std::string::npos);
  fs::remove_all(d / "cells/z");
  WriteCell(d, "w", "1,5,a,1,,all done,10,20\n");
  EXPECT_NE(MergeSweepCells(d.string()).error().message.find("a grid of "), std::string::npos);
  fs::remove_all(d / "cells/w");
  WriteFile(d / "cells/v/cell.csv", "cell,cells,profile,load\n1,4,a,1\n");
  EXPECT_NE(MergeSweepCells(d.string()).error().message.find("header differs"), std::string::npos);
  WriteFile(d / "cells/v/cell.csv", std::string(kHeader) + "9,4,a,1,,all done,10,20\n");
  EXPECT_EQ(
      MergeSweepCells(d.string()).error().message,
      (d / "cells/v/cell.csv").string() + ":2: cell: expected an integer from 0 to 3, got '9'");
  WriteFile(d / "cells/v/cell.csv", std::string(kHeader));
  EXPECT_NE(MergeSweepCells(d.string()).error().message.find("expected the header and one row"),
            std::string::npos);
  fs::remove_all(d / "cells");
  fs::create_directories(d / "cells");
  EXPECT_NE(MergeSweepCells(d.string()).error().message.find("no cell has finished"),
            std::string::npos);
}

TEST(SweepCellsTest, ReportReadsCellsWithoutSweepCsv) {
  TempDir tmp;
  const fs::path d = tmp.path() / "s";
  WriteCell(d, "a/load-1/seed-1", "0,4,a,1,1,all done,10,20\n");
  WriteCell(d, "a/load-1/seed-2", "1,4,a,1,2,all done,30,40\n");
  WriteCell(d, "a/load-2/seed-1", "2,4,a,2,1,all done,50,60\n");
  WriteCell(d, "a/load-2/seed-2", "3,4,a,2,2,all done,70,80\n");
  auto dir = LoadReportDir(d.string());
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  ASSERT_TRUE(dir->sweep.has_value());
  ASSERT_EQ(dir->sweep->points.size(), 2u);
  // Averaged over the seeds.
  EXPECT_EQ(dir->sweep->points[0].load, 1);
  EXPECT_EQ(dir->sweep->points[0].Find("jct_mean")->mean, 20);
  EXPECT_EQ(dir->sweep->points[1].Find("jct_p95")->mean, 70);
  EXPECT_TRUE(dir->runs.empty());
  // Missing cells are an error naming them.
  fs::remove_all(d / "cells/a/load-2/seed-2");
  EXPECT_NE(LoadReportDir(d.string()).error().message.find("cells have no cell.csv yet: 3"),
            std::string::npos);
}

}  // namespace
}  // namespace dlsched::report
