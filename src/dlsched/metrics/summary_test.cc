#include "dlsched/metrics/summary.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace dlsched::metrics {
namespace {

using core::JobPhase;
using core::kNever;

JobRecord Completed(std::string name, core::Time submit, core::Time start, core::Time end) {
  JobRecord j;
  j.name = std::move(name);
  j.namespace_name = "default";
  j.submit = submit;
  j.first_start = start;
  j.completion = end;
  j.final_phase = JobPhase::kCompleted;
  return j;
}

JobRecord Waiting(std::string name, core::Time submit) {
  JobRecord j;
  j.name = std::move(name);
  j.submit = submit;
  j.final_phase = JobPhase::kWaiting;
  return j;
}

UtilizationSample Sample(core::Time t, core::ResourceId id, int64_t allocated, int64_t effective) {
  UtilizationSample s;
  s.time = t;
  s.allocated[id] = allocated;
  s.effective[id] = effective;
  return s;
}

void ExpectAllFinite(const RunSummary& s) {
  for (double x : {s.jct_mean, s.jct_p50, s.jct_p95, s.jct_p99, s.makespan, s.mean_queueing,
                   s.mean_launching, s.mean_running, s.slowdown_mean, s.slowdown_p95,
                   s.slowdown_variance, s.jain_index, s.window_start, s.window_end}) {
    EXPECT_TRUE(std::isfinite(x)) << x;
  }
  for (const auto& u : s.utilization) {
    EXPECT_TRUE(std::isfinite(u.allocated));
    EXPECT_TRUE(std::isfinite(u.effective));
  }
}

// Three completed jobs:
//   a: submit 0,  start 10, end 100 -> JCT 100 (queue 10, launch 5, run 85)
//   b: submit 10, start 15, end 50  -> JCT 40  (queue 5,  launch 5, run 30)
//   c: submit 20, start 40, end 80  -> JCT 60  (queue 20, launch 4, run 36)
// Sorted JCTs {40, 60, 100}; mean 200/3.
// Linear (numpy): p50 -> h = 2 * 0.50 = 1 -> 60; p95 -> h = 1.9 -> 60 + 0.9 *
// 40 = 96; p99 -> h = 1.98 -> 60 + 0.98 * 40 = 99.2. Makespan = last end 100 -
// first submit 0.
TEST(SummarizeTest, ThreeJobsJctPercentilesAndPhases) {
  RunInput in;
  in.profile = "fifo";
  in.jobs = {Completed("a", 0, 10, 100), Completed("b", 10, 15, 50), Completed("c", 20, 40, 80)};
  in.jobs[0].queueing = 10, in.jobs[0].launching = 5, in.jobs[0].running = 85;
  in.jobs[1].queueing = 5, in.jobs[1].launching = 5, in.jobs[1].running = 30;
  in.jobs[2].queueing = 20, in.jobs[2].launching = 4, in.jobs[2].running = 36;
  in.end_time = 100;

  const RunSummary s = Summarize(in);
  EXPECT_EQ(s.profile, "fifo");
  EXPECT_EQ(s.total_jobs, 3);
  EXPECT_EQ(s.completed_jobs, 3);
  EXPECT_EQ(s.failed_jobs, 0);
  EXPECT_EQ(s.stuck_jobs, 0);
  EXPECT_EQ(s.unfinished_jobs, 0);
  EXPECT_DOUBLE_EQ(s.jct_mean, 200.0 / 3);
  EXPECT_DOUBLE_EQ(s.jct_p50, 60);
  EXPECT_DOUBLE_EQ(s.jct_p95, 96);
  EXPECT_DOUBLE_EQ(s.jct_p99, 99.2);
  EXPECT_DOUBLE_EQ(s.makespan, 100);
  EXPECT_DOUBLE_EQ(s.mean_queueing, 35.0 / 3);
  EXPECT_DOUBLE_EQ(s.mean_launching, 14.0 / 3);
  EXPECT_DOUBLE_EQ(s.mean_running, 151.0 / 3);
  // The phases partition each JCT, so their means add up to the JCT mean.
  EXPECT_NEAR(s.mean_queueing + s.mean_launching + s.mean_running, s.jct_mean, 1e-9);
}

// numpy.percentile(range(1, 21), q) for q = 50, 95, 99, 100, 0 gives 10.5,
// 19.05, 19.81, 20, 1; of 1..100, p95 = 95.05 and p99 = 99.01; one value
// is every percentile; no values give 0.
TEST(PercentileTest, MatchesNumpyLinear) {
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 10.5);
  EXPECT_DOUBLE_EQ(Percentile(v, 95), 19.05);
  EXPECT_DOUBLE_EQ(Percentile(v, 99), 19.81);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 20);
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);

  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(Percentile(hundred, 95), 95.05);
  EXPECT_DOUBLE_EQ(Percentile(hundred, 99), 99.01);

  const std::vector<double> one = {7.5};
  EXPECT_DOUBLE_EQ(Percentile(one, 50), 7.5);
  EXPECT_DOUBLE_EQ(Percentile(one, 99), 7.5);
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
}

