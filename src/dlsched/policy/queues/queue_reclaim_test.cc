// The QueueReclaim preemptor on hand-worked cases: the scenarios of
// Kueue's own preemption tests (pkg/scheduler/preemption/preemption_test.go,
// TestPreemption; named in each), facts ported, not code, and dlsched's
// elastic reclaim. Kueue's integer priorities map onto dlsched's classes
// (-1 low, 0 normal, 1 high unless a case says otherwise). One node of
// 1000 CPUs: only the queues' quotas bind, as in Kueue, where nodes are
// kube-scheduler's business.
#include "dlsched/policy/queues/preemptor_queue_reclaim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/builders.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/policy/shared/packer_task_by_task.h"
#include "engine/cluster_with_jobs.h"

namespace dlsched::policy {
namespace {

using core::PreemptionPolicy;
using core::PriorityClass;
using dlsched::testing::ClusterWithJobs;
using dlsched::testing::GiB;
using dlsched::testing::JobBuilder;
using dlsched::testing::Node;
using dlsched::testing::Res;
using engine::ActionKind;
using engine::JobIndex;

constexpr int64_t kCpu = 1000;  // millicores per CPU
constexpr auto kLow = PriorityClass::kLow;
constexpr auto kNormal = PriorityClass::kNormal;
constexpr auto kHigh = PriorityClass::kHigh;
constexpr auto kNever = PreemptionPolicy::kNever;
constexpr auto kLower = PreemptionPolicy::kLowerPriority;
constexpr auto kAny = PreemptionPolicy::kAny;

// A queue with a CPU quota (borrowing and lending limits, -1: none) and
// its preemption policies.
core::QueueSpec Queue(const std::string& name, const std::string& cohort, int64_t cpus,
                      core::QueuePreemption preemption = {}, int64_t borrowing = -1,
                      int64_t lending = -1) {
  core::QueueSpec q;
  q.name = name;
  q.cohort = cohort;
  core::QuotaLine l;
  l.id = core::kCpu;
  l.nominal = cpus * kCpu;
  if (borrowing >= 0) l.borrowing_limit = borrowing * kCpu;
  if (lending >= 0) l.lending_limit = lending * kCpu;
  q.quota.push_back(l);
  q.preemption = preemption;
  return q;
}

core::QueuePreemption Policies(PreemptionPolicy within, PreemptionPolicy reclaim,
                               PreemptionPolicy borrow = kNever,
                               std::optional<PriorityClass> threshold = std::nullopt) {
  return {within, reclaim, borrow, threshold};
}

class QueueReclaimTest : public ::testing::Test {
 protected:
  void Make(std::vector<core::QueueSpec> queues, std::vector<core::CohortSpec> cohorts = {}) {
    core::ClusterSpec c;
    c.nodes.push_back(Node("n", 1000 * kCpu, GiB(1000), 100));
    c.queues = std::move(queues);
    c.cohorts = std::move(cohorts);
    w_.emplace(std::move(c));
    plan_.emplace();  // a new cluster: a new plan
  }
  engine::ClusterState& st() { return w_->state; }

  // A job of `queue` running one worker of `cpus` CPUs, started at
  // `started` (submitted at `submitted`, default the same).
  JobIndex Running(const std::string& name, const std::string& queue, PriorityClass prio,
                   double cpus, core::Time started = 0, core::Time submitted = -1) {
    const JobIndex j =
        w_->AddAt(started, OneWorker(name, queue, prio, cpus, submitted < 0 ? started : submitted),
                  core::JobPhase::kWaiting);
    st().PlaceTask({j, core::Role::kWorker, 0}, 0);
    st().SetPhase(j, core::JobPhase::kRunning, started);
    return j;
  }
  // A job of `queue` waiting for one worker of `cpus` CPUs.
  JobIndex Pending(const std::string& name, const std::string& queue, PriorityClass prio,
                   double cpus, core::Time submitted = 100) {
    return w_->AddAt(submitted, OneWorker(name, queue, prio, cpus, submitted),
                     core::JobPhase::kWaiting);
  }
  static core::JobSpec OneWorker(const std::string& name, const std::string& queue,
                                 PriorityClass prio, double cpus, core::Time submitted) {
    core::JobSpec spec = JobBuilder(name)
                             .Submit(submitted)
                             .Workers(1)
                             .WorkerResources(Res(std::llround(cpus * kCpu), 0))
                             .Priority(prio);
    spec.queue = queue;
    return spec;
  }

