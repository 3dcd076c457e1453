// The scheduler loop both backends run (engine::Scheduler), against a fake
// backend and a profile of test pieces: a cycle applies its plan, the
// progress estimate follows the placement, a policy that reads progress
// sees it as of the cycle's time, the loop asks to be woken when the plan
// says, and a job found running trains from its adoption.
#include "dlsched/engine/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "dlsched/engine/cycle_context.h"
#include "dlsched/engine/test_util.h"
#include "engine/fake_backend.h"

namespace dlsched::engine {
namespace {

using core::JobPhase;
using core::Role;
using testing::Job;
using testing::Nodes;

// What a cycle's pieces saw, for the tests to read.
struct Seen {
  std::vector<double> steps_at_resize;  // steps done of running job 0, per cycle
  core::Time revisit = core::kNever;    // what admission asks for
};

// Starts every pending job with all its workers on node 0 if they fit.
class StartOnNode0 final : public Admission {
 public:
  explicit StartOnNode0(Seen& seen) : seen_(seen) {}
  void Admit(CycleContext& ctx, const Profile&) const override {
    std::vector<JobIndex> pending;
    ctx.state().PendingJobs(&pending);
    for (JobIndex j : pending) {
      const int workers = ctx.state().Job(j).spec->role(Role::kWorker).replicas;
      const Session::Mark mark = ctx.session.GetMark();
      bool fits = true;
      for (int w = 0; w < workers && fits; ++w) {
        const TaskRef t{j, Role::kWorker, w};
        fits = ctx.session.Fits(t, 0);
        if (fits) ctx.session.Assign(t, 0);
      }
      if (fits) {
        ctx.decisions.Start(j, workers, "fits on node-0");
      } else {
        ctx.session.RollbackTo(mark);
        ctx.decisions.Wait(j, "no room on node-0");
      }
    }
    ctx.decisions.RevisitAt(seen_.revisit);
  }

 private:
  Seen& seen_;
};

class AnyOrder final : public JobOrder {
 public:
  void Keys(const ClusterState&, std::span<const JobIndex>, core::Time,
            std::span<double> keys) const override {
    std::fill(keys.begin(), keys.end(), 0.0);
  }
};

class NoPacker final : public Packer {
 public:
  bool PlaceGang(CycleContext&, JobIndex, int, std::string*) const override { return false; }
};

class NoPreemption final : public Preemptor {
 public:
  bool Preempt(CycleContext&, JobIndex, int, const Packer&, std::string*) const override {
    return false;
  }
};

// Resizes nothing; records the progress of job 0 it sees.
class Recorder final : public Sizer {
 public:
  Recorder(Seen& seen, bool reads_progress) : seen_(seen), reads_progress_(reads_progress) {}
  int StartWorkers(const ClusterState& state, JobIndex j) const override {
    return state.Job(j).spec->role(Role::kWorker).replicas;
  }
  bool ReadsProgress() const override { return reads_progress_; }
  void Resize(CycleContext& ctx, const Packer&) const override {
    if (ctx.state().NumJobs() > 0) seen_.steps_at_resize.push_back(ctx.state().Job(0).steps_done);
  }

 private:
  Seen& seen_;
  bool reads_progress_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  explicit SchedulerTest(bool reads_progress = true) {
    Profile p;
    p.name = "test";
    p.admission = std::make_unique<StartOnNode0>(seen_);
    p.order = std::make_unique<AnyOrder>();
    p.packer = std::make_unique<NoPacker>();
    p.preemptor = std::make_unique<NoPreemption>();
    p.sizer = std::make_unique<Recorder>(seen_, reads_progress);
    engine_ = std::make_unique<Engine>(std::move(p));
    scheduler_ = std::make_unique<Scheduler>(cluster_, *engine_, backend_);
    // A backend as the simulator is: binds and pod deletions take effect
    // at once; a job's progress is repriced when the life cycle says it
    // changed.
    backend_.on_bind_confirmed = [this](TaskRef t) { scheduler_->BindDone(t); };
    backend_.on_pod_gone = [this](TaskRef t) { scheduler_->TaskGone(t); };
    backend_.on_progress_change = [this](JobIndex j) { scheduler_->Reprice(j, backend_.now); };
  }

  // Two one-GPU workers at 10 steps/s together, 1,000 steps, no launch or
  // checkpoint delay.
  JobIndex Add(const std::string& name) {
    core::JobSpec spec = Job(name, 0, 0, 2, 2, 2);
    spec.throughput.steps_per_s = {{2, 10.0}};
    specs_.push_back(spec);
    const JobIndex j = scheduler_->AddJob(&specs_.back(), 0);
    scheduler_->JobsAdded();
    return j;
  }
  void Arrive(JobIndex j) {
    const JobIndex jobs[] = {j};
    scheduler_->Arrive(jobs);
  }
  Plan CycleAt(core::Time t) {
    backend_.now = t;
    return scheduler_->Cycle(t, {});
  }
  const JobState& job(JobIndex j) const { return scheduler_->state().Job(j); }