// Jain's index for S = {1, 0.5}: (1.5)^2 / (2 * (1 + 0.25)) = 2.25 / 2.5 = 0.9.
TEST(JainIndexTest, HandWorked) {
  const std::vector<double> s = {1, 0.5};
  EXPECT_DOUBLE_EQ(JainIndex(s), 0.9);
  const std::vector<double> equal = {0.3, 0.3, 0.3};
  EXPECT_DOUBLE_EQ(JainIndex(equal), 1);
  // One job gets everything out of four: 1 / 4.
  const std::vector<double> skewed = {1, 0, 0, 0};
  EXPECT_DOUBLE_EQ(JainIndex(skewed), 0.25);
  EXPECT_DOUBLE_EQ(JainIndex({}), 0);
  const std::vector<double> zeros = {0, 0};
  EXPECT_DOUBLE_EQ(JainIndex(zeros), 0);
}

// Slowdowns (JCT / ideal) through Summarize:
//   fast: ideal 100, JCT 100 -> 1
//   slow: ideal 50,  JCT 100 -> 2
//   unknown: ideal 0 -> no slowdown
//   waiting: submitted at 5, not completed by the end at 100: censored,
//            JCT at least 95 -> 9.5
// So {1, 2, 9.5}: mean 12.5 / 3; p95 at position 1.9 between 2 and 9.5:
// 8.75; Jain over the speeds {1, 0.5, 1/9.5}. The JCTs {100, 100, 10, 95}
// have one censored.
TEST(SummarizeTest, SlowdownMeanVarianceAndJain) {
  RunInput in;
  in.jobs = {Completed("fast", 0, 0, 100), Completed("slow", 0, 50, 100),
             Completed("unknown", 0, 0, 10), Waiting("waiting", 5)};
  in.jobs[0].ideal_runtime = 100;
  in.jobs[1].ideal_runtime = 50;
  in.jobs[3].ideal_runtime = 10;
  in.end_time = 100;

  const RunSummary s = Summarize(in);
  EXPECT_EQ(s.slowdown_jobs, 3);
  const double mean = 12.5 / 3;
  EXPECT_DOUBLE_EQ(s.slowdown_mean, mean);
  EXPECT_DOUBLE_EQ(s.slowdown_p95, 8.75);
  EXPECT_DOUBLE_EQ(
      s.slowdown_variance,
      ((1 - mean) * (1 - mean) + (2 - mean) * (2 - mean) + (9.5 - mean) * (9.5 - mean)) / 3);
  const double speeds = 1 + 0.5 + 1 / 9.5;
  EXPECT_DOUBLE_EQ(s.jain_index, speeds * speeds / (3 * (1 + 0.25 + 1 / 90.25)));
  EXPECT_EQ(s.jct_censored, 1);
  EXPECT_DOUBLE_EQ(s.jct_mean, (100 + 100 + 10 + 95) / 4.0);
}

