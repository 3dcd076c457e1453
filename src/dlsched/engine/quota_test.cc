// QuotaBook against scenarios of Kueue's own tests (kubernetes-sigs/kueue:
// pkg/scheduler/flavorassigner/flavorassigner_test.go, pkg/scheduler/
// scheduler_test.go, pkg/cache/scheduler/snapshot_test.go and
// resource_node_test.go): the same quotas, usage and requests, and the
// admissions and maximum capacities those tests expect. Quantities are
// whole CPUs here (the book counts millicores: x1000).
#include "dlsched/engine/quota.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace dlsched::engine {
namespace {

constexpr int64_t kCpus = 1000;  // millicores per CPU

core::QuotaLine Cpu(int64_t nominal, std::optional<int64_t> borrowing = std::nullopt,
                    std::optional<int64_t> lending = std::nullopt) {
  core::QuotaLine l;
  l.id = core::kCpu;
  l.nominal = nominal * kCpus;
  if (borrowing) l.borrowing_limit = *borrowing * kCpus;
  if (lending) l.lending_limit = *lending * kCpus;
  return l;
}

core::QueueSpec Queue(const std::string& name, const std::string& cohort,
                      std::vector<core::QuotaLine> quota) {
  core::QueueSpec q;
  q.name = name;
  q.cohort = cohort;
  q.quota = std::move(quota);
  return q;
}

core::Resources Cpus(int64_t n) {
  core::Resources r;
  r[core::kCpu] = n * kCpus;
  return r;
}

// K1 (flavorassigner_test "when borrowing while preemption is needed, but
// borrowingLimit exceeds the quota available in the cohort"): cq has 0
// nominal and may borrow 12; the only lender has 11. The most cq could ever
// hold is min(0 + 12, 0 + 11) = 11, so 12 CPUs never fit.
TEST(QuotaBookTest, KueueBorrowingLimitBeyondWhatTheCohortHas) {
  QuotaBook book(std::vector{Queue("cq", "c", {Cpu(0, 12)}), Queue("other", "c", {Cpu(11)})});
  book.Add(book.Find("other"), Cpus(10));
  const int cq = book.Find("cq");
  EXPECT_EQ(book.MaxCapacity(cq, core::kCpu), 11 * kCpus);
  EXPECT_TRUE(book.NeverHolds(cq, Cpus(12)).has_value());
  EXPECT_FALSE(book.NeverHolds(cq, Cpus(11)).has_value());
  // 11 lendable, 10 of it used by its owner within nominal: 1 left.
  EXPECT_EQ(book.Available(cq, core::kCpu), 1 * kCpus);
}

// K2 ("not enough space to borrow"): the other queue lends nothing
// (lending limit 0), so cq can never go beyond its own nominal 1.
TEST(QuotaBookTest, KueueLendingLimitZeroLendsNothing) {
  QuotaBook book(std::vector{Queue("cq", "c", {Cpu(1)}), Queue("other", "c", {Cpu(10, {}, 0)})});
  book.Add(book.Find("other"), Cpus(9));
  const int cq = book.Find("cq");
  EXPECT_EQ(book.MaxCapacity(cq, core::kCpu), 1 * kCpus);
  EXPECT_FALSE(book.Admits(cq, Cpus(2)));
  EXPECT_TRUE(book.NeverHolds(cq, Cpus(2)).has_value());
  EXPECT_TRUE(book.Admits(cq, Cpus(1)));
}

// K3 (scheduler_test "cannot borrow if cohort was assigned and would result
// in overadmission" and its "can borrow" twin): eng-alpha (50, may borrow
// 50) admits 45; then eng-beta (50, may borrow 10) has
// min(100 - 45, 50 - 0 + 10) = 55 available: 56 does not fit, 55 does.
TEST(QuotaBookTest, KueueBorrowingAfterAnotherQueueTookTheCohortsRoom) {
  QuotaBook book(std::vector{Queue("eng-alpha", "eng", {Cpu(50, 50)}),
                             Queue("eng-beta", "eng", {Cpu(50, 10)})});
  const int alpha = book.Find("eng-alpha");
  const int beta = book.Find("eng-beta");
  ASSERT_TRUE(book.Admits(alpha, Cpus(45)));
  book.Add(alpha, Cpus(45));
  EXPECT_EQ(book.Available(beta, core::kCpu), 55 * kCpus);
  EXPECT_FALSE(book.Admits(beta, Cpus(56)));
  EXPECT_TRUE(book.Admits(beta, Cpus(55)));
  const std::optional<std::string> why = book.Refusal(beta, Cpus(56));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why,
            "queue eng-beta's quota: needs 56 cpu, 55 available (nominal 50, 0 in use, borrowing "
            "limit 10, cohort eng lends 100, 45 of it in use)");
}

