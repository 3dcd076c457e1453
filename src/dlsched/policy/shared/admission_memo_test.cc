// The shortcuts that keep a long queue of blocked gangs cheap, and that
// must never change a decision: the per-node room check before any scoring
// (GangFitsInNodes), the remembered failure of a gang while no room has
// been freed (JobState::WaitMemo, ClusterState::RoomEpoch), verdicts given
// only as they change (JobState::StandingWait), the pending queue kept in
// order (engine::OrderPending) and a per-pod failure counted once while no
// node is touched (CycleState::FailureMemo).
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/engine/engine.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/shared/packer_task_by_task.h"
#include "policy/profiles.h"

namespace dlsched::policy {
namespace {

using engine::ClusterState;
using engine::JobIndex;
using engine::TaskRef;

engine::Engine Builtin(const char* name) { return dlsched::testing::MakeEngine(name); }

engine::Engine GangBinpack() { return Builtin("gang-binpack"); }

const engine::Action* Verdict(const engine::Plan& plan, JobIndex j) {
  for (const auto& a : plan.actions) {
    if (a.task.job == j &&
        (a.kind == engine::ActionKind::kStart || a.kind == engine::ActionKind::kWait)) {
      return &a;
    }
  }
  return nullptr;
}

// Two nodes of 4 cores, 16 GiB and 2 GPUs; a filler job holds 3 cores of
// each (no GPU). Free: 1 core and 2 GPUs per node, 2 cores and 4 GPUs in
// all.
struct Fragmented {
  core::ClusterSpec cluster = engine::testing::Nodes(2, 4, 16, 2);
  std::deque<core::JobSpec> specs;
  ClusterState state{cluster};

  JobIndex Add(int workers, int64_t millicpu, int64_t gpus) {
    core::JobSpec j = engine::testing::Job("j" + std::to_string(specs.size()), 0, 0, workers,
                                           workers, workers, gpus);
    j.role(core::Role::kWorker).resources[core::kCpu] = millicpu;
    specs.push_back(std::move(j));
    const JobIndex idx = state.AddJob(&specs.back(), 0);
    state.SetPhase(idx, core::JobPhase::kWaiting, 0);
    return idx;
  }

  // What a scheduler keeps beside the state: the engine's memos (and the
  // per-pod queue, empty here).
  engine::PodQueue pods;
  engine::Memos memos;