// A job that finishes at or below its ideal runtime has slowdown 1, never
// below: ideal 80, JCT 60 -> 1; ideal 10, JCT 40 -> 4.
TEST(SlowdownTest, ClampedToOne) {
  JobRecord lucky = Completed("lucky", 10, 10, 70);
  lucky.ideal_runtime = 80;
  ASSERT_TRUE(Slowdown(lucky).has_value());
  EXPECT_DOUBLE_EQ(*Slowdown(lucky), 1);

  JobRecord half = Completed("half", 10, 10, 50);  // JCT 40
  half.ideal_runtime = 10;
  EXPECT_DOUBLE_EQ(*Slowdown(half), 4);

  JobRecord failed = half;
  failed.final_phase = JobPhase::kFailed;
  EXPECT_FALSE(Slowdown(failed).has_value());
  EXPECT_FALSE(Jct(failed).has_value());
}

// GPU capacity 4, window [0, 40] (first submit 0, end 40):
//   t in [0, 10):  allocated 2, effective 0
//   t in [10, 30): allocated 4, effective 4
//   t in [30, 40]: allocated 0, effective 0
// allocated area 2*10 + 4*20 = 100 -> 100 / 40 / 4 = 0.625
// effective area 4*20 = 80        -> 80 / 40 / 4 = 0.5
TEST(SummarizeTest, TimeWeightedUtilization) {
  RunInput in;
  in.capacity[core::kGpu] = 4;
  in.jobs = {Completed("a", 0, 0, 40)};
  in.utilization = {Sample(0, core::kGpu, 2, 0), Sample(10, core::kGpu, 4, 4),
                    Sample(30, core::kGpu, 0, 0)};
  in.end_time = 40;

  const RunSummary s = Summarize(in);
  ASSERT_EQ(s.utilization.size(), 1u);  // cpu and memory have no capacity
  EXPECT_EQ(s.utilization[0].id, core::kGpu);
  EXPECT_EQ(s.utilization[0].name, "nvidia.com/gpu");
  EXPECT_EQ(s.utilization[0].capacity, 4);
  EXPECT_DOUBLE_EQ(s.utilization[0].allocated, 0.625);
  EXPECT_DOUBLE_EQ(s.utilization[0].effective, 0.5);
  EXPECT_DOUBLE_EQ(s.window_start, 0);
  EXPECT_DOUBLE_EQ(s.window_end, 40);
}

// A measurement window: the figures over the jobs submitted in [from, to),
// utilisation over [from, min(to, end)]. Jobs a (submit 0), b (10), c (20,
// never finished) with the samples above; window [5, 25) holds b and c:
// JCTs b 40 and c censored at 60 - 20 = 40; utilisation over [5, 25]:
// (2*5 + 4*15) / 20 / 4 allocated, 4*15 / 20 / 4 effective.
TEST(SummarizeTest, WindowCountsTheJobsSubmittedInIt) {
  RunInput in;
  in.capacity[core::kGpu] = 4;
  in.jobs = {Completed("a", 0, 0, 40), Completed("b", 10, 10, 50), Waiting("c", 20)};
  in.jobs[0].preemptions = 3;
  in.jobs[1].preemptions = 1;
  in.utilization = {Sample(0, core::kGpu, 2, 0), Sample(10, core::kGpu, 4, 4),
                    Sample(30, core::kGpu, 0, 0)};
  in.end_time = 60;
  const RunSummary s = Summarize(in, Window{5, 25});
  ASSERT_TRUE(s.window);
  EXPECT_EQ(*s.window, (Window{5, 25}));
  EXPECT_EQ(s.total_jobs, 2);
  EXPECT_EQ(s.completed_jobs, 1);
  EXPECT_EQ(s.unfinished_jobs, 1);
  EXPECT_EQ(s.jct_censored, 1);
  EXPECT_DOUBLE_EQ(s.jct_mean, 40);
  EXPECT_DOUBLE_EQ(s.makespan, 60 - 10);  // c censored at the end, from b's submit
  EXPECT_EQ(s.preemptions, 1);            // b's alone
  EXPECT_DOUBLE_EQ(s.window_start, 5);
  EXPECT_DOUBLE_EQ(s.window_end, 25);
  EXPECT_DOUBLE_EQ(s.utilization[0].allocated, 70.0 / 20 / 4);
  EXPECT_DOUBLE_EQ(s.utilization[0].effective, 60.0 / 20 / 4);
  // An open end runs to the run's end; a window after it measures nothing.
  const RunSummary open = Summarize(in, Window{5, core::kNever});
  EXPECT_EQ(open.total_jobs, 2);
  EXPECT_DOUBLE_EQ(open.window_end, 60);
  const RunSummary late = Summarize(in, Window{100, 200});
  EXPECT_EQ(late.total_jobs, 0);
  EXPECT_DOUBLE_EQ(late.utilization[0].allocated, 0);
  ExpectAllFinite(late);
  // Without a window: every job, and no window recorded.
  EXPECT_FALSE(Summarize(in).window);
  EXPECT_EQ(Summarize(in).total_jobs, 3);
}

