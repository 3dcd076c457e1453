#include "dlsched/report/analysis.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/report/outputs.h"
#include "dlsched/report/test_util.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;
using testing::WriteFile;
using testing::WriteFixtureRun;

JobRow Job(std::string name, double submit, std::optional<double> jct,
           std::optional<double> queueing = std::nullopt) {
  JobRow j;
  j.name = std::move(name);
  j.submit = submit;
  j.jct = jct;
  if (jct) {
    j.completion = submit + *jct;
    j.final_state = "Completed";
  } else {
    j.final_state = "Waiting";
  }
  if (queueing) {
    j.first_start = submit + *queueing;
    j.queueing = *queueing;
  }
  return j;
}

std::vector<const JobRow*> Ptrs(const std::vector<JobRow>& jobs) {
  std::vector<const JobRow*> out;
  for (const auto& j : jobs) out.push_back(&j);
  return out;
}

// A CDF counts every job: the two not completed keep it at 3/5.
TEST(CdfTest, CensoredJobsKeepTheCurveShortOfOne) {
  const std::vector<JobRow> jobs = {Job("a", 0, 30, 0), Job("b", 0, 10, 5), Job("c", 0, {}, 7),
                                    Job("d", 0, 20, 0), Job("e", 0, {})};
  const Cdf jct = MakeCdf(Ptrs(jobs), CdfOf::kJct);
  EXPECT_EQ(jct.values, (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(jct.total, 5u);
  EXPECT_EQ(jct.Censored(), 2u);
  EXPECT_DOUBLE_EQ(jct.Reaches(), 0.6);
  // Queueing, final once a job completed: c started (7 s) but may wait
  // again, e never started: both censored.
  const Cdf q = MakeCdf(Ptrs(jobs), CdfOf::kQueueing);
  EXPECT_EQ(q.values, (std::vector<double>{0, 0, 5}));
  EXPECT_EQ(q.Censored(), 2u);
  EXPECT_EQ(MakeCdf({}, CdfOf::kJct).Reaches(), 0);
}

// Slowdown: over the jobs with a known ideal runtime, at least 1.
TEST(CdfTest, SlowdownOverJobsWithAnIdealRuntime) {
  std::vector<JobRow> jobs = {Job("a", 0, 30), Job("b", 0, 5), Job("c", 0, {}), Job("d", 0, 40)};
  jobs[0].ideal_runtime = 10;  // 3
  jobs[1].ideal_runtime = 10;  // 0.5 -> 1
  jobs[2].ideal_runtime = 10;  // not completed: censored
  // d: no ideal runtime, not counted
  const Cdf s = MakeCdf(Ptrs(jobs), CdfOf::kSlowdown);
  EXPECT_EQ(s.values, (std::vector<double>{1, 3}));
  EXPECT_EQ(s.total, 3u);
}

TEST(CdfTest, DifferentJobsCompleted) {
  const std::vector<JobRow> a = {Job("x", 0, 1), Job("y", 0, 2)};
  const std::vector<JobRow> b = {Job("x", 0, 5), Job("y", 0, 9)};
  const std::vector<JobRow> c = {Job("x", 0, 5), Job("y", 0, {})};
  EXPECT_FALSE(DifferentJobsCompleted(std::vector{Ptrs(a), Ptrs(b)}));
  EXPECT_TRUE(DifferentJobsCompleted(std::vector{Ptrs(a), Ptrs(b), Ptrs(c)}));
}

RunData FixtureRun(const fs::path& dir) {
  WriteFixtureRun(dir, "kod2");
  auto d = LoadReportDir(dir.string());
  EXPECT_TRUE(d) << d.error().message;
  return d->runs.at(0);
}

// Without a window the figures are summary.json's; with one it was not
// computed over, they are recomputed from jobs.csv over the jobs
// submitted in it, utilisation from utilization.csv over the window.
TEST(MeasureTest, WindowFiltersJobsAndUtilisation) {
  TempDir tmp;
  const RunData run = FixtureRun(tmp.path());
  const Measured whole = Measure(run, std::nullopt);
  EXPECT_FALSE(whole.recomputed);
  EXPECT_FALSE(whole.window);
  EXPECT_EQ(whole.figures->jct_p95, 294.5);  // summary.json's, as written
  EXPECT_EQ(JobsIn(run, whole.window).size(), 3u);

  // [5, 30): the second job (submit 10, JCT 190) and job-3 (submit 20,
  // stuck: censored at 400 - 20 = 380).
  const metrics::Window w{5, 30};
  const Measured m = Measure(run, w);
  ASSERT_TRUE(m.figures);
  EXPECT_TRUE(m.recomputed);
  EXPECT_EQ(m.window, w);
  const auto jobs = JobsIn(run, m.window);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]->submit, 10);
  const metrics::RunSummary& f = *m.figures;
  EXPECT_EQ(f.total_jobs, 2);
  EXPECT_EQ(f.completed_jobs, 1);
  EXPECT_EQ(f.stuck_jobs, 1);
  EXPECT_EQ(f.jct_censored, 1);
  EXPECT_DOUBLE_EQ(f.jct_mean, (190 + 380) / 2.0);
  EXPECT_EQ(f.window, w);
  EXPECT_TRUE(Incomplete(f));
  // GPU allocated over [5, 30]: 0.5 throughout (the 30 s row starts at its end).
  EXPECT_EQ(f.window_start, 5);
  EXPECT_EQ(f.window_end, 30);
  ASSERT_EQ(f.utilization.size(), 3u);
  EXPECT_EQ(f.utilization[2].name, "nvidia.com/gpu");
  EXPECT_DOUBLE_EQ(f.utilization[2].allocated, 0.5);
  EXPECT_EQ(f.utilization[2].capacity, 8);  // from summary.json
  // [0, 60]: gpu 0.5 x 30 + 1 x 30 -> 0.75; effective 0 x 30 + 0.5 x 30.
  const Measured m2 = Measure(run, metrics::Window{0, 60});
  EXPECT_DOUBLE_EQ(m2.figures->utilization[2].allocated, 0.75);
  EXPECT_DOUBLE_EQ(m2.figures->utilization[2].effective, 0.25);
  // A window that holds only completed jobs is complete.
  const Measured early = Measure(run, metrics::Window{0, 15});
  EXPECT_EQ(early.figures->total_jobs, 2);
  EXPECT_FALSE(Incomplete(*early.figures));
}

