// What a command holds at once: a sweep the workloads of the cells running,
// not of its grid; `snapshot` an answer of at most kMaxSnapshotBytes.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dlsched/cli/inputs.h"
#include "dlsched/cli/runs.h"
#include "dlsched/cli/snapshot.h"
#include "dlsched/cli/snapshot_command.h"
#include "dlsched/cli/snapshot_server.h"
#include "dlsched/cli/sweep.h"
#include "dlsched/config/specs.h"
#include "dlsched/core/limits.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {
namespace {

namespace fs = std::filesystem;

core::ClusterSpec Cluster() {
  auto c = config::LoadCluster(DLSCHED_SOURCE_DIR "/examples/cluster-3node.yaml");
  EXPECT_TRUE(c) << c.error().message;
  return c ? *c : core::ClusterSpec{};
}

// A sweep's runs: no cell holds a workload made before it starts, but the
// file's own at load 1. `sweep --jobs 1000000` used to build every scaled
// workload (1.1 GB each) before the first cell ran.
TEST(SweepBoundsTest, CellsMakeTheirWorkloadWhenTheyStart) {
  SweepGrid grid;
  grid.profiles = {"fifo", "las"};
  grid.loads = {0.5, 1, 2};
  grid.seeds = {7, 8};
  std::vector<SweepGrid::Cell> cells;
  for (size_t i = 0; i < grid.size(); ++i) cells.push_back(grid.At(i));
  const core::ClusterSpec cluster = Cluster();
  auto fifo = LoadEngine("fifo");
  auto las = LoadEngine("las");
  ASSERT_TRUE(fifo && las);
  const std::vector<const engine::Engine*> engines = {fifo->get(), las->get()};
  sim::GenerateOptions gen;
  gen.jobs = 20;

  const std::vector<RunRequest> generated =
      CellRuns(grid, cells, {&cluster, 1}, engines, nullptr, gen);
  ASSERT_EQ(generated.size(), 12u);
  for (size_t i = 0; i < generated.size(); ++i) {
    const RunRequest& r = generated[i];
    EXPECT_EQ(r.workload, nullptr) << i;
    ASSERT_TRUE(r.make_workload) << i;
    EXPECT_EQ(r.jobs, 20u);
    EXPECT_EQ(r.engine, engines[cells[i].profile]);
  }
  // What a cell makes is what the grid used to build for it: the seed's
  // workload with its arrivals scaled.
  sim::GenerateOptions seed8 = gen;
  seed8.seed = 8;
  const config::WorkloadSpec expected = ScaleArrivals(*sim::GenerateWorkload(seed8), 2);
  const SweepGrid::Cell& c = cells[5];  // fifo, load 2, seed 8
  ASSERT_EQ(c.load, 2u);
  ASSERT_EQ(c.seed, 1u);
  auto made = generated[5].make_workload();
  ASSERT_TRUE(made) << made.error().message;
  ASSERT_EQ(made->jobs.size(), expected.jobs.size());
  for (size_t j = 0; j < expected.jobs.size(); ++j) {
    EXPECT_EQ(made->jobs[j].name, expected.jobs[j].name);
    EXPECT_EQ(made->jobs[j].submit_time, expected.jobs[j].submit_time);
  }

  // From a file: the base itself at load 1, a scaled copy made per cell
  // elsewhere.
  grid.seeds.clear();
  cells.clear();
  for (size_t i = 0; i < grid.size(); ++i) cells.push_back(grid.At(i));
  const config::WorkloadSpec base = *sim::GenerateWorkload(gen);
  const std::vector<RunRequest> from_file =
      CellRuns(grid, cells, {&cluster, 1}, engines, &base, gen);
  ASSERT_EQ(from_file.size(), 6u);
  for (size_t i = 0; i < from_file.size(); ++i) {
    const bool one = grid.loads[cells[i].load] == 1;
    EXPECT_EQ(from_file[i].workload, one ? &base : nullptr) << i;
    EXPECT_EQ(static_cast<bool>(from_file[i].make_workload), !one) << i;
  }
  auto half = from_file[0].make_workload();
  ASSERT_TRUE(half);
  EXPECT_EQ(half->jobs.back().submit_time, base.jobs.back().submit_time / 0.5);
}

// RunAll makes each run's workload on the thread that runs it and frees it
// before the next: at most `threads` exist at once.
TEST(SweepBoundsTest, MadeWorkloadsLiveOnlyWhileTheirRunRuns) {
  const StopSignals signals;
  const core::ClusterSpec cluster = Cluster();
  auto engine = LoadEngine("gang-binpack");
  ASSERT_TRUE(engine);
  sim::GenerateOptions gen;
  gen.jobs = 10;
  std::atomic<int> live{0};
  std::atomic<int> most{0};
  std::vector<RunRequest> runs(8);
  for (RunRequest& r : runs) {
    r.cluster = &cluster;
    r.engine = engine->get();
    r.jobs = 10;
    r.make_workload = [&]() -> core::Result<config::WorkloadSpec> {
      const int now = ++live;
      for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
      }
      return sim::GenerateWorkload(gen);
    };
  }
  bool interrupted = false;
  int results = 0;
  RunAll(runs, {.threads = 2}, &interrupted, [&](size_t, core::Result<sim::SimResult>&& r) {
    EXPECT_TRUE(r) << r.error().message;
    --live;  // its workload is gone by now
    ++results;
  });
  EXPECT_EQ(results, 8);
  EXPECT_LE(most.load(), 2);
  EXPECT_GE(most.load(), 1);
}