// The window starts at the first submit: with the same samples and the first
// job submitted at 5, the window is [5, 40] (35 s) and the first segment is
// clipped to [5, 10): allocated area 2*5 + 4*20 = 90 -> 90 / 35 / 4.
// Before the first sample the amount is zero: a lone sample at 10 over the
// window [0, 20] gives 4*10 / 20 / 4 = 0.5.
TEST(TimeWeightedUtilizationTest, ClipsToWindowAndZeroBeforeFirstSample) {
  const std::vector<UtilizationSample> samples = {
      Sample(0, core::kGpu, 2, 0), Sample(10, core::kGpu, 4, 4), Sample(30, core::kGpu, 0, 0)};
  EXPECT_DOUBLE_EQ(
      TimeWeightedUtilization(samples, core::kGpu, UtilizationKind::kAllocated, 4, 5, 40),
      90.0 / 35 / 4);

  const std::vector<UtilizationSample> late = {Sample(10, core::kGpu, 4, 2)};
  EXPECT_DOUBLE_EQ(TimeWeightedUtilization(late, core::kGpu, UtilizationKind::kAllocated, 4, 0, 20),
                   0.5);
  EXPECT_DOUBLE_EQ(TimeWeightedUtilization(late, core::kGpu, UtilizationKind::kEffective, 4, 0, 20),
                   0.25);
  // Empty window or no capacity: 0, not NaN.
  EXPECT_DOUBLE_EQ(TimeWeightedUtilization(late, core::kGpu, UtilizationKind::kAllocated, 4, 7, 7),
                   0);
  EXPECT_DOUBLE_EQ(TimeWeightedUtilization(late, core::kGpu, UtilizationKind::kAllocated, 0, 0, 20),
                   0);
}

// Resources are reported in id order, by name, only when capacity > 0:
// cpu 8000m, memory 0 (left out), gpu 2 and an extended resource.
TEST(SummarizeTest, ReportsResourcesWithCapacityByName) {
  const auto fpga = core::InternResource("example.com/fpga");
  ASSERT_TRUE(fpga.has_value());
  RunInput in;
  in.capacity[core::kCpu] = 8000;
  in.capacity[core::kGpu] = 2;
  in.capacity[*fpga] = 1;
  UtilizationSample s0;
  s0.time = 0;
  s0.allocated[core::kCpu] = 4000;  // half the cpu for the whole window
  s0.allocated[*fpga] = 1;
  s0.effective[*fpga] = 1;
  in.utilization = {s0};
  in.jobs = {Waiting("w", 0)};
  in.end_time = 10;

  const RunSummary s = Summarize(in);
  ASSERT_EQ(s.utilization.size(), 3u);
  EXPECT_EQ(s.utilization[0].name, "cpu");
  EXPECT_DOUBLE_EQ(s.utilization[0].allocated, 0.5);
  EXPECT_DOUBLE_EQ(s.utilization[0].effective, 0);
  EXPECT_EQ(s.utilization[1].name, "nvidia.com/gpu");
  EXPECT_DOUBLE_EQ(s.utilization[1].allocated, 0);
  EXPECT_EQ(s.utilization[2].name, "example.com/fpga");
  EXPECT_DOUBLE_EQ(s.utilization[2].allocated, 1);
  EXPECT_DOUBLE_EQ(s.utilization[2].effective, 1);
}

