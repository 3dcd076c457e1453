// Teams' queues in whole simulated runs: quota checked at admission,
// borrowing through a cohort, a lending limit holding room back, a queue's
// blocked head holding up only its own queue, and the errors of a job
// naming a queue the cluster does not declare.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "dlsched/config/specs.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using testing::MakeEngine;
using testing::Record;

// One node of 16 GPUs; team-a (4 GPUs, lends all) and team-b (4 GPUs, lends
// at most 2, so 2 stay its own) share the cohort research, which lends
// 4 + 2 = 6 GPUs.
constexpr const char* kCluster =
    "nodes:\n"
    "  - {name: n, resources: {cpu: 64, memory: 256Gi, nvidia.com/gpu: 16}}\n"
    "queues:\n"
    "  - name: team-a\n"
    "    cohort: research\n"
    "    quota: {nvidia.com/gpu: 4}\n"
    "  - name: team-b\n"
    "    cohort: research\n"
    "    quota: {nvidia.com/gpu: {nominal: 4, lendingLimit: 2}}\n";

std::string Job(const std::string& name, const std::string& queue, int gpus) {
  return fmt::format(
      "  - {{name: {}, arrival: 0, totalSteps: 100, throughput: {{table: {{1: 1}}}}{},\n"
      "     worker: {{replicas: 1, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: {}}}}}}}\n",
      name, queue.empty() ? "" : ", queue: " + queue, gpus);
}

// examples/<cluster> and examples/<workload>, resolved.
void LoadExample(const std::string& cluster_file, const std::string& workload_file,
                 core::ClusterSpec& cluster, config::WorkloadSpec& workload) {
  const std::string dir = std::string(DLSCHED_SOURCE_DIR) + "/examples/";
  auto c = config::LoadCluster(dir + cluster_file);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  auto w = config::LoadWorkload(dir + workload_file);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  ASSERT_TRUE(ResolveWorkload(*w).has_value());
  cluster = std::move(*c);
  workload = std::move(*w);
}