  Fragmented() {
    const JobIndex filler = Add(2, 3000, 0);
    state.PlaceTask(TaskRef{filler, core::Role::kWorker, 0}, 0);
    state.PlaceTask(TaskRef{filler, core::Role::kWorker, 1}, 1);
    state.MutableJob(filler).target_workers = 2;
    state.SetPhase(filler, core::JobPhase::kLaunching, 0);
    state.SetPhase(filler, core::JobPhase::kRunning, 0);
  }
};

TEST(GangFitsInNodesTest, CountsWhatEachNodeCanHold) {
  Fragmented f;
  // Two workers of 1 core + 1 GPU: one per node.
  const JobIndex fits = f.Add(2, 1000, 1);
  // One worker of 2 cores + 1 GPU: the cluster has 2 free cores in all, but
  // 1 on each node, so no node holds it.
  const JobIndex split = f.Add(1, 2000, 1);
  std::vector<TaskRef> slots;
  std::string reason;
  engine::GangSlots(f.state, fits, 2, &slots);
  EXPECT_TRUE(GangFitsInFreeTotal(f.state, fits, 2, &reason));
  EXPECT_TRUE(GangFitsInNodes(f.state, slots, &reason));
  engine::GangSlots(f.state, split, 1, &slots);
  EXPECT_TRUE(GangFitsInFreeTotal(f.state, split, 1, &reason));
  ASSERT_FALSE(GangFitsInNodes(f.state, slots, &reason));
  EXPECT_EQ(reason,
            "1 Worker task of cpu=2, memory=2Gi, nvidia.com/gpu=1 each, the nodes' free resources "
            "hold 0");

  // Through a cycle, alone: the job waits; as no node holds even one of
  // its tasks, the reason counts the nodes by why, as a failed placement
  // of that task says it.
  Fragmented g;
  const JobIndex alone = g.Add(1, 2000, 1);
  const engine::Engine engine = GangBinpack();
  const engine::Plan plan = engine.Cycle(g.state, g.pods, g.memos, 1);
  ASSERT_NE(Verdict(plan, alone), nullptr);
  EXPECT_EQ(Verdict(plan, alone)->kind, engine::ActionKind::kWait);
  EXPECT_NE(Verdict(plan, alone)->reason.find("0/2 nodes fit Worker: 2 insufficient cpu"),
            std::string::npos)
      << Verdict(plan, alone)->reason;
}

TEST(WaitMemoTest, RoomEpochCountsOnlyFreedRoom) {
  Fragmented f;
  const JobIndex j = f.Add(1, 1000, 1);
  const TaskRef t{j, core::Role::kWorker, 0};
  const uint64_t e0 = f.state.RoomEpoch();
  f.state.PlaceTask(t, 0);  // takes room
  EXPECT_EQ(f.state.RoomEpoch(), e0);
  f.state.UnplaceTentative(t);  // a session undoing its own step
  EXPECT_EQ(f.state.RoomEpoch(), e0);
  f.state.PlaceTask(t, 0);
  f.state.RemoveTask(t);  // frees room
  EXPECT_GT(f.state.RoomEpoch(), e0);
  const uint64_t e1 = f.state.RoomEpoch();
  f.state.SetSchedulable(1, false);
  EXPECT_GT(f.state.RoomEpoch(), e1);
}

TEST(WaitMemoTest, AFailedGangIsNotRetriedUntilRoomIsFreed) {
  Fragmented f;
  // Needs 2 cores on one node: waits (see above).
  const JobIndex w = f.Add(1, 2000, 1);
  const engine::Engine engine = GangBinpack();
  engine::Plan plan = engine.Cycle(f.state, f.pods, f.memos, 1);
  ASSERT_EQ(Verdict(plan, w)->kind, engine::ActionKind::kWait);
  const std::string reason = Verdict(plan, w)->reason;
  EXPECT_EQ(f.memos.Job(w).wait.reason, reason);
  EXPECT_EQ(f.memos.Job(w).wait.epoch, f.state.RoomEpoch());

  // Nothing freed: the remembered verdict stands without a new attempt
  // (a planted reason shows it was not recomputed).
  f.memos.Job(w).wait.reason = "remembered";
  plan = engine.Cycle(f.state, f.pods, f.memos, 2);
  EXPECT_EQ(Verdict(plan, w)->reason, "remembered");

  // Another engine does not trust this one's memos.
  const engine::Engine other = GangBinpack();
  plan = other.Cycle(f.state, f.pods, f.memos, 3);
  EXPECT_EQ(Verdict(plan, w)->reason, reason);

  // The filler's task on node 0 goes: 4 free cores there, the job starts.
  f.memos.Job(w).wait.reason = "remembered";
  f.state.RemoveTask(TaskRef{0, core::Role::kWorker, 0});
  plan = other.Cycle(f.state, f.pods, f.memos, 4);
  EXPECT_EQ(Verdict(plan, w)->kind, engine::ActionKind::kStart);
}

// A wait verdict the job already stands on is not given again (the backend
// keeps it), so a long blocked queue costs a cycle no verdicts; it is given
// again when the backend gave the job another reason since, and in every
// cycle when the profile's sizer reads verdicts (KOD2 scales out jobs that
// admission started, F-scheduling shrinks for jobs it left waiting).
TEST(StandingWaitTest, AnUnchangedWaitIsGivenOnceUnlessTheSizerReadsVerdicts) {
  Fragmented f;
  const JobIndex w = f.Add(1, 2000, 1);  // waits (see above)
  const engine::Engine engine = GangBinpack();
  engine::Plan plan = engine.Cycle(f.state, f.pods, f.memos, 1);
  ASSERT_NE(Verdict(plan, w), nullptr);
  const std::string reason = Verdict(plan, w)->reason;
  EXPECT_EQ(f.memos.Job(w).standing_wait.reason, reason);
  plan = engine.Cycle(f.state, f.pods, f.memos, 2);
  EXPECT_EQ(Verdict(plan, w), nullptr);
  // Room freed (the memo is retried) but the same verdict: it stands.
  f.state.NoteRoomChanged();
  plan = engine.Cycle(f.state, f.pods, f.memos, 3);
  EXPECT_EQ(Verdict(plan, w), nullptr);
  // The backend gave the job another reason (say, a restart): given again.
  f.state.BumpReason(w);
  plan = engine.Cycle(f.state, f.pods, f.memos, 4);
  ASSERT_NE(Verdict(plan, w), nullptr);
  EXPECT_EQ(Verdict(plan, w)->kind, engine::ActionKind::kWait);
  EXPECT_EQ(Verdict(plan, w)->reason, reason);
  plan = engine.Cycle(f.state, f.pods, f.memos, 5);
  EXPECT_EQ(Verdict(plan, w), nullptr);
  // Another engine on the state (another profile's run) gives it again.
  const engine::Engine other = GangBinpack();
  plan = other.Cycle(f.state, f.pods, f.memos, 5);
  ASSERT_NE(Verdict(plan, w), nullptr);
  EXPECT_EQ(Verdict(plan, w)->reason, reason);
  // KOD2's sizer reads verdicts: one in every cycle.
  const engine::Engine kod2 = Builtin("kod2");
  for (int t = 6; t < 8; ++t) {
    plan = kod2.Cycle(f.state, f.pods, f.memos, t);
    ASSERT_NE(Verdict(plan, w), nullptr) << t;
    EXPECT_EQ(Verdict(plan, w)->kind, engine::ActionKind::kWait);
  }
}

// The queue the engine keeps from cycle to cycle is, at every cycle, the
// queue a fresh sort of the pending jobs gives: jobs arrive (many with the
// same submit time, so ties go to the job index), start, come back to
// Standby or Waiting, finish and are removed, in random order.
TEST(PendingOrderTest, KeptQueueEqualsAFreshSortAsJobsComeAndGo) {
  const core::ClusterSpec cluster = engine::testing::Nodes(2, 4, 16, 2);
  std::deque<core::JobSpec> specs;
  ClusterState state(cluster);
  const engine::Engine fifo = Builtin("fifo");
  ASSERT_TRUE(fifo.profile().order->StaticKeys());
  std::mt19937 rng(3);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  constexpr core::JobPhase kPhases[] = {core::JobPhase::kWaiting,   core::JobPhase::kStarving,
                                        core::JobPhase::kLaunching, core::JobPhase::kRunning,
                                        core::JobPhase::kStandby,   core::JobPhase::kCompleted};
  engine::PodQueue pods;
  engine::Memos memos;
  for (int cycle = 0; cycle < 400; ++cycle) {
    for (int k = pick(3); k > 0; --k) {
      specs.push_back(
          engine::testing::Job("j" + std::to_string(specs.size()), pick(20), 0, 1, 1, 1));
      const JobIndex j = state.AddJob(&specs.back(), cycle);
      state.SetPhase(j, core::JobPhase::kWaiting, cycle);
    }
    for (int k = pick(4); k > 0 && state.NumJobs() > 0; --k) {
      const JobIndex j = pick(state.NumJobs());
      if (state.Job(j).removed) continue;
      const int choice = pick(7);
      if (choice == 6) {
        state.RemoveJob(j);
      } else {
        state.SetPhase(j, kPhases[choice], cycle);
      }
    }
    engine::Session session(state);
    engine::CycleState decisions;
    engine::CycleContext ctx{session, decisions,      pods,
                             memos,   fifo.profile(), static_cast<double>(cycle)};
    std::vector<JobIndex> kept;
    std::vector<double> kept_keys;
    engine::OrderPending(ctx, &kept, &kept_keys);
    state.ForgetEnteredPending();  // as each engine cycle ends
    std::vector<JobIndex> fresh;
    std::vector<double> fresh_keys;
    state.PendingJobs(&fresh);
    engine::OrderJobs(ctx, &fresh, &fresh_keys);
    ASSERT_EQ(kept, fresh) << "cycle " << cycle;
    ASSERT_EQ(kept_keys, fresh_keys) << "cycle " << cycle;
  }
  EXPECT_GT(state.NumJobs(), 300);
}

// Under fifo, the jobs behind a blocked head are passed over while they
// stand on the "behind" verdict (Memos::PendingOrder's marks), yet
// what the backend was last told of each pending job is always what a
// fresh look gives: its own verdict for the head, "behind" for the rest.
// Jobs arrive, get another reason from the backend (a restart), leave
// (start elsewhere) and come back, are removed, in random order; now and
// then another engine (another profile's run) cycles on the same state.
TEST(PendingOrderTest, JobsBehindABlockedHeadAreToldOnceAndStayTold) {
  // One node of 2 GPUs, held by a running job: every 1-GPU job waits.
  const core::ClusterSpec cluster = engine::testing::Nodes(1, 64, 256, 2);
  std::deque<core::JobSpec> specs;
  ClusterState state(cluster);
  specs.push_back(engine::testing::Job("holder", 0, 0, 1, 1, 1, 2));
  const JobIndex holder = state.AddJob(&specs.back(), 0);
  state.PlaceTask(TaskRef{holder, core::Role::kWorker, 0}, 0);
  state.SetPhase(holder, core::JobPhase::kLaunching, 0);
  state.SetPhase(holder, core::JobPhase::kRunning, 0);
  const engine::Engine fifo = Builtin("fifo");
  const engine::Engine other = Builtin("fifo");
  std::mt19937 rng(5);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::map<JobIndex, std::string> told;  // the backend's last reason of each job
  std::string behind;
  engine::PodQueue pods;
  engine::Memos memos;
  for (int cycle = 0; cycle < 300; ++cycle) {
    for (int k = pick(3); k > 0; --k) {
      specs.push_back(
          engine::testing::Job("j" + std::to_string(specs.size()), pick(50), 0, 1, 1, 1));
      const JobIndex j = state.AddJob(&specs.back(), cycle);
      state.SetPhase(j, core::JobPhase::kWaiting, cycle);
      told[j] = "arrived";
    }
    std::vector<JobIndex> pending;
    state.PendingJobs(&pending);
    for (int k = pick(3); k > 0 && !pending.empty(); --k) {
      const JobIndex j = pending[static_cast<size_t>(pick(static_cast<int>(pending.size())))];
      if (!state.Job(j).IsPending()) continue;
      switch (pick(4)) {
        case 0:  // the backend gives it another reason
          state.BumpReason(j);
          told[j] = "restarted";
          break;
        case 1:  // it ran elsewhere and is back
          state.SetPhase(j, core::JobPhase::kLaunching, cycle);
          state.BumpReason(j);
          state.SetPhase(j, core::JobPhase::kWaiting, cycle);
          told[j] = "back";
          break;
        case 2:
          state.SetPhase(j, core::JobPhase::kFailed, cycle);
          state.RemoveJob(j);
          told.erase(j);
          break;
        default:
          break;
      }
    }
    const engine::Engine& e = pick(10) == 0 ? other : fifo;
    const engine::Plan plan = e.Cycle(state, pods, memos, cycle);
    for (const engine::Action& a : plan.actions) {
      ASSERT_EQ(a.kind, engine::ActionKind::kWait) << "cycle " << cycle;
      told[a.task.job] = a.reason;
      if (a.reason.find("behind") != std::string::npos) behind = a.reason;
    }
    // The head waits on its own verdict, everyone else is told "behind".
    std::vector<JobIndex> order;
    std::vector<double> keys;
    state.PendingJobs(&order);
    engine::Session session(state);
    engine::CycleState decisions;
    engine::CycleContext ctx{session, decisions,      pods,
                             memos,   fifo.profile(), static_cast<double>(cycle)};
    engine::OrderJobs(ctx, &order, &keys);
    for (size_t i = 0; i < order.size(); ++i) {
      const std::string& reason = told[order[i]];
      if (i == 0) {
        EXPECT_NE(reason.find("waiting:"), std::string::npos) << "cycle " << cycle;
        EXPECT_EQ(reason.find("behind"), std::string::npos) << "cycle " << cycle;
      } else {
        EXPECT_EQ(reason, behind) << "cycle " << cycle << ", job " << order[i];
      }
    }
  }
  EXPECT_GT(state.NumJobs(), 200);
  EXPECT_FALSE(behind.empty());
}

// One worker pod per job, in the per-pod queue in this order, on nodes of
// 2 and 1 free GPUs (k8s-default): a (2 GPUs) binds to node-0; b (2) fails,
// the most free being 1; c (1) binds to node-1; d (2) fails, now with at
// most 0 free: counted again, as a node was touched since b; e (2) fails as
// d did, and reuses its count.
TEST(FailureMemoTest, APodFailingAsTheLastOneDidReusesItsCountUntilANodeIsTouched) {
  core::ClusterSpec cluster = engine::testing::Nodes(2, 8, 16, 2);
  cluster.nodes[1].allocatable[core::kGpu] = 1;
  std::deque<core::JobSpec> specs;
  ClusterState state(cluster);
  engine::PodQueue pods;
  engine::Memos memos;
  std::vector<JobIndex> jobs;
  for (auto [name, gpus] : {std::pair{"a", 2}, {"b", 2}, {"c", 1}, {"d", 2}, {"e", 2}}) {
    specs.push_back(engine::testing::Job(name, 0, 0, 1, 1, 1, gpus));
    const JobIndex j = state.AddJob(&specs.back(), 0);
    state.SetPhase(j, core::JobPhase::kWaiting, 0);
    pods.Add({j, core::Role::kWorker, 0}, 0);
    jobs.push_back(j);
  }
  const engine::Plan plan = Builtin("k8s-default").Cycle(state, pods, memos, 0);
  std::map<JobIndex, std::string> backoff;
  std::map<JobIndex, std::string> bound;
  for (const engine::Action& a : plan.actions) {
    if (a.kind == engine::ActionKind::kBackoff) backoff[a.task.job] = a.reason;
    if (a.kind == engine::ActionKind::kBind) bound[a.task.job] = state.NodeName(a.node);
  }
  EXPECT_EQ(bound, (std::map<JobIndex, std::string>{{jobs[0], "node-0"}, {jobs[2], "node-1"}}));
  ASSERT_EQ(backoff.size(), 3u);
  EXPECT_EQ(backoff[jobs[1]],
            "0/2 nodes fit Worker: 2 insufficient nvidia.com/gpu (needs 2, at most 1 free)");
  EXPECT_EQ(backoff[jobs[3]],
            "0/2 nodes fit Worker: 2 insufficient nvidia.com/gpu (needs 2, at most 0 free)");
  EXPECT_EQ(backoff[jobs[4]], backoff[jobs[3]]);
}

}  // namespace
}  // namespace dlsched::policy
