// No run hangs: whatever the deadlines, backoff timers or profile, a run
// whose jobs cannot progress ends, and says why.
#include <gtest/gtest.h>

#include "dlsched/engine/placement.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using testing::MakeEngine;
using testing::Record;

// `workers` one-GPU workers (nothing else requested), 100 steps at 1 step/s.
core::JobSpec GpuJob(const std::string& name, int workers) {
  return dlsched::testing::JobBuilder(name)
      .Workers(workers)
      .WorkerResources(dlsched::testing::Res(0, 0, 1))
      .Steps(100, {{1, 1.0}});
}

// Nodes n0 and n1 of 8 cores, no memory, `gpus` GPUs.
core::ClusterSpec TwoNodes(int64_t gpus) { return dlsched::testing::Nodes(2, 8, 0, gpus, "n"); }

// The per-pod deadlock (two 4-worker jobs, two 3-GPU nodes: each job gets 3
// GPUs and waits for its 4th) with deadlines 9e8 s away. Backoff retries
// cannot help once every pod has failed since the last change, so the run
// sleeps until the deadlines: a handful of cycles, not 9e7 ticks of 10 s.
TEST(NoHangTest, PerPodDeadlockWithAFarDeadlineEndsAtTheDeadline) {
  config::WorkloadSpec w;
  w.jobs = {GpuJob("a", 4), GpuJob("b", 4)};
  for (auto& j : w.jobs) j.deadline = 9e8;
  auto r = Simulate(TwoNodes(3), w, MakeEngine("k8s-default"), {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_LT(r->run.cycles, 50);
  EXPECT_EQ(r->run.end_time, 9e8);
  EXPECT_EQ(Record(*r, "a").final_phase, core::JobPhase::kFailed);
  EXPECT_EQ(Record(*r, "b").final_phase, core::JobPhase::kFailed);
}

// One deadline frees resources the other job then uses: after a deadline
// fails "a" at t=1000, "b" gets its 4th GPU and completes 100 s later.
TEST(NoHangTest, ADeadlineThatFreesResourcesUnblocksTheOthers) {
  config::WorkloadSpec w;
  w.jobs = {GpuJob("a", 4), GpuJob("b", 4)};
  w.jobs[0].deadline = 1000;
  w.jobs[1].deadline = 9e8;
  w.jobs[1].throughput.steps_per_s = {{4, 1.0}};
  auto r = Simulate(TwoNodes(3), w, MakeEngine("k8s-default"), {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(Record(*r, "a").final_phase, core::JobPhase::kFailed);
  EXPECT_EQ(Record(*r, "b").final_phase, core::JobPhase::kCompleted);
  EXPECT_NEAR(Record(*r, "b").completion, 1100, 11);  // within one 10 s backoff
  EXPECT_LT(r->run.cycles, 60);
}

// A sizer that resizes every running job on every cycle, with restart: at
// zero checkpoint and launch delays each resize comes back at the same
// instant, so without a guard the run would cycle for ever at t=1 (when
// b's arrival gives the sizer its first cycle with a running job).
class FlipFlopSizer final : public engine::Sizer {
 public:
  int StartWorkers(const engine::ClusterState& state, engine::JobIndex j) const override {
    return state.Job(j).spec->role(core::Role::kWorker).replicas;
  }
  void Resize(engine::CycleContext& ctx, const engine::Packer&) const override {
    const engine::ClusterState& st = ctx.state();
    for (engine::JobIndex j : st.JobsInPhase(core::JobPhase::kRunning)) {
      const engine::JobState& js = st.Job(j);
      if (js.spec->role(core::Role::kWorker).max_replicas < 2) continue;
      const engine::TaskRef second{j, core::Role::kWorker, 1};
      std::string reason;
      if (js.placed_workers == 2) {
        ctx.session.Evict(second);
      } else if (!engine::PlaceTaskByScore(ctx, second, &reason)) {
        continue;
      }
      ctx.decisions.Resize(j, st.Job(j).placed_workers, "flip", /*restart=*/true);
    }
  }
};

TEST(NoHangTest, ALivelockedProfileIsStoppedAndReported) {
  config::WorkloadSpec w;
  core::JobSpec job = GpuJob("a", 2);
  job.role(core::Role::kWorker).min_replicas = 1;
  core::JobSpec b = GpuJob("b", 1);
  b.submit_time = 1;
  w.jobs = {job, b};
  auto p = policy::BuildProfile(*policy::ResolveProfile("gang-binpack"));
  ASSERT_TRUE(p.has_value());
  p->sizer = std::make_unique<FlipFlopSizer>();
  const engine::Engine engine(std::move(*p));
  auto r = Simulate(TwoNodes(3), w, engine, {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const metrics::JobRecord& a = Record(*r, "a");
  EXPECT_TRUE(a.stuck);
  EXPECT_EQ(r->run.end_time, 1);
  EXPECT_NE(a.reason.find("without any job training, arriving or ending (livelock)"),
            std::string::npos)
      << a.reason;
  // 1000 + 10 per task slot (3 workers): the guard's documented budget.
  EXPECT_LE(r->run.cycles, 1000 + 10 * 3 + 3);
}

}  // namespace
}  // namespace dlsched::sim