// examples/cluster-queues.yaml and examples/workload-queues.yaml (the
// same cluster as kCluster; docs/queues.md's worked example). Every job
// runs 100 s on one worker; the cohort lends 6 GPUs.
//   a1 (team-a, 5): team-a has none of its own; borrows 5 of the 6: 0 -> 100.
//   b1 (team-b, 2): team-b's 2 unlent GPUs are its own: 0 -> 100.
//   a2 (team-a, 2): 1 left in the cohort; waits though 8 GPUs are free,
//      until a1 is done: 100 -> 200.
//   a3 (team-a, 7): team-a could hold at most 0 + 6: never.
//   a4 (team-a, 1): the last GPU would do, but under a strict order (fifo)
//      it stands behind a2: 100 -> 200; with backfill (gang-binpack) it
//      takes it: 0 -> 100.
//   b2 (team-b, 1): fifo's strict order holds up team-a's line only: b2
//      takes the cohort's last GPU at 0 (under gang-binpack a4 took it
//      first, so b2 waits for a1: 100).
//   c1 (no queue, 4): not limited: 0 -> 100.
TEST(QueuesTest, QuotaBorrowingAndLendingLimitDecideWhoStarts) {
  config::WorkloadSpec workload;
  core::ClusterSpec cluster;
  ASSERT_NO_FATAL_FAILURE(
      LoadExample("cluster-queues.yaml", "workload-queues.yaml", cluster, workload));
  SimOptions options;
  options.check_invariants = true;
  for (const char* profile : {"fifo", "gang-binpack"}) {
    SCOPED_TRACE(profile);
    const bool strict = std::string(profile) == "fifo";
    auto r = Simulate(cluster, workload, MakeEngine(profile), options);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_DOUBLE_EQ(Record(*r, "a1").first_start, 0);
    EXPECT_DOUBLE_EQ(Record(*r, "a1").completion, 100);
    EXPECT_DOUBLE_EQ(Record(*r, "b1").first_start, 0);
    EXPECT_DOUBLE_EQ(Record(*r, "a2").first_start, 100);
    EXPECT_DOUBLE_EQ(Record(*r, "a2").completion, 200);
    EXPECT_EQ(Record(*r, "a3").first_start, core::kNever);
    EXPECT_EQ(Record(*r, "a3").reason,
              "waiting: can never fit in this cluster: queue team-a can never hold 7 "
              "nvidia.com/gpu: at most 6 (nominal 4, cohort research lends 6)");
    EXPECT_DOUBLE_EQ(Record(*r, "a4").first_start, strict ? 100 : 0);
    EXPECT_DOUBLE_EQ(Record(*r, "b2").first_start, strict ? 0 : 100);
    EXPECT_DOUBLE_EQ(Record(*r, "c1").first_start, 0);
    if (!strict) continue;
    // Per queue (fifo): team-a holds 5 GPUs over [0, 100), 2 + 1 over
    // [100, 200): 800 GPU-seconds, 100 of them above its nominal 4; team-b
    // holds 2 + 1 over [0, 100): 300, within nominal. Over [0, 100) team-a
    // borrows 1 GPU; team-a lends nothing then (it holds 5), team-b's 2
    // lendable GPUs are half used (its third GPU is beyond the 2 it keeps),
    // so team-b lends the 1: 100 GPU-seconds.
    const std::vector<metrics::QueueSummary> q = metrics::SummarizeQueues(r->run);
    ASSERT_EQ(q.size(), 2u);
    EXPECT_EQ(q[0].jobs, 4);
    EXPECT_EQ(q[0].completed, 3);
    EXPECT_DOUBLE_EQ(q[0].gpu_hours, 800.0 / 3600);
    EXPECT_DOUBLE_EQ(q[0].borrowed_gpu_hours, 100.0 / 3600);
    EXPECT_DOUBLE_EQ(q[1].gpu_hours, 300.0 / 3600);
    EXPECT_DOUBLE_EQ(q[1].lent_gpu_hours, 100.0 / 3600);
    EXPECT_DOUBLE_EQ(*q[0].jct_mean, (100.0 + 200 + 200) / 3);
  }
}

// Quota per GPU type (Kueue's resource flavors). A v100 node and a k80 node
// of 4 GPUs each; team-a has 4 v100 GPUs (nvidia.com/gpu@v100), team-b 4
// k80 GPUs, in one cohort; each job runs 100 s on 1-GPU workers.
//   a1 (team-a, 2 workers): on the v100 node: 0 -> 100.
//   a2 (team-a, 4): team-a's other 2 v100 GPUs are too few, and it has no
//      k80 quota (the k80 node has 4 free GPUs): waits for a1: 100 -> 200.
//   b1 (team-b, 3): on the k80 node: 0 -> 100.
//   b2 (team-b, 2): 1 k80 left in b's quota and no v100 quota: waits for
//      b1: 100 -> 200.
TEST(QueuesTest, QuotaPerGpuTypeKeepsEachTeamOnItsTypes) {
  auto cluster = config::ParseCluster(
      "nodes:\n"
      "  - {name: v, gpuType: v100, resources: {cpu: 64, memory: 256Gi, nvidia.com/gpu: 4}}\n"
      "  - {name: k, gpuType: k80, resources: {cpu: 64, memory: 256Gi, nvidia.com/gpu: 4}}\n"
      "queues:\n"
      "  - {name: team-a, cohort: c, quota: {nvidia.com/gpu@v100: 4}}\n"
      "  - {name: team-b, cohort: c, quota: {nvidia.com/gpu@k80: 4}}\n",
      "c.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto job = [](const std::string& name, const std::string& queue, int workers) {
    return fmt::format(
        "  - {{name: {}, arrival: 0, totalSteps: 100, throughput: {{table: {{{}: 1}}}}, queue: "
        "{},\n"
        "     worker: {{replicas: {}, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}}}}}}\n",
        name, workers, queue, workers);
  };
  auto workload =
      config::ParseWorkload("jobs:\n" + job("a1", "team-a", 2) + job("a2", "team-a", 4) +
                                job("b1", "team-b", 3) + job("b2", "team-b", 2),
                            "w.yaml");
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  ASSERT_TRUE(ResolveWorkload(*workload).has_value());
  SimOptions options;
  options.check_invariants = true;
  for (const char* profile : {"fifo", "gang-binpack", "kod2", "queue-reclaim"}) {
    SCOPED_TRACE(profile);
    auto r = Simulate(*cluster, *workload, MakeEngine(profile), options);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_DOUBLE_EQ(Record(*r, "a1").first_start, 0);
    EXPECT_DOUBLE_EQ(Record(*r, "a2").first_start, 100);
    EXPECT_DOUBLE_EQ(Record(*r, "b1").first_start, 0);
    EXPECT_DOUBLE_EQ(Record(*r, "b2").first_start, 100);
    EXPECT_DOUBLE_EQ(Record(*r, "b2").completion, 200);
  }
}

