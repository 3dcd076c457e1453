#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "dlsched/config/specs.h"
#include "dlsched/engine/engine.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/policy/fsched/fsched_allocation.h"
#include "dlsched/policy/fsched/sizer_fsched.h"
#include "policy/profiles.h"

namespace dlsched::policy {
namespace {

using core::Role;
using engine::ActionKind;
using engine::JobIndex;

// Throughput tables live here so FschedJob can point at them.
class Tables {
 public:
  const core::ThroughputProfile* Add(std::map<int, double> table) {
    core::ThroughputProfile p;
    p.steps_per_s = std::move(table);
    tables_.push_back(std::move(p));
    return &tables_.back();
  }

 private:
  std::deque<core::ThroughputProfile> tables_;
};

FschedJob Elastic(const core::ThroughputProfile* f, int min, int max, int current,
                  bool frozen = false) {
  FschedJob j;
  j.throughput = f;
  j.min_workers = min;
  j.max_workers = max;
  j.current_workers = current;
  j.frozen = frozen;
  return j;
}

FschedAllocation Allocate(const std::vector<FschedJob>& jobs, int free_gpus, int cluster_gpus,
                          double v_bound, std::vector<FschedStep>* trace = nullptr) {
  FschedInput in;
  in.jobs = jobs;
  in.free_gpus = free_gpus;
  in.cluster_gpus = cluster_gpus;
  in.v_bound = v_bound;
  return AllocateFsched(in, trace);
}

// The hand-worked example of the first three tests: 6 GPUs, one GPU per
// worker, both jobs elastic in [1, 6]; A already runs on 1 worker, B waits.
//   A: f(n) = 3n (table {1: 3, 6: 18}), f_best = 18, S_A(n) = n/6.
//   B: f = 1, 2, 2.5, 3, 3.5, 4 for n = 1..6 (table {1: 1, 2: 2, 3: 2.5,
//      6: 4}), f_best = 4, S_B(1..3) = 1/4, 1/2, 5/8.
// Step 1: A 1, B 1, 4 GPUs left; S = (1/6, 1/4). With two jobs the
// population variance is ((S_A - S_B) / 2)^2, never more than 0.25.
class FschedExample : public ::testing::Test {
 protected:
  std::vector<FschedJob> Jobs() { return {Elastic(a_, 1, 6, 1), Elastic(b_, 1, 6, 0)}; }
  Tables tables_;
  const core::ThroughputProfile* a_ = tables_.Add({{1, 3}, {6, 18}});
  const core::ThroughputProfile* b_ = tables_.Add({{1, 1}, {2, 2}, {3, 2.5}, {6, 4}});
};

// vBound 0.5 is above any possible variance: pure throughput greedy.
//   4 left: A+1 -> S (1/3, 1/4) var 0.00174 total 7;  B+1 -> (1/6, 1/2) var 0.02778 total 5 -> A
//   3 left: A+1 -> (1/2, 1/4) var 0.015625 total 10;    B+1 -> (1/3, 1/2) var 0.00694 total 8 -> A
//   2 left: A+1 -> (2/3, 1/4) var 0.04340 total 13;    B+1 -> (1/2, 1/2) var 0       total 11 -> A
//   1 left: A+1 -> (5/6, 1/4) var 0.08507 total 16;    B+1 -> (2/3, 1/2) var 0.00694 total 14 -> A
// A 5, B 1: 16 steps/s, variance 0.08507.
TEST_F(FschedExample, LooseBoundIsAThroughputGreedy) {
  std::vector<FschedStep> trace;
  const FschedAllocation r = Allocate(Jobs(), 6, 6, 0.5, &trace);
  EXPECT_EQ(r.workers, (std::vector<int>{5, 1}));
  EXPECT_DOUBLE_EQ(r.best[0], 18);
  EXPECT_DOUBLE_EQ(r.best[1], 4);
  EXPECT_DOUBLE_EQ(r.throughput, 16);
  EXPECT_NEAR(r.variance, (5.0 / 6 - 0.25) * (5.0 / 6 - 0.25) / 4, 1e-12);
  EXPECT_EQ(r.gpus_left, 0);
  ASSERT_EQ(trace.size(), 4u);
  const double want_var[4][2] = {
      {0.00174, 0.02778}, {0.015625, 0.00694}, {0.04340, 0}, {0.08507, 0.00694}};
  const double want_total[4][2] = {{7, 5}, {10, 8}, {13, 11}, {16, 14}};
  for (int s = 0; s < 4; ++s) {
    SCOPED_TRACE(s);
    EXPECT_EQ(trace[s].gpus_left, 4 - s);
    ASSERT_EQ(trace[s].candidates.size(), 2u);
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(trace[s].candidates[c].job, c);
      EXPECT_NEAR(trace[s].candidates[c].variance, want_var[s][c], 5e-6);
      EXPECT_DOUBLE_EQ(trace[s].candidates[c].throughput, want_total[s][c]);
      EXPECT_TRUE(trace[s].candidates[c].under_bound);
    }
    EXPECT_EQ(trace[s].chosen, 0);  // A every time
    EXPECT_FALSE(trace[s].smallest_variance);
  }
}

// vBound 0.05: the first three steps are as above (A's candidates, 0.00174,
// 0.015625 and 0.04340, are under 0.05 and bring more throughput). At 1 left,
// A+1 (variance 0.08507) is over the bound and B+1 (0.00694) is the only
// candidate under it, so B gets the last GPU: A 4, B 2, 14 steps/s,
// variance ((2/3 - 1/2) / 2)^2 = 0.00694. Fairness costs 2 steps/s.
TEST_F(FschedExample, BoundSteersTheLastGpuToTheSlowerJob) {
  std::vector<FschedStep> trace;
  const FschedAllocation r = Allocate(Jobs(), 6, 6, 0.05, &trace);
  EXPECT_EQ(r.workers, (std::vector<int>{4, 2}));
  EXPECT_DOUBLE_EQ(r.throughput, 14);
  EXPECT_NEAR(r.variance, 1.0 / 144, 1e-12);
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_FALSE(trace[3].candidates[0].under_bound);
  EXPECT_TRUE(trace[3].candidates[1].under_bound);
  EXPECT_EQ(trace[3].chosen, 1);
  EXPECT_FALSE(trace[3].smallest_variance);
}

// vBound 0.001: no candidate is under the bound in three of the four
// steps, and the one with the smallest variance is taken:
//   4 left: A+1 0.00174, B+1 0.02778: none under -> smallest: A
//   3 left: A+1 0.015625, B+1 0.00694: none under -> smallest: B
//   2 left: A+1 -> (1/2, 1/2) var 0 total 11 (under); B+1 -> (1/3, 5/8)
//           var 0.02127 total 8.5 -> A (the only one under)
//   1 left: A+1 -> (2/3, 1/2) 0.00694; B+1 -> (1/2, 5/8) 0.00391: none
//           under -> smallest: B
// A 3, B 3: 9 + 2.5 = 11.5 steps/s, variance ((1/2 - 5/8) / 2)^2 = 0.00391.
TEST_F(FschedExample, NoCandidateUnderTheBoundTakesTheSmallestVariance) {
  std::vector<FschedStep> trace;
  const FschedAllocation r = Allocate(Jobs(), 6, 6, 0.001, &trace);
  EXPECT_EQ(r.workers, (std::vector<int>{3, 3}));
  EXPECT_DOUBLE_EQ(r.throughput, 11.5);
  EXPECT_NEAR(r.variance, 1.0 / 256, 1e-12);
  ASSERT_EQ(trace.size(), 4u);
  const int chosen[4] = {0, 1, 0, 1};
  const bool smallest[4] = {true, true, false, true};
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(trace[s].candidates[trace[s].chosen].job, chosen[s]) << s;
    EXPECT_EQ(trace[s].smallest_variance, smallest[s]) << s;
  }
  EXPECT_NEAR(trace[2].candidates[1].variance, 0.02127, 5e-6);
}