TEST(ResourceLabelTest, FixedNamesAndFallback) {
  EXPECT_EQ(ResourceLabel(core::kCpu), "cpu");
  EXPECT_EQ(ResourceLabel(core::kMemory), "memory");
  EXPECT_EQ(ResourceLabel(core::kGpu), "nvidia.com/gpu");
  // The last id is never interned by this test binary.
  EXPECT_EQ(ResourceLabel(core::kMaxResourceNames - 1), "resource-65535");
}

// Outcome precedence: Completed, then stuck (even if a deadline failed it),
// then Failed, else unfinished. Event totals count every job; so do the JCT
// and the makespan, the four jobs that did not complete censored at the
// run's end, 500: JCTs {50, 500, 500, 500, 500}, makespan 500 - 0.
TEST(SummarizeTest, CountsOutcomesAndTotals) {
  RunInput in;
  in.deadlocked = true;
  in.cycles = 42;
  in.end_time = 500;
  JobRecord done = Completed("done", 10, 20, 60);
  done.preemptions = 1;
  done.scale_events = 3;
  done.reallocations = 2;
  JobRecord failed = Completed("failed", 0, 5, 500);
  failed.final_phase = JobPhase::kFailed;
  failed.preemptions = 2;
  JobRecord stuck = Waiting("stuck", 0);
  stuck.stuck = true;
  stuck.scale_events = 1;
  JobRecord stuck_failed = Waiting("stuck-failed", 0);
  stuck_failed.stuck = true;
  stuck_failed.final_phase = JobPhase::kFailed;
  JobRecord running = Completed("running", 0, 1, kNever);
  running.final_phase = JobPhase::kRunning;
  in.jobs = {done, failed, stuck, stuck_failed, running};

  EXPECT_EQ(Outcome(done), JobOutcome::kCompleted);
  EXPECT_EQ(Outcome(failed), JobOutcome::kFailed);
  EXPECT_EQ(Outcome(stuck), JobOutcome::kStuck);
  EXPECT_EQ(Outcome(stuck_failed), JobOutcome::kStuck);
  EXPECT_EQ(Outcome(running), JobOutcome::kUnfinished);

  const RunSummary s = Summarize(in);
  EXPECT_EQ(s.total_jobs, 5);
  EXPECT_EQ(s.completed_jobs, 1);
  EXPECT_EQ(s.failed_jobs, 1);
  EXPECT_EQ(s.stuck_jobs, 2);
  EXPECT_EQ(s.unfinished_jobs, 1);
  EXPECT_EQ(s.preemptions, 3);
  EXPECT_EQ(s.scale_events, 4);
  EXPECT_EQ(s.reallocations, 2);
  EXPECT_TRUE(s.deadlocked);
  EXPECT_EQ(s.cycles, 42);
  EXPECT_DOUBLE_EQ(s.end_time, 500);
  EXPECT_DOUBLE_EQ(s.jct_mean, 410);
  EXPECT_DOUBLE_EQ(s.jct_p99, 500);
  EXPECT_EQ(s.jct_censored, 4);
  EXPECT_DOUBLE_EQ(s.makespan, 500);
}

TEST(SummarizeTest, EmptyInputIsAllZeros) {
  const RunSummary s = Summarize(RunInput{});
  EXPECT_EQ(s.total_jobs, 0);
  EXPECT_EQ(s.completed_jobs, 0);
  EXPECT_DOUBLE_EQ(s.jct_mean, 0);
  EXPECT_DOUBLE_EQ(s.jct_p50, 0);
  EXPECT_DOUBLE_EQ(s.makespan, 0);
  EXPECT_DOUBLE_EQ(s.slowdown_mean, 0);
  EXPECT_DOUBLE_EQ(s.jain_index, 0);
  EXPECT_TRUE(s.utilization.empty());
  ExpectAllFinite(s);
}

