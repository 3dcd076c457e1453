#include "dlsched/core/job.h"

#include <gtest/gtest.h>

namespace dlsched::core {
namespace {

JobSpec Gang(int workers, int64_t gpus) {
  JobSpec job;
  RoleSpec& w = job.role(Role::kWorker);
  w.replicas = w.min_replicas = w.max_replicas = workers;
  w.resources[kGpu] = gpus;
  return job;
}

// A copy shares its job's roles until one of them changes a role; then
// each has its own and the other keeps what it had.
TEST(JobSpecRolesTest, CopiesShareUntilOneChanges) {
  JobSpec a = Gang(4, 1);
  JobSpec b = a;
  EXPECT_EQ(&a.roles(), &b.roles());
  b.role(Role::kWorker).replicas = 2;
  EXPECT_NE(&a.roles(), &b.roles());
  EXPECT_EQ(a.role(Role::kWorker).replicas, 4);
  EXPECT_EQ(b.role(Role::kWorker).replicas, 2);
  // A default job's roles are empty, and changing one changes no other.
  JobSpec c;
  JobSpec d;
  c.role(Role::kPS).replicas = 1;
  EXPECT_EQ(d.role(Role::kPS).replicas, 0);
}

// A pool gives jobs of equal roles one copy and keeps unequal ones apart;
// a pooled job changed afterwards gets its own copy, the others keep theirs.
TEST(JobSpecRolesTest, APoolSharesEqualRoles) {
  JobSpec a = Gang(4, 1);
  JobSpec b = Gang(4, 1);
  JobSpec c = Gang(4, 2);
  RolePool pool;
  pool.Share(a);
  pool.Share(b);
  pool.Share(c);
  EXPECT_EQ(&a.roles(), &b.roles());
  EXPECT_NE(&a.roles(), &c.roles());
  b.role(Role::kWorker).resources[kGpu] = 8;
  EXPECT_EQ(a.role(Role::kWorker).resources[kGpu], 1);
  EXPECT_EQ(b.role(Role::kWorker).resources[kGpu], 8);
  // Demand reads the shared roles: 4 workers of 1 GPU.
  EXPECT_EQ(a.Demand(4)[kGpu], 4);
  EXPECT_EQ(a.Demand(0)[kGpu], 0);
}

}  // namespace
}  // namespace dlsched::core