// A frozen job F holds 2 workers (f = 2n up to 2, then {6: 6}: f(2) = 4,
// f_best 6, S = 2/3); its GPUs are not in free_gpus (6 - 2 = 4). A runs on
// 1, C (table {1: 2, 2: 4, 4: 6}, f_best 6, max 4) waits.
//   Step 1: A 1, C 1, 2 GPUs left; S = (2/3, 1/6, 1/3) over F, A, C.
//   2 left: A+1 -> (2/3, 1/3, 1/3) var 0.02469 total 4+6+2 = 12;
//           C+1 -> (2/3, 1/6, 2/3) var 0.05556 total 4+3+4 = 11 -> A
//   1 left: A+1 -> (2/3, 1/2, 1/3) var 1/54 = 0.01852 total 15;
//           C+1 -> (2/3, 1/3, 2/3) var 0.02469 total 14 -> A
// F keeps 2 and is never a candidate; its slowdown counts in the variance.
TEST(FschedAllocationTest, FrozenJobKeepsItsSizeAndCountsInTheVariance) {
  Tables t;
  const std::vector<FschedJob> jobs = {
      Elastic(t.Add({{1, 2}, {2, 4}, {6, 6}}), 1, 6, 2, /*frozen=*/true),
      Elastic(t.Add({{1, 3}, {6, 18}}), 1, 6, 1),
      Elastic(t.Add({{1, 2}, {2, 4}, {4, 6}}), 1, 4, 0)};
  std::vector<FschedStep> trace;
  const FschedAllocation r = Allocate(jobs, 4, 6, 0.5, &trace);
  EXPECT_EQ(r.workers, (std::vector<int>{2, 3, 1}));
  EXPECT_NEAR(r.variance, 1.0 / 54, 1e-12);
  EXPECT_DOUBLE_EQ(r.throughput, 15);
  ASSERT_EQ(trace.size(), 2u);
  for (const FschedStep& s : trace) {
    ASSERT_EQ(s.candidates.size(), 2u);  // A and C, never F
    EXPECT_EQ(s.candidates[0].job, 1);
    EXPECT_EQ(s.candidates[1].job, 2);
    EXPECT_EQ(s.chosen, 0);
  }
  EXPECT_NEAR(trace[0].candidates[0].variance, 0.02469, 5e-6);
  EXPECT_NEAR(trace[0].candidates[1].variance, 0.05556, 5e-6);
}

