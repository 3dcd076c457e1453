// The shared job life cycle against a fake backend: every transition, the
// counts of preemptions, scale events and reallocations, restarts after a
// lost task, assumed binds, releasing evictions and the per-pod queue.
#include "dlsched/engine/lifecycle.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dlsched/engine/test_util.h"
#include "engine/fake_backend.h"

namespace dlsched::engine {
namespace {

using core::JobPhase;
using core::Role;
using testing::Job;
using testing::Nodes;

// The shared fake (testing/engine): it records every call; binds are
// confirmed and pods gone at once unless told otherwise, as a simulator
// does; timers wait for RunUntil.
using dlsched::testing::FakeBackend;

class LifecycleTest : public ::testing::Test {
 protected:
  core::ClusterSpec cluster_ = Nodes(2, 8, 32, 4);
  std::deque<core::JobSpec> specs_;
  ClusterState state_{cluster_};
  FakeBackend backend_{state_};
  LifecycleOptions options_;
  std::unique_ptr<JobLifecycle> lc_;

  // A job of `workers` one-GPU workers (no PS), launch 10 s, checkpoint 5 s.
  JobIndex Add(const std::string& name, int workers, int min, int max) {
    core::JobSpec spec = Job(name, 0, 0, workers, min, max);
    spec.launch_delay = 10;
    spec.checkpoint_delay = 5;
    specs_.push_back(spec);
    const JobIndex j = state_.AddJob(&specs_.back(), 0);
    if (lc_) lc_->JobsAdded();
    return j;
  }
  JobLifecycle& lc() {
    if (!lc_) lc_ = std::make_unique<JobLifecycle>(state_, backend_, options_);
    return *lc_;
  }
  static Action Act(ActionKind kind, JobIndex j, int w) {
    Action a;
    a.kind = kind;
    a.task = {j, Role::kWorker, w};
    return a;
  }
  static Action Bind(JobIndex j, int w, NodeIndex n) {
    Action a = Act(ActionKind::kBind, j, w);
    a.node = n;
    return a;
  }
  static Action Unbind(JobIndex j, int w) { return Act(ActionKind::kUnbind, j, w); }
  static Action JobAction(ActionKind kind, JobIndex j, int workers = 0) {
    Action a = Act(kind, j, 0);
    a.workers = workers;
    a.reason = "why";
    return a;
  }
  // Fires every timer due at or before `t`, in time order, at their times.
  void RunUntil(core::Time t) {
    while (const auto timer = backend_.TakeDue(t)) {
      backend_.now = timer->at;
      lc().OnTimer(timer->kind, timer->job, timer->epoch);
    }
    backend_.now = t;
  }
  // Arrives, binds `workers` workers on node 0 and starts the job at now.
  void Start(JobIndex j, int workers) {
    const JobIndex arrived[] = {j};
    lc().Arrive(arrived);
    Plan p;
    for (int w = 0; w < workers; ++w) p.actions.push_back(Bind(j, w, 0));
    p.actions.push_back(JobAction(ActionKind::kStart, j, workers));
    lc().Apply(p);
  }
  JobPhase Phase(JobIndex j) const { return state_.Job(j).phase; }
  // Shrinks job `j` from 2 workers to 1 (worker 1 unbound) with a restart;
  // `hold` keeps worker 1 until its checkpoint is done.
  void ShrinkToOne(JobIndex j, bool hold) {
    Action shrink = JobAction(ActionKind::kResize, j, 1);
    shrink.restart = true;
    shrink.hold = hold;
    Plan p;
    p.actions = {Unbind(j, 1), shrink};
    lc().Apply(p);
  }
};

TEST_F(LifecycleTest, StartLaunchesThenRunsAfterTheLaunchDelay) {
  const JobIndex a = Add("a", 2, 2, 2);
  Start(a, 2);
  EXPECT_EQ(Phase(a), JobPhase::kLaunching);
  EXPECT_EQ(state_.Job(a).placed_workers, 2);
  EXPECT_EQ(state_.NumAssumed(), 0);  // the backend confirmed both binds
  EXPECT_EQ(backend_.log, (std::vector<std::string>{"bind a/Worker0 0", "bind a/Worker1 0"}));
  EXPECT_EQ(lc().History(a).admission_seq, 0);
  RunUntil(10);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
  EXPECT_EQ(state_.Job(a).last_launch, 10);
  EXPECT_EQ(backend_.progress_changes[a], 1);  // starts training
  EXPECT_EQ(backend_.phases, (std::vector<std::string>{"Submitted->Waiting", "Waiting->Launching",
                                                       "Launching->Running"}));
  const core::PhaseClock& clock = lc().History(a).clock;
  EXPECT_EQ(clock.FirstEntered(JobPhase::kLaunching), 0);
  EXPECT_EQ(clock.FirstEntered(JobPhase::kRunning), 10);
}

TEST_F(LifecycleTest, ProtectFactorHoldsRunningProtectedForThatManyLaunches) {
  options_.protect_factor = 3;
  const JobIndex a = Add("a", 1, 1, 1);
  Start(a, 1);
  RunUntil(10);
  EXPECT_EQ(Phase(a), JobPhase::kRunningProtected);
  RunUntil(39);  // 3 x 10 s after the launch ended
  EXPECT_EQ(Phase(a), JobPhase::kRunningProtected);
  RunUntil(40);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
}

TEST_F(LifecycleTest, ResizeWithoutRestartCountsAScaleEventOnly) {
  const JobIndex a = Add("a", 1, 1, 3);
  Start(a, 1);
  RunUntil(10);
  Plan p;
  p.actions = {Bind(a, 1, 1), Bind(a, 2, 1), JobAction(ActionKind::kResize, a, 3)};
  lc().Apply(p);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
  EXPECT_EQ(state_.Job(a).target_workers, 3);
  EXPECT_EQ(state_.Job(a).placed_workers, 3);
  EXPECT_EQ(lc().History(a).scale_events, 1);
  EXPECT_EQ(lc().History(a).preemptions, 0);
  EXPECT_EQ(lc().History(a).reallocations, 0);
  EXPECT_EQ(backend_.progress_changes[a], 2);  // launch done, resize
}

TEST_F(LifecycleTest, ResizeWithRestartCheckpointsStopsAndRelaunches) {
  const JobIndex a = Add("a", 2, 1, 2);
  Start(a, 2);
  RunUntil(10);
  state_.MutableJob(a).steps_done = 300;  // what the backend's model trained
  Action shrink = JobAction(ActionKind::kResize, a, 1);
  shrink.restart = true;
  shrink.preempted = true;  // shrunk for another job
  Plan p;
  p.actions = {Unbind(a, 1), shrink};
  lc().Apply(p);
  EXPECT_EQ(Phase(a), JobPhase::kCheckpointing);
  EXPECT_EQ(lc().History(a).scale_events, 1);
  EXPECT_EQ(lc().History(a).preemptions, 1);
  EXPECT_EQ(lc().History(a).reallocations, 1);
  RunUntil(15);  // checkpoint 5 s, then Stopping -> Standby -> Launching at once
  EXPECT_EQ(Phase(a), JobPhase::kLaunching);
  EXPECT_EQ(lc().History(a).checkpointed_steps, 300);
  RunUntil(25);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
  EXPECT_EQ(state_.Job(a).placed_workers, 1);
  const core::PhaseClock& clock = lc().History(a).clock;
  EXPECT_EQ(clock.TimeIn(JobPhase::kCheckpointing, 25), 5);
  EXPECT_EQ(clock.TimeIn(JobPhase::kLaunching, 25), 20);  // two launches
}

// A resize with `hold`: a (2 workers on node 0, both running from 10) is
// shrunk to 1 at 10 and checkpoints 10..15. Its worker 1 leaves the job at
// once (the engine sees a with 1 worker) but keeps its GPU on node 0 as a
// releasing task, pod running (Held, no Unbind), so nothing can be placed
// there; at 15, as a stops, the worker is unbound and its GPU is free; a
// relaunches 15..25 with 1 worker.
TEST_F(LifecycleTest, HeldWorkersKeepTheirRoomUntilTheCheckpointIsDone) {
  const JobIndex a = Add("a", 2, 1, 2);
  Start(a, 2);
  RunUntil(10);
  backend_.log.clear();
  ShrinkToOne(a, /*hold=*/true);
  EXPECT_EQ(Phase(a), JobPhase::kCheckpointing);
  EXPECT_EQ(state_.Job(a).placed_workers, 1);
  EXPECT_EQ(state_.NumReleasing(), 1);
  EXPECT_EQ(state_.ReleasingGpus(), 1);
  EXPECT_EQ(state_.ReleasingJobs(), std::vector<JobIndex>{a});
  EXPECT_EQ(lc().NumHeld(), 1);
  EXPECT_EQ(state_.FreeGpuOf(0), 2);  // 4 - a's 2: the held GPU is not free
  EXPECT_TRUE(backend_.log.empty());  // no Unbind yet
  RunUntil(14.9);
  EXPECT_EQ(state_.NumReleasing(), 1);
  RunUntil(15);
  EXPECT_EQ(backend_.log, (std::vector<std::string>{"unbind a/Worker1 0"}));
  EXPECT_EQ(state_.NumReleasing(), 0);
  EXPECT_EQ(lc().NumHeld(), 0);
  EXPECT_EQ(state_.FreeGpuOf(0), 3);
  EXPECT_EQ(Phase(a), JobPhase::kLaunching);
  EXPECT_EQ(backend_.phases.back(), "Standby->Launching");

  // Without `hold` the worker goes at once.
  const JobIndex b = Add("b", 2, 1, 2);
  Start(b, 2);
  RunUntil(25);
  backend_.log.clear();
  ShrinkToOne(b, /*hold=*/false);
  EXPECT_EQ(backend_.log, (std::vector<std::string>{"unbind b/Worker1 0"}));
  EXPECT_EQ(state_.NumReleasing(), 0);
}

// A job that ends while it checkpoints lets its held workers go with the
// rest.
TEST_F(LifecycleTest, HeldWorkersGoWhenTheJobFailsDuringItsCheckpoint) {
  const JobIndex a = Add("a", 2, 1, 2);
  Start(a, 2);
  RunUntil(10);
  ShrinkToOne(a, /*hold=*/true);
  backend_.log.clear();
  lc().Fail(a, "deadline");
  EXPECT_EQ(backend_.log, (std::vector<std::string>{"unbind a/Worker1 0", "unbind a/Worker0 0"}));
  EXPECT_EQ(state_.NumReleasing(), 0);
  EXPECT_EQ(lc().NumHeld(), 0);
}

// protect RelaunchOnly: a's first launch (0..10) is not protected; its
// relaunch after a restart (checkpoint 10..15, launch 15..25) is, for 3 x
// 10 s: RunningProtected 25..55.
TEST_F(LifecycleTest, RelaunchOnlyProtectsRelaunchesAlone) {
  options_.protect_factor = 3;
  options_.protect_relaunch_only = true;
  const JobIndex a = Add("a", 2, 1, 2);
  Start(a, 2);
  RunUntil(10);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
  ShrinkToOne(a, /*hold=*/false);
  RunUntil(25);
  EXPECT_EQ(Phase(a), JobPhase::kRunningProtected);
  RunUntil(54.9);
  EXPECT_EQ(Phase(a), JobPhase::kRunningProtected);
  RunUntil(55);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
}

TEST_F(LifecycleTest, StopPreemptsToStandbyAndTheNextStartIsAReallocation) {
  const JobIndex a = Add("a", 1, 1, 1);
  Start(a, 1);
  RunUntil(10);
  Plan p;
  p.actions = {Unbind(a, 0), JobAction(ActionKind::kStop, a)};
  lc().Apply(p);
  EXPECT_EQ(lc().History(a).preemptions, 1);
  RunUntil(15);
  EXPECT_EQ(Phase(a), JobPhase::kStandby);  // nothing placed: waits to be admitted
  EXPECT_TRUE(state_.Job(a).IsPending());
  Plan again;
  again.actions = {Bind(a, 0, 1), JobAction(ActionKind::kStart, a, 1)};
  lc().Apply(again);
  EXPECT_EQ(Phase(a), JobPhase::kLaunching);
  EXPECT_EQ(lc().History(a).reallocations, 1);
  EXPECT_EQ(lc().History(a).admission_seq, 0);  // still its first admission
}

// Work lost, by hand (2 one-GPU workers, launch 10 s, checkpoint 5 s): a,
// running since 10, stops at 10 for b: its 2 GPUs x 5 s of checkpoint =
// 10. It relaunches on 2 at 25: 2 x 10 = 20. It has run 60 GPU-seconds
// since its checkpoint (attained 20 then, 80 now) when it loses a task:
// 60 more, 90 in all. b, given a's room, launches at once under
// handOver: Immediate (running at 20), or once a's checkpoint is done
// under AfterCheckpoint (5 s + its 10: running at 25); a first launch
// loses nothing.
class WorkLostTest : public LifecycleTest, public ::testing::WithParamInterface<bool> {};

TEST_P(WorkLostTest, CountsCheckpointsRelaunchesAndWhatALostTaskUndoes) {
  const bool hand_over = GetParam();
  options_.hand_over_after_checkpoint = hand_over;
  const JobIndex a = Add("a", 2, 2, 2);
  const JobIndex b = Add("b", 2, 2, 2);
  Start(a, 2);
  RunUntil(10);
  state_.MutableJob(a).attained = 20;
  const JobIndex arrived[] = {b};
  lc().Arrive(arrived);
  Action stop = JobAction(ActionKind::kStop, a);
  stop.by = b;
  Plan p;
  p.actions = {
      Unbind(a, 0), Unbind(a, 1), Bind(b, 0, 0), Bind(b, 1, 0), JobAction(ActionKind::kStart, b, 2),
      stop};
  lc().Apply(p);
  EXPECT_DOUBLE_EQ(lc().History(a).lost_gpu_seconds, 10);
  RunUntil(20);
  EXPECT_EQ(Phase(b), hand_over ? JobPhase::kLaunching : JobPhase::kRunning);
  RunUntil(25);
  EXPECT_EQ(Phase(b), JobPhase::kRunning);
  EXPECT_DOUBLE_EQ(lc().History(b).lost_gpu_seconds, 0);
  Plan again;
  again.actions = {Bind(a, 0, 1), Bind(a, 1, 1), JobAction(ActionKind::kStart, a, 2)};
  lc().Apply(again);
  EXPECT_DOUBLE_EQ(lc().History(a).lost_gpu_seconds, 30);
  RunUntil(35);
  state_.MutableJob(a).attained = 80;
  const TaskRef lost[] = {{a, Role::kWorker, 1}};
  lc().TasksLost(lost, "evicted");
  EXPECT_DOUBLE_EQ(lc().History(a).lost_gpu_seconds, 90);
}

INSTANTIATE_TEST_SUITE_P(HandOver, WorkLostTest, ::testing::Bool());

// The record fields of a made-up policy: a level shown on the timeline as
// "queue" (initial 0), a time stamped at each launch while unset (initial
// kNever), a time that starts at the job's arrival, and a field the
// profile does not keep (initial 7).
constexpr RecordField kShown{.state = core::CarriedField("level"), .shown = "queue"};
constexpr RecordField kStamped{.state = core::CarriedField("ranSince"),
                               .initial = core::kNever,
                               .stamped_at_launch = true,
                               .shown = {}};
constexpr RecordField kArrival{
    .state = core::CarriedField("levelSince"), .initial_is_arrival = true, .shown = {}};
constexpr RecordField kNotKept{
    .state = core::CarriedField("levelPlace"), .initial = 7, .shown = {}};

Action SetRecord(JobIndex j, const RecordField& f, double value) {
  Action a;
  a.kind = ActionKind::kSetRecord;
  a.task = {j, Role::kWorker, 0};
  a.field = &f;
  a.value = value;
  return a;
}

// Job a arrives at 3 with level 2 in its spec (a snapshot's): it starts at
// 2, stamped unset, since 3; the field not kept reads 7. It launches at 5:
// stamped 5. At 20 the plan sets the level to 2 (no change: no timeline
// row), then 1 (row "queue 1"), unsets the stamp and sets the field not
// kept (ignored). Stopped and started again at 30, it is stamped 30; a
// launch with the stamp set leaves it.
TEST_F(LifecycleTest, RecordFieldsHoldWhatThePolicyAsksAndWhatTheyDeclare) {
  state_.UseRecordFields({&kShown, &kStamped, &kArrival});
  backend_.keep_timeline = true;
  core::JobSpec spec = Job("a", 3, 0, 1, 1, 1);
  spec.policy_state["level"] = 2;
  specs_.push_back(spec);
  const JobIndex a = state_.AddJob(&specs_.back(), 3);
  EXPECT_EQ(state_.Record(a, kShown), 2);
  EXPECT_EQ(state_.Record(a, kStamped), core::kNever);
  EXPECT_EQ(state_.Record(a, kArrival), 3);
  EXPECT_EQ(state_.Record(a, kNotKept), 7);
  backend_.now = 5;
  Start(a, 1);
  EXPECT_EQ(state_.Record(a, kStamped), 5);
  RunUntil(20);
  Plan p;
  p.actions = {SetRecord(a, kShown, 2), SetRecord(a, kShown, 1),
               SetRecord(a, kStamped, core::kNever), SetRecord(a, kNotKept, 9)};
  lc().Apply(p);
  EXPECT_EQ(state_.Record(a, kShown), 1);
  EXPECT_EQ(state_.Record(a, kStamped), core::kNever);
  EXPECT_EQ(state_.Record(a, kNotKept), 7);
  std::vector<std::string> rows;
  for (const TimelineEvent& e : backend_.timeline) {
    if (e.kind == TimelineKind::kLevel) rows.push_back(fmt::format("{} {}", e.time, e.detail));
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"20 queue 1"}));
  Plan stop;
  stop.actions = {Unbind(a, 0), JobAction(ActionKind::kStop, a)};
  lc().Apply(stop);
  RunUntil(30);
  Plan again;
  again.actions = {Bind(a, 0, 1), JobAction(ActionKind::kStart, a, 1)};
  lc().Apply(again);
  EXPECT_EQ(state_.Record(a, kStamped), 30);
  RunUntil(60);
  Plan restop;
  restop.actions = {Unbind(a, 0), JobAction(ActionKind::kStop, a)};
  lc().Apply(restop);
  RunUntil(70);
  lc().Apply(again);
  EXPECT_EQ(lc().History(a).reallocations, 2);  // launched a third time
  EXPECT_EQ(state_.Record(a, kStamped), 30);
}