// Jobs and capacity but nothing completed and a zero-length window: every
// number is 0 (the censored JCT too: the run ended before the submit) or 1
// (its slowdown) and finite.
TEST(SummarizeTest, NoCompletedJobsGivesZerosNotNaN) {
  RunInput in;
  in.capacity[core::kCpu] = 1000;
  in.capacity[core::kGpu] = 1;
  JobRecord stuck = Waiting("stuck", 30);
  stuck.stuck = true;
  stuck.ideal_runtime = 10;
  in.jobs = {stuck};
  in.end_time = 0;  // before the submit: the window collapses to [30, 30]
  in.deadlocked = true;

  const RunSummary s = Summarize(in);
  EXPECT_EQ(s.stuck_jobs, 1);
  EXPECT_DOUBLE_EQ(s.jct_mean, 0);
  EXPECT_DOUBLE_EQ(s.makespan, 0);
  EXPECT_DOUBLE_EQ(s.mean_queueing, 0);
  EXPECT_EQ(s.jct_censored, 1);
  EXPECT_EQ(s.slowdown_jobs, 1);
  EXPECT_DOUBLE_EQ(s.slowdown_mean, 1);
  EXPECT_DOUBLE_EQ(s.slowdown_variance, 0);
  ASSERT_EQ(s.utilization.size(), 2u);
  EXPECT_DOUBLE_EQ(s.utilization[0].allocated, 0);
  ExpectAllFinite(s);
}

// Two queues of one cohort (worked by hand): a (4 GPUs nominal, lends all
// 4) and b (4 GPUs, lends 2, keeps 2). a1 (queue a) holds 6 GPUs over
// [0, 100) and completes at 100; b1 (queue b) holds 2 over [0, 200) and
// completes at 200; c1 (no queue) is not counted. Over [0, 100) a borrows
// 2; a's lendable is all in use (4 of 6 held), b's 2 lendable are unused
// (its 2 GPUs fill the part it keeps), so b lends the 2: 200 GPU-seconds.
// b1 preempted a1 once.
TEST(SummarizeQueuesTest, GpuHoursBorrowedLentJctAndPreemptionsPerQueue) {
  RunInput in;
  in.end_time = 200;
  in.queues = {{"a", "c", 4, 4}, {"b", "c", 4, 2}};
  in.jobs = {Completed("a1", 0, 0, 100), Completed("b1", 0, 0, 200), Completed("c1", 0, 0, 50)};
  in.jobs[0].queue = "a";
  in.jobs[0].preemptions = 1;
  in.jobs[1].queue = "b";
  in.allocations = {{0, 0, 0, 100, 1, 6}, {0, 1, 0, kNever, 1, 2}, {0, 2, 0, 50, 1, 8}};
  in.events = {{10, 0, "preempted", 0, 1, ""}};
  const std::vector<QueueSummary> q = SummarizeQueues(in);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].name, "a");
  EXPECT_EQ(q[0].jobs, 1);
  EXPECT_EQ(q[0].completed, 1);
  EXPECT_DOUBLE_EQ(*q[0].jct_mean, 100);
  EXPECT_DOUBLE_EQ(q[0].gpu_hours, 600.0 / 3600);
  EXPECT_DOUBLE_EQ(q[0].borrowed_gpu_hours, 200.0 / 3600);
  EXPECT_DOUBLE_EQ(q[0].lent_gpu_hours, 0);
  EXPECT_EQ(q[0].preemptions_suffered, 1);
  EXPECT_EQ(q[0].preemptions_caused, 0);
  EXPECT_DOUBLE_EQ(*q[1].jct_mean, 200);
  EXPECT_DOUBLE_EQ(q[1].gpu_hours, 400.0 / 3600);  // held to the run's end
  EXPECT_DOUBLE_EQ(q[1].borrowed_gpu_hours, 0);
  EXPECT_DOUBLE_EQ(q[1].lent_gpu_hours, 200.0 / 3600);
  EXPECT_EQ(q[1].preemptions_caused, 1);
}

TEST(SummarizeQueuesTest, AQueueWithoutCompletedJobsHasNoJct) {
  RunInput in;
  in.end_time = 10;
  in.queues = {{"idle", "", 2, 0}};
  in.jobs = {Waiting("w", 0)};
  in.jobs[0].queue = "idle";
  const std::vector<QueueSummary> q = SummarizeQueues(in);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].jobs, 1);
  EXPECT_FALSE(q[0].jct_mean.has_value());
  EXPECT_DOUBLE_EQ(q[0].gpu_hours, 0);
}

}  // namespace
}  // namespace dlsched::metrics
