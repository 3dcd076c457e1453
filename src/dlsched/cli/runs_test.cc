// RunAll's threads: whatever a worker throws (out of memory above all)
// reaches the calling thread, which main's one handler reports; threads
// that cannot be created leave the runs to those that could.
#include "dlsched/cli/runs.h"

#include <pthread.h>

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/cli/inputs.h"
#include "dlsched/config/specs.h"
#include "dlsched/sim/simulator.h"

namespace dlsched::cli {
namespace {

class RunAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = config::LoadCluster(DLSCHED_SOURCE_DIR "/examples/cluster-3node.yaml");
    ASSERT_TRUE(cluster) << cluster.error().message;
    cluster_ = std::move(*cluster);
    auto workload = sim::LoadWorkload(DLSCHED_SOURCE_DIR "/examples/workload-small.yaml");
    ASSERT_TRUE(workload) << workload.error().message;
    workload_ = std::move(*workload);
    auto engine = LoadEngine("gang-binpack");
    ASSERT_TRUE(engine) << engine.error().message;
    engine_ = std::move(*engine);
  }

  std::vector<RunRequest> Requests(size_t n) {
    RunRequest r;
    r.cluster = &cluster_;
    r.workload = &workload_;
    r.engine = engine_.get();
    return std::vector<RunRequest>(n, r);
  }

  core::ClusterSpec cluster_;
  config::WorkloadSpec workload_;
  std::unique_ptr<engine::Engine> engine_;
};

// An allocation that fails on a worker thread used to end the process
// (std::terminate, exit 134); it now reaches the caller as std::bad_alloc.
TEST_F(RunAllTest, OutOfMemoryOnAWorkerReachesTheCaller) {
  const StopSignals signals;  // RunAll stops the other runs through its flag
  auto runs = Requests(4);
  bool interrupted = false;
  const OnResult fail_second = [](size_t index, core::Result<sim::SimResult>&&) {
    if (index == 1) throw std::bad_alloc();
  };
  EXPECT_THROW(RunAll(runs, {.threads = 2}, &interrupted, fail_second), std::bad_alloc);
}

// The progress display runs the one run of `simulate` on a thread of its
// own: an allocation failing inside the simulation there is the same.
TEST_F(RunAllTest, OutOfMemoryInsideASimulationWithProgressReachesTheCaller) {
  const StopSignals signals;
  auto runs = Requests(1);
  runs[0].options.on_plan = [](core::Time, const engine::Plan&) { throw std::bad_alloc(); };
  bool interrupted = false;
  testing::internal::CaptureStderr();  // the progress line
  EXPECT_THROW(RunAll(runs, {.threads = 1, .show_progress = true}, &interrupted), std::bad_alloc);
  testing::internal::GetCapturedStderr();
}

// Any other exception too, with every other run stopped and joined first.
TEST_F(RunAllTest, AnyExceptionOnAWorkerReachesTheCaller) {
  const StopSignals signals;
  auto runs = Requests(6);
  bool interrupted = false;
  const OnResult fail = [](size_t index, core::Result<sim::SimResult>&&) {
    if (index % 2 == 0) throw std::runtime_error("boom");
  };
  EXPECT_THROW(RunAll(runs, {.threads = 3}, &interrupted, fail), std::runtime_error);
}

// Thread creation fails (here: every new thread asks for a stack larger
// than the machine's memory; in the field, `--threads 600` under a memory
// limit): the runs go to the threads that started, or to the caller's.
// This used to throw std::system_error, or end in std::terminate when some
// threads had started.
TEST_F(RunAllTest, ThreadsThatCannotStartLeaveTheRunsToTheOthers) {
  const StopSignals signals;
  pthread_attr_t old_attr;
  ASSERT_EQ(pthread_getattr_default_np(&old_attr), 0);
  pthread_attr_t huge;
  ASSERT_EQ(pthread_attr_init(&huge), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&huge, size_t{1} << 46), 0);  // 64 TiB
  ASSERT_EQ(pthread_setattr_default_np(&huge), 0);
  auto runs = Requests(5);
  bool interrupted = true;
  std::vector<core::Result<sim::SimResult>> results;
  std::string error;
  try {
    results = RunAll(runs, {.threads = 4}, &interrupted);
  } catch (const std::exception& e) {
    error = e.what();
  }
  ASSERT_EQ(pthread_setattr_default_np(&old_attr), 0);
  pthread_attr_destroy(&huge);
  pthread_attr_destroy(&old_attr);
  ASSERT_EQ(error, "");
  EXPECT_FALSE(interrupted);
  ASSERT_EQ(results.size(), 5u);
  for (const auto& r : results) {
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->run.jobs.size(), workload_.jobs.size());
  }
}

}  // namespace
}  // namespace dlsched::cli
