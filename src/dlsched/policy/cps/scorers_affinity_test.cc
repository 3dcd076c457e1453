#include "dlsched/policy/cps/scorers_affinity.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>

#include "dlsched/engine/profile.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/shared/packer_task_by_task.h"
#include "dlsched/policy/shared/resource_scorers.h"
#include "engine/cluster_with_jobs.h"

namespace dlsched::policy {
namespace {

using core::Role;
using engine::JobIndex;
using engine::NodeIndex;
using engine::TaskRef;
using engine::testing::Job;
using engine::testing::Nodes;

// Three nodes of 8 cores, 32 GiB, 4 GPUs. Test jobs (engine/test_util.h):
// PS 1 core / 2 GiB, workers 1 core / 2 GiB / 1 GPU.
class AffinityTest : public ::testing::Test {
 protected:
  dlsched::testing::ClusterWithJobs jobs_{Nodes(3, 8, 32, 4)};
  engine::ClusterState& state_ = jobs_.state;
  PsWorkerAffinity affinity_;
  PsAntiAffinity anti_;

  JobIndex Add(core::JobSpec spec) {
    return jobs_.AddAt(0, std::move(spec), core::JobPhase::kWaiting);
  }

  // A profile with the given scorers (weight 1 each) and a TaskByTask gang.
  bool PlaceGang(std::vector<std::unique_ptr<engine::NodeScorer>> scorers, JobIndex j,
                 int workers) {
    profile_.scorers = std::move(scorers);
    profile_.scorer_weights.assign(profile_.scorers.size(), 1.0);
    engine::Session session(state_);
    engine::CycleState plan;
    engine::PodQueue pods_ctx;
    engine::Memos memos_ctx;
    engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile_, 0};
    std::string reason;
    const bool ok = TaskByTaskPacker().PlaceGang(ctx, j, workers, &reason);
    session.Commit();
    return ok;
  }

  NodeIndex NodeOf(JobIndex j, Role r, int i) const { return state_.Job(j).NodeOf(r, i); }

