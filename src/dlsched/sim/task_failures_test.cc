// Task failures a workload schedules (`failures`): the job restarts from
// its last checkpoint or fails, by its role's restartPolicy and its
// backoffLimit, through the life cycle the operator shares
// (JobLifecycle::TaskFailed).
#include <gtest/gtest.h>

#include <string>

#include "dlsched/config/specs.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using core::Role;
using testing::MakeEngine;
using testing::Record;

core::ScheduledFailure FailAt(core::Time after, std::optional<int> exit_code,
                              bool evicted = false) {
  core::ScheduledFailure f;
  f.after = after;
  f.role = Role::kWorker;
  f.index = 0;
  f.failure.exit_code = exit_code;
  f.failure.disruption = evicted;
  return f;
}

// One 4-GPU node; job "a": one 1-GPU worker at 1 step/s, 100 steps, no
// delays, arriving at 0, with `policy` and the failures given.
SimResult RunOne(core::RestartPolicy policy, std::vector<core::ScheduledFailure> failures,
                 std::optional<int> backoff_limit = std::nullopt) {
  core::ClusterSpec cluster;
  cluster.nodes = {dlsched::testing::Node("node-0", 8000, dlsched::testing::GiB(32), 4)};
  config::WorkloadSpec w;
  core::JobSpec a = testing::GpuJob("a", 0, 1, 1, 1000, 1, 100);
  a.role(Role::kWorker).restart_policy = policy;
  a.failures = std::move(failures);
  a.backoff_limit = backoff_limit;
  w.jobs.push_back(a);
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(cluster, w, MakeEngine("gang-binpack"), options);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r ? std::move(*r) : SimResult{};
}

// t=0   a starts (1 worker, 1 step/s).
// t=30  worker-0 is evicted (30 steps, no checkpoint yet): a disruption
//       restarts the job whatever its policy, even Never; back to 0 steps,
//       relaunched in the same instant's cycle.
// t=130 a completes (100 steps from 30). One reallocation.
TEST(TaskFailuresTest, AnEvictionRestartsTheJobFromItsCheckpointEvenUnderNever) {
  const SimResult r = RunOne(core::RestartPolicy::kNever, {FailAt(30, std::nullopt, true)});
  const auto& a = Record(r, "a");
  EXPECT_EQ(a.final_phase, core::JobPhase::kCompleted);
  EXPECT_DOUBLE_EQ(a.completion, 130);
  EXPECT_EQ(a.reallocations, 1);
}

// t=30  worker-0 fails with exit code 1 under Never: a fails at once.
TEST(TaskFailuresTest, AFailureUnderNeverFailsTheJob) {
  const SimResult r = RunOne(core::RestartPolicy::kNever, {FailAt(30, 1)});
  const auto& a = Record(r, "a");
  EXPECT_EQ(a.final_phase, core::JobPhase::kFailed);
  EXPECT_DOUBLE_EQ(a.completion, 30);
  EXPECT_NE(a.reason.find("worker-0 failed with exit code 1; restartPolicy Never"),
            std::string::npos)
      << a.reason;
}

// backoffLimit 1 under OnFailure:
// t=30  exit code 1: the first failure, within the limit: restart (0 steps).
// t=80  exit code 1 again: a second restart would pass the limit: Failed.
// With backoffLimit 2 the second restarts too (0 steps at 80), and a
// completes at 180.
TEST(TaskFailuresTest, OnFailureRestartsUntilTheBackoffLimit) {
  {
    const SimResult r = RunOne(core::RestartPolicy::kOnFailure, {FailAt(30, 1), FailAt(80, 1)}, 1);
    const auto& a = Record(r, "a");
    EXPECT_EQ(a.final_phase, core::JobPhase::kFailed);
    EXPECT_DOUBLE_EQ(a.completion, 80);
    EXPECT_NE(a.reason.find("backoffLimit 1 reached"), std::string::npos) << a.reason;
  }
  const SimResult r = RunOne(core::RestartPolicy::kOnFailure, {FailAt(30, 1), FailAt(80, 1)}, 2);
  const auto& a = Record(r, "a");
  EXPECT_EQ(a.final_phase, core::JobPhase::kCompleted);
  EXPECT_DOUBLE_EQ(a.completion, 180);
  EXPECT_EQ(a.reallocations, 2);
}

// Evictions are not counted against the limit: backoffLimit 0 (no restart
// for a failure) and two evictions, at 30 and 60: two restarts, a
// completes at 160.
TEST(TaskFailuresTest, EvictionsDoNotCountAgainstTheBackoffLimit) {
  const SimResult r = RunOne(core::RestartPolicy::kOnFailure,
                             {FailAt(30, std::nullopt, true), FailAt(60, std::nullopt, true)}, 0);
  const auto& a = Record(r, "a");
  EXPECT_EQ(a.final_phase, core::JobPhase::kCompleted);
  EXPECT_DOUBLE_EQ(a.completion, 160);
}

// ExitCode: 137 (SIGKILL) at 30 is retryable: restart; 2 at 60 is
// permanent: Failed at 60.
TEST(TaskFailuresTest, ExitCodeRestartsOnlyRetryableCodes) {
  const SimResult r = RunOne(core::RestartPolicy::kExitCode, {FailAt(30, 137), FailAt(60, 2)});
  const auto& a = Record(r, "a");
  EXPECT_EQ(a.final_phase, core::JobPhase::kFailed);
  EXPECT_DOUBLE_EQ(a.completion, 60);
  EXPECT_EQ(a.reallocations, 1);
  EXPECT_NE(a.reason.find("retries exit codes 130, 137, 138 and 143 only"), std::string::npos)
      << a.reason;
}

// A failure after the job completed (at 500; a completes at 100) changes
// nothing.
TEST(TaskFailuresTest, AFailureOfATaskNotPlacedChangesNothing) {
  const SimResult r = RunOne(core::RestartPolicy::kNever, {FailAt(500, 1)});
  const auto& a = Record(r, "a");
  EXPECT_EQ(a.final_phase, core::JobPhase::kCompleted);
  EXPECT_DOUBLE_EQ(a.completion, 100);
}

// The workload YAML writer (generate, size, snapshots) keeps all three.
TEST(TaskFailuresTest, TheWorkloadWriterKeepsPoliciesLimitsAndFailures) {
  config::WorkloadSpec w;
  core::JobSpec a = testing::GpuJob("a", 0, 1, 2, 1000, 1, 100);
  a.role(Role::kWorker).restart_policy = core::RestartPolicy::kOnFailure;
  a.backoff_limit = 4;
  a.failures = {FailAt(30, 137), FailAt(45.5, std::nullopt, true), FailAt(60, std::nullopt)};
  a.failures[2].index = 1;
  w.jobs.push_back(a);
  auto back = config::ParseWorkload(WorkloadToYaml(w), "written");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  const core::JobSpec& b = back->jobs[0];
  EXPECT_EQ(b.role(Role::kWorker).restart_policy, core::RestartPolicy::kOnFailure);
  EXPECT_EQ(b.backoff_limit, 4);
  ASSERT_EQ(b.failures.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(b.failures[i].after, a.failures[i].after);
    EXPECT_EQ(b.failures[i].index, a.failures[i].index);
    EXPECT_EQ(b.failures[i].failure.exit_code, a.failures[i].failure.exit_code);
    EXPECT_EQ(b.failures[i].failure.disruption, a.failures[i].failure.disruption);
  }
}

}  // namespace
}  // namespace dlsched::sim