// K4 (scheduler_test "workload exceeds lending limit when borrow in
// cohort"): lend-a keeps 1 of its 3 CPUs (lending limit 2), lend-b lends
// all of its 2. With lend-b using 2, the cohort has 4 - 2 = 2 left: 3 CPUs
// do not fit in lend-b, though 5 are nominal and only 2 used.
TEST(QuotaBookTest, KueueLendingLimitHoldsRoomBack) {
  QuotaBook book(std::vector{Queue("lend-a", "lend", {Cpu(3, {}, 2)}),
                             Queue("lend-b", "lend", {Cpu(2, {}, 2)})});
  const int b = book.Find("lend-b");
  book.Add(b, Cpus(2));
  EXPECT_EQ(book.Available(b, core::kCpu), 2 * kCpus);
  EXPECT_FALSE(book.Admits(b, Cpus(3)));
  EXPECT_EQ(book.MaxCapacity(b, core::kCpu), 4 * kCpus);  // not "never"
  // lend-a's own CPU stays its own: 1 local + 2 from the cohort.
  EXPECT_EQ(book.Available(book.Find("lend-a"), core::kCpu), 3 * kCpus);
}

// K5 (snapshot_test "TestSnapshotAddRemoveWorkloadWithLendingLimit"): usage
// inside a queue's local part does not reach the cohort. lend-a keeps 6
// (10, lending limit 4), lend-b keeps 4 (10, lending limit 6); the cohort
// lends 4 + 6 = 10.
TEST(QuotaBookTest, KueueUsageWithinTheLocalPartStaysOutOfTheCohort) {
  QuotaBook book(std::vector{Queue("lend-a", "lend", {Cpu(10, {}, 4)}),
                             Queue("lend-b", "lend", {Cpu(10, {}, 6)})});
  const int a = book.Find("lend-a");
  const int b = book.Find("lend-b");
  for (int cpus : {1, 9, 6}) book.Add(a, Cpus(cpus));
  book.Add(b, Cpus(4));
  // The cohort's use: (16 - 6) + max(0, 4 - 4) = 10 of its 10, so lend-b
  // has only its own room left: none.
  EXPECT_EQ(book.Usage(a)[core::kCpu], 16 * kCpus);
  EXPECT_EQ(book.Available(b, core::kCpu), 0);
  // Removing the 9: lend-a uses 7, the cohort 1; lend-b may take 9.
  book.Sub(a, Cpus(9));
  EXPECT_EQ(book.Available(b, core::kCpu), 9 * kCpus);
  // Removing the 1 as well: lend-a uses 6, all local; the cohort 0.
  book.Sub(a, Cpus(1));
  EXPECT_EQ(book.Available(b, core::kCpu), 10 * kCpus);
  EXPECT_EQ(book.Available(a, core::kCpu), 10 * kCpus);
}

// K7 (resource_node_test TestCohortLendable): what a cohort lends is the sum
// of its queues' lendable nominal, per resource.
TEST(QuotaBookTest, KueueCohortLendable) {
  core::QuotaLine gpu;
  gpu.id = core::kGpu;
  gpu.nominal = 3;
  gpu.lending_limit = 3;
  QuotaBook book(std::vector{Queue("cq1", "test-cohort", {Cpu(8, {}, 8), gpu}),
                             Queue("cq2", "test-cohort", {Cpu(2, {}, 2)})});
  EXPECT_EQ(book.MaxCapacity(book.Find("cq2"), core::kCpu), 10 * kCpus);
  EXPECT_EQ(book.MaxCapacity(book.Find("cq2"), core::kGpu), INT64_MAX);  // not in its quota
  EXPECT_EQ(book.MaxCapacity(book.Find("cq1"), core::kGpu), 3);
}

// Without a cohort a queue never goes beyond its nominal quota, and a
// resource its quota does not list is not limited.
TEST(QuotaBookTest, AQueueWithoutACohortStaysWithinNominal) {
  QuotaBook book(std::vector{Queue("solo", "", {Cpu(4)}), Queue("other", "", {Cpu(4)})});
  const int solo = book.Find("solo");
  book.Add(solo, Cpus(3));
  EXPECT_TRUE(book.Admits(solo, Cpus(1)));
  EXPECT_FALSE(book.Admits(solo, Cpus(2)));
  core::Resources gpus;
  gpus[core::kGpu] = 1000;
  EXPECT_TRUE(book.Admits(solo, gpus));
  EXPECT_EQ(book.Available(book.Find("other"), core::kCpu), 4 * kCpus);
  EXPECT_EQ(book.Find("nope"), -1);
}

// ---- hierarchical cohorts ---------------------------------------------

core::CohortSpec Cohort(const std::string& name, const std::string& parent,
                        std::vector<core::QuotaLine> quota = {}, double weight = 1) {
  core::CohortSpec c;
  c.name = name;
  c.parent = parent;
  c.weight = weight;
  c.quota = std::move(quota);
  return c;
}

// The shares of every node, as Kueue's TestDominantResourceShare
// (fair_sharing_test.go) expects them; cq holds 10 CPUs (Kueue's GPUs).
double Weighted(const QuotaBook& book, const std::string& name) {
  for (int n = 0; n < book.NumNodes(); ++n) {
    if (book.NodeName(n) == name) return book.DominantShare(n, -1, {}) / book.Weight(n);
  }
  return -1;
}