// A run's own window (summary.json's) applies when none is forced; a
// forced window equal to it keeps summary.json's figures.
TEST(MeasureTest, TheRunsOwnWindow) {
  TempDir tmp;
  RunData run = FixtureRun(tmp.path());
  run.summary->figures.window = metrics::Window{5, core::kNever};
  const Measured own = Measure(run, std::nullopt);
  EXPECT_FALSE(own.recomputed);
  EXPECT_EQ(own.window, (metrics::Window{5, core::kNever}));
  EXPECT_EQ(JobsIn(run, own.window).size(), 2u);
  EXPECT_FALSE(Measure(run, metrics::Window{5, core::kNever}).recomputed);
  EXPECT_TRUE(Measure(run, metrics::Window{0, core::kNever}).recomputed);
  // No jobs.csv: the window cannot be applied, and says so.
  run.jobs.reset();
  const Measured none = Measure(run, metrics::Window{0, 10});
  EXPECT_TRUE(none.window_unapplied);
  EXPECT_EQ(none.window, (metrics::Window{5, core::kNever}));
}

// Recomputed from jobs.csv, a run's figures are summary.json's: the same
// metrics::Summarize over the same jobs.
TEST(MeasureTest, RecomputedFiguresMatchTheSummary) {
  const metrics::RunInput in = testing::SampleRun();
  TempDir tmp;
  WriteFile(tmp.path() / "jobs.csv", JobsCsv(in));
  WriteFile(tmp.path() / "summary.json", SummaryJsonText(metrics::Summarize(in)));
  auto d = LoadReportDir(tmp.path().string());
  ASSERT_TRUE(d) << d.error().message;
  const metrics::Window all{0, core::kNever};
  const Measured m = Measure(d->runs[0], all);
  ASSERT_TRUE(m.recomputed);
  const metrics::RunSummary s = metrics::Summarize(in, all);
  const auto a = CompareFields("x", *m.figures);
  const auto b = CompareFields("x", s);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key.starts_with("gpu_") || a[i].key.starts_with("cpu_")) continue;  // no csv here
    EXPECT_EQ(a[i].value, b[i].value) << a[i].key;
  }
}

TEST(IncompleteTest, WordsAndKinds) {
  metrics::RunSummary s;
  s.total_jobs = 300;
  EXPECT_FALSE(Incomplete(s));
  s.stuck_jobs = 77;
  EXPECT_TRUE(Incomplete(s));
  EXPECT_EQ(IncompleteText(s), "77 of 300 jobs not completed (77 stuck)");
  s.stuck_jobs = 0;
  s.partial = true;
  EXPECT_TRUE(Incomplete(s));
  EXPECT_EQ(IncompleteText(s), "partial (interrupted)");
  s.unfinished_jobs = 4;
  s.failed_jobs = 1;
  EXPECT_EQ(IncompleteText(s),
            "partial (interrupted), 5 of 300 jobs not completed (1 failed, 4 "
            "unfinished)");
}

RunData WithEvents(std::vector<EventRow> events, std::vector<JobRow> jobs) {
  RunData run;
  run.events = std::move(events);
  run.jobs = std::move(jobs);
  return run;
}