  engine::Profile profile_;
};

std::vector<std::unique_ptr<engine::NodeScorer>> Scorers(
    std::initializer_list<engine::NodeScorer*> list) {
  std::vector<std::unique_ptr<engine::NodeScorer>> out;
  for (auto* s : list) out.emplace_back(s);
  return out;
}

// Proportional scores. PS of a 4-PS job on node-0, node-0, node-1:
//   worker: node-0 100 * 2/3 = 66, node-1 33, node-2 0;
//   4th PS (anti-affinity): node-0 100 * (3 - 2)/3 = 33, node-1 66, node-2 100.
// Workers 0, 1 on node-0 and 2 on node-2, scoring the 4th PS for affinity:
//   node-0 100 * 2/3 = 66, node-1 0, node-2 33.
// A worker under anti-affinity scores the neutral 0 everywhere.
TEST_F(AffinityTest, ScoresAreSharesOfTheJobsPlacedTasks) {
  const JobIndex j = Add(Job("j", 0, 4, 3, 3, 3));
  state_.PlaceTask({j, Role::kPS, 0}, 0);
  state_.PlaceTask({j, Role::kPS, 1}, 0);
  state_.PlaceTask({j, Role::kPS, 2}, 1);
  const TaskRef worker{j, Role::kWorker, 0};
  EXPECT_EQ(affinity_.Score(state_, worker, 0), 66);
  EXPECT_EQ(affinity_.Score(state_, worker, 1), 33);
  EXPECT_EQ(affinity_.Score(state_, worker, 2), 0);
  const TaskRef ps3{j, Role::kPS, 3};
  EXPECT_EQ(anti_.Score(state_, ps3, 0), 33);
  EXPECT_EQ(anti_.Score(state_, ps3, 1), 66);
  EXPECT_EQ(anti_.Score(state_, ps3, 2), 100);
  for (NodeIndex n = 0; n < 3; ++n) EXPECT_EQ(anti_.Score(state_, worker, n), 0);
  // No worker placed yet: a PS has no affinity anywhere.
  EXPECT_EQ(affinity_.Score(state_, ps3, 0), 0);
  state_.PlaceTask({j, Role::kWorker, 0}, 0);
  state_.PlaceTask({j, Role::kWorker, 1}, 0);
  state_.PlaceTask({j, Role::kWorker, 2}, 2);
  EXPECT_EQ(affinity_.Score(state_, ps3, 0), 66);
  EXPECT_EQ(affinity_.Score(state_, ps3, 1), 0);
  EXPECT_EQ(affinity_.Score(state_, ps3, 2), 33);
  // Scoring a placed task ignores its own slot: PS 2 (on node-1) sees PS on
  // node-0 twice: node-1 100 * (2 - 0)/2 = 100, node-0 0.
  EXPECT_EQ(anti_.Score(state_, {j, Role::kPS, 2}, 1), 100);
  EXPECT_EQ(anti_.Score(state_, {j, Role::kPS, 2}, 0), 0);
  // Other jobs' tasks do not count.
  const JobIndex other = Add(Job("other", 0, 1, 1, 1, 1));
  EXPECT_EQ(affinity_.Score(state_, {other, Role::kWorker, 0}, 0), 0);
  EXPECT_EQ(anti_.Score(state_, {other, Role::kPS, 0}, 0), 100);
}

// A 1 PS + 2 worker job on three empty nodes, scorers PsWorkerAffinity +
// PsAntiAffinity + LeastAllocated (cpu, memory), weight 1 each:
//   PS:  affinity 0 (no worker yet), anti 100 (first PS), LeastAllocated
//        cpu 7000*100/8000 = 87, memory 30*100/32 = 93 -> 90 on every
//        node: 190 everywhere, tie -> node-0.
//   w0:  node-0 affinity 100 + LeastAllocated (cpu 6000 -> 75, memory
//        28Gi -> 87) 81 = 181; node-1, node-2 0 + 90 = 90 -> node-0.
//   w1:  node-0 100 + (cpu 5000 -> 62, memory 26Gi -> 81) 71 = 171 against
//        90 -> node-0.
// The whole job shares the PS's node. LeastAllocated alone spreads it:
// PS node-0, w0 node-1 (90 > 81), w1 node-2 (90 > 81 on node-0 and node-1).
TEST_F(AffinityTest, WorkerPrefersItsPsNode) {
  const JobIndex j = Add(Job("j", 0, 1, 2, 2, 2));
  ASSERT_TRUE(PlaceGang(Scorers({new PsWorkerAffinity, new PsAntiAffinity,
                                 new LeastAllocated(DefaultResourceWeights())}),
                        j, 2));
  EXPECT_EQ(NodeOf(j, Role::kPS, 0), 0);
  EXPECT_EQ(NodeOf(j, Role::kWorker, 0), 0);
  EXPECT_EQ(NodeOf(j, Role::kWorker, 1), 0);

  const JobIndex k = Add(Job("k", 0, 1, 2, 2, 2));
  ASSERT_TRUE(PlaceGang(Scorers({new LeastAllocated(DefaultResourceWeights())}), k, 2));
  // node-0 already holds j (3 cores, 6Gi). PS: node-0 (4000 -> 50, 8Gi ->
  // 75) 62, node-1 and node-2 90 -> node-1. w0: node-0 62, node-1 (2000 ->
  // 75, 4Gi -> 87) 81, node-2 90 -> node-2. w1: node-1 81 = node-2 81 ->
  // node-1. Spread over three nodes.
  EXPECT_EQ(NodeOf(k, Role::kPS, 0), 1);
  EXPECT_EQ(NodeOf(k, Role::kWorker, 0), 2);
  EXPECT_EQ(NodeOf(k, Role::kWorker, 1), 1);
}

// A 2 PS + 2 worker job with PsAntiAffinity + MostAllocated (binpack on
// cpu, memory), which on its own would stack the PS:
//   PS0: anti 100 everywhere; MostAllocated cpu 1000*100/8000 = 12, memory
//        2*100/32 = 6 -> 9 everywhere; tie -> node-0.
//   PS1: node-0 anti 100*(1-1)/1 = 0 + MostAllocated (cpu 25, memory 12) 18
//        = 18; node-1 100 + 9 = 109 -> node-1: the PS keep apart.
//   w0:  anti 0 (neutral) everywhere; MostAllocated node-0 (cpu 2000 -> 25,
//        memory 4Gi -> 12) 18 = node-1 18 > node-2 9; tie -> node-0.
//   w1:  node-0 (3000 -> 37, 6Gi -> 18) 27 > node-1 18 -> node-0.
// With MostAllocated alone PS1 joins PS0 on node-0 (18 > 9).
TEST_F(AffinityTest, SecondPsAvoidsTheFirstPsNode) {
  const JobIndex j = Add(Job("j", 0, 2, 2, 2, 2));
  ASSERT_TRUE(
      PlaceGang(Scorers({new PsAntiAffinity, new MostAllocated(DefaultResourceWeights())}), j, 2));
  EXPECT_EQ(NodeOf(j, Role::kPS, 0), 0);
  EXPECT_EQ(NodeOf(j, Role::kPS, 1), 1);
  EXPECT_EQ(NodeOf(j, Role::kWorker, 0), 0);
  EXPECT_EQ(NodeOf(j, Role::kWorker, 1), 0);

  const JobIndex k = Add(Job("k", 0, 2, 0, 0, 0));
  ASSERT_TRUE(PlaceGang(Scorers({new MostAllocated(DefaultResourceWeights())}), k, 0));
  EXPECT_EQ(NodeOf(k, Role::kPS, 0), NodeOf(k, Role::kPS, 1));
}

// Soft: on a single node both PS of a job must share it (anti-affinity 0
// there, the only candidate) and the job is still placed; a worker whose
// PS's node is full goes elsewhere (affinity 0 on the others, still
// feasible).
TEST_F(AffinityTest, NeitherMakesAJobUnschedulable) {
  dlsched::testing::ClusterWithJobs one(Nodes(1, 8, 32, 4));
  engine::ClusterState& single = one.state;
  const JobIndex j = one.AddAt(0, Job("j", 0, 2, 2, 2, 2));
  profile_.scorers = Scorers({new PsWorkerAffinity, new PsAntiAffinity});
  profile_.scorer_weights = {1, 1};
  {
    engine::Session session(single);
    engine::CycleState plan;
    engine::PodQueue pods_ctx;
    engine::Memos memos_ctx;
    engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile_, 0};
    std::string reason;
    EXPECT_TRUE(TaskByTaskPacker().PlaceGang(ctx, j, 2, &reason)) << reason;
    EXPECT_EQ(single.Job(j).placed_tasks, 4);
  }

  // node-0 full of GPUs after the PS lands there: 4 one-GPU workers of
  // `filler` take node-0's GPUs first.
  const JobIndex filler = Add(Job("filler", 0, 0, 4, 4, 4));
  for (int i = 0; i < 4; ++i) state_.PlaceTask({filler, Role::kWorker, i}, 0);
  const JobIndex k = Add(Job("k", 0, 1, 2, 2, 2));
  ASSERT_TRUE(PlaceGang(Scorers({new PsWorkerAffinity, new PsAntiAffinity}), k, 2));
  // PS: no GPU, ties -> node-0; workers need a GPU: node-0 has none, so
  // they go to node-1 (tie with node-2 at 0).
  EXPECT_EQ(NodeOf(k, Role::kPS, 0), 0);
  EXPECT_EQ(NodeOf(k, Role::kWorker, 0), 1);
  EXPECT_EQ(NodeOf(k, Role::kWorker, 1), 1);
}

}  // namespace
}  // namespace dlsched::policy