// 6 GPUs. R runs with 4 workers (min 2, max 4); W (min 5) arrived before S
// (min 1, max 1), both wait. Step 1: R keeps its minimum 2, W needs 5 of
// the 4 left and waits, S (later, smaller) takes 1 (backfill). Step 2: R
// grows to its max 4; S is at its max; 1 GPU stays idle.
TEST(FschedAllocationTest, MinimumThatDoesNotFitWaitsAndLaterSmallerJobsBackfill) {
  Tables t;
  const auto* f = t.Add({{1, 1}, {6, 6}});
  const std::vector<FschedJob> jobs = {Elastic(f, 2, 4, 4), Elastic(f, 5, 6, 0),
                                       Elastic(f, 1, 1, 0)};
  const FschedAllocation r = Allocate(jobs, 6, 6, 0.5);
  EXPECT_EQ(r.workers, (std::vector<int>{4, 0, 1}));
  EXPECT_EQ(r.gpus_left, 1);
  EXPECT_EQ(r.left_at_turn, (std::vector<int>{-1, 4, -1}));  // W found 4 GPUs, needed 5
  EXPECT_DOUBLE_EQ(r.slowdown[1], 0);  // W holds nothing and is not in the variance
  // Variance over R (4/4 = 1) and S (1/1 = 1) only.
  EXPECT_DOUBLE_EQ(r.variance, 0);
}

// A running job keeps its minimum even against an earlier waiting job: the
// reallocation never stops a job. W (arrived first, min 4) waits; R (min =
// max = 3) runs on 3 of the 6 GPUs.
TEST(FschedAllocationTest, RunningJobKeepsItsMinimumBeforeAnEarlierWaitingJob) {
  Tables t;
  const auto* f = t.Add({{1, 1}, {6, 6}});
  const FschedAllocation r = Allocate({Elastic(f, 4, 6, 0), Elastic(f, 3, 3, 3)}, 6, 6, 0.5);
  EXPECT_EQ(r.workers, (std::vector<int>{0, 3}));
  EXPECT_EQ(r.gpus_left, 3);
}

// 8 GPUs. P has a PS with 1 GPU and workers of 2 GPUs (min 1, max 4,
// f = 2, 3.5, 4.5, 5): with the whole cluster it could run (8 - 1) / 2 = 3
// workers, so f_best = f(3) = 4.5, not f(4). Q has 1-GPU workers, min 2,
// max 8, f(n) = n ({2: 2, 8: 8}), f_best 8.
//   Step 1: P 1 (3 GPUs), Q 2 (2 GPUs), 3 left.
//   3 left: P+1 (2 GPUs) total 3.5 + 2 = 5.5; Q+1 total 2 + 3 = 5 -> P
//   1 left: P+1 needs 2: not a candidate; Q+1 -> Q
// P 2 (5 GPUs), Q 3 (3 GPUs).
TEST(FschedAllocationTest, GpusPerWorkerAndPsGpusAreCounted) {
  Tables t;
  FschedJob p = Elastic(t.Add({{1, 2}, {2, 3.5}, {3, 4.5}, {4, 5}}), 1, 4, 0);
  p.gpus_per_worker = 2;
  p.fixed_gpus = 1;
  const FschedJob q = Elastic(t.Add({{2, 2}, {8, 8}}), 2, 8, 0);
  std::vector<FschedStep> trace;
  const FschedAllocation r = Allocate({p, q}, 8, 8, 0.5, &trace);
  EXPECT_DOUBLE_EQ(r.best[0], 4.5);
  EXPECT_DOUBLE_EQ(r.best[1], 8);
  EXPECT_EQ(r.workers, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.gpus_left, 0);
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[1].candidates.size(), 1u);
  EXPECT_EQ(trace[1].candidates[0].job, 1);
}

// Two identical jobs and one GPU to hand out: equal throughput, equal
// variance: the earlier job gets it. Then both are at max and 3 GPUs stay
// idle (the greedy stops when no job can grow).
TEST(FschedAllocationTest, TiesGoToTheEarlierJobAndIdleGpusStayWhenNobodyCanGrow) {
  Tables t;
  const auto* f = t.Add({{1, 1}, {2, 2}});
  const FschedAllocation one = Allocate({Elastic(f, 1, 2, 1), Elastic(f, 1, 2, 1)}, 3, 6, 0.5);
  EXPECT_EQ(one.workers, (std::vector<int>{2, 1}));
  const FschedAllocation idle = Allocate({Elastic(f, 1, 2, 1), Elastic(f, 1, 2, 1)}, 7, 7, 0.5);
  EXPECT_EQ(idle.workers, (std::vector<int>{2, 2}));
  EXPECT_EQ(idle.gpus_left, 3);
}

