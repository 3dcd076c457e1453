// The placement helpers of placement.h, tested in the engine layer itself:
// its test program does not link policy/, so each test builds its profile
// from the test pieces below (a filter that bans nodes by name, a scorer
// reading a table, an order reading a table, a packer placing a gang task
// by task) and checks one helper's contract on a cluster small enough to
// work the answer out by hand, as the comment above each test does.
#include "dlsched/engine/placement.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dlsched/engine/profile.h"
#include "dlsched/engine/test_util.h"
#include "engine/cluster_with_jobs.h"

namespace dlsched::engine {
namespace {

using core::Role;
using testing::Job;
using testing::Nodes;

// Rejects the nodes it names, for every task, saying `why`.
class Ban final : public NodeFilter {
 public:
  Ban(std::set<std::string> nodes, std::string why)
      : nodes_(std::move(nodes)), why_(std::move(why)) {}
  std::string_view Name() const override { return "Ban"; }
  std::string Filter(const ClusterState& state, TaskRef, NodeIndex n) const override {
    return nodes_.contains(state.NodeName(n)) ? why_ : "";
  }

 private:
  std::set<std::string> nodes_;
  std::string why_;
};

// Scores node n as table[n] for every task.
class TableScore final : public NodeScorer {
 public:
  TableScore(std::vector<int64_t> table, bool node_local)
      : table_(std::move(table)), node_local_(node_local) {}
  std::string_view Name() const override { return "TableScore"; }
  int64_t Score(const ClusterState&, TaskRef, NodeIndex n) const override {
    return n < static_cast<NodeIndex>(table_.size()) ? table_[n] : 0;
  }
  bool NodeLocal() const override { return node_local_; }

 private:
  std::vector<int64_t> table_;
  bool node_local_;
};

// Job j's key is keys[j]; StaticKeys as asked.
class TableOrder final : public JobOrder {
 public:
  TableOrder(std::vector<double> keys, bool static_keys)
      : keys_(std::move(keys)), static_(static_keys) {}
  void Keys(const ClusterState&, std::span<const JobIndex> jobs, core::Time,
            std::span<double> keys) const override {
    for (size_t i = 0; i < jobs.size(); ++i) keys[i] = keys_[jobs[i]];
  }
  bool StaticKeys() const override { return static_; }

 private:
  std::vector<double> keys_;
  bool static_;
};

// Places a gang's slots (GangSlots) one by one with PlaceTaskByScore, all
// or nothing; counts its calls.
class OneByOne final : public Packer {
 public:
  bool PlaceGang(CycleContext& ctx, JobIndex j, int workers, std::string* reason) const override {
    ++calls;
    std::vector<TaskRef> slots;
    GangSlots(ctx.state(), j, workers, &slots);
    const Session::Mark mark = ctx.session.GetMark();
    for (const TaskRef t : slots) {
      if (!PlaceTaskByScore(ctx, t, reason)) {
        ctx.session.RollbackTo(mark);
        return false;
      }
    }
    return true;
  }
  mutable int calls = 0;
};

// A cluster, its jobs, and one cycle's session over it under `profile`
// (no filters, no scorers until a test adds them).
struct World : dlsched::testing::ClusterWithJobs {
  explicit World(core::ClusterSpec spec) : ClusterWithJobs(std::move(spec)) {}
  // A job in `phase` (pending by default).
  JobIndex Add(core::JobSpec spec, core::JobPhase phase = core::JobPhase::kWaiting) {
    return AddAt(0, std::move(spec), phase);
  }
  // Job j's first worker, placed before the cycle on node n (running).
  void Run(JobIndex j, NodeIndex n) {
    state.SetPhase(j, core::JobPhase::kRunning, 0);
    state.PlaceTask({j, Role::kWorker, 0}, n);
  }
  void Score(std::vector<int64_t> table, double weight, bool node_local = true) {
    profile.scorers.push_back(std::make_unique<TableScore>(std::move(table), node_local));
    profile.scorer_weights.push_back(weight);
  }

