// What a command writes, dlsched reads: a command that would write a file
// (or run a workload) beyond the limits every load keeps refuses in one
// line with exit 2 and writes nothing. (The writers' round trips over
// generated inputs are sim/roundtrip_test.cc.)
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dlsched/cli/test_util.h"
#include "dlsched/report/format.h"
#include "dlsched/report/run_data.h"
#include "dlsched/report/sweep.h"
#include "dlsched/report/test_util.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;
using report::testing::WriteFile;
using testing::Ran;

class LoadsBackTest : public testing::CommandTest {
 protected:
  LoadsBackTest() : CommandTest("loads-back") {}
};

// Philly rows 10,000 years apart: `convert` used to write arrivals of
// 2.5e11 s (exit 0), which `simulate -t native:` then refused.
TEST_F(LoadsBackTest, ConvertRefusesArrivalsPastTheLimit) {
  WriteFile(tmp_ / "philly.csv",
            "timestamp,duration,num_gpus,cluster\n"
            "2017-10-03 14:00:00,100,1,vc\n"
            "9999-12-31 00:00:00,100,1,vc\n");
  for (const char* out : {"w.csv", "w.yaml"}) {
    Ran r = Dlsched(fmt::format("convert -t philly:{} --out {}", Path("philly.csv"), Path(out)));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "dlsched: " + Path("philly.csv") +
                         ": job 'philly-3': arrival (its timestamp less the earliest kept "
                         "row's): 251895175200 s is more than the limit of 1000000000 s (31.7 "
                         "years); keep a shorter span of the trace with --from and --until\n");
    EXPECT_FALSE(fs::exists(tmp_ / out));
  }
  // What convert writes of a carried trace loads back.
  for (const char* out : {"t.csv", "t.yaml"}) {
    Ran r =
        Dlsched(fmt::format("convert -t tiresias:data/tiresias/60_job.csv --out {}", Path(out)));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  Ran r = Dlsched(fmt::format("validate {}", Path("t.yaml")));
  EXPECT_EQ(r.code, 0) << r.err;
  r = Dlsched(fmt::format("simulate -c examples/cluster-2x4gpu.yaml -t native:{} -q --out {}",
                          Path("t.csv"), Path("run")));
  EXPECT_NE(r.code, 2) << r.err;
}

// A load factor divides every arrival: one that spreads them past the
// limit is refused before anything runs.
TEST_F(LoadsBackTest, SweepRefusesLoadsThatSpreadArrivalsPastTheLimit) {
  WriteFile(tmp_ / "w.yaml",
            "jobs:\n"
            "  - {name: a, arrival: 0, duration: 10, worker: {replicas: 1, resources: "
            "{nvidia.com/gpu: 1}}}\n"
            "  - {name: b, arrival: 10000000, duration: 10, worker: {replicas: 1, resources: "
            "{nvidia.com/gpu: 1}}}\n");
  Ran r = Dlsched(fmt::format(
      "sweep -c examples/cluster-2x4gpu.yaml -w {} --profiles gang-binpack --load 1,0.001 "
      "--out {} -q",
      Path("w.yaml"), Path("sweep")));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "dlsched: --load 0.001: " + Path("w.yaml") +
                       ": job 'b': arrival: 10000000000 s is more than the limit of 1000000000 s "
                       "(31.7 years) (the factor divides every arrival)\n");
  EXPECT_FALSE(fs::exists(tmp_ / "sweep"));
  r = Dlsched(fmt::format(
      "sweep -c examples/cluster-2x4gpu.yaml -w {} --profiles gang-binpack --load 1,0.01 "
      "--out {} -q",
      Path("w.yaml"), Path("sweep")));
  EXPECT_EQ(r.code, 0) << r.err;
}

// A sweep's cells (with --keep-runs: a run directory each) load back as
// `report` reads them, each with the jobs of its generated workload at its
// load (every arrival divided by the factor); and `sweep --merge` of them
// is the sweep.csv the sweep wrote.
TEST_F(LoadsBackTest, SweepCellsLoadBackWithTheirJobs) {
  WriteFile(tmp_ / "c.yaml",
            "nodes:\n  - {name: n, count: 3, resources: {cpu: 64, memory: 256Gi, "
            "nvidia.com/gpu: 8}}\n");
  const std::string gen = "--jobs 12 --mean-interarrival 40 --max-steps 20000";
  Ran r =
      Dlsched(fmt::format("sweep -c {} {} --seeds 1,2,3 -p gang-binpack,kod2 --load 0.5,2 "
                          "--keep-runs -q -o {}",
                          Path("c.yaml"), gen, Path("sweep")));
  ASSERT_EQ(r.code, 0) << r.err;
  auto whole = report::LoadReportDir(Path("sweep"));
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  ASSERT_TRUE(whole->sweep.has_value());
  int cells = 0;
  for (const char* seed : {"1", "2", "3"}) {
    const std::string w = Path(fmt::format("g{}.yaml", seed));
    ASSERT_EQ(Dlsched(fmt::format("generate {} --seed {} -o {}", gen, seed, w)).code, 0);
    auto workload = sim::LoadWorkload(w);
    ASSERT_TRUE(workload.has_value()) << workload.error().message;
    for (const char* profile : {"gang-binpack", "kod2"}) {
      for (const double load : {0.5, 2.0}) {
        SCOPED_TRACE(fmt::format("seed {} {} load {}", seed, profile, load));
        const fs::path cell = tmp_ / "sweep/cells" / profile /
                              fmt::format("load-{}", report::FormatNumber(load)) /
                              fmt::format("seed-{}", seed);
        auto back = report::LoadReportDir(cell.string());
        ASSERT_TRUE(back.has_value()) << back.error().message;
        ASSERT_EQ(back->runs.size(), 1u);
        const report::RunData& run = back->runs[0];
        ASSERT_TRUE(run.summary && run.jobs && run.utilization && run.events && run.allocations);
        std::map<std::string, double> want;
        for (const auto& job : workload->jobs) {
          want[job.name] = report::RoundForOutput(job.submit_time / load);
        }
        std::map<std::string, double> got;
        for (const report::JobRow& row : *run.jobs) got[row.name] = row.submit;
        EXPECT_EQ(got, want);
        EXPECT_EQ(run.summary->figures.total_jobs, static_cast<int>(want.size()));
        ++cells;
      }
    }
  }
  EXPECT_EQ(cells, 12);
  const std::string csv = report::testing::ReadFile(tmp_ / "sweep/sweep.csv");
  auto merged = report::MergeSweepCells(Path("sweep"));
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(*merged, csv);
}

}  // namespace
}  // namespace dlsched::cli