  // Runs the preemptor for `j` at t = 200 and keeps what it did; the names
  // of the jobs it stopped, sorted.
  std::vector<std::string> Targets(JobIndex j, QueueReclaimPreemptor::Options o = Whole()) {
    return Run(QueueReclaimPreemptor(o), j);
  }
  std::vector<std::string> Run(const engine::Preemptor& preemptor, JobIndex j) {
    engine::Session session(st());
    engine::PodQueue pods;
    engine::Memos memos;
    engine::CycleContext ctx{session, *plan_, pods, memos, profile_, 200};
    reason_.clear();
    placed_ = preemptor.Preempt(ctx, j, st().Job(j).spec->role(core::Role::kWorker).replicas,
                                TaskByTaskPacker(), &reason_);
    session.Commit();
    std::vector<std::string> out;
    for (const engine::Action& a : plan_->actions()) {
      if (a.kind == ActionKind::kStop) out.push_back(st().Job(a.task.job).spec->name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // Kueue's own: whole jobs only, no queue-level defaults.
  static QueueReclaimPreemptor::Options Whole() {
    QueueReclaimPreemptor::Options o;
    o.defaults = {};
    o.elastic = false;
    return o;
  }

  std::optional<ClusterWithJobs> w_;
  engine::Profile profile_;
  std::optional<engine::CycleState> plan_;
  std::string reason_;
  bool placed_ = false;
};

using Names = std::vector<std::string>;

// Kueue K8 ("minimal set excludes low priority" and its siblings): queue
// standalone, 6 CPUs, no cohort, withinQueue LowerPriority.
TEST_F(QueueReclaimTest, WithinQueueRemovesUntilItFitsThenFillsBack) {
  const core::QueuePreemption p = Policies(kLower, kNever);
  // low 1 + mid 2 + high 3 = 6 used; a high job asks 2. Removing low (1
  // free) is not enough, removing mid too is (3 free); fill-back gives low
  // back: 2 free with it running, enough. Only mid goes.
  Make({Queue("standalone", "", 6, p)});
  Running("low", "standalone", kLow, 1);
  Running("mid", "standalone", kNormal, 2);
  Running("high", "standalone", kHigh, 3);
  EXPECT_EQ(Targets(Pending("in", "standalone", kHigh, 2)), Names{"mid"});
  EXPECT_TRUE(placed_);
}

TEST_F(QueueReclaimTest, WithinQueuePreemptsSeveralWhenNeeded) {
  // low 2 + mid 2 + high 2; a high job of 3: low and mid both go.
  Make({Queue("standalone", "", 6, Policies(kLower, kNever))});
  Running("low", "standalone", kLow, 2);
  Running("mid", "standalone", kNormal, 2);
  Running("high", "standalone", kHigh, 2);
  EXPECT_EQ(Targets(Pending("in", "standalone", kHigh, 3)), (Names{"low", "mid"}));
}

TEST_F(QueueReclaimTest, WithinQueueUsesFreeQuotaFirst) {
  // low 1 + mid 1 + high 3 = 5: 1 free; a high job of 2 needs low alone.
  Make({Queue("standalone", "", 6, Policies(kLower, kNever))});
  Running("low", "standalone", kLow, 1);
  Running("mid", "standalone", kNormal, 1);
  Running("high", "standalone", kHigh, 3);
  EXPECT_EQ(Targets(Pending("in", "standalone", kHigh, 2)), Names{"low"});
}

TEST_F(QueueReclaimTest, WithinQueueNeverPreemptsEqualOrHigherPriority) {
  // Nothing runs below low; and removing low (3) cannot free 4.
  Make({Queue("standalone", "", 6, Policies(kLower, kNever))});
  Running("low", "standalone", kLow, 3);
  Running("mid", "standalone", kNormal, 3);
  EXPECT_EQ(Targets(Pending("in", "standalone", kLow, 1)), Names{});
  EXPECT_FALSE(placed_);
  EXPECT_EQ(Targets(Pending("in2", "standalone", kNormal, 4)), Names{});
  EXPECT_FALSE(placed_);
  EXPECT_NE(reason_.find("would not make room"), std::string::npos) << reason_;
  EXPECT_TRUE(plan_->actions().empty());
}

// Kueue K9 ("preempt newer workloads with the same priority"): 6 CPUs,
// LowerOrNewerEqualPriority. wl1 (prio 2 -> high), wl2 and wl3 (prio 1 ->
// normal), 2 CPUs each, all submitted at 0; wl2 started later (1 s) than
// wl3 (0 s). The incoming normal job of 2 CPUs was submitted before them
// (-15 s): wl2 and wl3 qualify; the later started, wl2, goes.
TEST_F(QueueReclaimTest, LowerOrNewerEqualPriorityTakesTheLatestStarted) {
  Make({Queue("q", "", 6, Policies(PreemptionPolicy::kLowerOrNewerEqualPriority, kNever))});
  Running("wl1", "q", kHigh, 2, 0, 0);
  Running("wl2", "q", kNormal, 2, 1, 0);
  Running("wl3", "q", kNormal, 2, 0, 0);
  EXPECT_EQ(Targets(Pending("in", "q", kNormal, 2, -15)), Names{"wl2"});
}

// Kueue K10 ("reclaim quota from borrower"): c1 and c2, 6 CPUs each (6
// borrowable), one cohort. c1: withinQueue and reclaimWithinCohort
// LowerPriority; c2: Never, Any. c1-low (3) runs in c1; c2-mid (3) and
// c2-high (6) in c2, which borrows 3. A high job of c1 asks 3: 3 + 3 fits
// in c1's nominal, so c2's jobs below high are reclaim candidates, tried
// before c1's own: c2-mid goes, and the cohort has 12 - 9 = 3 free.
TEST_F(QueueReclaimTest, ReclaimFromABorrowerBeforeOwnJobs) {
  Make({Queue("c1", "cohort", 6, Policies(kLower, kLower), 6),
        Queue("c2", "cohort", 6, Policies(kNever, kAny), 6)});
  Running("c1-low", "c1", kLow, 3);
  Running("c2-mid", "c2", kNormal, 3);
  Running("c2-high", "c2", kHigh, 6);
  EXPECT_EQ(Targets(Pending("in", "c1", kHigh, 3)), Names{"c2-mid"});
  EXPECT_NE(plan_->actions()[0].reason.find("queue c1 reclaims its quota from c2"),
            std::string::npos)
      << plan_->actions()[0].reason;
}

// Kueue K11 ("not enough workloads borrowing", "no workloads borrowing").
TEST_F(QueueReclaimTest, ReclaimMustEndWithinNominalWithoutBorrowWithinCohort) {
  // c1-high (4) in c1; c2 holds 8 (borrows 2). A high job of c1 asks 4: c1
  // would hold 8 > 6 even after reclaiming, and borrowWithinCohort is
  // Never: c2's jobs may only be taken by a no-borrowing attempt, which
  // cannot succeed.
  Make({Queue("c1", "cohort", 6, Policies(kLower, kLower), 6),
        Queue("c2", "cohort", 6, Policies(kNever, kAny), 6)});
  Running("c1-high", "c1", kHigh, 4);
  Running("c2-low-1", "c2", kLow, 4);
  Running("c2-low-2", "c2", kLow, 4);
  EXPECT_EQ(Targets(Pending("in", "c1", kHigh, 4)), Names{});
  EXPECT_FALSE(placed_);
}

TEST_F(QueueReclaimTest, AQueueWithinItsNominalIsNoCandidate) {
  // c2 holds 4 <= 6: it borrows nothing, so nothing of it may be taken.
  Make({Queue("c1", "cohort", 6, Policies(kLower, kLower), 6),
        Queue("c2", "cohort", 6, Policies(kNever, kAny), 6)});
  Running("c1-high", "c1", kHigh, 4);
  Running("c2-low-1", "c2", kLow, 4);
  EXPECT_EQ(Targets(Pending("in", "c1", kHigh, 4)), Names{});
  EXPECT_NE(reason_.find("no running job it may preempt"), std::string::npos) << reason_;
}

// Kueue K12 ("preempt from all ClusterQueues in cohort"): c1 holds c1-low
// (3) and c1-mid (2), c2 holds c2-low (3) and c2-mid (4), borrowing 1. A
// normal job of c1 asks 4: 5 + 4 > 6, no advantage, so the no-borrowing
// attempt goes first (c1 is strictly under nominal): c2-low (valid, c2
// borrows), still 3 free and c1 would hold 9; c1-low: c1 holds 2 + 4 = 6
// and the cohort has 12 - 6 = 6 free: it fits. Fill-back of c2-low: 3
// free < 4, so both go.
TEST_F(QueueReclaimTest, MixesOwnQueueAndReclaimWithFillBack) {
  Make({Queue("c1", "cohort", 6, Policies(kLower, kLower), 6),
        Queue("c2", "cohort", 6, Policies(kNever, kAny), 6)});
  Running("c1-low", "c1", kLow, 3);
  Running("c1-mid", "c1", kNormal, 2);
  Running("c2-low", "c2", kLow, 3);
  Running("c2-mid", "c2", kNormal, 4);
  EXPECT_EQ(Targets(Pending("in", "c1", kNormal, 4)), (Names{"c1-low", "c2-low"}));
}

// Kueue K13 ("reclaim quota from lender"): lend1 (6, lending 4) and lend2
// (6, lending 2). lend1-low (3), lend2-mid (3), lend2-high (4): lend2
// borrows 1. A high job of lend1 asks 3 (3 + 3 <= 6: advantage). Removing
// lend2-mid: cohort usage (3-2) + (4-4) = 1 of 6 lent, lend1 may take 0
// locally + 5 from the cohort: fits.
TEST_F(QueueReclaimTest, ReclaimWithLendingLimits) {
  Make({Queue("lend1", "cohort-lend", 6, Policies(kLower, kLower), -1, 4),
        Queue("lend2", "cohort-lend", 6, Policies(kLower, kLower), -1, 2)});
  Running("lend1-low", "lend1", kLow, 3);
  Running("lend2-mid", "lend2", kNormal, 3);
  Running("lend2-high", "lend2", kHigh, 4);
  EXPECT_EQ(Targets(Pending("in", "lend1", kHigh, 3)), Names{"lend2-mid"});
}

TEST_F(QueueReclaimTest, NoPreemptionBeyondTheQueuesMaximumCapacity) {
  // lend1 may hold at most its local 2 + the cohort's 6 = 8 < 9.
  Make({Queue("lend1", "cohort-lend", 6, Policies(kLower, kLower), -1, 4),
        Queue("lend2", "cohort-lend", 6, Policies(kLower, kLower), -1, 2)});
  Running("lend2-low", "lend2", kLow, 10);
  EXPECT_EQ(Targets(Pending("in", "lend1", kNormal, 9)), Names{});
  EXPECT_NE(reason_.find("no preemption can help"), std::string::npos) << reason_;
}

// Kueue K14 ("use BorrowWithinCohort"): a cohort of 13 CPUs: a_standard,
// b_standard, a_best_effort (1 each, borrowing limit 12), b_best_effort (0,
// limit 13), shared (10). The standard and best-effort queues may preempt
// while borrowing jobs of lower priority up to the threshold.
class BorrowWithinCohortTest : public QueueReclaimTest {
 protected:
  void MakeCohort(PriorityClass threshold) {
    const core::QueuePreemption a = Policies(kNever, kLower, kLower, threshold);
    const core::QueuePreemption b = Policies(kLower, kAny, kLower, threshold);
    Make({Queue("a_standard", "c", 1, a, 12), Queue("b_standard", "c", 1, b, 12),
          Queue("a_best_effort", "c", 1, a, 12), Queue("b_best_effort", "c", 0, a, 13),
          Queue("shared", "c", 10)});
  }
};

TEST_F(BorrowWithinCohortTest, PreemptsALowerPriorityBorrowerWhileBorrowing) {
  // Kueue's priorities -1 and 0 (threshold 0): low and normal. a_standard
  // asks 10 (it will borrow 9): a_best_effort_low (10) is taken while
  // borrowing; b_best_effort_low (1), tried first (started later), is given
  // back by the fill-back.
  MakeCohort(kNormal);
  Running("a_best_effort_low", "a_best_effort", kLow, 10, 0);
  Running("b_best_effort_low", "b_best_effort", kLow, 1, 5);
  EXPECT_EQ(Targets(Pending("in", "a_standard", kNormal, 10)), Names{"a_best_effort_low"});
  EXPECT_NE(plan_->actions()[0].reason.find("borrows from a_best_effort"), std::string::npos)
      << plan_->actions()[0].reason;
}

TEST_F(BorrowWithinCohortTest, NotAboveTheThresholdWhileBorrowing) {
  // Kueue's 0 (threshold), 1, 2: low, normal, high. b_standard (normal)
  // holds 10 above the threshold; a_standard needs 10 and would borrow.
  MakeCohort(kLow);
  Running("b_standard", "b_standard", kNormal, 10);
  EXPECT_EQ(Targets(Pending("in", "a_standard", kHigh, 10)), Names{});
}

TEST_F(BorrowWithinCohortTest, AboveTheThresholdWhenNoBorrowingAfter) {
  // b_standard (normal) holds all 13; a_standard asks 1 = its nominal.
  MakeCohort(kLow);
  Running("b_standard", "b_standard", kNormal, 13);
  EXPECT_EQ(Targets(Pending("in", "a_standard", kHigh, 1)), Names{"b_standard"});
}

TEST_F(BorrowWithinCohortTest, OwnQueueAndBelowThresholdBorrowers) {
  // Kueue's -2 and -1 (lower, low) are both low here, -2's being tried
  // first is kept by starting it later; 1 -> normal, 2 -> high, threshold
  // low. b_standard holds 11 and asks 2 more. a_best_effort_lower goes
  // first (a_best_effort then holds 1 = nominal, so a_best_effort_low is
  // no candidate any more), then b_standard_mid: 2 free, fits; the
  // fill-back cannot give a_best_effort_lower back.
  MakeCohort(kLow);
  Running("b_standard_high", "b_standard", kHigh, 10, 0);
  Running("b_standard_mid", "b_standard", kNormal, 1, 0);
  Running("a_best_effort_low", "a_best_effort", kLow, 1, 0);
  Running("a_best_effort_lower", "a_best_effort", kLow, 1, 5);
  EXPECT_EQ(Targets(Pending("in", "b_standard", kHigh, 2)),
            (Names{"a_best_effort_lower", "b_standard_mid"}));
}

TEST_F(BorrowWithinCohortTest, OnlyOwnQueueWhenOthersAreAboveTheThreshold) {
  // Kueue's 1, 2 -> normal (b_standard_1 started later, as its lower
  // priority sorted it first), 3 -> high, threshold low: a_standard's jobs
  // are above it, so only b_standard's own may go: b_standard_1.
  MakeCohort(kLow);
  Running("a_standard_1", "a_standard", kNormal, 10);
  Running("a_standard_2", "a_standard", kNormal, 1);
  Running("b_standard_1", "b_standard", kNormal, 1, 5);
  Running("b_standard_2", "b_standard", kNormal, 1, 0);
  EXPECT_EQ(Targets(Pending("in", "b_standard", kHigh, 1)), Names{"b_standard_1"});
}

// Jobs of no queue preempt each other by priority alone (withinQueue).
TEST_F(QueueReclaimTest, WithoutQueuesItIsPriorityPreemption) {
  Make({});
  Running("low", "default", kLow, 600);
  Running("normal", "default", kNormal, 300);
  QueueReclaimPreemptor::Options o = Whole();
  o.defaults.within_queue = kLower;
  EXPECT_EQ(Targets(Pending("in", "default", kNormal, 200), o), Names{"low"});
}

TEST(QueueReclaimArgsTest, BadArgumentsNameTheField) {
  auto err = [](const std::string& yaml) {
    auto r = MakeQueueReclaim(YAML::Load(yaml), "p.yaml: preemptor.args");
    return r.has_value() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(err("{withinQueue: Any}"),
            "p.yaml: preemptor.args.withinQueue: expected Never, LowerPriority or "
            "LowerOrNewerEqualPriority, got 'Any'");
  EXPECT_EQ(err("{reclaimWithinCohort: Sometimes}"),
            "p.yaml: preemptor.args.reclaimWithinCohort: expected Never, LowerPriority or Any, "
            "got 'Sometimes'");
  EXPECT_EQ(err("{maxPriorityThreshold: urgent}"),
            "p.yaml: preemptor.args.maxPriorityThreshold: expected low, normal or high, got "
            "'urgent'");
  EXPECT_EQ(err("{elastic: maybe}"),
            "p.yaml: preemptor.args.elastic: expected true or false, got 'maybe'");
  EXPECT_EQ(err("{}"), "ok");
}

// --- Elastic reclaim -------------------------------------------------------

// Queues a and b, 4 GPUs each, one cohort, on 2 nodes of 4 GPUs. b runs
// elastic jobs of 1-GPU workers.
class ElasticReclaimTest : public QueueReclaimTest {
 protected:
  void MakeGpus() {
    core::ClusterSpec c;
    c.nodes.push_back(Node("n0", 100 * kCpu, GiB(100), 4));
    c.nodes.push_back(Node("n1", 100 * kCpu, GiB(100), 4));
    for (const char* name : {"a", "b"}) {
      core::QueueSpec q;
      q.name = name;
      q.cohort = "c";
      q.quota.push_back({core::kGpu, 4, std::nullopt, std::nullopt});
      c.queues.push_back(q);
    }
    w_.emplace(std::move(c));
    plan_.emplace();
  }
  // A job of b with a worker on each of `nodes`, elastic in [min, 8].
  JobIndex Elastic(const std::string& name, std::vector<engine::NodeIndex> nodes, core::Time launch,
                   core::Time checkpoint, core::Time started = 0, int min = 1) {
    const int n = static_cast<int>(nodes.size());
    core::JobSpec spec = JobBuilder(name)
                             .Submit(started)
                             .Workers(n, min, std::max(n, 8))
                             .WorkerResources(Res(kCpu, GiB(1), 1))
                             .Delays(launch, checkpoint);
    spec.queue = "b";
    const JobIndex j = w_->AddAt(started, std::move(spec), core::JobPhase::kWaiting);
    for (int i = 0; i < n; ++i) st().PlaceTask({j, core::Role::kWorker, i}, nodes[i]);
    st().SetPhase(j, core::JobPhase::kRunning, started);
    return j;
  }
  JobIndex GpuPending(const std::string& name, int gpus) {
    core::JobSpec spec =
        JobBuilder(name).Submit(100).Workers(gpus).WorkerResources(Res(kCpu, GiB(1), 1));
    spec.queue = "a";
    return w_->AddAt(100, std::move(spec), core::JobPhase::kWaiting);
  }
  static QueueReclaimPreemptor::Options Elastic() {
    QueueReclaimPreemptor::Options o;
    o.elastic = true;
    return o;
  }
  // Each resize in the plan: "<job> -> <workers>".
  std::vector<std::string> Resizes() const {
    std::vector<std::string> out;
    for (const engine::Action& a : plan_->actions()) {
      if (a.kind == ActionKind::kResize) {
        out.push_back(w_->state.Job(a.task.job).spec->name + " -> " + std::to_string(a.workers));
      }
    }
    return out;
  }
};

// b's job E runs 6 workers (borrowing 2 of a's GPUs): 4 on n0, 2 on n1. A
// job of a asks 4 GPUs; 2 are free. Elastic reclaim shrinks E by its two
// highest workers (on n1) to 4 = b's nominal and a's job places on n1: no
// job stops. Whole-job reclaim stops E (all 6 GPUs).
TEST_F(ElasticReclaimTest, ShrinksTheBorrowerInsteadOfStoppingIt) {
  MakeGpus();
  Elastic("E", {0, 0, 0, 0, 1, 1}, 60, 30);
  const JobIndex a = GpuPending("A", 4);
  EXPECT_EQ(Targets(a, Elastic()), Names{});
  EXPECT_TRUE(placed_);
  EXPECT_EQ(Resizes(), std::vector<std::string>{"E -> 4"});
  EXPECT_EQ(st().Job(a).placed_workers, 4);
  EXPECT_TRUE(plan_->actions()[0].restart);
  EXPECT_EQ(plan_->actions()[0].by, a);
}

TEST_F(ElasticReclaimTest, WholeJobReclaimStopsTheBorrower) {
  MakeGpus();
  Elastic("E", {0, 0, 0, 0, 1, 1}, 60, 30);
  QueueReclaimPreemptor::Options o = Elastic();
  o.elastic = false;
  EXPECT_EQ(Targets(GpuPending("A", 4), o), Names{"E"});
  EXPECT_TRUE(Resizes().empty());
}

// Two borrowers of b, E1 (3 workers, launch 10 s + checkpoint 10 s: a
// resize idles its 3 GPUs 20 s, 60 GPU-seconds) and E2 (3 workers, 60 s +
// 60 s: 360 GPU-seconds); b holds 6, borrowing 2. A job of a asks 4 with 2
// free: E1, the cheaper, gives 2 workers (it stays above its minimum of
// 1); E2 is not touched. E2 started later, so whole-job order would take it
// first.
TEST_F(ElasticReclaimTest, ShrinksTheJobThatLosesLeastFirst) {
  MakeGpus();
  Elastic("E1", {0, 0, 0}, 10, 10, 0);
  Elastic("E2", {0, 1, 1}, 60, 60, 50);
  EXPECT_EQ(Targets(GpuPending("A", 4), Elastic()), Names{});
  EXPECT_EQ(Resizes(), std::vector<std::string>{"E1 -> 1"});
}

// b runs E (4 workers, at least 3) and R (2 workers, not elastic), 6
// GPUs: it borrows 2. A job of a asks 4, 2 are free. Shrinking E to its
// minimum frees 1: not enough, so the shrink is undone and whole jobs go,
// as Kueue takes them: R (started later) first, and then a fits.
TEST_F(ElasticReclaimTest, FallsBackToWholeJobsWhenShrinkingIsNotEnough) {
  MakeGpus();
  Elastic("E", {0, 0, 0, 0}, 60, 30, 0, 3);
  Elastic("R", {1, 1}, 60, 30, 10, 2);
  EXPECT_EQ(Targets(GpuPending("A", 4), Elastic()), Names{"R"});
  EXPECT_TRUE(placed_);
  EXPECT_TRUE(Resizes().empty());
}

// ---- fair sharing --------------------------------------------------------
//
// Kueue's fair sharing preemption (TestFairPreemptions in Kueue's
// pkg/scheduler/preemption/preemption_fair_test.go), facts ported: queues
// a, b and c of 3 CPUs each (withinQueue LowerPriority, reclaimWithinCohort
// Any) and "preemptible" of 0, cohort "all", so the cohort lends 9 CPUs.
// A queue's share (Kueue's DRS) is borrowed x 1000 / 9 / its weight: b
// holding 5 borrows 2, share 222.2 (Kueue rounds it to 222; dlsched keeps
// it exact, and no case here turns on the rounding). Priorities 0 ->
// normal, -1 and -3 -> low, 1 -> high. Default strategies:
// LessThanOrEqualToFinalShare, then LessThanInitialShare.
class FairSharingTest : public QueueReclaimTest {
 protected:
  // a, b, c (weights `wa`, `wb`, `wc`) and preemptible.
  void MakeFair(double wa = 1, double wb = 1, double wc = 1) {
    const core::QueuePreemption p = Policies(kLower, kAny);
    std::vector<core::QueueSpec> queues = {Queue("a", "all", 3, p), Queue("b", "all", 3, p),
                                           Queue("c", "all", 3, p), Queue("preemptible", "all", 0)};
    queues[0].weight = wa;
    queues[1].weight = wb;
    queues[2].weight = wc;
    Make(std::move(queues));
  }
  // Jobs "<queue><n>" of 1 CPU each, normal priority.
  void Units(const std::string& queue, int n) {
    for (int i = 1; i <= n; ++i) Running(queue + std::to_string(i), queue, kNormal, 1);
  }
  static QueueReclaimPreemptor::Options Fair(std::vector<FairStrategy> strategies = {
                                                 FairStrategy::kLessThanOrEqualToFinalShare,
                                                 FairStrategy::kLessThanInitialShare}) {
    QueueReclaimPreemptor::Options o = Whole();
    o.fair_sharing = true;
    o.strategies = std::move(strategies);
    return o;
  }
};

// "reclaim nominal from user using the most": a 3, b 5 (share 222), c 1;
// c's job of 1 (c stays at nominal: share 0). b without b1 has 111 >= 0:
// b1 goes, and then 9 of 9 are used.
TEST_F(FairSharingTest, ReclaimsNominalFromTheQueueUsingTheMost) {
  MakeFair();
  Units("a", 3);
  Units("b", 5);
  Units("c", 1);
  EXPECT_EQ(Targets(Pending("in", "c", kNormal, 1), Fair()), Names{"b1"});
  EXPECT_TRUE(placed_);
}

// "can reclaim from queue using less, if taking the latest workload from
// user using the most isn't enough": a 3 + 1 (111), b 2 + 3 (222); c asks
// 3. b1 (b without it: 0 <= 0) goes first but frees 2 of 3; b no longer
// borrows, so a: a1 (3) goes and c fits; fill-back gives b1 back.
TEST_F(FairSharingTest, FillBackKeepsOnlyTheVictimThatWasNeeded) {
  MakeFair();
  Running("a1", "a", kNormal, 3);
  Running("a2", "a", kNormal, 1);
  Running("b1", "b", kNormal, 2);
  Running("b2", "b", kNormal, 3);
  EXPECT_EQ(Targets(Pending("in", "c", kNormal, 3), Fair()), Names{"a1"});
}

// "reclaim borrowable quota from user using the most": as the first, a's
// job of 1: a would hold 4 (111); b without b1 holds 4 (111): 111 <= 111.
TEST_F(FairSharingTest, ReclaimsBorrowableQuotaFromTheQueueUsingTheMost) {
  MakeFair();
  Units("a", 3);
  Units("b", 5);
  Units("c", 1);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 1), Fair()), Names{"b1"});
}

// "preempt one from each CQ borrowing": a and b hold 0.5 + 0.5 + 3 each
// (111 each); c asks 2, 1 is free. a (the lower index at a tie) gives a1
// (a then 55), then b, now the largest, gives b1.
TEST_F(FairSharingTest, PreemptsOneFromEachBorrowingQueue) {
  MakeFair();
  for (const char* q : {"a", "b"}) {
    Running(std::string(q) + "1", q, kNormal, 0.5);
    Running(std::string(q) + "2", q, kNormal, 0.5);
    Running(std::string(q) + "3", q, kNormal, 3);
  }
  EXPECT_EQ(Targets(Pending("in", "c", kNormal, 2), Fair()), (Names{"a1", "b1"}));
}

// "can't preempt when everyone under nominal", "can't preempt when it
// would switch the imbalance" (a would hold 5, 222, above b's 111 after
// any of its jobs; b's 222 now is not above 222 either).
TEST_F(FairSharingTest, NoPreemptionThatWouldSwitchTheImbalance) {
  MakeFair();
  Units("a", 3);
  Units("b", 3);
  Units("c", 3);
  EXPECT_EQ(Targets(Pending("in", "c", kNormal, 1), Fair()), Names{});
  EXPECT_FALSE(placed_);
  MakeFair();
  Units("a", 3);
  Units("b", 5);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 2), Fair()), Names{});
  EXPECT_FALSE(placed_);
  EXPECT_NE(reason_.find("fair sharing allows no preemption"), std::string::npos) << reason_;
}