TEST_F(LifecycleTest, CompletionReleasesEveryTaskThroughTheBackend) {
  const JobIndex a = Add("a", 2, 2, 2);
  Start(a, 2);
  RunUntil(10);
  backend_.pods_vanish = false;  // pods take their time to go, as on a cluster
  backend_.log.clear();
  lc().Complete(a);
  EXPECT_EQ(Phase(a), JobPhase::kCompleted);
  EXPECT_EQ(lc().Unfinished(), 0);
  EXPECT_EQ(backend_.log, (std::vector<std::string>{"unbind a/Worker0 0", "unbind a/Worker1 0"}));
  EXPECT_EQ(state_.Job(a).placed_tasks, 0);
  EXPECT_EQ(state_.Free(0)[core::kGpu], 2);  // held while releasing
  state_.TaskGone({a, Role::kWorker, 0});
  state_.TaskGone({a, Role::kWorker, 1});
  EXPECT_EQ(state_.Free(0)[core::kGpu], 4);
  lc().Complete(a);  // twice: nothing more happens
  EXPECT_EQ(lc().Unfinished(), 0);
}

TEST_F(LifecycleTest, FailFromAnyPhaseAndStaleTimersAreIgnored) {
  const JobIndex a = Add("a", 1, 1, 1);
  Start(a, 1);
  lc().Fail(a, "deadline passed");
  EXPECT_EQ(Phase(a), JobPhase::kFailed);
  EXPECT_EQ(lc().History(a).reason, "deadline passed");
  EXPECT_EQ(state_.Job(a).placed_tasks, 0);
  RunUntil(100);  // its launch timer fires into a failed job
  EXPECT_EQ(Phase(a), JobPhase::kFailed);
}

