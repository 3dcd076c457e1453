// Combined priority (CPS) against the Volcano-like baseline, end to end
// (docs/experiments.md, the CPS experiment): the order in which gangs start.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dlsched/policy/cps/cps_test_util.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using testing::Record;

using policy::testing::CpsGroupCluster;
using policy::testing::CpsGroupJobs;
using policy::testing::CpsJob;
using policy::testing::CpsScenarioJobs;

// A built-in profile; for `cps`, namespace "u<n>" gets user priority n.
engine::Engine MakeEngine(const std::string& name) {
  return testing::MakeEngine(name, [&](config::ProfileSpec& spec) {
    if (name == "cps") {
      for (int u = 1; u <= 10; ++u)
        spec.order.args["namespaceWeights"]["u" + std::to_string(u)] = u;
    }
  });
}

// Job names by admission_seq (the order gangs were started).
std::vector<std::string> StartOrder(const SimResult& r) {
  std::vector<const metrics::JobRecord*> started;
  for (const auto& j : r.run.jobs) {
    if (j.admission_seq >= 0) started.push_back(&j);
  }
  std::sort(started.begin(), started.end(),
            [](const auto* a, const auto* b) { return a->admission_seq < b->admission_seq; });
  std::vector<std::string> names;
  for (const auto* j : started) names.push_back(j->name);
  return names;
}

SimResult SimulateUnder(const core::ClusterSpec& cluster, std::vector<core::JobSpec> jobs,
                        const std::string& profile) {
  config::WorkloadSpec w;
  w.jobs = std::move(jobs);
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(cluster, w, MakeEngine(profile), options);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return std::move(*r);
}

using Names = std::vector<std::string>;

// Group-scheduling case on 2 worker nodes of 8 cpu / 16 GiB (16 cpu in
// all). Jobs 1-4 need 6 tasks x 2 cpu = 12 cpu, job 5 needs 8 x 2 = 16 cpu:
// only one job runs at a time. Each runs 100 s.
//
// volcano-priority serves high (1, 2), normal (3, 4), low (5), by submit
// order within a class: job1 starts at 0 and holds 12 cpu; 4 cpu are left,
// so no other gang fits and job5 (low) may evict nobody. job5 starts last,
// at 400 s.
//
// cps (defaults 10/5/1): V = 0, 0.667, 0, 1, 1.667 -> job5 starts at 0 on
// all 16 cpu. At 100 s the four left are normalised among themselves
// (e = 13 15 13 16, m equal): V = 0, 2/3, 0, 1 -> job4; at 200 s e = 13 15 13
// -> job2; at 300 s job1 and job3 tie (V = 0), submit order -> job1; job3
// at 400 s.
TEST(CpsSimTest, GroupSchedulingCase) {
  const SimResult volcano = SimulateUnder(CpsGroupCluster(), CpsGroupJobs(), "volcano-priority");
  EXPECT_EQ(StartOrder(volcano), (Names{"job1", "job2", "job3", "job4", "job5"}));
  EXPECT_DOUBLE_EQ(Record(volcano, "job1").first_start, 0);
  EXPECT_DOUBLE_EQ(Record(volcano, "job1").completion, 100);
  EXPECT_DOUBLE_EQ(Record(volcano, "job5").first_start, 400);
  EXPECT_GE(Record(volcano, "job5").first_start, Record(volcano, "job1").completion);
  for (const auto& j : volcano.run.jobs) EXPECT_EQ(j.preemptions, 0) << j.name;

  const SimResult cps = SimulateUnder(CpsGroupCluster(), CpsGroupJobs(), "cps");
  EXPECT_EQ(StartOrder(cps), (Names{"job5", "job4", "job2", "job1", "job3"}));
  const std::vector<double> start = {300, 200, 400, 100, 0};
  for (int i = 0; i < 5; ++i) {
    const std::string name = "job" + std::to_string(i + 1);
    EXPECT_DOUBLE_EQ(Record(cps, name).first_start, start[i]) << name;
    EXPECT_EQ(Record(cps, name).final_phase, core::JobPhase::kCompleted) << name;
  }
  EXPECT_EQ(Record(cps, "job5").admission_seq, 0);
  EXPECT_EQ(Record(cps, "job1").admission_seq, 3);
}