// "can preempt lower priority workloads from same CQ": a runs two low and
// two normal jobs (4: 111), b 5 (222); a's normal job of 2 would put a at
// 333, above b without any job: a's own low jobs go instead.
TEST_F(FairSharingTest, PreemptsItsOwnLowerPriorityJobs) {
  MakeFair();
  Running("a1_low", "a", kLow, 1);
  Running("a2_low", "a", kLow, 1);
  Running("a3", "a", kNormal, 1);
  Running("a4", "a", kNormal, 1);
  Units("b", 5);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 2), Fair()), (Names{"a1_low", "a2_low"}));
}

// "can preempt a combination of same CQ and highest user": a runs a_low
// and 2 more (3), b 6 (333); a's job of 2 (a then 222): b1 goes (b then
// 222: 222 <= 222), b2 may not (111), then a_low.
TEST_F(FairSharingTest, PreemptsFromItsOwnQueueAndTheHighestShare) {
  MakeFair();
  Running("a_low", "a", kLow, 1);
  Running("a2", "a", kNormal, 1);
  Running("a3", "a", kNormal, 1);
  Units("b", 6);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 2), Fair()), (Names{"a_low", "b1"}));
}

// "preempt huge workload if there is no other option, as long as the
// target CQ gets a lower share", and "can't preempt huge workload if the
// incoming is also huge" (a would hold 7: 444, b without b1: 0).
TEST_F(FairSharingTest, HugeJobsGoOnlyIfTheShareOrderHolds) {
  MakeFair();
  Running("b1", "b", kNormal, 9);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 2), Fair()), Names{"b1"});
  MakeFair();
  Running("a1", "a", kNormal, 2);
  Running("b1", "b", kNormal, 7);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 5), Fair()), Names{});
}

