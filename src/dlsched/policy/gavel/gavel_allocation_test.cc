#include "dlsched/policy/gavel/gavel_allocation.h"

#include <gtest/gtest.h>

#include <vector>

namespace dlsched::policy {
namespace {

GavelProblem Problem(int jobs, int types, std::vector<double> rate, std::vector<double> gpus,
                     std::vector<double> capacity, std::vector<double> weight = {}) {
  GavelProblem p;
  p.jobs = jobs;
  p.types = types;
  p.rate = std::move(rate);
  p.gpus = std::move(gpus);
  p.capacity = std::move(capacity);
  p.weight = weight.empty() ? std::vector<double>(static_cast<size_t>(jobs), 1.0) : weight;
  return p;
}

constexpr double kEps = 1e-6;

// Two 1-GPU jobs, types a and b with one GPU each. Job 0 runs 2 steps/s on
// a and 1 on b; job 1 runs 1 step/s on both.
//   N = 2, P_0 = (2 x 1 + 1 x 1) / 2 = 1.5, P_1 = 1
//   c_0 = (2/1.5, 1/1.5) = (4/3, 2/3), c_1 = (1, 1)
// Job 1's normalised throughput is x1a + x1b <= 1, so the max-min is at
// most 1; it is 1 with x1a + x1b = 1. Holding that, the sum 4/3 x0a +
// 2/3 x0b + 1 is largest with job 0 on a all the time and job 1 on b:
// x = [[1, 0], [0, 1]], min 1. Agnostic (every rate 1): c = 1 everywhere,
// each job's share is x_a + x_b <= 1, and the optimum is again 1 for both
// (each type taken whole by one job; which one is the solver's).
TEST(GavelAllocationTest, MaxMinFairnessSendsEachJobWhereItGainsMost) {
  const GavelProblem p = Problem(2, 2, {2, 1, 1, 1}, {1, 1}, {1, 1});
  const GavelAllocation a = MaxMinFairness(p, true);
  EXPECT_NEAR(a.objective, 1.0, kEps);
  EXPECT_NEAR(a.At(0, 0, 2), 1.0, kEps);
  EXPECT_NEAR(a.At(0, 1, 2), 0.0, kEps);
  EXPECT_NEAR(a.At(1, 0, 2), 0.0, kEps);
  EXPECT_NEAR(a.At(1, 1, 2), 1.0, kEps);
  const GavelAllocation b = MaxMinFairness(p, false);
  EXPECT_NEAR(b.objective, 1.0, kEps);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(b.At(i, 0, 2) + b.At(i, 1, 2), 1.0, kEps);
}

// Three 1-GPU jobs share one type of 2 GPUs at the same rate: c = 1, the
// constraint x0 + x1 + x2 <= 2, so max min x_i = 2/3, and the second stage
// (max x0 + x1 + x2 = 2) keeps each at 2/3.
TEST(GavelAllocationTest, EqualJobsShareATypeEqually) {
  const GavelProblem p = Problem(3, 1, {5, 5, 5}, {1, 1, 1}, {2});
  const GavelAllocation a = MaxMinFairness(p, true);
  EXPECT_NEAR(a.objective, 2.0 / 3.0, kEps);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a.At(i, 0, 1), 2.0 / 3.0, kEps);
}

// Jobs alike are one row of the LP, counted as many times: three 1-GPU
// jobs and one of 2 GPUs on one type of 4 GPUs, same rate, listed with
// the big job between the small ones. One type: P_i = T, c_i = g_i, so
// max min(x0, 2 x1, x2, x3) under x0 + 2 x1 + x2 + x3 <= 4: at the
// optimum every term is z and 4 z = 4, z = 1: the small jobs run all the
// time, the big one half (x1 = 1/2). Solved as two kinds (1 GPU x 3,
// 2 GPUs x 1) it must give each job the full problem's answer.
TEST(GavelAllocationTest, JobsAlikeShareOneRowAndGetTheFullAnswer) {
  const GavelProblem p = Problem(4, 1, {3, 3, 3, 3}, {1, 2, 1, 1}, {4});
  const GavelAllocation a = MaxMinFairness(p, true);
  EXPECT_NEAR(a.objective, 1.0, kEps);
  EXPECT_NEAR(a.At(0, 0, 1), 1.0, kEps);
  EXPECT_NEAR(a.At(1, 0, 1), 0.5, kEps);
  EXPECT_NEAR(a.At(2, 0, 1), 1.0, kEps);
  EXPECT_NEAR(a.At(3, 0, 1), 1.0, kEps);
  // A weight makes a job a kind of its own: job 3 at weight 2 has
  // c = 1/2, so z <= x3 / 2 <= 1/2, and z = 1/2 (x3 = 1; the others need
  // only 1/2, 1/4, 1/2 for it). The second stage maximises x0 + 2 x1 +
  // x2 + x3 / 2: a GPU is worth 1 to jobs 0, 1 and 2, so the 3 GPUs left
  // go to them in any split: every GPU is used, and the alike jobs 0 and
  // 2 get the same.
  const GavelProblem w = Problem(4, 1, {3, 3, 3, 3}, {1, 2, 1, 1}, {4}, {1, 1, 1, 2});
  const GavelAllocation b = MaxMinFairness(w, true);
  EXPECT_NEAR(b.objective, 0.5, kEps);
  EXPECT_NEAR(b.At(3, 0, 1), 1.0, kEps);
  EXPECT_NEAR(b.At(0, 0, 1), b.At(2, 0, 1), kEps);
  EXPECT_NEAR(b.At(0, 0, 1) + 2 * b.At(1, 0, 1) + b.At(2, 0, 1) + b.At(3, 0, 1), 4.0, kEps);
}

// The scale factor: job 0 needs 2 GPUs, job 1 one, one type of 2 GPUs,
// same rate. c_0 = 2, c_1 = 1; 2 x0 + x1 <= 2. Max min(2 x0, x1) at
// 2 x0 = x1 = z: z + z = 2, z = 1: x0 = 1/2, x1 = 1 (each job has 1 GPU on
// average: equal GPU-time, as Gavel's comment says). A weight of 3 on job
// 0: c_0 = 2/3, max min(2/3 x0, x1) with 2 x0 + x1 <= 2 and x0 <= 1:
// 2/3 x0 = x1 = z gives 3z + z = 2, z = 1/2, x0 = 3/4, x1 = 1/2 (job 0
// 1.5 GPUs on average, three times job 1's 0.5).
TEST(GavelAllocationTest, ScaleFactorsAndWeightsShareGpuTime) {
  GavelProblem p = Problem(2, 1, {1, 1}, {2, 1}, {2});
  GavelAllocation a = MaxMinFairness(p, true);
  EXPECT_NEAR(a.At(0, 0, 1), 0.5, kEps);
  EXPECT_NEAR(a.At(1, 0, 1), 1.0, kEps);
  p.weight = {3, 1};
  a = MaxMinFairness(p, true);
  EXPECT_NEAR(a.objective, 0.5, kEps);
  EXPECT_NEAR(a.At(0, 0, 1), 0.75, kEps);
  EXPECT_NEAR(a.At(1, 0, 1), 0.5, kEps);
}

// Where a job cannot run it gets no time: job 0 has no rate on b, job 1
// needs 2 GPUs and b has 1; the job that can run nowhere (job 2: rate 0
// on both) is left out of the minimum instead of pinning it at 0.
// Job 0: c_0 = (3 / (3 x 2/3)) = 1.5 on a; job 1 (2 GPUs, rate 1 on a and
// b, P_1 = 1): c_1 = 2 on a. Capacity of a: x0 + 2 x1 <= 2. Max min(1.5
// x0, 2 x1) at 1.5 x0 = 2 x1 = z: z/1.5 + z = 2, z = 1.2: x0 = 0.8, x1 =
// 0.6.
TEST(GavelAllocationTest, NoTimeWhereAJobCannotRun) {
  const GavelProblem p = Problem(3, 2, {3, 0, 1, 1, 0, 0}, {1, 2, 1}, {2, 1});
  const GavelAllocation a = MaxMinFairness(p, true);
  EXPECT_NEAR(a.objective, 1.2, kEps);
  EXPECT_NEAR(a.At(0, 0, 2), 0.8, kEps);
  EXPECT_NEAR(a.At(0, 1, 2), 0.0, kEps);
  EXPECT_NEAR(a.At(1, 0, 2), 0.6, kEps);
  EXPECT_NEAR(a.At(1, 1, 2), 0.0, kEps);
  EXPECT_NEAR(a.At(2, 0, 2) + a.At(2, 1, 2), 0.0, kEps);
}

// FIFO: types k80 (0) and v100 (1), one GPU each; three 1-GPU jobs in
// arrival order 2, 0, 1. Aware: job 2 (rates 1, 3) takes v100, job 0
// (rates 1, 2) the k80 that is left, job 1 finds no room and waits.
// Agnostic with permutations job 2: (0, 1), job 0: (0, 1): job 2 takes
// k80, job 0 v100. A 2-GPU job at the head blocks the 1-GPU job behind it
// (strict FIFO), but a job that can run on no type is passed over.
TEST(GavelAllocationTest, FifoTakesTheFastestTypeWithRoomInArrivalOrder) {
  GavelProblem p = Problem(3, 2, {1, 2, 1, 1, 1, 3}, {1, 1, 1}, {1, 1});
  const int order[] = {2, 0, 1};
  GavelAllocation a = Fifo(p, order, true);
  EXPECT_EQ(a.x, (std::vector<double>{1, 0, 0, 0, 0, 1}));
  const int pick[] = {0, 1, 1, 0, 0, 1};
  a = Fifo(p, order, false, pick);
  EXPECT_EQ(a.x, (std::vector<double>{0, 1, 0, 0, 1, 0}));

  p = Problem(3, 1, {0, 1, 1}, {1, 2, 1}, {1});
  const int order2[] = {0, 1, 2};
  a = Fifo(p, order2, true);
  // Job 0 runs on no type, job 1 (2 GPUs) can never fit a type of 1 GPU:
  // both passed over, job 2 runs.
  EXPECT_EQ(a.x, (std::vector<double>{0, 0, 1}));
  p.capacity = {2};
  p.rate = {0, 1, 1};
  p.gpus = {1, 2, 1};
  a = Fifo(p, order2, true);
  EXPECT_EQ(a.x, (std::vector<double>{0, 1, 0}));  // job 0 runs nowhere; job 1 fills the type
}

}  // namespace
}  // namespace dlsched::policy