  Session session{state};
  CycleState decisions;
  Profile profile;
  PodQueue pods;
  Memos memos;
  CycleContext ctx{session, decisions, pods, memos, profile, 0};
};

// One worker of `gpus` GPUs (and 1 core, 2 GiB), alone in its job.
core::JobSpec Worker(const std::string& name, int64_t gpus) {
  return Job(name, 0, 0, 1, 1, 1, gpus);
}

// Four nodes, node-0 cordoned. Filters in this order: "first" bans node-0,
// node-1 and node-2; "second" bans node-2. node-0: unschedulable (checked
// before any filter); node-1: "first"; node-2: "first" (the first filter
// in profile order that rejects it); node-3: nothing.
TEST(StaticFailureTest, UnschedulableFirstThenTheFiltersInProfileOrder) {
  World w(Nodes(4, 8, 32, 4));
  w.profile.filters.push_back(
      std::make_unique<Ban>(std::set<std::string>{"node-0", "node-1", "node-2"}, "first"));
  w.profile.filters.push_back(std::make_unique<Ban>(std::set<std::string>{"node-2"}, "second"));
  w.state.SetSchedulable(0, false);
  const TaskRef t{w.Add(Worker("a", 1)), Role::kWorker, 0};
  EXPECT_EQ(StaticFailure(w.ctx, t, 0), "unschedulable");
  EXPECT_EQ(StaticFailure(w.ctx, t, 1), "first");
  EXPECT_EQ(StaticFailure(w.ctx, t, 2), "first");
  EXPECT_EQ(StaticFailure(w.ctx, t, 3), "");
}

// Two nodes of 4 GPUs, node-1 banned. A 1-GPU worker fits node-0 while 1
// GPU is free there: after 3 one-GPU tasks yes, after a 4th no. node-1 has
// all its room and never fits.
TEST(FitsTest, NeedsNoStaticFailureAndRoomForTheRequest) {
  World w(Nodes(2, 8, 32, 4));
  w.profile.filters.push_back(std::make_unique<Ban>(std::set<std::string>{"node-1"}, "banned"));
  const TaskRef t{w.Add(Worker("a", 1)), Role::kWorker, 0};
  for (int i = 0; i < 3; ++i) w.session.Assign({w.Add(Worker("f", 1)), Role::kWorker, 0}, 0);
  EXPECT_TRUE(Fits(w.ctx, t, 0));
  EXPECT_FALSE(Fits(w.ctx, t, 1));
  w.session.Assign({w.Add(Worker("g", 1)), Role::kWorker, 0}, 0);
  EXPECT_FALSE(Fits(w.ctx, t, 0));
}

// Counts: c 5; a 2 + 1 = 3; b 2; the 0 and the -1 are not counted: 10 in
// all. The summary says how many of the 12 nodes fit (2), then the
// reasons, the largest count first: "c 5, a 3, b 2".
TEST(NodeFailuresTest, CountsPerReasonLargestFirst) {
  NodeFailures f;
  f.Add("b", 2);
  f.Add("a", 2);
  f.Add("c", 5);
  f.Add("a");
  f.Add("z", 0);
  f.Add("y", -1);
  EXPECT_EQ(f.Count(), 10);
  const TaskRef t{0, Role::kWorker, 0};
  EXPECT_EQ(f.Summary(t, 12, 2), "2/12 nodes fit Worker: 5 c, 3 a, 2 b");
}

// Equal counts are listed by reason, whatever the order they came in.
TEST(NodeFailuresTest, EqualCountsByReason) {
  NodeFailures f;
  f.Add("unschedulable");
  f.Add("banned");
  EXPECT_EQ(f.Summary({0, Role::kPS, 0}, 2), "0/2 nodes fit PS: 1 banned, 1 unschedulable");
}

// Four empty nodes of 4 GPUs; two scorers: {10, 50, 50, 20} x 1 and
// {0, 0, 0, 40} x w. With w = 1 the totals are 10, 50, 50, 60: node-3.
// With w = 0.5: 10, 50, 50, 40: node-1 and node-2 tie, the lower index
// wins: node-1. The trace lists every candidate, best first (ties by
// node): 1, 2, 3, 0.
TEST(SelectNodeTest, HighestWeightedScoreTiesToTheLowestIndex) {
  for (const bool node_local : {true, false}) {
    SCOPED_TRACE(node_local ? "scores kept" : "full scan");
    World heavy(Nodes(4, 8, 32, 4));
    heavy.Score({10, 50, 50, 20}, 1, node_local);
    heavy.Score({0, 0, 0, 40}, 1, node_local);
    const TaskRef a{heavy.Add(Worker("a", 1)), Role::kWorker, 0};
    EXPECT_EQ(SelectNode(heavy.ctx, a, nullptr), 3);

    World light(Nodes(4, 8, 32, 4));
    light.Score({10, 50, 50, 20}, 1, node_local);
    light.Score({0, 0, 0, 40}, 0.5, node_local);
    const TaskRef b{light.Add(Worker("b", 1)), Role::kWorker, 0};
    EXPECT_EQ(SelectNode(light.ctx, b, nullptr), 1);
    TaskTrace trace;
    EXPECT_EQ(SelectNode(light.ctx, b, &trace), 1);
    EXPECT_EQ(trace.chosen, 1);
    std::vector<NodeIndex> order;
    for (const ScoredNode& c : trace.candidates) order.push_back(c.node);
    EXPECT_EQ(order, (std::vector<NodeIndex>{1, 2, 3, 0}));
    ASSERT_EQ(trace.candidates.size(), 4u);
    EXPECT_DOUBLE_EQ(trace.candidates[2].total, 40);  // node-3: 20 + 0.5 x 40
  }
}

// Four nodes of 8 cores and 4 GPUs; a worker of 1 core and 2 GPUs.
//   node-0: a 3-GPU task there, 1 GPU free: below the task's 2 GPUs, so
//           never visited (the free-GPU index skips it);
//   node-1: banned ("banned");
//   node-2: cordoned ("unschedulable");
//   node-3: 4 GPUs free but its 8 cores taken ("insufficient cpu").
// No node: kNoNode, and the count, one node each, by reason:
// "0/4 nodes fit Worker: 1 banned, 1 insufficient cpu, 1 insufficient
// nvidia.com/gpu (needs 2, at most 1 free), 1 unschedulable".
TEST(SelectNodeTest, CountsWhyEveryNodeFailed) {
  World w(Nodes(4, 8, 32, 4));
  w.profile.filters.push_back(std::make_unique<Ban>(std::set<std::string>{"node-1"}, "banned"));
  w.Score({1, 1, 1, 1}, 1);
  w.session.Assign({w.Add(Worker("gpus", 3)), Role::kWorker, 0}, 0);
  core::JobSpec cores = Worker("cores", 0);
  cores.role(Role::kWorker).resources[core::kCpu] = 8000;
  w.session.Assign({w.Add(cores), Role::kWorker, 0}, 3);
  w.state.SetSchedulable(2, false);
  const TaskRef t{w.Add(Worker("a", 2)), Role::kWorker, 0};
  NodeFailures failures;
  EXPECT_EQ(SelectNode(w.ctx, t, nullptr, &failures), kNoNode);
  EXPECT_EQ(failures.Summary(t, w.state.NumPresentNodes()),
            "0/4 nodes fit Worker: 1 banned, 1 insufficient cpu, 1 insufficient nvidia.com/gpu "
            "(needs 2, at most 1 free), 1 unschedulable");
}

// Two nodes of 4 GPUs, node-1 scored higher. 3-GPU workers: the first goes
// to node-1, the second to node-0 (1 GPU left on node-1), the third fits
// neither (1 GPU free on each): false, the session unchanged, and the
// reason "0/2 nodes fit Worker: 2 insufficient nvidia.com/gpu (needs 3, at
// most 1 free)".
TEST(PlaceTaskByScoreTest, PlacesOnTheBestNodeOrSaysWhyNot) {
  World w(Nodes(2, 8, 32, 4));
  w.Score({0, 10}, 1);
  const JobIndex a = w.Add(Worker("a", 3));
  const JobIndex b = w.Add(Worker("b", 3));
  const JobIndex c = w.Add(Worker("c", 3));
  std::string reason;
  ASSERT_TRUE(PlaceTaskByScore(w.ctx, {a, Role::kWorker, 0}, &reason));
  EXPECT_EQ(w.state.Job(a).NodeOf(Role::kWorker, 0), 1);
  ASSERT_TRUE(PlaceTaskByScore(w.ctx, {b, Role::kWorker, 0}, &reason));
  EXPECT_EQ(w.state.Job(b).NodeOf(Role::kWorker, 0), 0);
  EXPECT_FALSE(PlaceTaskByScore(w.ctx, {c, Role::kWorker, 0}, &reason));
  EXPECT_EQ(w.state.Job(c).NodeOf(Role::kWorker, 0), kNoNode);
  EXPECT_EQ(w.session.Steps().size(), 2u);
  EXPECT_EQ(reason,
            "0/2 nodes fit Worker: 2 insufficient nvidia.com/gpu (needs 3, at most 1 free)");
}

// Two nodes of 4 GPUs, both full. A 4-GPU worker could take an emptied
// node: nullopt (room now does not matter). A 5-GPU one is larger than
// either node: "0/2 nodes fit Worker: 2 too small for nvidia.com/gpu
// (cpu=1, memory=2Gi, nvidia.com/gpu=5) even on an empty cluster". With
// node-1 banned, that node counts as banned instead.
TEST(TaskNeverFitsTest, AsksTheNodesAllocatableNotTheirRoom) {
  World w(Nodes(2, 8, 32, 4));
  w.session.Assign({w.Add(Worker("full-0", 4)), Role::kWorker, 0}, 0);
  w.session.Assign({w.Add(Worker("full-1", 4)), Role::kWorker, 0}, 1);
  EXPECT_EQ(TaskNeverFits(w.ctx, {w.Add(Worker("four", 4)), Role::kWorker, 0}), std::nullopt);
  const TaskRef five{w.Add(Worker("five", 5)), Role::kWorker, 0};
  EXPECT_EQ(TaskNeverFits(w.ctx, five),
            "0/2 nodes fit Worker: 2 too small for nvidia.com/gpu (cpu=1, memory=2Gi, "
            "nvidia.com/gpu=5) even on an empty cluster");
  w.profile.filters.push_back(std::make_unique<Ban>(std::set<std::string>{"node-1"}, "banned"));
  EXPECT_EQ(TaskNeverFits(w.ctx, five),
            "0/2 nodes fit Worker: 1 banned, 1 too small for nvidia.com/gpu (cpu=1, "
            "memory=2Gi, nvidia.com/gpu=5) even on an empty cluster");
}

// Two nodes of 4 GPUs: 8 in all. Three 3-GPU workers each fit a node but
// need 9 GPUs: "its gang of 3 workers needs 9 nvidia.com/gpu, the cluster
// has 8 in all", without running the packer. Two need 6: without `exact`
// nullopt (it might fit), and the packer was not asked.
TEST(NeverFitsTest, TheGangsDemandAgainstTheCapacity) {
  World w(Nodes(2, 8, 32, 4));
  OneByOne packer;
  const JobIndex three = w.Add(Job("three", 0, 0, 3, 3, 3, 3));
  EXPECT_EQ(NeverFits(w.ctx, three, 3, packer, true),
            "its gang of 3 workers needs 9 nvidia.com/gpu, the cluster has 8 in all");
  const JobIndex two = w.Add(Job("two", 0, 0, 2, 2, 2, 3));
  EXPECT_EQ(NeverFits(w.ctx, two, 2, packer, false), std::nullopt);
  EXPECT_EQ(packer.calls, 0);
}

// Three nodes of 4 GPUs, each held whole by a running 4-GPU job. Three
// 3-GPU workers (9 of 12 GPUs) fit the emptied cluster, one a node:
// nullopt. Four (12 of 12) do not: one 3-GPU worker a node, and the
// packer's reason for the fourth, "0/3 nodes fit Worker: 3 insufficient
// nvidia.com/gpu (needs 3, at most 1 free)", + " even on an empty
// cluster". Either way the running jobs are where they were and the
// session holds no step.
TEST(NeverFitsTest, ExactRunsThePackerOnTheEmptiedClusterAndUndoesIt) {
  World w(Nodes(3, 8, 32, 4));
  OneByOne packer;
  for (NodeIndex n = 0; n < 3; ++n) w.Run(w.Add(Worker("run-" + std::to_string(n), 4)), n);
  const JobIndex three = w.Add(Job("three", 0, 0, 3, 3, 3, 3));
  EXPECT_EQ(NeverFits(w.ctx, three, 3, packer, true), std::nullopt);
  const JobIndex four = w.Add(Job("four", 0, 0, 4, 4, 4, 3));
  EXPECT_EQ(NeverFits(w.ctx, four, 4, packer, true),
            "0/3 nodes fit Worker: 3 insufficient nvidia.com/gpu (needs 3, at most 1 free) even "
            "on an empty cluster");
  EXPECT_EQ(packer.calls, 2);
  for (JobIndex j = 0; j < 3; ++j) EXPECT_EQ(w.state.Job(j).NodeOf(Role::kWorker, 0), j);
  EXPECT_EQ(w.state.Job(four).placed_workers, 0);
  EXPECT_TRUE(w.session.Steps().empty());
}

// The "four" gang of the test above on three empty nodes: never, asking
// the packer once; asked again, the same answer without the packer. A
// fourth node (NodeEpoch moves): asked afresh, and four nodes take four
// 3-GPU workers: nullopt, the packer's second call.
TEST(NeverFitsTest, RememberedUntilANodeChanges) {
  World w(Nodes(3, 8, 32, 4));
  OneByOne packer;
  const JobIndex four = w.Add(Job("four", 0, 0, 4, 4, 4, 3));
  const auto first = NeverFits(w.ctx, four, 4, packer, true);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(packer.calls, 1);
  EXPECT_EQ(NeverFits(w.ctx, four, 4, packer, true), first);
  EXPECT_EQ(packer.calls, 1);
  core::NodeSpec extra = Nodes(1, 8, 32, 4).nodes[0];
  extra.name = "node-3";
  w.state.AddNode(extra);
  EXPECT_EQ(NeverFits(w.ctx, four, 4, packer, true), std::nullopt);
  EXPECT_EQ(packer.calls, 2);
}

// A job of 1 PS, 1 Chief and up to 4 workers, workers 0 and 2 placed. For
// 4 workers it lacks PS 0, Chief 0 and two more workers, the lowest free
// indexes: 1 and 3. For 3 workers, one more: 1. With the PS placed too,
// for 3 workers: Chief 0, worker 1.
TEST(GangSlotsTest, PsChiefThenTheLowestFreeWorkerSlots) {
  World w(Nodes(2, 8, 32, 4));
  core::JobSpec spec = Job("a", 0, 1, 2, 1, 4);
  auto& chief = spec.role(Role::kChief);
  chief.replicas = chief.min_replicas = chief.max_replicas = 1;
  chief.resources[core::kCpu] = 1000;
  const JobIndex j = w.Add(spec);
  w.session.Assign({j, Role::kWorker, 0}, 0);
  w.session.Assign({j, Role::kWorker, 2}, 1);
  std::vector<TaskRef> slots;
  GangSlots(w.state, j, 4, &slots);
  EXPECT_EQ(
      slots,
      (std::vector<TaskRef>{
          {j, Role::kPS, 0}, {j, Role::kChief, 0}, {j, Role::kWorker, 1}, {j, Role::kWorker, 3}}));
  GangSlots(w.state, j, 3, &slots);
  EXPECT_EQ(slots,
            (std::vector<TaskRef>{{j, Role::kPS, 0}, {j, Role::kChief, 0}, {j, Role::kWorker, 1}}));
  w.session.Assign({j, Role::kPS, 0}, 0);
  GangSlots(w.state, j, 3, &slots);
  EXPECT_EQ(slots, (std::vector<TaskRef>{{j, Role::kChief, 0}, {j, Role::kWorker, 1}}));
}

// Keys 2, 1, 1, 1 for jobs 0..3, submitted at 0, 5, 3, 3. By key, then
// submit time, then index: job 2 (1, 3), job 3 (1, 3), job 1 (1, 5), job 0
// (2); keys in that order: 1, 1, 1, 2.
TEST(OrderJobsTest, ByKeyThenSubmitTimeThenIndex) {
  World w(Nodes(1, 8, 32, 4));
  for (const double submit : {0.0, 5.0, 3.0, 3.0}) w.Add(Job("j", submit, 0, 1, 1, 1));
  w.profile.order = std::make_unique<TableOrder>(std::vector<double>{2, 1, 1, 1}, false);
  std::vector<JobIndex> jobs = {3, 0, 1, 2};
  std::vector<double> keys;
  OrderJobs(w.ctx, &jobs, &keys);
  EXPECT_EQ(jobs, (std::vector<JobIndex>{2, 3, 1, 0}));
  EXPECT_EQ(keys, (std::vector<double>{1, 1, 1, 2}));
}

// A sort starts from the order the last one left (Memos::LastOrder) and
// must give what a sort afresh gives. Five jobs, all submitted at 0, keys
// 5, 4, 3, 2, 1: order 4, 3, 2, 1, 0. Then keys 5, 4, 3, 6, 1 over jobs
// 0..3 and a job 5 of key 0 not sorted before: job 3 moves from second to
// last, job 4 is gone, job 5 is new and goes first: 5, 2, 1, 0, 3.
TEST(OrderJobsTest, FromTheLastOrderAsAFreshSort) {
  World w(Nodes(1, 8, 32, 4));
  for (int i = 0; i < 6; ++i) w.Add(Job("j", 0, 0, 1, 1, 1));
  w.profile.order = std::make_unique<TableOrder>(std::vector<double>{5, 4, 3, 2, 1, 0}, false);
  std::vector<JobIndex> jobs = {0, 1, 2, 3, 4};
  OrderJobs(w.ctx, &jobs);
  EXPECT_EQ(jobs, (std::vector<JobIndex>{4, 3, 2, 1, 0}));
  w.profile.order = std::make_unique<TableOrder>(std::vector<double>{5, 4, 3, 6, 1, 0}, false);
  jobs = {0, 1, 2, 3, 5};
  std::vector<double> keys;
  OrderJobs(w.ctx, &jobs, &keys);
  EXPECT_EQ(jobs, (std::vector<JobIndex>{5, 2, 1, 0, 3}));
  EXPECT_EQ(keys, (std::vector<double>{0, 3, 4, 5, 6}));
}

// Past its budget of moves (4n + 64) the sort from the last order gives up
// for a full sort: 300 jobs sorted one way, then their keys reversed (an
// insertion sort would move about 45,000 times), come out in the new
// order, ties by index.
TEST(OrderJobsTest, AReversedOrderPastTheBudget) {
  World w(Nodes(1, 8, 32, 4));
  constexpr int kJobs = 300;
  std::vector<double> up;
  std::vector<double> down;
  for (int i = 0; i < kJobs; ++i) {
    w.Add(Job("j", 0, 0, 1, 1, 1));
    up.push_back(i / 2);  // pairs of equal keys: ties by index
    down.push_back(kJobs - i);
  }
  std::vector<JobIndex> all(kJobs);
  for (int i = 0; i < kJobs; ++i) all[i] = i;
  w.profile.order = std::make_unique<TableOrder>(down, false);
  std::vector<JobIndex> jobs = all;
  OrderJobs(w.ctx, &jobs);
  ASSERT_EQ(jobs.front(), kJobs - 1);
  w.profile.order = std::make_unique<TableOrder>(up, false);
  OrderJobs(w.ctx, &jobs);
  EXPECT_EQ(jobs, all);
}

// Keys 3, 1, 2 for jobs 0..2. Jobs 0 and 1 pending: 1, 0. Then job 1
// starts and job 2 comes: 2, 0. Then job 1 waits again: 1, 2, 0. The
// same whether the order is kept between cycles (static
// keys) or sorted afresh, and a kept order is kept: valid, in order.
TEST(OrderPendingTest, KeepsTheQueueAsOrderJobsWouldSortIt) {
  for (const bool kept : {true, false}) {
    SCOPED_TRACE(kept ? "kept" : "sorted afresh");
    World w(Nodes(1, 8, 32, 4));
    w.profile.order = std::make_unique<TableOrder>(std::vector<double>{3, 1, 2}, kept);
    std::vector<JobIndex> jobs;
    std::vector<double> keys;
    auto cycle = [&] {
      OrderPending(w.ctx, &jobs, &keys);
      w.state.ForgetEnteredPending();  // as the engine does after a cycle
      return jobs;
    };
    w.Add(Job("j0", 0, 0, 1, 1, 1));
    const JobIndex j1 = w.Add(Job("j1", 0, 0, 1, 1, 1));
    const JobIndex j2 = w.Add(Job("j2", 0, 0, 1, 1, 1), core::JobPhase::kSubmitted);
    EXPECT_EQ(cycle(), (std::vector<JobIndex>{1, 0}));
    EXPECT_EQ(keys, (std::vector<double>{1, 3}));
    w.state.SetPhase(j1, core::JobPhase::kRunning, 1);
    w.state.SetPhase(j2, core::JobPhase::kWaiting, 1);
    EXPECT_EQ(cycle(), (std::vector<JobIndex>{2, 0}));
    w.state.SetPhase(j1, core::JobPhase::kWaiting, 2);
    EXPECT_EQ(cycle(), (std::vector<JobIndex>{1, 2, 0}));
    EXPECT_EQ(keys, (std::vector<double>{1, 2, 3}));
    EXPECT_EQ(w.memos.pending_order().valid, kept);
  }
}

// Before the cycle: job 2's worker runs on node-1. In the cycle: job 0's
// worker to node-0; job 1's worker to node-1 and off it again (never
// bound: neither step is in the plan); job 2's worker off node-1; job 3's
// worker to node-0, off, then to node-1. Then job 1 waits, and a revisit
// at 42 s. The plan: bind 0 on node-0, unbind 2 from node-1, bind 3 on
// node-1, then the wait of job 1; revisit at 42.
TEST(EmitPlanTest, NetBindsAndUnbindsThenTheJobsActions) {
  World w(Nodes(2, 8, 32, 4));
  JobIndex j[4];
  for (int i = 0; i < 4; ++i) j[i] = w.Add(Worker("j" + std::to_string(i), 1));
  const auto worker = [&](int i) { return TaskRef{j[i], Role::kWorker, 0}; };
  w.Run(j[2], 1);
  w.session.Assign(worker(0), 0);
  w.session.Assign(worker(1), 1);
  w.session.Evict(worker(1));
  w.session.Evict(worker(2));
  w.session.Assign(worker(3), 0);
  w.session.Evict(worker(3));
  w.session.Assign(worker(3), 1);
  w.decisions.Wait(j[1], "no room");
  w.decisions.RevisitAt(42);
  Plan plan;
  EmitPlan(w.session, w.decisions, &plan);
  EXPECT_EQ(plan.revisit_at, 42);
  ASSERT_EQ(plan.actions.size(), 4u);
  const std::pair<ActionKind, TaskRef> want[] = {{ActionKind::kBind, worker(0)},
                                                 {ActionKind::kUnbind, worker(2)},
                                                 {ActionKind::kBind, worker(3)},
                                                 {ActionKind::kWait, worker(1)}};
  const NodeIndex nodes[] = {0, 1, 1, kNoNode};
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(plan.actions[i].kind, want[i].first);
    EXPECT_EQ(plan.actions[i].task, want[i].second);
    EXPECT_EQ(plan.actions[i].node, nodes[i]);
  }
  EXPECT_EQ(plan.actions[3].reason, "no room");
}

}  // namespace
}  // namespace dlsched::engine
