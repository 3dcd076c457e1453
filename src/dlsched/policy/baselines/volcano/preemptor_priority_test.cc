#include "dlsched/policy/baselines/volcano/preemptor_priority.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>

#include "dlsched/engine/profile.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/policy/shared/packer_task_by_task.h"
#include "dlsched/policy/shared/resource_scorers.h"

namespace dlsched::policy {
namespace {

using core::PriorityClass;
using core::Role;
using engine::ActionKind;
using engine::JobIndex;
using engine::NodeIndex;
using engine::testing::Job;
using engine::testing::Nodes;

// Everything a failed preemption must leave as it was (as in
// engine/session_test.cc).
struct Fingerprint {
  std::vector<core::Resources> requested;
  std::vector<int> tasks_on;
  std::vector<std::vector<NodeIndex>> buckets;
  std::vector<std::vector<NodeIndex>> task_node;
  std::vector<int> placed_workers, placed_tasks;
  core::Resources total;
  bool operator==(const Fingerprint&) const = default;
};

Fingerprint Take(const engine::ClusterState& s) {
  Fingerprint f;
  for (NodeIndex n = 0; n < s.NumNodes(); ++n) {
    f.requested.push_back(s.Requested(n));
    f.tasks_on.push_back(s.NumTasksOn(n));
  }
  for (int g = 0; g <= s.MaxGpuPerNode(); ++g) {
    auto b = s.NodesWithFreeGpu(g);
    std::sort(b.begin(), b.end());
    f.buckets.push_back(b);
  }
  for (JobIndex j = 0; j < s.NumJobs(); ++j) {
    f.task_node.push_back(s.Job(j).task_node);
    f.placed_workers.push_back(s.Job(j).placed_workers);
    f.placed_tasks.push_back(s.Job(j).placed_tasks);
  }
  f.total = s.TotalRequested();
  return f;
}

// Two nodes of 8 cores, 32 GiB, 4 GPUs. Jobs without PS whose workers take
// 1 core, 2 GiB and `gpus` GPUs each (engine/test_util.h). Scoring is
// LeastAllocated on cpu and memory, as in `volcano-priority`.
class PriorityEvictionTest : public ::testing::Test {
 protected:
  PriorityEvictionTest() {
    profile_.scorers.push_back(std::make_unique<LeastAllocated>(DefaultResourceWeights()));
    profile_.scorer_weights = {1};
  }

  // A job running since `since` with its workers on `nodes`.
  JobIndex Running(const std::string& name, PriorityClass prio, double since,
                   std::vector<NodeIndex> nodes, int64_t gpus = 1,
                   core::JobPhase phase = core::JobPhase::kRunning) {
    const int w = static_cast<int>(nodes.size());
    core::JobSpec spec = Job(name, 0, 0, w, w, w, gpus);
    spec.priority = prio;
    specs_.push_back(std::move(spec));
    const JobIndex j = state_.AddJob(&specs_.back(), 0);
    for (int i = 0; i < w; ++i) state_.PlaceTask({j, Role::kWorker, i}, nodes[i]);
    state_.SetPhase(j, core::JobPhase::kWaiting, 0);
    state_.SetPhase(j, phase, since);
    return j;
  }
  JobIndex Pending(const std::string& name, PriorityClass prio, int workers, int64_t gpus = 1) {
    core::JobSpec spec = Job(name, 0, 0, workers, workers, workers, gpus);
    spec.priority = prio;
    specs_.push_back(std::move(spec));
    const JobIndex j = state_.AddJob(&specs_.back(), 0);
    state_.SetPhase(j, core::JobPhase::kWaiting, 0);
    return j;
  }

  // Runs the preemptor for `j` in a fresh cycle; keeps the session's steps
  // applied (committed) so the test can look at the outcome.
  bool Preempt(JobIndex j, bool skip_frozen = true) {
    engine::Session session(state_);
    engine::PodQueue pods_ctx;
    engine::Memos memos_ctx;
    engine::CycleContext ctx{session, plan_, pods_ctx, memos_ctx, profile_, 100};
    const int workers = state_.Job(j).spec->role(Role::kWorker).replicas;
    reason_.clear();
    const bool ok = PriorityEvictionPreemptor(skip_frozen)
                        .Preempt(ctx, j, workers, TaskByTaskPacker(), &reason_);
    session.Commit();
    return ok;
  }