// The four scenarios with ample resources (2 nodes of 8 cpu / 16 GiB hold
// every scenario: at most 28 one-cpu tasks): all five gangs start at 0 in
// one cycle, and admission_seq is the order. The jobs are listed in reverse
// (job5 first) so that an order coming from the listing, not from V, would
// show; ties in V then go to the earlier listed job.
//   S1: V = 4/9 4/9 1 1 0 -> job4 job3 (tie at 1) job2 job1 (tie) job5.
//   S2: V = 1 2/3 1/3 0 0 -> job1 job2 job3 job5 job4 (tie at 0).
//   S3: V = 1 2/3 1/3 1/6 0 -> job1 .. job5.
//   S4: V = 2 1.417 0.833 0.417 0 -> job1 .. job5.
// volcano-priority orders by class, then listing: S1 high job4 job3, normal
// job2 job1, low job5; S2-S4 (all normal) job5 .. job1.
TEST(CpsSimTest, ScenariosStartInCombinedPriorityOrder) {
  core::ClusterSpec cluster = CpsGroupCluster();
  for (auto& n : cluster.nodes) {
    n.allocatable[core::kCpu] = 32000;
    n.allocatable[core::kMemory] = int64_t{64} << 30;
  }
  const Names cps_order[] = {
      {"job4", "job3", "job2", "job1", "job5"},
      {"job1", "job2", "job3", "job5", "job4"},
      {"job1", "job2", "job3", "job4", "job5"},
      {"job1", "job2", "job3", "job4", "job5"},
  };
  const Names volcano_order[] = {
      {"job4", "job3", "job2", "job1", "job5"},
      {"job5", "job4", "job3", "job2", "job1"},
      {"job5", "job4", "job3", "job2", "job1"},
      {"job5", "job4", "job3", "job2", "job1"},
  };
  for (int s = 1; s <= 4; ++s) {
    std::vector<core::JobSpec> jobs = CpsScenarioJobs(s);
    std::reverse(jobs.begin(), jobs.end());
    const SimResult cps = SimulateUnder(cluster, jobs, "cps");
    EXPECT_EQ(StartOrder(cps), cps_order[s - 1]) << "S" << s;
    for (const auto& j : cps.run.jobs) EXPECT_DOUBLE_EQ(j.first_start, 0) << "S" << s;
    const SimResult volcano = SimulateUnder(cluster, jobs, "volcano-priority");
    EXPECT_EQ(StartOrder(volcano), volcano_order[s - 1]) << "S" << s;
  }
}

// Priority eviction end to end on the group cluster (16 cpu). `low`
// (2 PS + 6 workers, 16 cpu) starts at 0; `high` (2 PS + 4 workers, 12
// cpu) arrives at 30 s and does not fit: volcano-priority evicts `low`
// (kStop: checkpoint 0 s, back to pending with its 30 steps done), starts
// `high` at 30 (done at 130). `low` restarts at 130 and needs 70 more
// steps: done at 200. Under cps (no preemptor) `high` waits until 100.
TEST(CpsSimTest, VolcanoPriorityEvictsALowerPriorityJob) {
  std::vector<core::JobSpec> jobs;
  jobs.push_back(CpsJob(1, 5, core::PriorityClass::kLow, 20, 2, 6, 2, 2));
  jobs.back().name = "low";
  jobs.push_back(CpsJob(2, 5, core::PriorityClass::kHigh, 20, 2, 4, 2, 2));
  jobs.back().name = "high";
  jobs.back().submit_time = 30;

  const SimResult r = SimulateUnder(CpsGroupCluster(), jobs, "volcano-priority");
  EXPECT_DOUBLE_EQ(Record(r, "high").first_start, 30);
  EXPECT_DOUBLE_EQ(Record(r, "high").completion, 130);
  EXPECT_EQ(Record(r, "low").preemptions, 1);
  EXPECT_EQ(Record(r, "low").reallocations, 1);
  EXPECT_DOUBLE_EQ(Record(r, "low").completion, 200);
  EXPECT_EQ(Record(r, "high").preemptions, 0);

  const SimResult c = SimulateUnder(CpsGroupCluster(), jobs, "cps");
  EXPECT_DOUBLE_EQ(Record(c, "high").first_start, 100);
  EXPECT_EQ(Record(c, "low").preemptions, 0);
}

}  // namespace
}  // namespace dlsched::sim