// Heterogeneity-aware (FschedInput::types): each GPU type is a pool. Types
// k80 (2 GPUs) and v100 (1 GPU); one GPU per worker.
//   a: runs 1 worker on k80, elastic [1, 2]; k80 {1: 1, 2: 1.8}, no v100
//      table (its table {1: 1, 2: 1.8} there): f_best = max(k80 1.8 on 2,
//      v100 1 on 1) = 1.8. Its GPU is in k80's pool: k80 2 free, v100 1.
//   b: waits, [1, 1]; k80 1, v100 3: f_best 3.
//   c: waits, [1, 1]; k80 2, v100 2.5: f_best 2.5.
//   d: waits, [1, 1]; 1 everywhere.
// Step 1: a keeps 1 on k80 (k80 1 left). b: k80 (1) and v100 (3) have room:
// v100 (left 0). c: only k80 has room: k80 (left 0). d: no type has room:
// waits, left_at_turn 0. Step 2: a's next worker needs a k80 GPU: none;
// the allocation ends. Throughput 1 + 3 + 2 = 6; slowdowns a 1/1.8, b 1,
// c 2/2.5 = 0.8.
// Then a alone, waiting, [1, 4], on 2 k80 and 2 v100 GPUs (k80 1 per
// worker, v100 4 per worker): it starts on v100 and grows there to 2;
// the k80 GPUs stay idle (a job holds one type). Agnostic: 4 workers.
TEST(FschedAllocationTest, AwareEachGpuTypeIsAPool) {
  std::deque<core::ThroughputProfile> tables;
  auto add = [&](std::map<int, double> base, core::GpuTypeRates by_type) {
    core::ThroughputProfile p;
    p.steps_per_s = std::move(base);
    p.SetGpuTypes(std::move(by_type));
    tables.push_back(std::move(p));
    return &tables.back();
  };
  const std::vector<std::string> types = {"k80", "v100"};
  std::vector<FschedJob> jobs = {
      Elastic(add({{1, 1}, {2, 1.8}}, {{"k80", {{1, 1}, {2, 1.8}}}}), 1, 2, 1),
      Elastic(add({{1, 1}}, {{"k80", {{1, 1}}}, {"v100", {{1, 3}}}}), 1, 1, 0),
      Elastic(add({{1, 2}}, {{"k80", {{1, 2}}}, {"v100", {{1, 2.5}}}}), 1, 1, 0),
      Elastic(add({{1, 1}}, {}), 1, 1, 0)};
  jobs[0].type = 0;
  std::vector<int> type_free = {2, 1};
  std::vector<int> type_gpus = {2, 1};
  FschedInput in;
  in.jobs = jobs;
  in.cluster_gpus = 3;
  in.types = types;
  in.type_free = type_free;
  in.type_gpus = type_gpus;
  FschedAllocation out = AllocateFsched(in);
  EXPECT_EQ(out.workers, (std::vector<int>{1, 1, 1, 0}));
  EXPECT_EQ(out.type, (std::vector<int>{0, 1, 0, -1}));
  EXPECT_EQ(out.left_at_turn, (std::vector<int>{-1, -1, -1, 0}));
  EXPECT_DOUBLE_EQ(out.throughput, 6);
  EXPECT_DOUBLE_EQ(out.best[0], 1.8);
  EXPECT_DOUBLE_EQ(out.best[2], 2.5);
  EXPECT_DOUBLE_EQ(out.slowdown[0], 1 / 1.8);
  EXPECT_DOUBLE_EQ(out.slowdown[1], 1);
  EXPECT_DOUBLE_EQ(out.slowdown[2], 0.8);
  EXPECT_EQ(out.gpus_left, 0);

  const std::vector<FschedJob> alone = {
      Elastic(add({{1, 1}}, {{"k80", {{1, 1}, {4, 4}}}, {"v100", {{1, 4}, {4, 16}}}}), 1, 4, 0)};
  type_free = {2, 2};
  type_gpus = {2, 2};
  in.jobs = alone;
  in.cluster_gpus = 4;
  out = AllocateFsched(in);
  EXPECT_EQ(out.workers, (std::vector<int>{2}));
  EXPECT_EQ(out.type, (std::vector<int>{1}));
  EXPECT_DOUBLE_EQ(out.throughput, 8);
  EXPECT_DOUBLE_EQ(out.best[0], 8);  // 2 workers on v100's 2 GPUs
  EXPECT_EQ(out.gpus_left, 2);
  in.types = {};
  in.free_gpus = 4;
  EXPECT_EQ(AllocateFsched(in).workers, (std::vector<int>{4}));
}

TEST(FschedAllocationTest, PopulationVariance) {
  EXPECT_DOUBLE_EQ(PopulationVariance(std::vector<double>{}), 0);
  EXPECT_DOUBLE_EQ(PopulationVariance(std::vector<double>{0.5}), 0);
  EXPECT_DOUBLE_EQ(PopulationVariance(std::vector<double>{0, 1}), 0.25);
  EXPECT_NEAR(PopulationVariance(std::vector<double>{2.0 / 3, 0.5, 1.0 / 3}), 1.0 / 54, 1e-15);
}

