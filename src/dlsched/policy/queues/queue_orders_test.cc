// The queue orders on hand-worked cases: the heads of two or three queues
// and which one each order sends first, and Volcano's deserved shares.
// Several cases are those of Kueue's and Volcano's own tests (named in
// each); the numbers are worked in the comments.
#include "dlsched/policy/queues/queue_orders.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/builders.h"
#include "engine/cluster_with_jobs.h"

namespace dlsched::policy {
namespace {

using dlsched::testing::ClusterWithJobs;
using dlsched::testing::GiB;
using dlsched::testing::JobBuilder;
using dlsched::testing::Node;
using dlsched::testing::Res;
using engine::QueueHead;

constexpr int64_t kCpu = 1000;  // millicores per CPU

core::QueueSpec Queue(const std::string& name, const std::string& cohort, int64_t cpus,
                      double weight = 1) {
  core::QueueSpec q;
  q.name = name;
  q.cohort = cohort;
  q.weight = weight;
  core::QuotaLine l;
  l.id = core::kCpu;
  l.nominal = cpus * kCpu;
  q.quota.push_back(l);
  return q;
}

// A cluster of one big node and `queues`.
core::ClusterSpec Cluster(std::vector<core::QueueSpec> queues, int64_t cpus = 1000,
                          int64_t mem_gib = 1000) {
  core::ClusterSpec c;
  c.nodes.push_back(Node("n", cpus * kCpu, GiB(mem_gib)));
  c.queues = std::move(queues);
  return c;
}

// A job of one worker asking `cpus` CPUs (and `mem_gib` GiB), in `queue`.
core::JobSpec OneWorker(const std::string& name, const std::string& queue, int64_t cpus,
                        core::PriorityClass prio = core::PriorityClass::kNormal,
                        int64_t mem_gib = 0) {
  core::JobSpec j =
      JobBuilder(name).Workers(1).WorkerResources(Res(cpus * kCpu, GiB(mem_gib))).Priority(prio);
  j.queue = queue;
  return j;
}

// Job `j` running: its worker placed on node 0 (its queue's usage).
void Place(ClusterWithJobs& w, engine::JobIndex j) {
  w.state.PlaceTask({j, core::Role::kWorker, 0}, 0);
}

QueueHead Head(const ClusterWithJobs& w, engine::JobIndex j, size_t position) {
  const engine::JobState& js = w.state.Job(j);
  return {js.queue, j, js.spec->Demand(1), position};
}

core::QueueSpec WeightedQueue(const std::string& name, double weight) {
  core::QueueSpec s;
  s.name = name;
  s.weight = weight;
  return s;
}

// On 12 CPUs, queues q1 (weight 3), `q2` and q3 (weight 1) asking 2, 10
// and 10 CPUs (one pending job each); their deserved shares.
Shares DeservedOfTwoTenTen(const core::QueueSpec& q2) {
  ClusterWithJobs w(Cluster({WeightedQueue("q1", 3), q2, WeightedQueue("q3", 1)}, 12, 0));
  w.Add(OneWorker("a", "q1", 2), core::JobPhase::kWaiting);
  w.Add(OneWorker("b", "q2", 10), core::JobPhase::kWaiting);
  w.Add(OneWorker("c", "q3", 10), core::JobPhase::kWaiting);
  return ProportionDeserved(w.state);
}

// The head that goes first: the least (key, position), as admission takes
// them.
size_t Next(const engine::QueueOrder& order, const engine::ClusterState& st,
            const std::vector<QueueHead>& heads) {
  size_t best = 0;
  for (size_t i = 1; i < heads.size(); ++i) {
    const auto a = std::pair(order.Key(st, heads[i]), heads[i].position);
    const auto b = std::pair(order.Key(st, heads[best]), heads[best].position);
    if (a < b) best = i;
  }
  return best;
}

// Kueue TestSchedule "cannot borrow if cohort was assigned and would result
// in overadmission": eng-alpha (50 CPUs) and eng-beta (50) in cohort eng.
// beta-new asks 56 (above its nominal 50: it would borrow), alpha-new 45
// (within its 50). beta-new comes first in the JobOrder, yet Kueue's order
// takes alpha-new first: heads that need not borrow go first.
TEST(KueueQueueOrderTest, HeadsThatNeedNotBorrowGoFirst) {
  ClusterWithJobs w(Cluster({Queue("eng-alpha", "eng", 50), Queue("eng-beta", "eng", 50)}));
  const auto beta = w.Add(OneWorker("beta-new", "eng-beta", 56));
  const auto alpha = w.Add(OneWorker("alpha-new", "eng-alpha", 45));
  const std::vector<QueueHead> heads{Head(w, beta, 0), Head(w, alpha, 1)};
  EXPECT_EQ(Next(KueueQueueOrder(), w.state, heads), 1u);
  // Both within nominal: the higher priority, then the JobOrder.
  const auto b2 = w.Add(OneWorker("b2", "eng-beta", 10, core::PriorityClass::kHigh));
  EXPECT_EQ(Next(KueueQueueOrder(), w.state, std::vector{Head(w, alpha, 0), Head(w, b2, 1)}), 1u);
  const auto b3 = w.Add(OneWorker("b3", "eng-beta", 10));
  EXPECT_EQ(Next(KueueQueueOrder(), w.state, std::vector{Head(w, alpha, 0), Head(w, b3, 1)}), 0u);
}

// Kueue TestScheduleForFairSharing "fair sharing schedule workload with
// lowest drf after admission": b and c have no quota of their own; the
// cohort lends 100 CPUs (here from a third queue, `lender`). b holds 10.
// b1 (50): b would borrow 60 of 100: share 600. c1 (75): 750. b1 first,
// though c1 is first in the JobOrder.
TEST(KueueFairSharingQueueOrderTest, LowestDominantShareAfterAdmissionFirst) {
  ClusterWithJobs w(Cluster({Queue("b", "A", 0), Queue("c", "A", 0), Queue("lender", "A", 100)}));
  Place(w, w.Add(OneWorker("b0", "b", 10)));
  const auto c1 = w.Add(OneWorker("c1", "c", 75));
  const auto b1 = w.Add(OneWorker("b1", "b", 50));
  EXPECT_DOUBLE_EQ(w.state.Quotas().DominantShare(w.state.Job(b1).queue, Res(50 * kCpu, 0)), 600);
  EXPECT_EQ(
      Next(KueueFairSharingQueueOrder(), w.state, std::vector{Head(w, c1, 0), Head(w, b1, 1)}), 1u);
}

// Kueue "fair sharing two queues with weight 0 schedules workload which
// borrows less": both queues weigh 0, so both borrowing shares are
// infinite; the unweighted shares decide, not priority. b holds 4 of the
// cohort's 8: b1 (4, high priority) would make b's share 1000, c1 (4, low)
// c's 500: c1 first.
TEST(KueueFairSharingQueueOrderTest, ZeroWeightsCompareUnweightedSharesBeforePriority) {
  ClusterWithJobs w(
      Cluster({Queue("b", "A", 0, 0), Queue("c", "A", 0, 0), Queue("lender", "A", 8)}));
  Place(w, w.Add(OneWorker("b0", "b", 4)));
  const auto b1 = w.Add(OneWorker("b1", "b", 4, core::PriorityClass::kHigh));
  const auto c1 = w.Add(OneWorker("c1", "c", 4, core::PriorityClass::kLow));
  EXPECT_EQ(
      Next(KueueFairSharingQueueOrder(), w.state, std::vector{Head(w, b1, 0), Head(w, c1, 1)}), 1u);
  // A head that need not borrow beats any share: the lender's.
  const auto l1 = w.Add(OneWorker("l1", "lender", 8, core::PriorityClass::kLow));
  EXPECT_EQ(Next(KueueFairSharingQueueOrder(), w.state,
                 std::vector{Head(w, b1, 0), Head(w, c1, 1), Head(w, l1, 2)}),
            2u);
}

// DRF's own example (Ghodsi et al., NSDI 2011, section 4): 9 CPUs and 18
// GiB; queue A's tasks ask (1 CPU, 4 GiB), B's (3 CPUs, 1 GiB). With A
// holding 2 tasks (2 CPUs, 8 GiB: dominant share 8/18 = 0.44) and B one
// (3 CPUs: 3/9 = 0.33), B goes next; with B at 2 tasks (0.67), A.
TEST(DrfQueueOrderTest, LowestDominantShareOfTheClusterFirst) {
  ClusterWithJobs w(Cluster({WeightedQueue("A", 1), WeightedQueue("B", 1)}, 9, 18));
  for (int i = 0; i < 2; ++i) Place(w, w.Add(OneWorker("a" + std::to_string(i), "A", 1, {}, 4)));
  Place(w, w.Add(OneWorker("b0", "B", 3, {}, 1)));
  const auto a2 = w.Add(OneWorker("a2", "A", 1, {}, 4));
  const auto b1 = w.Add(OneWorker("b1", "B", 3, {}, 1));
  const std::vector heads{Head(w, a2, 0), Head(w, b1, 1)};
  EXPECT_EQ(Next(DrfQueueOrder(), w.state, heads), 1u);
  Place(w, b1);
  EXPECT_EQ(Next(DrfQueueOrder(), w.state, heads), 0u);
}

// Volcano's proportion, water-filled (worked by hand from Volcano's
// proportion plugin): 12 CPUs; q1 (weight 3) asks 2, q2 (weight 2) and q3
// (weight 1) ask 10 each. Round 1 splits 12 by 3:2:1: q1 6, capped at its
// 2 (met); q2 4; q3 2; 4 left. Round 2 splits 4 by 2:1: q2 6.667, q3
// 3.333.
TEST(VolcanoProportionTest, DeservedIsWaterFilledByWeightAndCappedByRequest) {
  const auto deserved = DeservedOfTwoTenTen(WeightedQueue("q2", 2));
  ASSERT_EQ(deserved.size(), 3u);
  EXPECT_EQ(deserved[1][0].first, core::kCpu);
  EXPECT_NEAR(deserved[0][0].second, 2 * kCpu, 1e-6);
  EXPECT_NEAR(deserved[1][0].second, 20.0 / 3 * kCpu, 1e-6);
  EXPECT_NEAR(deserved[2][0].second, 10.0 / 3 * kCpu, 1e-6);
}

// The caps round the shares down: 10 CPUs by 2:1 between the two queues
// with jobs (both asking more) are 6666.67 and 3333.33 millicores; q1 has
// no job and no cap.
TEST(VolcanoProportionTest, CapsAreTheSharesRoundedDown) {
  ClusterWithJobs w(
      Cluster({WeightedQueue("q1", 3), WeightedQueue("q2", 2), WeightedQueue("q3", 1)}, 10, 0));
  w.Add(OneWorker("b", "q2", 10), core::JobPhase::kWaiting);
  w.Add(OneWorker("c", "q3", 10), core::JobPhase::kWaiting);
  const auto caps = VolcanoProportionQueueOrder().Caps(w.state);
  EXPECT_TRUE(caps[0].empty());
  EXPECT_EQ(caps[1], (core::ResourceLimits{{core::kCpu, 6666}}));
  EXPECT_EQ(caps[2], (core::ResourceLimits{{core::kCpu, 3333}}));
}

// With a capability the surplus flows on (worked by hand): q2 (weight 2)
// may hold at most 5 CPUs. Round 1: 2 / 4 / 2, 4 left; round 2: q2 6.667
// capped at 5, q3 3.333, 1.667 left; round 3: q2 unchanged (met), q3
// 3.889 ... until q3 reaches 5.
TEST(VolcanoProportionTest, CapabilityCapsDeservedAndTheSurplusFlowsOn) {
  core::QueueSpec q2 = WeightedQueue("q2", 2);
  q2.capability = {{core::kCpu, 5 * kCpu}};
  const auto deserved = DeservedOfTwoTenTen(q2);
  EXPECT_NEAR(deserved[1][0].second, 5 * kCpu, 1e-6);
  EXPECT_NEAR(deserved[2][0].second, 5 * kCpu, 0.1);  // within Volcano's tolerance
}

// A guarantee floors a queue's share and is kept out of the others' (worked
// by hand): 12 CPUs; q1 asks 1 but is guaranteed 4; q2 asks 12. q2 may
// hold at most 12 - 4 = 8; q1 deserves max(1, 4) = 4, q2 8.
TEST(VolcanoProportionTest, GuaranteeFloorsDeservedAndLimitsTheOthers) {
  core::QueueSpec q1 = WeightedQueue("q1", 1);
  q1.guarantee[core::kCpu] = 4 * kCpu;
  ClusterWithJobs w(Cluster({q1, WeightedQueue("q2", 1)}, 12, 0));
  w.Add(OneWorker("a", "q1", 1), core::JobPhase::kWaiting);
  w.Add(OneWorker("b", "q2", 12), core::JobPhase::kWaiting);
  const auto deserved = ProportionDeserved(w.state);
  EXPECT_NEAR(deserved[0][0].second, 4 * kCpu, 1e-6);
  EXPECT_NEAR(deserved[1][0].second, 8 * kCpu, 1e-6);
}

// Volcano's capacity: shares against the configured `deserved`; a queue
// with none counts as full (best effort) and goes last among equals; a
// higher queue priority goes first whatever its share.
TEST(VolcanoCapacityQueueOrderTest, ShareOfDeservedThenBestEffort) {
  core::QueueSpec a = WeightedQueue("a", 1);
  a.deserved[core::kCpu] = 4 * kCpu;
  core::QueueSpec b = WeightedQueue("b", 1);
  b.deserved[core::kCpu] = 8 * kCpu;
  ClusterWithJobs w(Cluster({a, b, WeightedQueue("c", 1)}, 16, 0));  // c: best effort
  Place(w, w.Add(OneWorker("a0", "a", 2)));                          // a holds 2/4 = 0.5
  Place(w, w.Add(OneWorker("b0", "b", 2)));                          // b holds 2/8 = 0.25
  const auto a1 = w.Add(OneWorker("a1", "a", 1));
  const auto b1 = w.Add(OneWorker("b1", "b", 1));
  const auto c1 = w.Add(OneWorker("c1", "c", 1));
  const std::vector heads{Head(w, c1, 0), Head(w, a1, 1), Head(w, b1, 2)};
  EXPECT_EQ(Next(VolcanoCapacityQueueOrder(), w.state, heads), 2u);
  // Caps: the real capability, all 16 CPUs without guarantees.
  const auto caps = VolcanoCapacityQueueOrder().Caps(w.state);
  EXPECT_EQ(caps[0], (core::ResourceLimits{{core::kCpu, 16 * kCpu}}));
}

TEST(NoQueueOrderTest, KeepsTheJobOrder) {
  ClusterWithJobs w(Cluster({Queue("a", "", 1), Queue("b", "", 1)}));
  const auto a = w.Add(OneWorker("a0", "a", 1));
  const auto b = w.Add(OneWorker("b0", "b", 1));
  EXPECT_FALSE(NoQueueOrder().Interleaves());
  EXPECT_EQ(Next(NoQueueOrder(), w.state, std::vector{Head(w, a, 3), Head(w, b, 2)}), 1u);
}

}  // namespace
}  // namespace dlsched::policy