// The answer is read to kMaxSnapshotBytes at most (a test lowers it); it
// used to be read whole, whatever its size.
TEST(SnapshotBoundsTest, TheAnswerIsCutAtTheLimit) {
  const std::string body = nlohmann::json{
      {"start", 0},
      {"cluster", "nodes:\n  - {name: n, resources: {cpu: 1}}\n"},
      {"workload",
       std::string(5000, '#') +
           "\njobs:\n"}}.dump();
  const std::string from = testing::SnapshotServer::Get().Serve("bounds", 200, body);
  const fs::path out = fs::path(::testing::TempDir()) / fmt::format("snap-{}", ::getpid());
  SnapshotArgs args;
  args.from = from;
  args.out = out.string();
  args.timeout = 10;
  EXPECT_EQ(args.max_response_bytes, kMaxSnapshotBytes);
  args.max_response_bytes = 1000;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(TakeSnapshot(args, 0, nullptr), 1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, fmt::format("dlsched: --from {0}: GET http://{0}/snapshot: the answer is longer "
                             "than 1000 bytes, the limit\n",
                             from));
  EXPECT_FALSE(fs::exists(out));
  // Under the limit it is read (and this one has no job to replay).
  args.max_response_bytes = body.size();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(TakeSnapshot(args, 0, nullptr), 1);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("no unfinished TrainingJob"),
            std::string::npos);
}

// The YAML `snapshot` writes must read back as input files: each of its
// cluster and workload at most core::kMaxInputBytes.
TEST(SnapshotBoundsTest, YamlThatWouldNotReadBackIsNotWritten) {
  const std::string cluster = "nodes:\n  - {name: n, resources: {cpu: 1}}\n";
  std::string workload(core::kMaxInputBytes - 6, '#');
  workload += "\njobs:\n";  // one byte over
  const std::string body = nlohmann::json{{"cluster", cluster}, {"workload", workload}}.dump();
  auto decoded = DecodeSnapshot(body, "x", "out");
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().message,
            fmt::format("--from x: /snapshot: its workload YAML has {} bytes; dlsched reads input "
                        "files of at most 64 MiB",
                        core::kMaxInputBytes + 1));
  workload.erase(0, 1);  // at the limit: read (and it has no job)
  auto at_limit = DecodeSnapshot(
      nlohmann::json{{"cluster", cluster}, {"workload", workload}}.dump(), "x", "out");
  ASSERT_FALSE(at_limit.has_value());
  EXPECT_NE(at_limit.error().message.find("no unfinished TrainingJob"), std::string::npos)
      << at_limit.error().message;
}

}  // namespace
}  // namespace dlsched::cli