// --- The sizer inside a whole engine cycle (profile `fsched`).

engine::Profile FschedProfile(double min_gain, bool hold = true) {
  return dlsched::testing::BuiltinProfile("fsched", [&](config::ProfileSpec& spec) {
    spec.sizer.args["minGain"] = min_gain;
    spec.sizer.args["holdUntilCheckpoint"] = hold;
  });
}

class FschedSizerTest : public ::testing::Test {
 protected:
  JobIndex Add(core::JobSpec spec, std::map<int, double> table) {
    spec.throughput.steps_per_s = std::move(table);
    specs_.push_back(std::move(spec));
    const JobIndex j = state_->AddJob(&specs_.back(), specs_.back().submit_time);
    state_->SetPhase(j, core::JobPhase::kWaiting, specs_.back().submit_time);
    return j;
  }
  // Places the job's PS on ps_node (if it has one) and worker i on
  // workers[i], and moves it to Running.
  void StartRunning(JobIndex j, engine::NodeIndex ps_node,
                    const std::vector<engine::NodeIndex>& workers) {
    if (state_->Job(j).NumPs() > 0) state_->PlaceTask({j, Role::kPS, 0}, ps_node);
    for (int i = 0; i < static_cast<int>(workers.size()); ++i) {
      state_->PlaceTask({j, Role::kWorker, i}, workers[i]);
    }
    state_->SetPhase(j, core::JobPhase::kLaunching, 0);
    state_->SetPhase(j, core::JobPhase::kRunning, 0);
  }
  std::vector<const engine::Action*> Actions(const engine::Plan& plan, ActionKind kind) {
    std::vector<const engine::Action*> out;
    for (const auto& a : plan.actions) {
      if (a.kind == kind) out.push_back(&a);
    }
    return out;
  }

  // The plan's only kWait is job `j`'s, with `reason`.
  void ExpectOnlyWait(const engine::Plan& plan, JobIndex j, const std::string& reason) {
    const auto waits = Actions(plan, ActionKind::kWait);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(waits[0]->task.job, j);
    EXPECT_EQ(waits[0]->reason, reason);
  }

  void MakeCluster(int nodes, int gpus) {
    cluster_ = engine::testing::Nodes(nodes, 16, 64, gpus);
    state_ = std::make_unique<engine::ClusterState>(cluster_);
  }

  core::ClusterSpec cluster_;
  std::unique_ptr<engine::ClusterState> state_;
  std::deque<core::JobSpec> specs_;
};

// Two nodes of 4 GPUs. A (1 PS, 1-GPU workers in [1, 8], f(n) = n) runs on
// all 8 GPUs: PS and workers 0-3 on node-0, workers 4-7 on node-1. B (no
// PS, workers in [2, 4], f = {2: 4, 4: 8}, i.e. 2n) arrives and does not
// fit, so admission leaves it waiting.
// Allocation (8 GPUs): step 1 A 1, B 2, 5 left; B+1 adds 2 steps/s, A+1
// adds 1, so B grows to its max 4 and A takes the 3 left: A 4, B 4,
// total 4 + 8 = 12 (was 8), S = (1/2, 1) -> variance 0.0625.
// A shrinks 8 -> 4 from node-1 (no PS there), highest slot first: workers
// 7, 6, 5, 4. With the hand-over at checkpoints (holdUntilCheckpoint, the
// default) A's kResize holds them until its checkpoint (5 s) is done and B
// waits for that: no bind in this plan. With holdUntilCheckpoint: false B
// is placed on node-1 at once (the only node with free GPUs; the packer at
// its minimum 2, then grown next to its own workers).
TEST_F(FschedSizerTest, ShrinksAwayFromThePsAndStartsTheWaitingJobOnTheFreedNode) {
  for (const bool hold : {true, false}) {
    SCOPED_TRACE(hold);
    MakeCluster(2, 4);
    specs_.clear();
    core::JobSpec ja = engine::testing::Job("a", 0, 1, 8, 1, 8);
    ja.checkpoint_delay = 5;
    const JobIndex a = Add(ja, {{1, 1}, {8, 8}});
    const JobIndex b = Add(engine::testing::Job("b", 10, 0, 2, 2, 4), {{2, 4}, {4, 8}});
    StartRunning(a, 0, {0, 0, 0, 0, 1, 1, 1, 1});
    const engine::Engine engine(FschedProfile(1, hold));
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(*state_, pods, memos, 100);

    const auto unbinds = Actions(plan, ActionKind::kUnbind);
    ASSERT_EQ(unbinds.size(), 4u);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(unbinds[k]->task, (engine::TaskRef{a, Role::kWorker, 7 - k}));
    }
    const auto resizes = Actions(plan, ActionKind::kResize);
    ASSERT_EQ(resizes.size(), 1u);
    EXPECT_EQ(resizes[0]->task.job, a);
    EXPECT_EQ(resizes[0]->workers, 4);
    EXPECT_TRUE(resizes[0]->restart);
    EXPECT_EQ(resizes[0]->hold, hold);
    // A gives its GPUs up for B's start: a preemption by B.
    EXPECT_EQ(resizes[0]->reason,
              "reallocated: 8 -> 4 workers (total throughput 8.0 -> 12.0 steps/s, variance "
              "0.0625; for b)");
    EXPECT_TRUE(resizes[0]->preempted);
    EXPECT_EQ(resizes[0]->by, b);
    const auto binds = Actions(plan, ActionKind::kBind);
    const auto starts = Actions(plan, ActionKind::kStart);
    if (hold) {
      EXPECT_TRUE(binds.empty());
      EXPECT_TRUE(starts.empty());
      ExpectOnlyWait(plan, b,
                     "waiting for a's checkpoint (ends at 105 s): F-scheduling gives it 4 "
                     "workers then (total throughput 8.0 -> 12.0 steps/s, variance 0.0625)");
      continue;
    }
    ASSERT_EQ(binds.size(), 4u);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(binds[k]->task, (engine::TaskRef{b, Role::kWorker, k}));
      EXPECT_EQ(binds[k]->node, 1);
    }
    ASSERT_EQ(starts.size(), 1u);
    EXPECT_EQ(starts[0]->task.job, b);
    EXPECT_EQ(starts[0]->workers, 4);
    EXPECT_EQ(starts[0]->reason,
              "started with 4 workers by reallocation (total throughput 8.0 -> 12.0 steps/s, "
              "variance 0.0625)");
    EXPECT_TRUE(Actions(plan, ActionKind::kWait).empty());  // B's kWait became its kStart
  }
}