// Without the lending limit team-b lends all 4: the cohort lends 8 and a1,
// asking 6, leaves 2; b1 fits in them, and a2 still waits (0 left).
TEST(QueuesTest, WithoutTheLendingLimitTheCohortLendsMore) {
  std::string text = kCluster;
  text.replace(text.find("{nominal: 4, lendingLimit: 2}"), 29, "4");
  auto cluster = config::ParseCluster(text, "c.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto workload = config::ParseWorkload(
      "jobs:\n" + Job("a1", "team-a", 7) + Job("b1", "team-b", 1) + Job("a2", "team-a", 1),
      "w.yaml");
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  ASSERT_TRUE(ResolveWorkload(*workload).has_value());
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(*cluster, *workload, MakeEngine("gang-binpack"), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  // a1 borrows 7 of 8; b1 takes the last; a2 waits for a1.
  EXPECT_DOUBLE_EQ(Record(*r, "a1").first_start, 0);
  EXPECT_DOUBLE_EQ(Record(*r, "b1").first_start, 0);
  EXPECT_DOUBLE_EQ(Record(*r, "a2").first_start, 100);
}

// The reclaim example under queue-reclaim, elastic or Kueue's whole-job
// preemption, its invariants checked every cycle; `alone`: SimOptions::alone.
core::Result<SimResult> RunReclaim(const core::ClusterSpec& cluster,
                                   const config::WorkloadSpec& workload, bool elastic,
                                   bool alone = false) {
  SimOptions options;
  options.check_invariants = true;
  options.alone = alone;
  return Simulate(
      cluster, workload,
      MakeEngine("queue-reclaim",
                 [&](config::ProfileSpec& p) { p.preemptor.args["elastic"] = elastic; }),
      options);
}

// examples/cluster-reclaim.yaml and examples/workload-reclaim.yaml under
// queue-reclaim (docs/queues.md's worked reclaim): research and prod, 4
// GPUs each, one node of 8. No launch or checkpoint delays.
//   0:   sweep starts at its minimum 2 and grows into idle room to 6
//        (research borrows 2).
//   50:  eval (2, rigid) takes the last 2 GPUs (research borrows 4).
//   100: train (prod, 2) finds none free; prod is within its nominal, so
//        research's jobs may be reclaimed.
//   Elastic reclaim: sweep shrinks to 4 and train starts; at 200 train
//        ends and sweep grows back to 6. sweep: 600 steps by 100, 400 more
//        by 200, the last 2000 at 6/s: done at 533.3; eval 50 -> 250.
//   Whole-job reclaim (Kueue's): eval, started last, stops with 100 of its
//        400 steps done; it waits until train ends at 200 and needs 150 s
//        more: done at 350 (JCT 300); sweep never shrinks: done at 500.
// Mean JCT: elastic (533.3 + 200 + 100) / 3 = 277.8, whole (500 + 300 +
// 100) / 3 = 300; research's queueing: 0 against (0 + 100) / 2 = 50.
TEST(QueuesTest, ElasticReclaimShrinksTheBorrowerWholeJobReclaimStopsTheLatest) {
  config::WorkloadSpec workload;
  core::ClusterSpec cluster;
  ASSERT_NO_FATAL_FAILURE(
      LoadExample("cluster-reclaim.yaml", "workload-reclaim.yaml", cluster, workload));
  for (const bool elastic : {true, false}) {
    SCOPED_TRACE(elastic);
    auto r = RunReclaim(cluster, workload, elastic);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_DOUBLE_EQ(Record(*r, "train").first_start, 100);
    EXPECT_DOUBLE_EQ(Record(*r, "train").completion, 200);
    EXPECT_NEAR(Record(*r, "sweep").completion, elastic ? 1600.0 / 3 : 500, 1e-6);
    EXPECT_DOUBLE_EQ(Record(*r, "eval").completion, elastic ? 250 : 350);
    EXPECT_EQ(Record(*r, "sweep").preemptions, elastic ? 1 : 0);
    EXPECT_EQ(Record(*r, "eval").preemptions, elastic ? 0 : 1);
    const metrics::RunSummary s = metrics::Summarize(r->run);
    EXPECT_NEAR(s.jct_mean, elastic ? (1600.0 / 3 + 300) / 3 : 300, 1e-6);
    ASSERT_EQ(s.queues.size(), 2u);
    EXPECT_DOUBLE_EQ(*s.queues[0].queueing_mean, elastic ? 0 : 50);
    EXPECT_EQ(s.queues[0].preemptions_suffered, 1);
    EXPECT_EQ(s.queues[1].preemptions_caused, 1);
  }
}

// The same example with restart costs: every job takes 10 s to launch and
// 5 s to checkpoint, and queue-reclaim hands room over at checkpoints.
//
// Elastic: sweep starts with 6 workers at 0 (launch 0..10, runs at 6/s);
// eval starts at 50 (runs 60..260, 400 steps at 2/s). At 100 train needs
// 2 GPUs: sweep (540 steps done) shrinks to 4 and checkpoints 100..105
// (lost 6 GPUs x 5 s = 30), relaunches on 4 over 105..115 (4 x 10 = 40)
// and runs at 4/s. train's launch waits for sweep's checkpoint: 100..115,
// runs 115..215 (reclaim wait 15 s). At 215 sweep (940 steps) grows back
// to 6: checkpoint 215..220 on its 4 (20), relaunch 220..230 on 6 (60);
// 2060 steps at 6/s end at 230 + 343.33 = 573.33. Lost: sweep 150.
// Whole: eval, started last, stops at 100 (80 steps done): checkpoint on
// 2 GPUs (10); train waits 5 s for it, runs 115..215; eval relaunches at
// 215 (2 x 10 = 20), 320 steps from 225 end at 385. sweep runs 10..510.
// Lost: eval 30. Mean JCT: elastic (573.33 + 210 + 115) / 3 = 299.44,
// whole (510 + 335 + 115) / 3 = 320.
TEST(QueuesTest, ReclaimWithRestartCostsHandsOverAtCheckpointsAndCountsWorkLost) {
  config::WorkloadSpec workload;
  core::ClusterSpec cluster;
  ASSERT_NO_FATAL_FAILURE(
      LoadExample("cluster-reclaim.yaml", "workload-reclaim.yaml", cluster, workload));
  for (core::JobSpec& job : workload.jobs) {
    job.launch_delay = 10;
    job.checkpoint_delay = 5;
  }
  for (const bool elastic : {true, false}) {
    SCOPED_TRACE(elastic);
    auto r = RunReclaim(cluster, workload, elastic);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_DOUBLE_EQ(Record(*r, "train").first_start, 100);
    EXPECT_DOUBLE_EQ(Record(*r, "train").launching, 15);
    EXPECT_DOUBLE_EQ(Record(*r, "train").completion, 215);
    EXPECT_NEAR(Record(*r, "sweep").completion, elastic ? 230 + 2060.0 / 6 : 510, 1e-6);
    EXPECT_DOUBLE_EQ(Record(*r, "eval").completion, elastic ? 260 : 385);
    EXPECT_DOUBLE_EQ(Record(*r, "sweep").lost_gpu_seconds, elastic ? 150 : 0);
    EXPECT_DOUBLE_EQ(Record(*r, "eval").lost_gpu_seconds, elastic ? 0 : 30);
    EXPECT_DOUBLE_EQ(Record(*r, "train").lost_gpu_seconds, 0);
    const metrics::RunSummary s = metrics::Summarize(r->run);
    EXPECT_NEAR(s.jct_mean, elastic ? (230 + 2060.0 / 6 + 210 + 115) / 3 : 320, 1e-6);
    EXPECT_NEAR(s.lost_gpu_hours, (elastic ? 150 : 30) / 3600.0, 1e-12);
    ASSERT_EQ(s.queues.size(), 2u);
    EXPECT_NEAR(s.queues[0].lost_gpu_hours, (elastic ? 150 : 30) / 3600.0, 1e-12);
    EXPECT_EQ(s.queues[0].reclaims, 0);
    EXPECT_FALSE(s.queues[0].reclaim_wait_mean.has_value());
    EXPECT_EQ(s.queues[1].reclaims, 1);
    EXPECT_DOUBLE_EQ(*s.queues[1].reclaim_wait_mean, 15);
    EXPECT_DOUBLE_EQ(*s.queues[1].reclaim_wait_max, 15);
  }
}

// Finish-time fairness, by hand, on the reclaim example with elastic
// reclaim (sweep 533.33, eval 50 -> 250, train 100 -> 200, as above).
// Alone, research has its 4 GPUs and no cohort: sweep starts at 2 and grows
// to the quota's 4 (3000 steps at 4/s: done at 750); eval (2 GPUs) finds
// the quota full and no job it may preempt (same priority), so it waits
// until 750 and ends at 950 (JCT 900). prod alone: train 100 -> 200.
// FTF: sweep 533.33 / 750 = 0.7111, eval 200 / 900 = 0.2222, train 1.
TEST(QueuesTest, AloneRunsOnTheNominalQuotaGiveFinishTimeFairness) {
  config::WorkloadSpec workload;
  core::ClusterSpec cluster;
  ASSERT_NO_FATAL_FAILURE(
      LoadExample("cluster-reclaim.yaml", "workload-reclaim.yaml", cluster, workload));
  auto r = RunReclaim(cluster, workload, /*elastic=*/true, /*alone=*/true);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_DOUBLE_EQ(Record(*r, "sweep").alone_jct, 750);
  EXPECT_DOUBLE_EQ(Record(*r, "eval").alone_jct, 900);
  EXPECT_DOUBLE_EQ(Record(*r, "train").alone_jct, 100);
  EXPECT_NEAR(*metrics::FinishTimeFairness(Record(*r, "sweep")), 1600.0 / 3 / 750, 1e-9);
  const metrics::RunSummary s = metrics::Summarize(r->run);
  EXPECT_EQ(s.ftf_jobs, 3);
  EXPECT_NEAR(s.ftf_mean, (1600.0 / 3 / 750 + 200.0 / 900 + 1) / 3, 1e-9);
  EXPECT_DOUBLE_EQ(s.ftf_max, 1);
  ASSERT_EQ(s.queues.size(), 2u);
  EXPECT_NEAR(*s.queues[0].ftf_mean, (1600.0 / 3 / 750 + 200.0 / 900) / 2, 1e-9);
  EXPECT_NEAR(*s.queues[0].ftf_max, 1600.0 / 3 / 750, 1e-9);
  EXPECT_DOUBLE_EQ(*s.queues[1].ftf_mean, 1);
  // Without alone runs nothing is known.
  auto plain = RunReclaim(cluster, workload, /*elastic=*/true);
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  EXPECT_DOUBLE_EQ(Record(*plain, "sweep").alone_jct, 0);
  EXPECT_EQ(metrics::Summarize(plain->run).ftf_jobs, 0);
  EXPECT_FALSE(metrics::Summarize(plain->run).queues[0].ftf_mean.has_value());
}

// Each job of `jobs` (name, queue, GPUs) one worker running 100 s, all
// arriving at 0 in this order; run under gang-binpack with `queue_order`.
// Returns the jobs that started at 0.
std::vector<std::string> StartedAtZero(
    const std::string& cluster_yaml,
    const std::vector<std::tuple<std::string, std::string, int>>& jobs,
    const std::string& queue_order) {
  auto cluster = config::ParseCluster(cluster_yaml, "c.yaml");
  EXPECT_TRUE(cluster.has_value()) << cluster.error().message;
  std::string text = "jobs:\n";
  for (const auto& [name, queue, gpus] : jobs) text += Job(name, queue, gpus);
  auto workload = config::ParseWorkload(text, "w.yaml");
  EXPECT_TRUE(workload.has_value()) << workload.error().message;
  if (!cluster || !workload) return {};
  EXPECT_TRUE(ResolveWorkload(*workload).has_value());
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(
      *cluster, *workload,
      MakeEngine("gang-binpack", [&](config::ProfileSpec& p) { p.queue_order.name = queue_order; }),
      options);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  std::vector<std::string> started;
  if (!r) return started;
  for (const auto& [name, queue, gpus] : jobs) {
    if (Record(*r, name).first_start == 0) started.push_back(name);
  }
  return started;
}

// Volcano's proportion on 12 GPUs (worked in policy/queues/
// queue_orders_test.cc): q1 (weight 3) asks 2, q2 (2) and q3 (1) ask 10
// each: they deserve 2, 6.67 and 3.33, so at 0 q1 runs 2 jobs, q2 6, q3 3
// (a 7th or 4th would pass what they deserve), and one GPU stays idle. In
// the JobOrder alone, q2's ten jobs, listed first, would take 10.
TEST(QueuesTest, VolcanoProportionSharesByWeight) {
  const std::string cluster =
      "nodes: [{name: n, resources: {cpu: 64, memory: 256Gi, nvidia.com/gpu: 12}}]\n"
      "queues: [{name: q1, weight: 3}, {name: q2, weight: 2}, {name: q3, weight: 1}]\n";
  std::vector<std::tuple<std::string, std::string, int>> jobs;
  for (int i = 0; i < 10; ++i) jobs.emplace_back("q2-" + std::to_string(i), "q2", 1);
  for (int i = 0; i < 10; ++i) jobs.emplace_back("q3-" + std::to_string(i), "q3", 1);
  for (int i = 0; i < 2; ++i) jobs.emplace_back("q1-" + std::to_string(i), "q1", 1);
  auto count = [](const std::vector<std::string>& started, const std::string& prefix) {
    return std::count_if(started.begin(), started.end(),
                         [&](const std::string& s) { return s.starts_with(prefix); });
  };
  const auto fair = StartedAtZero(cluster, jobs, "VolcanoProportion");
  EXPECT_EQ(count(fair, "q1-"), 2);
  EXPECT_EQ(count(fair, "q2-"), 6);
  EXPECT_EQ(count(fair, "q3-"), 3);
  const auto plain = StartedAtZero(cluster, jobs, "None");
  EXPECT_EQ(count(plain, "q2-"), 10);
  EXPECT_EQ(count(plain, "q3-"), 2);
}

// Kueue's fair sharing against its classical order and None, on the case of
// Kueue's TestScheduleForFairSharing "fair sharing schedule workload with
// lowest drf after admission" (in GPUs): b and c own nothing, the lender
// lends 100. b0 (b, 10) runs; c1 (c, 75) and b1 (b, 50) wait, c1 first in
// the JobOrder. Fair sharing: b1 (share 600) before c1 (750); then only 40
// are left, and c1 waits. None and classical Kueue (both borrow): c1 first,
// then b1 does not fit (25 left).
TEST(QueuesTest, KueueFairSharingAdmitsTheLowestShareAfterAdmission) {
  const std::string cluster =
      "nodes: [{name: n, resources: {cpu: 64, memory: 256Gi, nvidia.com/gpu: 200}}]\n"
      "queues:\n"
      "  - {name: b, cohort: A, quota: {nvidia.com/gpu: 0}}\n"
      "  - {name: c, cohort: A, quota: {nvidia.com/gpu: 0}}\n"
      "  - {name: lender, cohort: A, quota: {nvidia.com/gpu: 100}}\n";
  const std::vector<std::tuple<std::string, std::string, int>> jobs{
      {"b0", "b", 10}, {"c1", "c", 75}, {"b1", "b", 50}};
  EXPECT_EQ(StartedAtZero(cluster, jobs, "KueueFairSharing"),
            (std::vector<std::string>{"b0", "b1"}));
  EXPECT_EQ(StartedAtZero(cluster, jobs, "Kueue"), (std::vector<std::string>{"b0", "c1"}));
  EXPECT_EQ(StartedAtZero(cluster, jobs, "None"), (std::vector<std::string>{"b0", "c1"}));
}

// DRF's own example (Ghodsi et al., 2011) on 9 CPUs and 18 GiB, no GPUs:
// queue A's jobs ask (1 CPU, 4 GiB), B's (3 CPUs, 1 GiB). DRF gives A 3
// jobs and B 2 (dominant shares 12/18 and 6/9, both 2/3). The JobOrder
// alone (A's jobs listed first) gives A 4 and B 1.
TEST(QueuesTest, DrfGivesEachQueueTheSameDominantShare) {
  auto cluster = config::ParseCluster(
      "nodes: [{name: n, resources: {cpu: 9, memory: 18Gi}}]\n"
      "queues: [{name: A}, {name: B}]\n",
      "c.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  std::string text = "jobs:\n";
  auto job = [](const std::string& name, const std::string& queue, int cpu, int mem) {
    return fmt::format(
        "  - {{name: {}, queue: {}, arrival: 0, totalSteps: 100, throughput: {{table: {{1: 1}}}},\n"
        "     worker: {{replicas: 1, resources: {{cpu: {}, memory: {}Gi}}}}}}\n",
        name, queue, cpu, mem);
  };
  for (int i = 0; i < 5; ++i) text += job("a" + std::to_string(i), "A", 1, 4);
  for (int i = 0; i < 5; ++i) text += job("b" + std::to_string(i), "B", 3, 1);
  auto workload = config::ParseWorkload(text, "w.yaml");
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  ASSERT_TRUE(ResolveWorkload(*workload).has_value());
  for (const char* order : {"Drf", "None"}) {
    SCOPED_TRACE(order);
    auto r = Simulate(
        *cluster, *workload,
        MakeEngine("gang-binpack", [&](config::ProfileSpec& p) { p.queue_order.name = order; }),
        {});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    int a = 0;
    int b = 0;
    for (const auto& rec : r->run.jobs) {
      if (rec.first_start != 0) continue;
      (rec.name[0] == 'a' ? a : b) += 1;
    }
    const bool drf = std::string(order) == "Drf";
    EXPECT_EQ(a, drf ? 3 : 4);
    EXPECT_EQ(b, drf ? 2 : 1);
  }
}

TEST(QueuesTest, AJobNamingAnUndeclaredQueueIsAnError) {
  auto cluster = config::ParseCluster(kCluster, "c.yaml");
  ASSERT_TRUE(cluster.has_value());
  auto workload = config::ParseWorkload("jobs:\n" + Job("x", "team-z", 1), "w.yaml");
  ASSERT_TRUE(workload.has_value());
  ASSERT_TRUE(ResolveWorkload(*workload).has_value());
  auto r = Simulate(*cluster, *workload, MakeEngine("gang-binpack"), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            "w.yaml: job 'x': queue: no queue 'team-z' in the cluster (it declares team-a, "
            "team-b)");
}

}  // namespace
}  // namespace dlsched::sim
