#include "dlsched/engine/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

#include "dlsched/engine/test_util.h"
#include "engine/cluster_with_jobs.h"

namespace dlsched::engine {
namespace {

using core::Role;
using testing::Job;
using testing::Nodes;
using testing::Take;
using Fingerprint = testing::Fingerprint;

class SessionTest : public ::testing::Test {
 protected:
  dlsched::testing::ClusterWithJobs jobs_{Nodes(3, 8, 32, 4)};
  ClusterState& state_ = jobs_.state;

  JobIndex Add(core::JobSpec spec) { return jobs_.AddAt(0, std::move(spec)); }
};

TEST_F(SessionTest, AssignUpdatesNodeJobAndGpuIndex) {
  const JobIndex a = Add(Job("a", 0, 1, 2, 2, 2));
  Session s(state_);
  s.Assign({a, Role::kPS, 0}, 0);
  s.Assign({a, Role::kWorker, 0}, 0);
  s.Assign({a, Role::kWorker, 1}, 1);
  // node-0 holds the PS (1 core, 2 GiB) and one worker (1 core, 2 GiB, 1 GPU).
  EXPECT_EQ(state_.Requested(0)[core::kCpu], 2000);
  EXPECT_EQ(state_.Requested(0)[core::kMemory], int64_t{4} << 30);
  EXPECT_EQ(state_.Requested(0)[core::kGpu], 1);
  EXPECT_EQ(state_.NumTasksOn(0), 2);
  EXPECT_EQ(state_.Job(a).placed_workers, 2);
  EXPECT_EQ(state_.Job(a).placed_tasks, 3);
  EXPECT_EQ(state_.Job(a).NodeOf(Role::kWorker, 1), 1);
  // Free GPUs: node-0 3, node-1 3, node-2 4.
  EXPECT_EQ(state_.NodesWithFreeGpu(4), std::vector<NodeIndex>{2});
  auto three = state_.NodesWithFreeGpu(3);
  std::sort(three.begin(), three.end());
  EXPECT_EQ(three, (std::vector<NodeIndex>{0, 1}));
  EXPECT_EQ(state_.MaxFreeGpu(), 4);
  EXPECT_EQ(state_.TotalFree()[core::kGpu], 10);
}

TEST_F(SessionTest, RollbackRestoresEveryNodeExactly) {
  const JobIndex a = Add(Job("a", 0, 1, 4, 1, 4));
  const JobIndex b = Add(Job("b", 0, 2, 2, 2, 2));
  // Committed starting point: a runs with its PS and 4 workers on node-0/1.
  {
    Session s(state_);
    s.Assign({a, Role::kPS, 0}, 0);
    for (int i = 0; i < 4; ++i) s.Assign({a, Role::kWorker, i}, i < 3 ? 0 : 1);
    s.Commit();
  }
  const Fingerprint before = Take(state_);
  Session s(state_);
  const auto mark = s.GetMark();
  // Shrink a by two workers (one on each node), then place b in the room.
  s.Evict({a, Role::kWorker, 3});
  s.Evict({a, Role::kWorker, 1});
  s.Assign({b, Role::kPS, 0}, 1);
  s.Assign({b, Role::kPS, 1}, 2);
  s.Assign({b, Role::kWorker, 0}, 1);
  s.Assign({b, Role::kWorker, 1}, 0);
  EXPECT_NE(Take(state_), before);
  s.RollbackTo(mark);
  EXPECT_EQ(Take(state_), before);
}

TEST_F(SessionTest, NestedMarksRollBackOnlyTheirOwnSteps) {
  const JobIndex a = Add(Job("a", 0, 0, 3, 3, 3));
  Session s(state_);
  s.Assign({a, Role::kWorker, 0}, 0);
  const Fingerprint after_first = Take(state_);
  const auto inner = s.GetMark();
  s.Assign({a, Role::kWorker, 1}, 1);
  s.Assign({a, Role::kWorker, 2}, 2);
  s.RollbackTo(inner);
  EXPECT_EQ(Take(state_), after_first);
  EXPECT_EQ(s.Steps().size(), 1u);
  s.RollbackTo(0);
  EXPECT_EQ(state_.Job(a).placed_tasks, 0);
  EXPECT_EQ(state_.NodesWithFreeGpu(4).size(), 3u);
}

TEST_F(SessionTest, FitsChecksEveryResourceAndSchedulability) {
  const JobIndex big = Add(Job("big", 0, 0, 1, 1, 1, /*gpus_per_worker=*/5));
  const JobIndex small = Add(Job("small", 0, 0, 1, 1, 1, 1));
  Session s(state_);
  EXPECT_FALSE(s.Fits({big, Role::kWorker, 0}, 0));  // 5 GPUs > 4
  EXPECT_TRUE(s.Fits({small, Role::kWorker, 0}, 0));
  state_.SetSchedulable(0, false);
  EXPECT_FALSE(s.Fits({small, Role::kWorker, 0}, 0));
  EXPECT_EQ(state_.Capacity()[core::kGpu], 8);
  EXPECT_TRUE(std::find(state_.NodesWithFreeGpu(4).begin(), state_.NodesWithFreeGpu(4).end(), 0) ==
              state_.NodesWithFreeGpu(4).end());
}

TEST_F(SessionTest, TasksWithoutCpuOrMemoryCountKubeDefaultsForScoringOnly) {
  core::JobSpec spec = Job("gpu-only", 0, 0, 1, 1, 1);
  spec.role(Role::kWorker).resources[core::kCpu] = 0;
  spec.role(Role::kWorker).resources[core::kMemory] = 0;
  const JobIndex j = Add(spec);
  Session s(state_);
  s.Assign({j, Role::kWorker, 0}, 2);
  EXPECT_EQ(state_.Requested(2)[core::kCpu], 0);
  EXPECT_EQ(state_.NonZeroRequested(2)[core::kCpu], kDefaultMilliCpuRequest);
  EXPECT_EQ(state_.NonZeroRequested(2)[core::kMemory], kDefaultMemoryRequest);
}

TEST_F(SessionTest, PhaseIndexFollowsSetPhase) {
  const JobIndex a = Add(Job("a", 0, 0, 1, 1, 1));
  const JobIndex b = Add(Job("b", 0, 0, 1, 1, 1));
  state_.SetPhase(a, core::JobPhase::kWaiting, 1);
  state_.SetPhase(b, core::JobPhase::kWaiting, 1);
  std::vector<JobIndex> pending;
  state_.PendingJobs(&pending);
  EXPECT_EQ(pending, (std::vector<JobIndex>{a, b}));
  state_.SetPhase(a, core::JobPhase::kLaunching, 2);
  state_.PendingJobs(&pending);
  EXPECT_EQ(pending, std::vector<JobIndex>{b});
  EXPECT_EQ(state_.JobsInPhase(core::JobPhase::kLaunching), std::vector<JobIndex>{a});
  EXPECT_EQ(state_.Job(a).phase_since, 2);
}

}  // namespace
}  // namespace dlsched::engine