TEST_F(LifecycleTest, FailedBindIsForgottenAndTheGangWaitsAgain) {
  const JobIndex a = Add("a", 2, 2, 2);
  backend_.confirm_binds = false;  // binds stay assumed
  Start(a, 2);
  EXPECT_EQ(state_.NumAssumed(), 2);
  state_.ConfirmTask({a, Role::kWorker, 0});
  lc().BindFailed({a, Role::kWorker, 1}, "node-0 not found");
  // The gang is all or nothing: the confirmed worker is let go too.
  EXPECT_EQ(state_.Job(a).placed_tasks, 0);
  EXPECT_EQ(state_.NumAssumed(), 0);
  EXPECT_EQ(Phase(a), JobPhase::kStandby);
  EXPECT_TRUE(state_.Job(a).IsPending());
  EXPECT_EQ(lc().History(a).reason, "binding Worker[1] failed: node-0 not found");
  EXPECT_EQ(state_.Free(0)[core::kGpu], 4);
}

TEST_F(LifecycleTest, LostTaskRestartsFromTheLastCheckpoint) {
  const JobIndex a = Add("a", 2, 1, 2);
  Start(a, 2);
  RunUntil(10);
  // A reallocation leaves a checkpoint at 300 steps.
  state_.MutableJob(a).steps_done = 300;
  Action r = JobAction(ActionKind::kResize, a, 2);
  r.restart = true;
  Plan p;
  p.actions = {r};
  lc().Apply(p);
  RunUntil(25);
  ASSERT_EQ(Phase(a), JobPhase::kRunning);
  state_.MutableJob(a).steps_done = 700;
  // Worker 1 disappears with its node... well, with an eviction here.
  const TaskRef lost[] = {{a, Role::kWorker, 1}};
  backend_.log.clear();
  lc().TasksLost(lost, "node-0 failed");
  EXPECT_EQ(Phase(a), JobPhase::kStandby);
  EXPECT_EQ(state_.Job(a).steps_done, 300);  // trained since the checkpoint: lost
  EXPECT_EQ(state_.Job(a).placed_tasks, 0);  // the survivor was stopped
  // The lost pod is deleted too (it may be gone already), then the survivor.
  EXPECT_EQ(backend_.log, (std::vector<std::string>{"unbind a/Worker1 0", "unbind a/Worker0 0"}));
  EXPECT_EQ(lc().History(a).task_losses, 1);
  EXPECT_EQ(lc().History(a).reason, "lost tasks: node-0 failed");
  EXPECT_EQ(lc().History(a).preemptions, 0);  // a loss is not a preemption
  EXPECT_EQ(state_.TotalRequested()[core::kGpu], 0);
  // It is admitted again like any pending job; that start is a reallocation.
  Plan again;
  again.actions = {Bind(a, 0, 1), Bind(a, 1, 1), JobAction(ActionKind::kStart, a, 2)};
  lc().Apply(again);
  EXPECT_EQ(lc().History(a).reallocations, 2);
  RunUntil(200);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
}