// "can't preempt 2 smaller workloads if the incoming is huge": b 2 + 2 + 3
// (444); a's 6 (333). The first strategy allows none; the second takes b1
// (333 < 444), once, and that is not enough: nothing changes.
TEST_F(FairSharingTest, SecondStrategyTakesOneJobPerQueueOnce) {
  MakeFair();
  Running("b1", "b", kNormal, 2);
  Running("b2", "b", kNormal, 2);
  Running("b3", "b", kNormal, 3);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 6), Fair()), Names{});
  EXPECT_TRUE(plan_->actions().empty());
}

// "preempt from target and others even if over nominal": a's two low jobs
// (2 + 1), b 3 + 3 (333); a's job of 4 (444). b's jobs fail the first
// strategy; a's go (a then 5: 222, then 4: 111), still short; the second
// strategy takes b1 (111 < 333). Fill-back returns a2_low.
TEST_F(FairSharingTest, SecondStrategyAfterItsOwnQueue) {
  MakeFair();
  Running("a1_low", "a", kLow, 2);
  Running("a2_low", "a", kLow, 1);
  Running("b1", "b", kNormal, 3);
  Running("b2", "b", kNormal, 3);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 4), Fair()), (Names{"a1_low", "b1"}));
}

// "prefer to preempt workloads that don't make the target CQ have the
// biggest share": b 2 + 1 + 2 (222), c 1; a's 3.5 (55). b1 would leave b at
// 0 (55 > 0: no); b2 leaves 111: it goes.
TEST_F(FairSharingTest, PrefersTheJobThatKeepsTheTargetAboveTheShare) {
  MakeFair();
  Running("b1", "b", kNormal, 2);
  Running("b2", "b", kNormal, 1);
  Running("b3", "b", kNormal, 2);
  Running("c1", "c", kNormal, 1);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 3.5), Fair()), Names{"b2"});
}

