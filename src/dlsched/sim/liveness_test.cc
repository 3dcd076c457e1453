// Liveness over generated workloads (testing/sim/liveness.h): every
// built-in profile and every profile file of examples/ (profile-*.yaml,
// ExampleProfileRuns) on kCases generated clusters and workloads each (50
// to 300 jobs, offered load 0.3 to 2, 2 to 64 nodes of 4 or 8 GPUs, with
// and without launch and checkpoint delays). In every run:
//   - every job that could start alone on the empty cluster completes
//     (k8s-default may leave jobs stuck only in a deadlock its run reports);
//   - no job is resized twice at one instant (a decision is never undone
//     at the instant it was taken: F-scheduling once flipped a job between
//     1 and 2 workers thousands of times at one instant);
//   - no job has more scale events than 2 + 2 x the arrivals and
//     completions of other jobs while it was in the system; under
//     F-scheduling's gain rule, plus the quiet instants (no arrival, no
//     completion) with a resize while it was, and those are bounded per
//     stretch between arrivals and completions by the total throughput the
//     jobs could reach (testing/sim/liveness.h).
// bench/liveness_bench.cc runs the same checks on 100,000 cases of 50 to
// 2,000 jobs (docs/performance.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dlsched/sim/test_util.h"
#include "sim/liveness.h"

namespace dlsched::sim {
namespace {

// Sizes are log-uniform; CI stops at 300 jobs to stay within a minute under
// the sanitizers (up to 2,000 it took 12 minutes), the benchmark sweep goes
// to 2,000.
constexpr int kCases = 96;
constexpr int kMinJobs = 50;
constexpr int kMaxJobs = 300;

class LivenessTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LivenessTest, EveryJobThatFitsCompletesAndNoDecisionIsUndone) {
  const engine::Engine engine = testing::MakeEngine(GetParam());
  const double min_gain = dlsched::testing::GainRuleOf(GetParam());
  int jobs = 0;
  for (int i = 0; i < kCases; ++i) {
    const dlsched::testing::LivenessCase c =
        dlsched::testing::DrawCase(static_cast<uint64_t>(i) + 1, kMinJobs, kMaxJobs);
    auto input = dlsched::testing::BuildCase(c);
    ASSERT_TRUE(input.has_value()) << c.Describe() << ": " << input.error().message;
    SimOptions options;
    options.timeline = false;
    dlsched::testing::ResizeCounter resizes;
    resizes.Hook(options);
    auto run = Simulate(input->cluster, input->workload, engine, options);
    ASSERT_TRUE(run.has_value()) << c.Describe() << ": " << run.error().message;
    const std::vector<std::string> bad =
        dlsched::testing::CheckLiveness(*input, engine, *run, resizes, min_gain);
    std::string all;
    for (size_t k = 0; k < bad.size() && k < 5; ++k) all += "\n  " + bad[k];
    EXPECT_TRUE(bad.empty()) << GetParam() << ", " << c.Describe() << ": " << bad.size()
                             << " violations" << all;
    jobs += c.jobs;
  }
  EXPECT_GT(jobs, kCases * kMinJobs);
}

INSTANTIATE_TEST_SUITE_P(BuiltinProfiles, LivenessTest,
                         ::testing::ValuesIn(dlsched::testing::BuiltinProfileRuns()),
                         [](const auto& info) { return testing::ProfileTestName(info.param); });
INSTANTIATE_TEST_SUITE_P(
    ExampleProfiles, LivenessTest,
    ::testing::ValuesIn(dlsched::testing::ExampleProfileRuns(DLSCHED_SOURCE_DIR)),
    [](const auto& info) { return testing::ProfileTestName(info.param); });

}  // namespace
}  // namespace dlsched::sim