TEST_F(LifecycleTest, TaskLossFailsTheJobWhenTheProfileSaysSo) {
  options_.task_loss = TaskLossPolicy::kFail;
  const JobIndex a = Add("a", 2, 2, 2);
  Start(a, 2);
  RunUntil(10);
  const TaskRef lost[] = {{a, Role::kWorker, 0}};
  lc().TasksLost(lost, "node-0 failed");
  EXPECT_EQ(Phase(a), JobPhase::kFailed);
  EXPECT_EQ(lc().History(a).reason, "lost tasks: node-0 failed");
  EXPECT_EQ(state_.TotalRequested()[core::kGpu], 0);
}

TEST_F(LifecycleTest, RemovedNodeTakesItsTasksAndOnlyItsJobsRestart) {
  const JobIndex a = Add("a", 1, 1, 1);
  const JobIndex b = Add("b", 1, 1, 1);
  Start(a, 1);  // on node 0
  const JobIndex arrived[] = {b};
  lc().Arrive(arrived);
  Plan p;
  p.actions = {Bind(b, 0, 1), JobAction(ActionKind::kStart, b, 1)};
  lc().Apply(p);
  RunUntil(10);
  lc().NodeRemoved(0, "failed");
  EXPECT_FALSE(state_.Present(0));
  EXPECT_EQ(Phase(a), JobPhase::kStandby);
  EXPECT_EQ(lc().History(a).reason, "lost tasks: node node-0 failed");
  EXPECT_EQ(Phase(b), JobPhase::kRunning);
  EXPECT_EQ(state_.Capacity()[core::kGpu], 4);
  EXPECT_EQ(state_.TotalRequested()[core::kGpu], 1);
}