  std::vector<std::string> Stopped() const {
    std::vector<std::string> out;
    for (const auto& a : plan_.actions()) {
      if (a.kind == ActionKind::kStop) out.push_back(state_.Job(a.task.job).spec->name);
    }
    return out;
  }

  core::ClusterSpec cluster_ = Nodes(2, 8, 32, 4);
  std::deque<core::JobSpec> specs_;
  engine::ClusterState state_{cluster_};
  engine::Profile profile_;
  engine::CycleState plan_;
  std::string reason_;
};

// node-0: low1 (2 GPUs, started at 10) + normal1 (2 GPUs, at 5);
// node-1: low2 (4 GPUs, started at 20). No GPU free.
// `high` needs 4 one-GPU workers. Candidates, lowest priority first and
// then the latest started: low2 (20), low1 (10), normal1 (5).
// Evicting low2 frees node-1's 4 GPUs: the gang fits, nothing else goes.
TEST_F(PriorityEvictionTest, EvictsTheLowestPriorityJobFirstAndOnlyWhatIsNeeded) {
  const JobIndex low1 = Running("low1", PriorityClass::kLow, 10, {0, 0});
  const JobIndex normal1 = Running("normal1", PriorityClass::kNormal, 5, {0, 0});
  const JobIndex low2 = Running("low2", PriorityClass::kLow, 20, {1, 1, 1, 1});
  const JobIndex high = Pending("high", PriorityClass::kHigh, 4);
  ASSERT_TRUE(Preempt(high)) << reason_;
  EXPECT_EQ(Stopped(), std::vector<std::string>{"low2"});
  ASSERT_EQ(plan_.actions().size(), 1u);
  EXPECT_EQ(plan_.actions()[0].reason, "preempted by high: priority high > low");
  EXPECT_EQ(state_.Job(low2).placed_tasks, 0);
  EXPECT_EQ(state_.Job(low1).placed_tasks, 2);
  EXPECT_EQ(state_.Job(normal1).placed_tasks, 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(state_.Job(high).NodeOf(Role::kWorker, i), 1);
}

// Same cluster, `high` needs 6 GPUs: low2 (4 freed) is not enough, low1 is
// next (2 more on node-0): 6 free, the gang fits. normal1 stays. Neither
// victim can be given back (without low2 only 2 GPUs are free).
TEST_F(PriorityEvictionTest, EvictsSeveralJobsInOrderUntilTheGangFits) {
  Running("low1", PriorityClass::kLow, 10, {0, 0});
  const JobIndex normal1 = Running("normal1", PriorityClass::kNormal, 5, {0, 0});
  Running("low2", PriorityClass::kLow, 20, {1, 1, 1, 1});
  const JobIndex high = Pending("high", PriorityClass::kHigh, 6);
  ASSERT_TRUE(Preempt(high)) << reason_;
  EXPECT_EQ(Stopped(), (std::vector<std::string>{"low2", "low1"}));
  EXPECT_EQ(state_.Job(normal1).placed_tasks, 2);
  EXPECT_EQ(state_.Job(high).placed_workers, 6);
}

// node-0: lowA (1 GPU, started at 20) + highC (3 GPUs); node-1: lowB (4
// GPUs, started at 10). `big` (high) needs one worker of 4 GPUs on one node.
// Greedy: lowA first (latest started) frees 1 GPU on node-0: no; then lowB
// frees node-1: fits. lowA was not needed (big fits with lowB alone), so it
// is given back: only lowB is stopped.
TEST_F(PriorityEvictionTest, GivesBackVictimsTheGangDoesNotNeed) {
  const JobIndex low_a = Running("lowA", PriorityClass::kLow, 20, {0});
  Running("highC", PriorityClass::kHigh, 0, {0}, 3);
  Running("lowB", PriorityClass::kLow, 10, {1}, 4);
  const JobIndex big = Pending("big", PriorityClass::kHigh, 1, 4);
  ASSERT_TRUE(Preempt(big)) << reason_;
  EXPECT_EQ(Stopped(), std::vector<std::string>{"lowB"});
  EXPECT_EQ(state_.Job(low_a).NodeOf(Role::kWorker, 0), 0);
  EXPECT_EQ(state_.Job(big).NodeOf(Role::kWorker, 0), 1);
}

// node-0: lowA (2 GPUs) + highC (2 GPUs); node-1: lowB (2 GPUs) + highD (2
// GPUs). `big` needs 4 GPUs on one node. Evicting both low jobs frees 4 GPUs
// in total (the quick check passes) but only 2 per node: the packer fails,
// everything is rolled back and the plan stays empty.
TEST_F(PriorityEvictionTest, FailureLeavesSessionAndPlanUnchanged) {
  Running("lowA", PriorityClass::kLow, 20, {0}, 2);
  Running("highC", PriorityClass::kHigh, 0, {0}, 2);
  Running("lowB", PriorityClass::kLow, 10, {1}, 2);
  Running("highD", PriorityClass::kHigh, 0, {1}, 2);
  const JobIndex big = Pending("big", PriorityClass::kHigh, 1, 4);
  const Fingerprint before = Take(state_);
  EXPECT_FALSE(Preempt(big));
  EXPECT_EQ(Take(state_), before);
  EXPECT_TRUE(plan_.actions().empty());
  EXPECT_EQ(reason_,
            "preempting all 2 running jobs of lower priority would not make room: 0/2 nodes fit "
            "Worker: 2 insufficient nvidia.com/gpu (needs 4, at most 2 free)");

  // More than all candidates hold: refused before anything is evicted.
  const JobIndex huge = Pending("huge", PriorityClass::kHigh, 5, 1);
  const Fingerprint again = Take(state_);
  EXPECT_FALSE(Preempt(huge));
  EXPECT_EQ(Take(state_), again);
  EXPECT_TRUE(plan_.actions().empty());
  EXPECT_EQ(reason_,
            "preempting all 2 running jobs of lower priority would not free enough for the gang");
}

// Equal priority is never evicted; neither is a higher one.
TEST_F(PriorityEvictionTest, EqualPriorityIsNeverEvicted) {
  Running("normalA", PriorityClass::kNormal, 0, {0, 0, 0, 0});
  Running("highB", PriorityClass::kHigh, 0, {1, 1, 1, 1});
  const JobIndex n = Pending("normalC", PriorityClass::kNormal, 1);
  const Fingerprint before = Take(state_);
  EXPECT_FALSE(Preempt(n));
  EXPECT_EQ(Take(state_), before);
  EXPECT_TRUE(plan_.actions().empty());
  EXPECT_EQ(reason_, "no running job of lower priority than normal to preempt");
  const JobIndex l = Pending("lowD", PriorityClass::kLow, 1);
  EXPECT_FALSE(Preempt(l));
  EXPECT_EQ(reason_, "no running job of lower priority than low to preempt");
}

// Frozen jobs: a RunningProtected victim is skipped unless skipFrozen is
// false; a Launching one is never evicted (no Launching -> Checkpointing).
TEST_F(PriorityEvictionTest, FrozenAndLaunchingJobsAreSkipped) {
  Running("protected", PriorityClass::kLow, 0, {0, 0, 0, 0}, 1, core::JobPhase::kRunningProtected);
  Running("launching", PriorityClass::kLow, 0, {1, 1, 1, 1}, 1, core::JobPhase::kLaunching);
  const JobIndex high = Pending("high", PriorityClass::kHigh, 4);
  EXPECT_FALSE(Preempt(high, /*skip_frozen=*/true));
  EXPECT_EQ(reason_, "no running job of lower priority than high to preempt");
  ASSERT_TRUE(Preempt(high, /*skip_frozen=*/false)) << reason_;
  EXPECT_EQ(Stopped(), std::vector<std::string>{"protected"});
}

TEST(PriorityEvictionArgsTest, SkipFrozenIsABool) {
  auto spec = config::ParseProfile(
      "name: p\npreemptor: {name: PriorityEviction, args: {skipFrozen: maybe}}\n", "p.yaml");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  auto built = BuildProfile(*spec);
  ASSERT_FALSE(built.has_value());
  EXPECT_EQ(built.error().message,
            "p.yaml: preemptor.args.skipFrozen: expected true or false, got 'maybe'");
}

}  // namespace
}  // namespace dlsched::policy