// One node of 7 GPUs. A runs on 5 (f = 4, 7, 9, 9.5, 9.6, 10 for 1..6
// workers); B (f = 2, 2.6, 3 for 1..3, 3.5 at 6) arrives and the admission
// starts it on 1 of the 2 free GPUs. Now A 5 + B 1 = 9.6 + 2 = 11.6 steps/s.
// The full allocation (step 1 A 1, B 1; then A, A, B, A, B) is A 4, B 3:
// 9.5 + 3 = 12.5, a gain of 0.9 < minGain 1 for restarting A: rejected.
// The fallback keeps A at 5 and gives the 2 GPUs not held by A to B: B
// starts with 2 workers (9.6 + 2.6 = 12.2; S = (0.96, 2.6/3.5) -> variance
// 0.0118). With minGain 0.5 the full plan goes through: A shrinks 5 -> 4,
// and B needs 2 more GPUs than the 1 free now: it waits for A's GPU (its
// start by admission is taken back), to start with 3 when A's checkpoint
// (0 s: at once) is done.
TEST_F(FschedSizerTest, MinGainRejectsARestartButTheNewJobStillTakesTheIdleGpu) {
  const std::map<int, double> fa = {{1, 4}, {2, 7}, {3, 9}, {4, 9.5}, {5, 9.6}, {6, 10}};
  const std::map<int, double> fb = {{1, 2}, {2, 2.6}, {3, 3}, {6, 3.5}};
  for (double min_gain : {1.0, 0.5}) {
    SCOPED_TRACE(min_gain);
    MakeCluster(1, 7);
    specs_.clear();
    const JobIndex a = Add(engine::testing::Job("a", 0, 0, 5, 1, 6), fa);
    const JobIndex b = Add(engine::testing::Job("b", 10, 0, 1, 1, 6), fb);
    StartRunning(a, 0, {0, 0, 0, 0, 0});
    const engine::Engine engine(FschedProfile(min_gain));
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(*state_, pods, memos, 100);
    const auto starts = Actions(plan, ActionKind::kStart);
    const auto resizes = Actions(plan, ActionKind::kResize);
    if (min_gain == 1.0) {
      ASSERT_EQ(starts.size(), 1u);
      EXPECT_EQ(starts[0]->task.job, b);
      EXPECT_TRUE(resizes.empty());
      EXPECT_TRUE(Actions(plan, ActionKind::kUnbind).empty());
      EXPECT_EQ(starts[0]->workers, 2);
      EXPECT_EQ(starts[0]->reason,
                "started with 2 workers (F-scheduling: total throughput 11.6 -> 12.2 steps/s, "
                "variance 0.0118)");
    } else {
      ASSERT_EQ(resizes.size(), 1u);
      EXPECT_EQ(resizes[0]->task.job, a);
      EXPECT_EQ(resizes[0]->workers, 4);
      EXPECT_TRUE(resizes[0]->hold);
      EXPECT_TRUE(starts.empty());
      EXPECT_TRUE(Actions(plan, ActionKind::kBind).empty());
      ExpectOnlyWait(plan, b,
                     "waiting for a's checkpoint (ends at 100 s): F-scheduling gives it 3 "
                     "workers then (total throughput 11.6 -> 12.5 steps/s, variance 0.0022)");
      // B, started by the admission this cycle, waits for A's GPU.
      EXPECT_EQ(resizes[0]->reason,
                "reallocated: 5 -> 4 workers (total throughput 11.6 -> 12.5 steps/s, variance "
                "0.0022; for b)");
      EXPECT_TRUE(resizes[0]->preempted);
      EXPECT_EQ(resizes[0]->by, b);
    }
  }
}