TEST_F(LifecycleTest, NoExecuteTaintEvictsTasksThatDoNotTolerateIt) {
  const JobIndex a = Add("a", 1, 1, 1);
  const JobIndex b = Add("b", 1, 1, 1);
  specs_[1]
      .role(Role::kWorker)
      .constraints.tolerations.push_back(
          core::Toleration{"maintenance", core::Toleration::Op::kExists, "", true, {}});
  Start(a, 1);
  const JobIndex arrived[] = {b};
  lc().Arrive(arrived);
  Plan p;
  p.actions = {Bind(b, 0, 0), JobAction(ActionKind::kStart, b, 1)};
  lc().Apply(p);
  RunUntil(10);
  core::NodeSpec spec = state_.NodeSpecOf(0);
  spec.taints = {core::Taint{"maintenance", "", core::TaintEffect::kNoSchedule}};
  state_.UpdateNode(0, spec);
  lc().NodeUpdated(0);  // NoSchedule: running tasks stay
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
  spec.taints = {core::Taint{"maintenance", "", core::TaintEffect::kNoExecute}};
  state_.UpdateNode(0, spec);
  lc().NodeUpdated(0);
  EXPECT_EQ(Phase(a), JobPhase::kStandby);
  EXPECT_EQ(lc().History(a).reason,
            "lost tasks: evicted from node node-0 by taint maintenance:NoExecute");
  EXPECT_EQ(Phase(b), JobPhase::kRunning);  // tolerates it
}