// "preempt from different cluster queues if the end result has a smaller
// max share" (b and c 2 + 2.5 each, 166; a's 3.5: the second strategy
// takes b1 and c1), and "scenario above does not flap".
TEST_F(FairSharingTest, SecondStrategyAcrossQueuesAndNoFlapping) {
  MakeFair();
  Running("b1", "b", kNormal, 2);
  Running("b2", "b", kNormal, 2.5);
  Running("c1", "c", kNormal, 2);
  Running("c2", "c", kNormal, 2.5);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 3.5), Fair()), (Names{"b1", "c1"}));
  MakeFair();
  Running("a1", "a", kNormal, 3.5);
  Running("b2", "b", kNormal, 2.5);
  Running("c2", "c", kNormal, 2.5);
  EXPECT_EQ(Targets(Pending("in", "b", kNormal, 2), Fair()), Names{});
}

// "workloads under priority threshold not capriciously preempted":
// preemptible (nominal 0) runs three low jobs of 1 (333); a's job of 2
// (222). The first takes one (222 <= 222), the next may not, and the
// second strategy neither (222 < 222): not enough, nothing changes.
// borrowWithinCohort plays no part under fair sharing.
TEST_F(FairSharingTest, LowPriorityBorrowersAreNotPreemptedCapriciously) {
  MakeFair();
  Units("a", 3);
  Units("b", 3);
  for (int i = 1; i <= 3; ++i) {
    Running("preemptible" + std::to_string(i), "preemptible", kLow, 1);
  }
  QueueReclaimPreemptor::Options o = Fair();
  o.defaults.borrow_within_cohort = kLower;
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 2), o), Names{});
}

