// Kubeflow's replica restartPolicy and exit-code rule (core/job.h).
#include <gtest/gtest.h>

#include "dlsched/core/job.h"

namespace dlsched::core {
namespace {

TaskFailure Exit(int code) { return TaskFailure{false, code}; }

TEST(RestartPolicyTest, NamesReadBack) {
  for (RestartPolicy p : {RestartPolicy::kNever, RestartPolicy::kOnFailure, RestartPolicy::kAlways,
                          RestartPolicy::kExitCode}) {
    EXPECT_EQ(ParseRestartPolicy(RestartPolicyName(p)), p);
  }
  EXPECT_FALSE(ParseRestartPolicy("never").has_value());  // case matters, as in Kubeflow
  EXPECT_FALSE(ParseRestartPolicy("").has_value());
}

// Kubeflow's table: 130, 137, 138, 143 retry; 1, 2, 126, 127, 128, 139
// and anything else (here 3, 134, 255) do not.
TEST(RestartPolicyTest, RetryableExitCodesAreKubeflows) {
  for (int code : {130, 137, 138, 143}) EXPECT_TRUE(RetryableExitCode(code)) << code;
  for (int code : {1, 2, 3, 126, 127, 128, 134, 139, 255}) {
    EXPECT_FALSE(RetryableExitCode(code)) << code;
  }
}

TEST(RestartPolicyTest, WhichFailuresRestartTheJob) {
  const TaskFailure evicted{true, std::nullopt};
  const TaskFailure unknown{false, std::nullopt};
  // A disruption restarts under every policy.
  for (RestartPolicy p : {RestartPolicy::kNever, RestartPolicy::kOnFailure, RestartPolicy::kAlways,
                          RestartPolicy::kExitCode}) {
    EXPECT_TRUE(FailureRestarts(p, evicted)) << RestartPolicyName(p);
  }
  EXPECT_FALSE(FailureRestarts(RestartPolicy::kNever, Exit(137)));
  EXPECT_TRUE(FailureRestarts(RestartPolicy::kOnFailure, Exit(1)));
  EXPECT_TRUE(FailureRestarts(RestartPolicy::kAlways, unknown));
  EXPECT_TRUE(FailureRestarts(RestartPolicy::kExitCode, Exit(143)));
  EXPECT_FALSE(FailureRestarts(RestartPolicy::kExitCode, Exit(1)));
  // No exit code known (the pod failed before its container ran): not
  // retryable, as Kubeflow's sentinel code is not in its list.
  EXPECT_FALSE(FailureRestarts(RestartPolicy::kExitCode, unknown));
}

}  // namespace
}  // namespace dlsched::core