// Tasks tolerate a NoExecute taint for their tolerationSeconds, counted
// from when the taint appeared; the not-ready and unreachable taints for
// 300 s unless a toleration says otherwise (Kubernetes' admission default).
//   t=10   node-0 becomes unreachable (node.kubernetes.io/unreachable:NoExecute).
//          a: no toleration of it: the default 300 s, evicted at 310.
//          b: tolerates it for 60 s: evicted at 70.
//          c: tolerates every taint, with no seconds: stays for ever.
//   t=200  the node changes again (a label), the taint stays: a's 300 s
//          still count from 10, not from 200.
TEST_F(LifecycleTest, NoExecuteTaintsAreToleratedForTheirSecondsUnreachableFor300ByDefault) {
  const JobIndex a = Add("a", 1, 1, 1);
  const JobIndex b = Add("b", 1, 1, 1);
  const JobIndex c = Add("c", 1, 1, 1);
  core::Toleration sixty{std::string(core::kUnreachableTaint),
                         core::Toleration::Op::kExists,
                         "",
                         false,
                         core::TaintEffect::kNoExecute,
                         60};
  specs_[1].role(Role::kWorker).constraints.tolerations.push_back(sixty);
  specs_[2]
      .role(Role::kWorker)
      .constraints.tolerations.push_back(
          core::Toleration{"", core::Toleration::Op::kExists, "", true, {}});
  Start(a, 1);
  const JobIndex arrived[] = {b, c};
  lc().Arrive(arrived);
  Plan p;
  p.actions = {Bind(b, 0, 0), JobAction(ActionKind::kStart, b, 1), Bind(c, 0, 0),
               JobAction(ActionKind::kStart, c, 1)};
  lc().Apply(p);
  RunUntil(10);
  core::NodeSpec spec = state_.NodeSpecOf(0);
  spec.taints = {
      core::Taint{std::string(core::kUnreachableTaint), "", core::TaintEffect::kNoExecute}};
  state_.UpdateNode(0, spec);
  lc().NodeUpdated(0);
  for (JobIndex j : {a, b, c}) EXPECT_EQ(Phase(j), JobPhase::kRunning) << j;
  // Job j runs until a second before `at` and is evicted at `at`, after
  // `grace` seconds.
  auto evicted_at = [&](JobIndex j, core::Time at, const char* grace) {
    RunUntil(at - 1);
    EXPECT_EQ(Phase(j), JobPhase::kRunning) << j;
    RunUntil(at);
    EXPECT_EQ(Phase(j), JobPhase::kStandby) << j;
    EXPECT_EQ(lc().History(j).reason,
              std::string("lost tasks: evicted from node node-0 by taint "
                          "node.kubernetes.io/unreachable:NoExecute after ") +
                  grace);
  };
  evicted_at(b, 70, "60 s");
  RunUntil(200);
  spec.labels["zone"] = "z1";
  state_.UpdateNode(0, spec);
  lc().NodeUpdated(0);
  evicted_at(a, 310, "300 s");
  RunUntil(10000);
  EXPECT_EQ(Phase(c), JobPhase::kRunning);
}