// "preempt lower priority first, even if big" (LessThanInitialShare
// alone: b_low, 5 CPUs, goes) and "preempt workload that doesn't transfer
// the imbalance, even if high priority" (LessThanOrEqualToFinalShare
// alone: b_high, 1 CPU, goes): a 3, b_low 5 + b_high 1 (333); a's job of 1.
TEST_F(FairSharingTest, EachStrategyAlone) {
  for (const auto& [strategy, want] : std::vector<std::pair<FairStrategy, Names>>{
           {FairStrategy::kLessThanInitialShare, {"b_low"}},
           {FairStrategy::kLessThanOrEqualToFinalShare, {"b_high"}}}) {
    MakeFair();
    Running("a1", "a", kNormal, 3);
    Running("b_low", "b", kNormal, 5);
    Running("b_high", "b", kHigh, 1);
    EXPECT_EQ(Targets(Pending("in", "a", kNormal, 1), Fair({strategy})), want);
  }
}

// "CQ with higher weight can preempt more": a of weight 2 would hold 5
// (222 / 2 = 111); b 6 (333), without b1 222, without b2 too 111: both go.
// "can preempt anything borrowing from CQ with 0 weight": b of weight 0
// borrows (infinite); a's job of 3 takes b1, b2, b3. "can't preempt
// nominal from CQ with 0 weight": b at nominal is no candidate.
TEST_F(FairSharingTest, Weights) {
  MakeFair(2, 1, 1);
  Units("a", 3);
  Units("b", 6);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 2), Fair()), (Names{"b1", "b2"}));
  MakeFair(1, 0, 1);
  Units("a", 3);
  Units("b", 6);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 3), Fair()), (Names{"b1", "b2", "b3"}));
  // (Only a and b here: the cohort lends 6, all in use.)
  std::vector<core::QueueSpec> two = {Queue("a", "all", 3, Policies(kLower, kAny)),
                                      Queue("b", "all", 3, Policies(kLower, kAny))};
  two[1].weight = 0;
  Make(std::move(two));
  Units("a", 3);
  Units("b", 3);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 1), Fair()), Names{});
  EXPECT_FALSE(placed_);
}

// Exact shares, where Kueue's whole numbers would flap: x (2 CPUs, weight
// 2), y (56, weight 56) and z (582, weight 582) lend 640. x holds 2, y
// 56 + 1 (y2, borrowed), z 581: all 640 used. x's job x3 (1 CPU) would put
// x at 1000 / 640 / 2 = 0.78; y without y2 has 0, and now 1.56 / 56 =
// 0.028: neither strategy lets x3 take y2. Kueue's rounding gives x
// floor(1.56) x 1000 / 2000 = 0 <= 0: x3 would preempt y2, and y2, back,
// x3 (y at 0 <= x's 0), for ever.
TEST_F(FairSharingTest, ExactSharesDoNotFlapWithLargeWeights) {
  const core::QueuePreemption p = Policies(kLower, kAny);
  std::vector<core::QueueSpec> queues = {Queue("x", "all", 2, p), Queue("y", "all", 56, p),
                                         Queue("z", "all", 582, p)};
  queues[0].weight = 2;
  queues[1].weight = 56;
  queues[2].weight = 582;
  Make(std::move(queues));
  Units("x", 2);
  Running("y1", "y", kNormal, 56);
  Running("y2", "y", kNormal, 1);
  Running("z1", "z", kNormal, 581);
  EXPECT_EQ(Targets(Pending("x3", "x", kNormal, 1), Fair()), Names{});
  EXPECT_FALSE(placed_);
}

// Elastic fair sharing: b's elastic job E (6 one-GPU workers, at least 1)
// borrows 2 of a's GPUs; a's job of 4 GPUs, 2 free. a would hold 4 (its
// nominal: share 0); E's workers go one at a time while b still borrows
// (b without one: 125 >= 0), and two suffice: E shrinks to 4, nothing is
// stopped.
TEST_F(ElasticReclaimTest, FairSharingShrinksBeforeStopping) {
  MakeGpus();
  Elastic("E", {0, 0, 0, 0, 1, 1}, 60, 30);
  QueueReclaimPreemptor::Options o = Elastic();
  o.fair_sharing = true;
  EXPECT_EQ(Targets(GpuPending("A", 4), o), Names{});
  EXPECT_TRUE(placed_);
  EXPECT_EQ(Resizes(), std::vector<std::string>{"E -> 4"});
  o.elastic = false;  // whole jobs: E stops
  MakeGpus();
  Elastic("E", {0, 0, 0, 0, 1, 1}, 60, 30);
  EXPECT_EQ(Targets(GpuPending("A", 4), o), Names{"E"});
}

// The arguments: fairSharing and Kueue's three lists of strategies.
TEST(QueueReclaimArgsTest, FairSharingArguments) {
  auto make = [](const std::string& yaml) {
    auto p = MakeQueueReclaim(YAML::Load(yaml), "p.yaml: preemptor.args");
    return p ? std::string("ok") : p.error().message;
  };
  EXPECT_EQ(make("{fairSharing: true}"), "ok");
  EXPECT_EQ(make("{fairSharing: true, preemptionStrategies: [LessThanInitialShare]}"), "ok");
  EXPECT_EQ(make("{fairSharing: true, preemptionStrategies: [LessThanOrEqualToFinalShare, "
                 "LessThanInitialShare]}"),
            "ok");
  EXPECT_NE(make("{fairSharing: true, preemptionStrategies: [LessThanInitialShare, "
                 "LessThanOrEqualToFinalShare]}")
                .find("preemptionStrategies: expected [LessThanOrEqualToFinalShare]"),
            std::string::npos);
  EXPECT_NE(make("{fairSharing: true, preemptionStrategies: []}").find("preemptionStrategies"),
            std::string::npos);
  EXPECT_EQ(make("{preemptionStrategies: [LessThanInitialShare]}"),
            "p.yaml: preemptor.args: preemptionStrategies: only with fairSharing: true");
}