// Pay-back in a cycle: one node of 4 GPUs, A runs alone on 2 (f(n) = n,
// 1000 steps, checkpoint 5 s, launch 10 s). The allocation grows A to 4
// (+2 steps/s >= minGain 1), a restart:
//   990 steps done: 10 left, 10 / 2 = 5 s as it is, 5 + 10 + 10 / 4 =
//     17.5 s restarted: refused, A keeps 2 (nothing happens);
//   0 done: 1000 / 2 = 500 s against 15 + 250 = 265 s: A grows to 4;
//   totalSteps 0 (a TrainingJob that does not say its work): not judged,
//     A grows to 4.
TEST_F(FschedSizerTest, RestartToGrowMustFinishTheJobSooner) {
  for (const auto& [total, done, grows] : std::vector<std::tuple<double, double, bool>>{
           {1000, 990, false}, {1000, 0, true}, {0, 0, true}}) {
    SCOPED_TRACE(done);
    MakeCluster(1, 4);
    specs_.clear();
    core::JobSpec ja = engine::testing::Job("a", 0, 0, 2, 1, 4);
    ja.total_steps = total;
    ja.checkpoint_delay = 5;
    ja.launch_delay = 10;
    const JobIndex a = Add(ja, {{1, 1}, {4, 4}});
    StartRunning(a, 0, {0, 0});
    state_->MutableJob(a).steps_done = done;
    const engine::Engine engine(FschedProfile(1));
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(*state_, pods, memos, 100);
    const auto resizes = Actions(plan, ActionKind::kResize);
    if (!grows) {
      EXPECT_FALSE(plan.ChangesState());
      continue;
    }
    ASSERT_EQ(resizes.size(), 1u);
    EXPECT_EQ(resizes[0]->workers, 4);
    EXPECT_TRUE(resizes[0]->restart);
    EXPECT_FALSE(resizes[0]->hold);  // a grow gives nothing up
    EXPECT_EQ(Actions(plan, ActionKind::kBind).size(), 2u);
  }
}

// A job in RunningProtected is frozen: a waiting job that does not fit in
// the free GPUs stays waiting instead of taking the protected job's GPUs.
TEST_F(FschedSizerTest, ProtectedJobIsNotShrunk) {
  MakeCluster(1, 4);
  const JobIndex a = Add(engine::testing::Job("a", 0, 0, 4, 1, 4), {{1, 1}, {4, 4}});
  const JobIndex b = Add(engine::testing::Job("b", 10, 0, 1, 1, 4), {{1, 1}, {4, 4}});
  StartRunning(a, 0, {0, 0, 0, 0});
  state_->SetPhase(a, core::JobPhase::kRunningProtected, 0);
  const engine::Engine engine(FschedProfile(1));
  engine::PodQueue pods;
  engine::Memos memos;
  const engine::Plan plan = engine.Cycle(*state_, pods, memos, 100);
  EXPECT_FALSE(plan.ChangesState());
  ExpectOnlyWait(plan, b,
                 "waiting: gang of 1 worker needs 1 nvidia.com/gpu, the cluster has 0 free; "
                 "reallocation: its minimum needs 1 nvidia.com/gpu, 0 left after the minimums "
                 "of running and earlier jobs (4 held by launching or protected jobs)");
}