// K21 "cohort has resource share": cq (5) in child-cohort (weight 2)
// under root (45). child lends root 5: root has 50. cq borrows 5 of the
// 50 its parent could lend it: 100; child-cohort 5 of root's 50, / 2: 50.
TEST(QuotaBookTest, KueueCohortHasResourceShare) {
  QuotaBook book(std::vector{Queue("cq", "child-cohort", {Cpu(5)})},
                 std::vector{Cohort("child-cohort", "root", {}, 2), Cohort("root", "", {Cpu(45)})});
  book.Add(0, Cpus(10));
  EXPECT_DOUBLE_EQ(Weighted(book, "cq"), 100);
  EXPECT_DOUBLE_EQ(Weighted(book, "child-cohort"), 50);
  EXPECT_DOUBLE_EQ(Weighted(book, "root"), 0);
}

// K22 "resource share defined for resources only available at the root
// cohort": cq has 0, root 50: cq 10/50 = 200; child-cohort 200 / 2.
TEST(QuotaBookTest, KueueShareOfResourcesOnlyAtTheRoot) {
  QuotaBook book(std::vector{Queue("cq", "child-cohort", {Cpu(0)})},
                 std::vector{Cohort("child-cohort", "root", {}, 2), Cohort("root", "", {Cpu(50)})});
  book.Add(0, Cpus(10));
  EXPECT_DOUBLE_EQ(Weighted(book, "cq"), 200);
  EXPECT_DOUBLE_EQ(Weighted(book, "child-cohort"), 100);
  EXPECT_EQ(book.Available(0, core::kCpu), 40 * kCpus);
}

// K23 "resource share affected by borrowing limit": child-cohort has 0
// and may borrow 10 from root (50). Seen from cq its parent can lend only
// 10: 10/10 = 1000; child-cohort borrows 10 of 50: 200. cq can never hold
// more than 10.
TEST(QuotaBookTest, KueueShareAffectedByACohortsBorrowingLimit) {
  QuotaBook book(
      std::vector{Queue("cq", "child-cohort", {Cpu(0)})},
      std::vector{Cohort("child-cohort", "root", {Cpu(0, 10)}), Cohort("root", "", {Cpu(50)})});
  book.Add(0, Cpus(10));
  EXPECT_DOUBLE_EQ(Weighted(book, "cq"), 1000);
  EXPECT_DOUBLE_EQ(Weighted(book, "child-cohort"), 200);
  EXPECT_EQ(book.MaxCapacity(0, core::kCpu), 10 * kCpus);
  EXPECT_EQ(book.Available(0, core::kCpu), 0);
  EXPECT_TRUE(book.NeverHolds(0, Cpus(11)).has_value());
}

// A tree worked by hand: org (4 CPUs of its own) over research (lending
// limit 2) and q3 (2); research over q1 (4, lending limit 1) and q2 (2).
//   research: subtree = 0 + (4 - 3) + 2 = 3, local = 3 - 2 = 1;
//   org:      subtree = 4 + (3 - 1) + 2 = 8.
// All 12 CPUs are q1's at most: its local 3 + research's local 1 + org's 8.
// q1 using 5: 3 inside its own local part, 2 reach research; research
// keeps 1 locally, 1 reaches org. Each queue may then take 7 more (the
// cluster's 12 less 5): research's local part is used up, org has 8 - 1.
TEST(QuotaBookTest, HandWorkedTree) {
  QuotaBook book(
      std::vector{Queue("q1", "research", {Cpu(4, {}, 1)}), Queue("q2", "research", {Cpu(2)}),
                  Queue("q3", "org", {Cpu(2)})},
      std::vector{Cohort("research", "org", {Cpu(0, {}, 2)}), Cohort("org", "", {Cpu(4)})});
  EXPECT_EQ(book.MaxCapacity(0, core::kCpu), 12 * kCpus);
  EXPECT_EQ(book.MaxCapacity(2, core::kCpu), 8 * kCpus);
  book.Add(0, Cpus(5));
  EXPECT_EQ(book.Available(1, core::kCpu), 7 * kCpus);
  EXPECT_EQ(book.Available(2, core::kCpu), 7 * kCpus);
  EXPECT_EQ(book.Available(0, core::kCpu), 7 * kCpus);
  EXPECT_EQ(book.CommonAncestor(0, 1), book.Parent(0));
  EXPECT_EQ(book.CommonAncestor(0, 2), book.Parent(2));
  // Giving back brings every level back.
  book.Sub(0, Cpus(5));
  EXPECT_EQ(book.Available(2, core::kCpu), 8 * kCpus);
  EXPECT_EQ(*book.Refusal(2, Cpus(9)),
            "queue q3's quota: needs 9 cpu, 8 available (nominal 2, 0 in use, cohort org lends "
            "8, 0 of it in use)");
  EXPECT_EQ(*book.Refusal(1, Cpus(12)),
            "queue q2's quota: needs 12 cpu, 9 available (nominal 2, 0 in use, cohort research "
            "lends 3, 0 of it in use, lending limit 2, cohort org lends 8, 0 of it in use)");
}

}  // namespace
}  // namespace dlsched::engine