// ---- VolcanoReclaim --------------------------------------------------------
//
// Volcano's reclaim action with its proportion plugin (Volcano's
// pkg/scheduler/actions/reclaim/reclaim_test.go, facts ported, and cases
// worked by hand): queues of weight 1 and no quota on one node of 3 CPUs
// and 3 GiB.
class VolcanoReclaimTest : public QueueReclaimTest {
 protected:
  void MakeVolcano(core::Resources deserved_q1 = {}) {
    core::ClusterSpec c;
    c.nodes.push_back(Node("n1", 3 * kCpu, GiB(3), 0));
    for (const char* name : {"q1", "q2"}) {
      core::QueueSpec q;
      q.name = name;
      c.queues.push_back(q);
    }
    c.queues[0].deserved = deserved_q1;
    w_.emplace(std::move(c));
    plan_.emplace();
  }
  // q1's job pg1: `n` workers of 1 CPU and 1 GiB, elastic down to 1.
  JobIndex Pg1(int n) {
    core::JobSpec spec =
        JobBuilder("pg1").Submit(0).Workers(n, 1, n).WorkerResources(Res(kCpu, GiB(1)));
    spec.queue = "q1";
    spec.priority = kLow;
    const JobIndex j = w_->AddAt(0, std::move(spec), core::JobPhase::kWaiting);
    for (int i = 0; i < n; ++i) st().PlaceTask({j, core::Role::kWorker, i}, 0);
    st().SetPhase(j, core::JobPhase::kRunning, 0);
    return j;
  }
  JobIndex Q2Pending(int cpus) {
    core::JobSpec spec =
        JobBuilder("pg2").Submit(100).Workers(cpus).WorkerResources(Res(kCpu, GiB(1)));
    spec.queue = "q2";
    spec.priority = kHigh;
    return w_->AddAt(100, std::move(spec), core::JobPhase::kWaiting);
  }
  int Workers(const std::string& name) {
    for (const engine::Action& a : plan_->actions()) {
      if (a.kind == ActionKind::kResize && st().Job(a.task.job).spec->name == name) {
        return a.workers;
      }
    }
    return -1;
  }
};

// Volcano's "Two Queue with one Queue overusing resource, should
// reclaim": q1 runs 3 tasks of 1 CPU; q2's task of 1 CPU. Proportion: q1
// asks 3, q2 1, of 3: q2 deserves 1, q1 2. q1 holds 3 > 2, q2 with its
// task 1 <= 1: one of q1's tasks goes (Volcano evicts one pod; pg1, elastic,
// sheds one worker) and q1 is back at what it deserves.
TEST_F(VolcanoReclaimTest, ReclaimsOneTaskFromTheOverusingQueue) {
  MakeVolcano();
  Pg1(3);
  EXPECT_EQ(Run(VolcanoReclaimPreemptor({}), Q2Pending(1)), Names{});
  EXPECT_TRUE(placed_) << reason_;
  EXPECT_EQ(Workers("pg1"), 2);
}

// Whole jobs: q1 runs three one-task jobs; the latest started goes, and
// then q1 holds 2, what it deserves: the others stay.
TEST_F(VolcanoReclaimTest, WholeJobsWhileTheQueueIsAboveItsShare) {
  MakeVolcano();
  Running("a", "q1", kLow, 1, 0);
  Running("b", "q1", kLow, 1, 10);
  Running("c", "q1", kLow, 1, 5);
  VolcanoReclaimPreemptor::Options o;
  o.elastic = false;
  EXPECT_EQ(Run(VolcanoReclaimPreemptor(o), Pending("in", "q2", kNormal, 1)), Names{"b"});
  EXPECT_TRUE(placed_);
}

// q2's job of 2 CPUs: q2 asks 2, q1 3, of 3: 1.5 each, so q2 with it
// would hold 2 > 1.5: it reclaims nothing, and says why.
TEST_F(VolcanoReclaimTest, NoReclaimBeyondTheReclaimersShare) {
  MakeVolcano();
  Pg1(3);
  EXPECT_EQ(Run(VolcanoReclaimPreemptor({}), Q2Pending(2)), Names{});
  EXPECT_FALSE(placed_);
  EXPECT_EQ(reason_, "queue q2 would hold more than it deserves: 2 cpu with it, 1500m deserved");
}

// Capacity: q1 is configured to deserve all 3 CPUs; holding 3 it is not
// above its share, so nothing is reclaimed from it.
TEST_F(VolcanoReclaimTest, CapacityReadsTheConfiguredShare) {
  MakeVolcano(Res(3 * kCpu, GiB(3)));
  Pg1(3);
  VolcanoReclaimPreemptor::Options o;
  o.deserved = VolcanoReclaimPreemptor::Deserved::kCapacity;
  EXPECT_EQ(Run(VolcanoReclaimPreemptor(o), Q2Pending(1)), Names{});
  EXPECT_FALSE(placed_);
  EXPECT_NE(reason_.find("no running job of a queue holding more than it deserves"),
            std::string::npos)
      << reason_;
}

// ---- hierarchical cohorts (Kueue's preemption_hierarchical_test.go and
// preemption_fair_test.go) ------------------------------------------------

// A cohort of `cpus` CPUs (-1: no quota of its own) under `parent`.
core::CohortSpec Cohort(const std::string& name, const std::string& parent, int64_t cpus = -1,
                        double weight = 1) {
  core::CohortSpec c;
  c.name = name;
  c.parent = parent;
  c.weight = weight;
  if (cpus >= 0) {
    core::QuotaLine l;
    l.id = core::kCpu;
    l.nominal = cpus * kCpu;
    c.quota.push_back(l);
  }
  return c;
}

// "preempt with hierarchical advantage": r over c (2 CPUs) and
// q_borrowing (0); c over q (0).
// q_borrowing holds c's 2 CPUs. q asks 2: it does not fit in q (0) but
// fits in c (2), below r, the cohort it shares with q_borrowing: a
// reclaim, whatever the priorities (reclaimWithinCohort Any).
TEST_F(QueueReclaimTest, KueueHierarchicalAdvantage) {
  const core::QueuePreemption p = Policies(kLower, kAny);
  Make({Queue("q", "c", 0, p), Queue("q_borrowing", "r", 0, p)}, {Cohort("c", "r", 2)});
  Running("admitted2", "q_borrowing", kNormal, 2);
  EXPECT_EQ(Targets(Pending("in", "q", kNormal, 2)), Names{"admitted2"});
  EXPECT_TRUE(placed_);
}

// "avoid queues within nominal quota": as above, and q_nominal (2) under r
// holds its own 2 with a job of lower priority. Only the borrower goes.
TEST_F(QueueReclaimTest, KueueHierarchyAvoidsQueuesWithinNominal) {
  const core::QueuePreemption p = Policies(kLower, kAny);
  Make({Queue("q_nominal", "r", 2, p), Queue("q", "c", 0, p), Queue("q_borrowing", "r", 0, p)},
       {Cohort("r", ""), Cohort("c", "r", 2)});
  Running("admitted1", "q_nominal", kLow, 2);
  Running("admitted2", "q_borrowing", kNormal, 2);
  EXPECT_EQ(Targets(Pending("in", "q", kNormal, 2)), Names{"admitted2"});
}

// "respect lending limits": q (3 CPUs, lending limit 2: keeps 1) under c
// (2) under r; q_borrowing (0) under r holds 4 of r's 4. q asks 5: its own
// 1 and c's 4 (its 2 and q's lent 2) would hold it, below r: a reclaim,
// though q_borrowing's job has the higher priority.
TEST_F(QueueReclaimTest, KueueHierarchyRespectsLendingLimits) {
  const core::QueuePreemption p = Policies(kLower, kAny);
  Make({Queue("q", "c", 3, p, -1, 2), Queue("q_borrowing", "r", 0, p)},
       {Cohort("r", ""), Cohort("c", "r", 2)});
  Running("admitted_borrowing", "q_borrowing", kNormal, 4);
  EXPECT_EQ(Targets(Pending("in", "q", kLow, 5)), Names{"admitted_borrowing"});
  EXPECT_TRUE(placed_);
}

