#include "dlsched/config/job_checks.h"

#include <gtest/gtest.h>

namespace dlsched::config {
namespace {

core::RoleSpec Worker(int replicas, int min, int max) {
  core::RoleSpec w;
  w.replicas = replicas;
  w.min_replicas = min;
  w.max_replicas = max;
  return w;
}

// One check, placed and worded by each format.
TEST(JobChecksTest, WorkerReplicasByFormat) {
  const JobWording workload{.min_above_max_only_when_both_given = true,
                            .replicas_above_max_on_max = false,
                            .priority_expected = ""};
  const JobWording training_job{.min_above_max_only_when_both_given = false,
                                .replicas_above_max_on_max = true,
                                .priority_expected = ""};
  EXPECT_FALSE(CheckWorkerReplicas(Worker(2, 1, 4), true, true, workload));
  // Only minReplicas given (maxReplicas is replicas): named against replicas
  // by the workload, against maxReplicas by the TrainingJob.
  auto p = CheckWorkerReplicas(Worker(2, 3, 2), true, false, workload);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->key, "minReplicas");
  EXPECT_EQ(p->what, "3 is greater than replicas 2");
  p = CheckWorkerReplicas(Worker(2, 3, 2), true, false, training_job);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->what, "3 is greater than maxReplicas 2");
  p = CheckWorkerReplicas(Worker(5, 1, 4), false, true, workload);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->key, "replicas");
  EXPECT_EQ(p->what, "5 is greater than maxReplicas 4");
  p = CheckWorkerReplicas(Worker(5, 1, 4), false, true, training_job);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->key, "maxReplicas");
  EXPECT_EQ(p->what, "4 is less than replicas 5");
}

TEST(JobChecksTest, NamesCountsAndRates) {
  EXPECT_EQ(PriorityFromName("high"), core::PriorityClass::kHigh);
  EXPECT_EQ(PriorityFromName("low"), core::PriorityClass::kLow);
  EXPECT_FALSE(PriorityFromName("High"));
  EXPECT_EQ(WorkerCount("8"), 8);
  EXPECT_FALSE(WorkerCount("0"));
  EXPECT_FALSE(WorkerCount("+1"));
  EXPECT_FALSE(WorkerCount("100001"));
  EXPECT_TRUE(IsRate(0));
  EXPECT_FALSE(IsRate(1e-7));
  EXPECT_TRUE(IsRate(1e-6));
}

}  // namespace
}  // namespace dlsched::config