TEST_F(LifecycleTest, PodQueueInterleavesArrivalsAndBacksOffByDoubling) {
  lc().UsePodQueue(true);
  const JobIndex a = Add("a", 2, 2, 2);
  const JobIndex b = Add("b", 2, 2, 2);
  const JobIndex arrived[] = {a, b};
  lc().Arrive(arrived);
  EXPECT_EQ(backend_.log, (std::vector<std::string>{"create a/Worker0", "create b/Worker0",
                                                    "create a/Worker1", "create b/Worker1"}));
  ASSERT_EQ(lc().pods().size(), 4u);
  EXPECT_TRUE(lc().AnyPodUntried());
  Plan p;
  p.room_epoch = state_.RoomEpoch();
  p.actions = {Bind(a, 0, 0), Act(ActionKind::kBackoff, b, 0)};
  lc().Apply(p);
  // The bound pod left the queue; b's pod backs off 1 s.
  ASSERT_EQ(lc().pods().size(), 3u);
  EXPECT_EQ(lc().pods()[0].task, (TaskRef{b, Role::kWorker, 0}));
  EXPECT_EQ(lc().pods()[0].not_before, 1);
  EXPECT_EQ(lc().pods()[0].attempts, 1);
  Plan again;
  again.room_epoch = state_.RoomEpoch();
  again.actions = {Act(ActionKind::kBackoff, b, 0)};
  backend_.now = 1;
  lc().Apply(again);
  EXPECT_EQ(lc().pods()[0].not_before, 3);  // then 2 s
  // No room freed since b's pod was tried: it is parked, no wake-up for it
  // (a1 and b1 are due already).
  EXPECT_TRUE(lc().pods()[0].Parked(state_.RoomEpoch()));
  EXPECT_TRUE(lc().AnyPodUntried());
  EXPECT_EQ(lc().NextPodRetry(1), core::kNever);
  // A pending job's lost pod goes back to the queue, as a controller
  // recreates it.
  const TaskRef lost[] = {{a, Role::kWorker, 0}};
  lc().TasksLost(lost, "node-0 failed");
  EXPECT_EQ(Phase(a), JobPhase::kWaiting);
  EXPECT_EQ(lc().pods().back().task, (TaskRef{a, Role::kWorker, 0}));
  EXPECT_EQ(lc().pods().size(), 4u);
  // The lost pod's room is freed: b's pod is unparked, and due at 3.
  EXPECT_FALSE(lc().pods()[0].Parked(state_.RoomEpoch()));
  EXPECT_EQ(lc().NextPodRetry(1), 3);
}