// "reclaim in complex hierarchy": r over c11 and c12; c11 over c21, c22,
// c23; c21 over c31 and c32; each cohort 4 CPUs, every queue 0: q1 in c12
// (jobs 1, 2 of 4), q2 in c23 (3, 4 of 4), q3 in c22 (5 of 4, 6 of 3), q4
// in c32 (7 of 2 and 8 of 3, high priority), q5 in c31 asks 7. All 28 are
// in use. q5 fits below c11 (c21 has 12, 5 used), so q1's, q2's and q3's
// jobs are reclaims, taken in Kueue's priority order (here start times:
// 4, 3, 1, 2, 5, 6). 4 goes; c23 is then within its quota, so 3 is no
// longer a candidate; 1 goes and q5 fits: Kueue's 1 and 4.
TEST_F(QueueReclaimTest, KueueReclaimInAComplexHierarchy) {
  const core::QueuePreemption p = Policies(kLower, kAny);
  Make({Queue("q1", "c12", 0, p), Queue("q2", "c23", 0, p), Queue("q3", "c22", 0, p),
        Queue("q4", "c32", 0, p), Queue("q5", "c31", 0, p)},
       {Cohort("r", ""), Cohort("c11", "r", 4), Cohort("c12", "r", 4), Cohort("c21", "c11", 4),
        Cohort("c22", "c11", 4), Cohort("c23", "c11", 4), Cohort("c31", "c21", 4),
        Cohort("c32", "c21", 4)});
  // Kueue's priorities -10 .. -3 as start times: the lowest started last.
  Running("admitted_borrowing_1", "q1", kNormal, 4, 60);
  Running("admitted_borrowing_2", "q1", kNormal, 4, 50);
  Running("admitted_borrowing_3", "q2", kNormal, 4, 90);
  Running("admitted_borrowing_4", "q2", kNormal, 4, 100);
  Running("admitted_borrowing_5", "q3", kNormal, 4, 40);
  Running("admitted_borrowing_6", "q3", kNormal, 3, 30);
  Running("admitted_borrowing_7", "q4", kHigh, 2);
  Running("admitted_borrowing_8", "q4", kHigh, 3);
  EXPECT_EQ(Targets(Pending("in", "q5", kNormal, 7, 150)),
            (Names{"admitted_borrowing_1", "admitted_borrowing_4"}));
  EXPECT_TRUE(placed_);
}

// Kueue's "hierarchical preemption" (fair sharing): ROOT (5 CPUs) over
// LEFT (5, weight 2), c (1) and RIGHT (5); LEFT over a (1, weight 2) and
// b (1); RIGHT over d (1) and e (1, weight 0.99).
// b, c, d and e each run 5 jobs of 1 CPU: all 20 CPUs are in use. a asks
// 5. Kueue's expected victims: b1, b2, c1, c2, e1 (its integer priorities
// 1..5 become start times here: the lowest priority started last).
TEST_F(FairSharingTest, KueueHierarchicalPreemption) {
  const core::QueuePreemption p = Policies(kNever, kAny);
  std::vector<core::QueueSpec> queues = {Queue("a", "LEFT", 1, p), Queue("b", "LEFT", 1),
                                         Queue("c", "ROOT", 1), Queue("d", "RIGHT", 1),
                                         Queue("e", "RIGHT", 1)};
  queues[0].weight = 2;
  queues[4].weight = 0.99;
  Make(std::move(queues),
       {Cohort("ROOT", "", 5), Cohort("LEFT", "ROOT", 5, 2), Cohort("RIGHT", "ROOT", 5)});
  for (const std::string q : {"b", "c", "d", "e"}) {
    for (int i = 1; i <= 5; ++i) Running(q + std::to_string(i), q, kNormal, 1, 60 - 10 * i);
  }
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 5), Fair()), (Names{"b1", "b2", "c1", "c2", "e1"}));
  EXPECT_TRUE(placed_);
}

// "borrowing cq in non-borrowing cohort is protected": ROOT over a (5,
// weight 10) and RIGHT (1, weight 0.1); RIGHT over b (0, weight 0.1).
// a runs 3 low jobs; b borrows RIGHT's 1 CPU, but RIGHT does not borrow
// from ROOT: a, asking 5, must preempt its own jobs.
TEST_F(FairSharingTest, KueueBorrowingQueueInANonBorrowingCohortIsProtected) {
  std::vector<core::QueueSpec> queues = {Queue("a", "ROOT", 5, Policies(kLower, kAny)),
                                         Queue("b", "RIGHT", 0)};
  queues[0].weight = 10;
  queues[1].weight = 0.1;
  Make(std::move(queues), {Cohort("ROOT", ""), Cohort("RIGHT", "ROOT", 1, 0.1)});
  for (const std::string a : {"a1", "a2", "a3"}) Running(a, "a", kLow, 1);
  Running("b1", "b", kLow, 1);
  EXPECT_EQ(Targets(Pending("in", "a", kNormal, 5), Fair()), (Names{"a1", "a2", "a3"}));
}

// "deep preemption": a under ROOT/A/AA/AAA, b under ROOT/B/BB/BBB, the
// only CPU in CCCC under ROOT/C/CC/CCC; b holds it. The shares compared
// are A's (weight 1.01, with a's job) and B's (0.99): A's 1000/1.01 <=
// B's after the preemption (0): b1 goes.
TEST_F(FairSharingTest, KueueDeepPreemption) {
  Make({Queue("a", "AAA", 0, Policies(kNever, kAny)), Queue("b", "BBB", 0)},
       {Cohort("ROOT", ""), Cohort("A", "ROOT", -1, 1.01), Cohort("AA", "A"), Cohort("AAA", "AA"),
        Cohort("B", "ROOT", -1, 0.99), Cohort("BB", "B"), Cohort("BBB", "BB"), Cohort("C", "ROOT"),
        Cohort("CC", "C"), Cohort("CCC", "CC"), Cohort("CCCC", "CCC", 1)});
  Running("b1", "b", kNormal, 1);
  EXPECT_EQ(Targets(Pending("a1", "a", kNormal, 1), Fair()), Names{"b1"});
}

// "can't preempt nominal from Cohort with 0 weight": right-cohort (1 CPU,
// weight 0) holds its own CPU through right-cq; left-cq (0) may not take
// it: right-cohort does not borrow.
TEST_F(FairSharingTest, KueueNominalOfAZeroWeightCohortIsKept) {
  std::vector<core::QueueSpec> queues = {Queue("left-cq", "root", 0, Policies(kNever, kAny)),
                                         Queue("right-cq", "right-cohort", 0)};
  queues[1].weight = 0;
  Make(std::move(queues), {Cohort("right-cohort", "root", 1, 0)});
  Running("right-1", "right-cq", kNormal, 1);
  EXPECT_EQ(Targets(Pending("left-1", "left-cq", kNormal, 1), Fair()), Names{});
  EXPECT_FALSE(placed_);
}

TEST(VolcanoReclaimArgsTest, Arguments) {
  auto make = [](const std::string& yaml) {
    auto p = MakeVolcanoReclaim(YAML::Load(yaml), "p.yaml: preemptor.args");
    return p ? std::string("ok") : p.error().message;
  };
  EXPECT_EQ(make("{deserved: Capacity, elastic: false}"), "ok");
  EXPECT_EQ(make("{deserved: Fair}"),
            "p.yaml: preemptor.args.deserved: expected Proportion or Capacity, got 'Fair'");
}

}  // namespace
}  // namespace dlsched::policy
