// Teams' queues in whole simulated runs: quota checked at admission,
// borrowing through a cohort, a lending limit holding room back, a queue's
// blocked head holding up only its own queue, and the errors of a job
// naming a queue the cluster does not declare.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "dlsched/config/specs.h"
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
  const std::string dir = std::string(DLSCHED_SOURCE_DIR) + "/examples/";
  auto cluster = config::LoadCluster(dir + "cluster-queues.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto workload = config::LoadWorkload(dir + "workload-queues.yaml");
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  ASSERT_TRUE(ResolveWorkload(*workload).has_value());
  SimOptions options;
  options.check_invariants = true;
  for (const char* profile : {"fifo", "gang-binpack"}) {
    SCOPED_TRACE(profile);
    const bool strict = std::string(profile) == "fifo";
    auto r = Simulate(*cluster, *workload, MakeEngine(profile), options);
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