  core::ClusterSpec cluster_ = Nodes(1, 8, 32, 4);
  std::deque<core::JobSpec> specs_;
  Seen seen_;
  dlsched::testing::FakeBackend backend_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Scheduler> scheduler_;
};

class SchedulerWithoutProgressTest : public SchedulerTest {
 protected:
  SchedulerWithoutProgressTest() : SchedulerTest(/*reads_progress=*/false) {}
};

// Hand-worked: job a (2 one-GPU workers, 10 steps/s at 2 workers) arrives
// at 0; the cycle at 0 starts it on node-0 (zero launch delay: Running at
// once) and the backend reprices it: 10 steps/s on 2 GPUs. At 30 s it has
// done 10 x 30 = 300 steps and attained 2 x 30 = 60 GPU-seconds.
TEST_F(SchedulerTest, ACycleAppliesItsPlanAndProgressFollowsThePlacement) {
  const JobIndex a = Add("a");
  Arrive(a);
  const Plan plan = CycleAt(0);
  ASSERT_FALSE(plan.actions.empty());
  EXPECT_EQ(job(a).phase, JobPhase::kRunning);
  EXPECT_EQ(job(a).placed_workers, 2);
  EXPECT_EQ(scheduler_->state().Requested(0)[core::kGpu], 2);
  EXPECT_DOUBLE_EQ(scheduler_->Rate(a), 10.0);
  EXPECT_EQ(scheduler_->NumTraining(), 1);
  scheduler_->Advance(a, 30);
  EXPECT_DOUBLE_EQ(job(a).steps_done, 300.0);
  EXPECT_DOUBLE_EQ(job(a).attained, 60.0);
  // Advancing to the same time again adds nothing.
  scheduler_->Advance(a, 30);
  EXPECT_DOUBLE_EQ(job(a).steps_done, 300.0);
}

// The sizer reads progress: the cycle at 30 s shows it 300 steps (10 steps/s
// for 30 s); the cycle at 0 showed 0.
TEST_F(SchedulerTest, APolicyThatReadsProgressSeesItAsOfTheCycle) {
  const JobIndex a = Add("a");
  Arrive(a);
  CycleAt(0);
  CycleAt(30);
  EXPECT_EQ(seen_.steps_at_resize, (std::vector<double>{0.0, 300.0}));
}

// ... and one that does not is not paid for: the estimate stays where the
// last reprice left it (0 steps at 0 s).
TEST_F(SchedulerWithoutProgressTest, ProgressIsNotBroughtForwardForAPolicyThatIgnoresIt) {
  const JobIndex a = Add("a");
  Arrive(a);
  CycleAt(0);
  CycleAt(30);
  EXPECT_EQ(seen_.steps_at_resize, (std::vector<double>{0.0, 0.0}));
}

TEST_F(SchedulerTest, ThePlansRevisitTimeWakesTheLoop) {
  const JobIndex a = Add("a");
  Arrive(a);
  EXPECT_EQ(scheduler_->RevisitAt(), core::kNever);
  seen_.revisit = 50;
  CycleAt(0);
  EXPECT_EQ(scheduler_->RevisitAt(), 50);
  EXPECT_EQ(scheduler_->NextWakeup(10), 50);
  EXPECT_FALSE(scheduler_->Due(49));
  EXPECT_TRUE(scheduler_->Due(50));
  // The next plan's answer replaces it.
  seen_.revisit = core::kNever;
  CycleAt(50);
  EXPECT_EQ(scheduler_->NextWakeup(50), core::kNever);
  EXPECT_FALSE(scheduler_->Due(1e9));
}

// A job found running (an operator restarted): placed, adopted, repriced
// once, and it trains from then on. Its completion stops the estimate.
TEST_F(SchedulerTest, AnAdoptedJobTrainsFromItsAdoption) {
  const JobIndex a = Add("a");
  backend_.now = 100;
  scheduler_->Place(TaskRef{a, Role::kWorker, 0}, 0);
  scheduler_->Place(TaskRef{a, Role::kWorker, 1}, 0);
  scheduler_->Adopt(a, JobPhase::kRunning, 0);
  EXPECT_EQ(job(a).phase, JobPhase::kRunning);
  EXPECT_EQ(backend_.progress_calls, 1);
  EXPECT_EQ(scheduler_->NumTraining(), 1);
  scheduler_->Advance(a, 110);
  EXPECT_DOUBLE_EQ(job(a).steps_done, 100.0);  // 10 steps/s from 100 s to 110 s
  backend_.now = 110;
  scheduler_->Complete(a);
  EXPECT_EQ(job(a).phase, JobPhase::kCompleted);
  EXPECT_EQ(scheduler_->NumTraining(), 0);
  EXPECT_EQ(scheduler_->Unfinished(), 0);
}

// A finished job adopted as such never trains: no reprice.
TEST_F(SchedulerTest, AnAdoptedFinishedJobIsNotRepriced) {
  const JobIndex a = Add("a");
  scheduler_->Adopt(a, JobPhase::kCompleted, 0);
  EXPECT_EQ(backend_.progress_calls, 0);
  EXPECT_EQ(scheduler_->Unfinished(), 0);
}

// Node-0 fails under the running job at 20 s: its tasks are lost, and
// under taskLoss restart the job goes back to its last checkpoint (none:
// 0 steps) and waits. The 2 x 20 = 40 GPU-seconds it attained stay
// attained; the node's room leaves the cache.
TEST_F(SchedulerTest, ANodeGoneTakesItsTasksAndStopsTheJob) {
  const JobIndex a = Add("a");
  Arrive(a);
  CycleAt(0);
  ASSERT_EQ(scheduler_->NumTraining(), 1);
  backend_.now = 20;
  scheduler_->RemoveNode(0, "failed");
  EXPECT_TRUE(job(a).IsPending());
  EXPECT_EQ(job(a).placed_tasks, 0);
  EXPECT_EQ(scheduler_->NumTraining(), 0);
  EXPECT_DOUBLE_EQ(job(a).steps_done, 0.0);
  EXPECT_DOUBLE_EQ(job(a).attained, 40.0);
  EXPECT_EQ(scheduler_->state().NumPresentNodes(), 0);
}

// A node added, and one changed, are news the cache takes in.
TEST_F(SchedulerTest, NodesComeAndChange) {
  core::NodeSpec spec = cluster_.nodes[0];
  spec.name = "node-1";
  const NodeIndex n = scheduler_->AddNode(spec);
  EXPECT_EQ(scheduler_->state().FindNode("node-1"), n);
  spec.allocatable[core::kGpu] = 8;
  scheduler_->UpdateNode(n, spec);
  EXPECT_EQ(scheduler_->state().Allocatable(n)[core::kGpu], 8);
}

// Pods of other owners hold their room until they go.
TEST_F(SchedulerTest, ForeignPodsHoldRoomUntilGone) {
  core::Resources r;
  r[core::kGpu] = 3;
  scheduler_->ForeignPodBound("other/pod", 0, r, r);
  EXPECT_EQ(scheduler_->state().Free(0)[core::kGpu], 1);
  const JobIndex a = Add("a");
  Arrive(a);
  CycleAt(0);
  EXPECT_TRUE(job(a).IsPending());  // 2 GPUs asked, 1 free
  scheduler_->ForeignPodGone("other/pod");
  EXPECT_EQ(scheduler_->state().Free(0)[core::kGpu], 4);
  CycleAt(1);
  EXPECT_EQ(job(a).phase, JobPhase::kRunning);
}

// Per-pod admission: an arrival's pods wait in the life cycle's queue
// (not the cache), and a job removed takes its queued pods with it. The
// admission here tries none, so the pods stay queued.
class QueueOnly final : public Admission {
 public:
  void Admit(CycleContext&, const Profile&) const override {}
  bool UsesPodQueue() const override { return true; }
};

TEST(SchedulerQueueTest, ARemovedJobTakesItsQueuedPods) {
  Profile p;
  p.name = "queue";
  p.admission = std::make_unique<QueueOnly>();
  p.order = std::make_unique<AnyOrder>();
  p.packer = std::make_unique<NoPacker>();
  p.preemptor = std::make_unique<NoPreemption>();
  Seen seen;
  p.sizer = std::make_unique<Recorder>(seen, false);
  const Engine engine(std::move(p));
  dlsched::testing::FakeBackend backend;
  const core::ClusterSpec cluster = Nodes(1, 8, 32, 4);
  Scheduler scheduler(cluster, engine, backend);
  std::deque<core::JobSpec> specs = {Job("a", 0, 0, 2, 2, 2), Job("b", 0, 0, 1, 1, 1)};
  const JobIndex a = scheduler.AddJob(&specs[0], 0);
  const JobIndex b = scheduler.AddJob(&specs[1], 0);
  scheduler.JobsAdded();
  const JobIndex jobs[] = {a, b};
  scheduler.Arrive(jobs);
  scheduler.Cycle(0, {});
  EXPECT_EQ(scheduler.lifecycle().pods().size(), 3u);
  scheduler.RemoveJob(a, "deleted");
  EXPECT_TRUE(scheduler.state().Job(a).removed);
  ASSERT_EQ(scheduler.lifecycle().pods().size(), 1u);
  EXPECT_EQ(scheduler.lifecycle().pods()[0].task.job, b);
}

}  // namespace
}  // namespace dlsched::engine