// A job waits from submitted, and again from standby (after a
// preemption), until it starts or relaunches; changes at one instant net
// out.
TEST(QueueTest, JobsAndGpusWaitingOverTime) {
  std::vector<JobRow> jobs = {Job("a", 0, {}), Job("b", 0, {})};
  jobs[0].gpus = 4;
  jobs[1].gpus = 2;
  RunData run = WithEvents(
      {
          {0, "a", "submitted", {}, "", ""},
          {0, "b", "submitted", {}, "", ""},
          {0, "a", "started", 4, "", ""},
          {5, "a", "preempted", 0, "b", ""},
          {5, "a", "checkpointing", 4, "", ""},
          {8, "a", "standby", 0, "", ""},
          {8, "b", "started", 2, "", ""},
          {9, "a", "waiting", {}, "", "no room"},
          {12, "b", "standby", 0, "", ""},
          {12, "b", "relaunching", 2, "", ""},
          {20, "b", "completed", 0, "", ""},
          {20, "a", "relaunching", 4, "", ""},
          {30, "a", "completed", 0, "", ""},
      },
      jobs);
  const auto q = QueueOverTime(run);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->jobs.time, (std::vector<double>{0, 20}));
  EXPECT_EQ(q->jobs.value, (std::vector<double>{1, 0}));
  ASSERT_TRUE(q->gpus);
  EXPECT_EQ(q->gpus->time, (std::vector<double>{0, 8, 20}));
  EXPECT_EQ(q->gpus->value, (std::vector<double>{2, 4, 0}));
  // Preemptions: the stop at 5, then none (a standby is not one).
  const auto p = PreemptionsOverTime(run);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->time, (std::vector<double>{0, 5}));
  EXPECT_EQ(p->value, (std::vector<double>{0, 1}));
  // Without a gpus column, no demand; without events.csv, nothing.
  run.jobs->at(1).gpus.reset();
  EXPECT_FALSE(QueueOverTime(run)->gpus);
  run.events.reset();
  EXPECT_FALSE(QueueOverTime(run));
  EXPECT_FALSE(PreemptionsOverTime(run));
}

TEST(QueueTest, ResizesForAnotherJobArePreemptions) {
  RunData run = WithEvents(
      {
          {0, "a", "started", 8, "", ""},
          {3, "a", "resized", 4, "b", "8 -> 4 for b"},
          {4, "a", "resized", 8, "", "scaled out"},
          {6, "a", "preempted", 0, "c", ""},
      },
      {});
  const auto p = PreemptionsOverTime(run);
  EXPECT_EQ(p->time, (std::vector<double>{0, 3, 6}));
  EXPECT_EQ(p->value, (std::vector<double>{0, 1, 2}));
}

TEST(SizeTest, BucketsArePowersOfTwo) {
  EXPECT_EQ(BucketOf(0).Label(), "0");
  EXPECT_EQ(BucketOf(1).Label(), "1");
  EXPECT_EQ(BucketOf(2).Label(), "2");
  EXPECT_EQ(BucketOf(3).Label(), "3-4");
  EXPECT_EQ(BucketOf(4).Label(), "3-4");
  EXPECT_EQ(BucketOf(5).Label(), "5-8");
  EXPECT_EQ(BucketOf(8).Label(), "5-8");
  EXPECT_EQ(BucketOf(9).Label(), "9-16");
  EXPECT_EQ(BucketOf(1000).Label(), "513-1024");
  EXPECT_EQ(BucketOf(-3).Label(), "0");
  // The largest counts do not overflow.
  EXPECT_GT(BucketOf(std::numeric_limits<int64_t>::max()).hi, 0);
}

// Mean JCT per bucket over every job in it; a job not completed counts at
// the run's end and makes the bucket a lower bound.
TEST(SizeTest, JctBySizeCensorsAtTheEnd) {
  std::vector<JobRow> jobs = {Job("a", 0, 10), Job("b", 0, 30), Job("c", 50, {}), Job("d", 0, 7),
                              Job("e", 0, 1)};
  jobs[0].gpus = 1;
  jobs[1].gpus = 3;
  jobs[2].gpus = 4;  // censored at 100 - 50 = 50
  jobs[3].gpus = 1;
  // e: no gpus value, left out
  const auto b = JctBySize(Ptrs(jobs), 100);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].label, "1");
  EXPECT_EQ(b[0].jobs, 2u);
  EXPECT_DOUBLE_EQ(b[0].mean_jct, 8.5);
  EXPECT_FALSE(b[0].LowerBound());
  EXPECT_EQ(b[1].label, "3-4");
  EXPECT_EQ(b[1].completed, 1u);
  EXPECT_DOUBLE_EQ(b[1].mean_jct, 40);
  EXPECT_TRUE(b[1].LowerBound());
}