// Backoffs end at the next whole second (kube's once-a-second flush); a
// parked pod (tried at the room epoch) has no retry.
TEST(PodQueueTest, ARetryComesAtTheFlushAfterTheBackoff) {
  PodQueue q;
  q.Add({0, Role::kWorker, 0}, 0);
  EXPECT_TRUE(q.AnyUntried(5));
  EXPECT_EQ(q.NextRetry(5, 1), core::kNever);  // due at 0, before 1
  q.At(0).not_before = 3.25;
  EXPECT_EQ(q.NextRetry(5, 1), 4);
  q.At(0).not_before = 3;
  EXPECT_EQ(q.NextRetry(5, 1), 3);
  q.At(0).tried_epoch = 5;
  EXPECT_FALSE(q.AnyUntried(5));
  EXPECT_EQ(q.NextRetry(5, 1), core::kNever);
  q.Add({1, Role::kWorker, 0}, 2);
  q.DropIf([](const PendingPod& p) { return p.task.job == 0; });
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].task.job, 1);
}

}  // namespace
}  // namespace dlsched::engine

namespace dlsched::engine {
namespace {

// A restarted operator finds job a running on node 1 (admitted second) and
// job b completed: both enter their phase through valid transitions, with
// no backend call; a later start is numbered after the adopted order, and
// the adopted job completes and releases as any other.
TEST_F(LifecycleTest, AdoptedJobsRunOnAndKeepTheirAdmissionOrder) {
  const JobIndex a = Add("a", 2, 1, 2);
  const JobIndex b = Add("b", 1, 1, 1);
  const JobIndex c = Add("c", 1, 1, 1);
  lc();
  backend_.now = 50;
  state_.PlaceTask({a, Role::kWorker, 0}, 1);
  state_.PlaceTask({a, Role::kWorker, 1}, 1);
  lc().Adopt(a, JobPhase::kRunning, 1);
  lc().Adopt(b, JobPhase::kCompleted, 0);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
  EXPECT_EQ(state_.Job(a).target_workers, 2);
  EXPECT_EQ(Phase(b), JobPhase::kCompleted);
  EXPECT_EQ(lc().Unfinished(), 2);  // a and c
  EXPECT_TRUE(backend_.log.empty());
  EXPECT_TRUE(backend_.timers.empty());
  Start(c, 1);
  EXPECT_EQ(lc().History(c).admission_seq, 2);
  lc().Complete(a);
  EXPECT_EQ(Phase(a), JobPhase::kCompleted);
  EXPECT_EQ(state_.Free(1)[core::kGpu], 4);
}

// A replayed snapshot at t=50 (protect factor 3, launches of 10 s): a
// entered RunningProtected at 45 after a 10 s launch, so it is protected
// until 45 + 3 x 10 = 75; b launches since 48 and trains from 48 + 10 = 58,
// then is protected until 58 + 3 x 10 = 88; c checkpoints since 47 and
// relaunches at 47 + 5 = 52 on the nodes it holds, training from 62.
TEST_F(LifecycleTest, AdoptedPhasesEndOnTheirTimersFromWhenTheyBegan) {
  options_.protect_factor = 3;
  const JobIndex a = Add("a", 1, 1, 1);
  const JobIndex b = Add("b", 1, 1, 1);
  const JobIndex c = Add("c", 1, 1, 1);
  lc();
  backend_.now = 50;
  for (JobIndex j : {a, b, c}) state_.PlaceTask({j, Role::kWorker, 0}, 0);
  lc().Adopt(a, JobPhase::kRunningProtected, 0, {45, 30, 10});
  lc().Adopt(b, JobPhase::kLaunching, 1, {48, 48, 0});
  lc().Adopt(c, JobPhase::kCheckpointing, 2, {47, 20, 10});
  EXPECT_EQ(Phase(a), JobPhase::kRunningProtected);
  EXPECT_EQ(lc().History(a).clock.FirstEntered(JobPhase::kLaunching), 30);
  EXPECT_EQ(lc().History(a).clock.FirstEntered(JobPhase::kRunningProtected), 45);
  RunUntil(52);
  EXPECT_EQ(Phase(c), JobPhase::kLaunching);
  RunUntil(58);
  EXPECT_EQ(Phase(b), JobPhase::kRunningProtected);
  EXPECT_EQ(state_.Job(b).last_launch, 10);
  RunUntil(74.9);
  EXPECT_EQ(Phase(a), JobPhase::kRunningProtected);
  RunUntil(75);
  EXPECT_EQ(Phase(a), JobPhase::kRunning);
  RunUntil(87.9);
  EXPECT_EQ(Phase(b), JobPhase::kRunningProtected);
  RunUntil(88);
  EXPECT_EQ(Phase(b), JobPhase::kRunning);
  EXPECT_EQ(Phase(c), JobPhase::kRunningProtected);  // from 62 until 92
  RunUntil(92);
  EXPECT_EQ(Phase(c), JobPhase::kRunning);
}

}  // namespace
}  // namespace dlsched::engine