// Heterogeneity-aware sizer. Two nodes of 4 GPUs: node-0 k80, node-1
// v100; one GPU per worker, every rate the same on every type unless said.
//   c: runs 4 workers on node-0, [4, 4], f = {4: 4}: f_best 4.
//   a: runs 4 workers on node-1, [1, 4], f(n) = n: f_best 4.
//   b: arrives at 10, [2, 4], k80 f(n) = n, v100 f(n) = 3n: f_best 12.
// Admission cannot start b (no GPU is free). The allocation, with the
// pools k80 4 (c's) and v100 4 (a's): c keeps 4 on k80 (0 left), a its
// minimum 1 on v100 (3 left); b's minimum runs fastest on v100 (6 > 2),
// which has room: v100 1 left. The last GPU: b+1 adds 9 - 6 = 3 steps/s,
// a+1 adds 1 (vBound 0.5 never binds): b 3. Total 4 + 1 + 9 = 14 (was 8);
// slowdowns 1, 1/4, 9/12: variance ((1/3)^2 + (5/12)^2 + (1/12)^2) / 3 =
// 0.0972. a shrinks 4 -> 1 (workers 3, 2, 1 first) and, with no hand-over
// at checkpoints, b goes on node-1 at once: 3 workers on v100.
TEST_F(FschedSizerTest, AwareStartsAWaitingJobOnItsFastestTypeWithRoom) {
  MakeCluster(2, 4);
  cluster_.nodes[0].labels[std::string(core::kGpuTypeLabel)] = "k80";
  cluster_.nodes[1].labels[std::string(core::kGpuTypeLabel)] = "v100";
  state_ = std::make_unique<engine::ClusterState>(cluster_);
  const JobIndex c = Add(engine::testing::Job("c", 0, 0, 4, 4, 4), {{4, 4}});
  const JobIndex a = Add(engine::testing::Job("a", 0, 0, 4, 1, 4), {{1, 1}, {4, 4}});
  core::JobSpec jb = engine::testing::Job("b", 10, 0, 2, 2, 4);
  jb.throughput.SetGpuTypes({{"k80", {{2, 2}, {4, 4}}}, {"v100", {{2, 6}, {4, 12}}}});
  const JobIndex b = Add(jb, {{2, 2}, {4, 4}});
  StartRunning(c, 0, {0, 0, 0, 0});
  StartRunning(a, 0, {1, 1, 1, 1});
  const engine::Engine engine(
      dlsched::testing::BuiltinProfile("fsched", [&](config::ProfileSpec& spec) {
        spec.sizer.args["heterogeneity"] = "aware";
        spec.sizer.args["holdUntilCheckpoint"] = false;
      }));
  engine::PodQueue pods;
  engine::Memos memos;
  const engine::Plan plan = engine.Cycle(*state_, pods, memos, 10);
  const auto starts = Actions(plan, ActionKind::kStart);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0]->task.job, b);
  EXPECT_EQ(starts[0]->workers, 3);
  EXPECT_EQ(starts[0]->reason,
            "started with 3 workers on v100 by reallocation (total throughput 8.0 -> 14.0 "
            "steps/s, variance 0.0972)");
  const auto resizes = Actions(plan, ActionKind::kResize);
  ASSERT_EQ(resizes.size(), 1u);
  EXPECT_EQ(resizes[0]->task.job, a);
  EXPECT_EQ(resizes[0]->workers, 1);
  std::vector<engine::NodeIndex> b_nodes;
  for (const auto* bind : Actions(plan, ActionKind::kBind)) {
    if (bind->task.job == b) b_nodes.push_back(bind->node);
  }
  EXPECT_EQ(b_nodes, (std::vector<engine::NodeIndex>{1, 1, 1}));
}

TEST(FschedRegistryTest, ArgumentsAreValidated) {
  auto spec = ResolveProfile("fsched");
  ASSERT_TRUE(spec.has_value());
  spec->sizer.args["vBound"] = 2;
  auto bad = BuildProfile(*spec);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("vBound: expected a number in 0..1"), std::string::npos)
      << bad.error().message;
  spec = ResolveProfile("fsched");
  spec->sizer.args["minGian"] = 1;
  bad = BuildProfile(*spec);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("minGian: unknown argument"), std::string::npos)
      << bad.error().message;
  spec = ResolveProfile("fsched");
  auto good = BuildProfile(*spec);
  ASSERT_TRUE(good.has_value());
  EXPECT_DOUBLE_EQ(good->protect_factor, 3);
  const auto* sizer = dynamic_cast<const FSchedulingSizer*>(good->sizer.get());
  ASSERT_NE(sizer, nullptr);
  EXPECT_DOUBLE_EQ(sizer->options().v_bound, 0.5);
  EXPECT_DOUBLE_EQ(sizer->options().min_gain, 1);
  EXPECT_TRUE(sizer->options().restart);
  EXPECT_TRUE(sizer->options().hold_until_checkpoint);
  EXPECT_TRUE(sizer->options().pay_back);
  EXPECT_FALSE(sizer->options().aware);  // heterogeneity: agnostic
  EXPECT_TRUE(sizer->ReadsProgress());   // the pay-back rule reads the work left
  spec->sizer.args["payBack"] = "sometimes";
  bad = BuildProfile(*spec);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("payBack"), std::string::npos) << bad.error().message;
  spec = ResolveProfile("fsched");
  spec->sizer.args["heterogeneity"] = "clever";
  bad = BuildProfile(*spec);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("heterogeneity: expected aware or agnostic, got 'clever'"),
            std::string::npos)
      << bad.error().message;
}

// `protect` in a profile file: EveryLaunch (the default) or RelaunchOnly.
TEST(FschedRegistryTest, ProtectModeIsAProfileKey) {
  auto every = config::ParseProfile("name: p\nprotectFactor: 3\n", "p.yaml");
  ASSERT_TRUE(every.has_value()) << every.error().message;
  EXPECT_FALSE(every->protect_relaunch_only);
  auto relaunch = config::ParseProfile("name: p\nprotect: RelaunchOnly\n", "p.yaml");
  ASSERT_TRUE(relaunch.has_value()) << relaunch.error().message;
  EXPECT_TRUE(relaunch->protect_relaunch_only);
  auto built = BuildProfile(*relaunch);
  ASSERT_TRUE(built.has_value()) << built.error().message;
  EXPECT_TRUE(built->protect_relaunch_only);
  auto bad = config::ParseProfile("name: p\nprotect: Sometimes\n", "p.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("protect: expected EveryLaunch or RelaunchOnly"),
            std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace dlsched::policy