// The same by queue, by name; a job of no queue is left out.
TEST(SizeTest, JctByQueueGroupsByNameAndCensorsAtTheEnd) {
  std::vector<JobRow> jobs = {Job("a", 0, 10), Job("b", 0, 30), Job("c", 50, {}), Job("d", 0, 7)};
  jobs[0].queue = "prod";
  jobs[1].queue = "research";
  jobs[2].queue = "research";  // censored at 100 - 50 = 50
  // d: no queue
  const auto q = JctByQueue(Ptrs(jobs), 100);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].label, "prod");
  EXPECT_DOUBLE_EQ(q[0].mean_jct, 10);
  EXPECT_FALSE(q[0].LowerBound());
  EXPECT_EQ(q[1].label, "research");
  EXPECT_EQ(q[1].jobs, 2u);
  EXPECT_DOUBLE_EQ(q[1].mean_jct, 40);
  EXPECT_TRUE(q[1].LowerBound());
}

// Each queue's GPUs over time, by hand: prod's a holds 4 GPUs from 0 to
// 50 on two nodes (3 + 1) and b 2 from 20 to the end; research's c 6 from
// 50 to 80; d (no queue) is left out. prod: 4 at 0, 6 at 20, 2 at 50 (a's
// two rows end together: one sample). research, declared first in
// summary.json with nominal 4: 6 at 50, 0 at 80. ops, declared, no jobs:
// an empty series.
TEST(SizeTest, QueueUsageSumsEachQueuesAllocations) {
  RunData run;
  run.jobs = {Job("a", 0, 50), Job("b", 20, {}), Job("c", 50, 30), Job("d", 0, 10)};
  (*run.jobs)[0].queue = "prod";
  (*run.jobs)[1].queue = "prod";
  (*run.jobs)[2].queue = "research";
  run.allocations = {{.node = "n1", .job = "a", .start = 0, .end = 50, .gpus = 3},
                     {.node = "n2", .job = "a", .start = 0, .end = 50, .gpus = 1},
                     {.node = "n1", .job = "b", .start = 20, .end = {}, .gpus = 2},
                     {.node = "n2", .job = "c", .start = 50, .end = 80, .gpus = 6},
                     {.node = "n2", .job = "d", .start = 0, .end = 10, .gpus = 8}};
  run.summary.emplace();
  run.summary->figures.queues.resize(2);
  run.summary->figures.queues[0].name = "research";
  run.summary->figures.queues[0].nominal_gpus = 4;
  run.summary->figures.queues[1].name = "ops";
  const auto q = QueueUsageOverTime(run);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0].queue, "research");
  EXPECT_EQ(q[0].nominal_gpus, 4);
  EXPECT_EQ(q[0].gpus.time, (std::vector<double>{50, 80}));
  EXPECT_EQ(q[0].gpus.value, (std::vector<double>{6, 0}));
  EXPECT_EQ(q[1].queue, "ops");
  EXPECT_TRUE(q[1].gpus.time.empty());
  EXPECT_EQ(q[2].queue, "prod");
  EXPECT_FALSE(q[2].nominal_gpus.has_value());  // not declared
  EXPECT_EQ(q[2].gpus.time, (std::vector<double>{0, 20, 50}));
  EXPECT_EQ(q[2].gpus.value, (std::vector<double>{4, 6, 2}));
  // No job names a queue: nothing to draw.
  for (JobRow& j : *run.jobs) j.queue.clear();
  EXPECT_TRUE(QueueUsageOverTime(run).empty());
}

TEST(NormaliseTest, RatiosAndTheirBounds) {
  const Ratio r = Normalise(50, false, 200, false);
  EXPECT_EQ(r.ratio, 0.25);
  EXPECT_EQ(r.bound, Bound::kExact);
  EXPECT_EQ(BoundMark(r.bound), "");
  EXPECT_EQ(Normalise(50, true, 200, false).bound, Bound::kAtLeast);
  EXPECT_EQ(BoundMark(Bound::kAtLeast), "≥ ");
  EXPECT_EQ(Normalise(50, false, 200, true).bound, Bound::kAtMost);
  EXPECT_EQ(Normalise(50, true, 200, true).bound, Bound::kUnknown);
  EXPECT_FALSE(Normalise(50, false, 0, false).ratio);
  EXPECT_TRUE(LowerBoundFigure("jct_p95"));
  EXPECT_TRUE(LowerBoundFigure("makespan"));
  EXPECT_FALSE(LowerBoundFigure("gpu_effective"));
  EXPECT_FALSE(LowerBoundFigure("mean_queueing"));
}

}  // namespace
}  // namespace dlsched::report
