// ClusterState as a cache: nodes and jobs coming and going under stable
// keys, foreign tasks, assumed binds and releasing evictions.
#include "dlsched/engine/cluster_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

#include "dlsched/engine/test_util.h"
#include "engine/cluster_with_jobs.h"

namespace dlsched::engine {
namespace {

using core::Role;
using testing::Job;
using testing::Nodes;

core::Resources Res(int64_t cores, int64_t gib, int64_t gpus) {
  core::Resources r;
  r[core::kCpu] = cores * 1000;
  r[core::kMemory] = gib << 30;
  r[core::kGpu] = gpus;
  return r;
}

std::vector<NodeIndex> Sorted(std::vector<NodeIndex> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class CacheTest : public ::testing::Test {
 protected:
  // node-0, node-1: 8 cores, 32 GiB, 4 GPUs
  dlsched::testing::ClusterWithJobs jobs_{Nodes(2, 8, 32, 4)};
  ClusterState& state_ = jobs_.state;

  JobIndex Add(core::JobSpec spec) { return jobs_.AddAt(0, std::move(spec)); }
};

TEST_F(CacheTest, AddedNodeGetsTheNextIndexAndJoinsCapacityAndGpuIndex) {
  core::NodeSpec big{"big", Res(16, 64, 8), {}, {}, true};
  const NodeIndex n = state_.AddNode(big);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(state_.FindNode("big"), 2);
  EXPECT_EQ(state_.NumPresentNodes(), 3);
  EXPECT_EQ(state_.Capacity()[core::kGpu], 16);
  // More GPUs than any node had: the free-GPU index grows to hold it.
  EXPECT_EQ(state_.MaxGpuPerNode(), 8);
  EXPECT_EQ(state_.NodesWithFreeGpu(8), std::vector<NodeIndex>{2});
  EXPECT_EQ(Sorted(state_.NodesWithFreeGpu(4)), (std::vector<NodeIndex>{0, 1}));
}

// What a job holds, summed by role from its placed counts: 2 PS of 1
// core / 2 GiB, a Chief of 2 cores / 4 GiB, 4 workers of 1 core / 2 GiB
// / 1 GPU. Placed: PS 1, the Chief, workers 0 and 3: 1 + 2 + 2 x 1 = 5
// cores, 2 + 4 + 2 x 2 = 10 GiB, 2 GPUs. With PS 1 gone: 4 cores, 8 GiB.
TEST_F(CacheTest, HeldIsSummedByRole) {
  core::JobSpec spec = Job("a", 0, 2, 4, 4, 4);
  core::RoleSpec& chief = spec.role(Role::kChief);
  chief.replicas = chief.min_replicas = chief.max_replicas = 1;
  chief.resources = Res(2, 4, 0);
  const JobIndex a = Add(std::move(spec));
  EXPECT_TRUE(state_.Held(a).IsZero());
  state_.PlaceTask({a, Role::kPS, 1}, 0);
  state_.PlaceTask({a, Role::kChief, 0}, 1);
  state_.PlaceTask({a, Role::kWorker, 0}, 0);
  state_.PlaceTask({a, Role::kWorker, 3}, 1);
  EXPECT_EQ(state_.Held(a), Res(5, 10, 2));
  state_.RemoveTask({a, Role::kPS, 1});
  EXPECT_EQ(state_.Held(a), Res(4, 8, 2));
}

TEST_F(CacheTest, UnschedulableAddedNodeCountsInNoCapacity) {
  core::NodeSpec cordoned{"c", Res(8, 32, 4), {}, {}, false};
  const NodeIndex n = state_.AddNode(cordoned);
  EXPECT_FALSE(state_.Schedulable(n));
  EXPECT_EQ(state_.NumSchedulable(), 2);
  EXPECT_EQ(state_.Capacity()[core::kGpu], 8);
}

TEST_F(CacheTest, UpdateChangesAllocatableLabelsTaintsAndSchedulable) {
  core::NodeSpec spec = state_.NodeSpecOf(1);
  spec.allocatable = Res(8, 32, 2);
  spec.labels = {{"zone", "z2"}};
  spec.taints = {core::Taint{"dedicated", "infer", core::TaintEffect::kNoSchedule}};
  state_.UpdateNode(1, spec);
  EXPECT_EQ(state_.Allocatable(1)[core::kGpu], 2);
  EXPECT_EQ(state_.Capacity()[core::kGpu], 6);
  EXPECT_EQ(state_.NodesWithFreeGpu(2), std::vector<NodeIndex>{1});
  EXPECT_EQ(state_.NodeSpecOf(1).labels.at("zone"), "z2");
  ASSERT_EQ(state_.NodeSpecOf(1).taints.size(), 1u);
  EXPECT_EQ(state_.NodeName(1), "node-1");  // the name is the key: it stays
  // Cordon: out of the index and the capacity, still present.
  spec.schedulable = false;
  state_.UpdateNode(1, spec);
  EXPECT_FALSE(state_.Schedulable(1));
  EXPECT_TRUE(state_.Present(1));
  EXPECT_EQ(state_.Capacity()[core::kGpu], 4);
  EXPECT_TRUE(state_.NodesWithFreeGpu(2).empty());
}

TEST_F(CacheTest, ShrinkingUnderPlacedTasksClampsToBucketZero) {
  const JobIndex a = Add(Job("a", 0, 0, 3, 3, 3));
  for (int i = 0; i < 3; ++i) state_.PlaceTask({a, Role::kWorker, i}, 0);
  core::NodeSpec spec = state_.NodeSpecOf(0);
  spec.allocatable = Res(8, 32, 2);  // 3 GPUs in use on a node that now has 2
  state_.UpdateNode(0, spec);
  EXPECT_EQ(state_.NodesWithFreeGpu(0), std::vector<NodeIndex>{0});
  EXPECT_EQ(state_.NumTasksOn(0), 3);
}

TEST_F(CacheTest, RemovedNodeKeepsItsIndexWhichIsNeverReused) {
  const JobIndex a = Add(Job("a", 0, 0, 1, 1, 1));
  state_.PlaceTask({a, Role::kWorker, 0}, 1);
  EXPECT_EQ(state_.TasksOn(1), (std::vector<TaskRef>{{a, Role::kWorker, 0}}));
  state_.RemoveTask({a, Role::kWorker, 0});  // the caller takes job tasks off first
  state_.AddForeignTask("kube-system/dns", 1, Res(1, 1, 0), Res(1, 1, 0));
  state_.RemoveNode(1);
  EXPECT_FALSE(state_.Present(1));
  EXPECT_EQ(state_.FindNode("node-1"), kNoNode);
  EXPECT_EQ(state_.NumNodes(), 2);  // indices still run over it
  EXPECT_EQ(state_.NumPresentNodes(), 1);
  EXPECT_EQ(state_.NumSchedulable(), 1);
  EXPECT_EQ(state_.Capacity()[core::kGpu], 4);
  EXPECT_EQ(state_.TotalRequested()[core::kCpu], 0);  // its foreign pod went with it
  EXPECT_EQ(state_.NumForeignTasks(), 0);
  // The same name comes back as a new node with a new index.
  const NodeIndex back = state_.AddNode(core::NodeSpec{"node-1", Res(8, 32, 4), {}, {}, true});
  EXPECT_EQ(back, 2);
  EXPECT_EQ(state_.FindNode("node-1"), 2);
  EXPECT_EQ(state_.Capacity()[core::kGpu], 8);
}

TEST_F(CacheTest, RemovedJobLeavesEveryIndex) {
  const JobIndex a = Add(Job("a", 0, 0, 1, 1, 1));
  const JobIndex b = Add(Job("b", 0, 0, 1, 1, 1));
  state_.SetPhase(a, core::JobPhase::kWaiting, 0);
  state_.SetPhase(b, core::JobPhase::kWaiting, 0);
  state_.RemoveJob(a);
  EXPECT_TRUE(state_.Job(a).removed);
  EXPECT_EQ(state_.FindJob("a"), -1);
  EXPECT_EQ(state_.FindJob("b"), b);
  EXPECT_EQ(state_.JobsInPhase(core::JobPhase::kWaiting), std::vector<JobIndex>{b});
  std::vector<JobIndex> pending;
  state_.PendingJobs(&pending);
  EXPECT_EQ(pending, std::vector<JobIndex>{b});
  // Indices stay stable: the next job does not take a's.
  EXPECT_EQ(Add(Job("c", 0, 0, 1, 1, 1)), 2);
}

TEST_F(CacheTest, ForeignTasksCountAgainstTheirNode) {
  // Another scheduler's pod: 2 cores, 4 GiB, 3 GPUs on node-0.
  state_.AddForeignTask("default/other", 0, Res(2, 4, 3), Res(2, 4, 3));
  EXPECT_EQ(state_.Free(0)[core::kGpu], 1);
  EXPECT_EQ(state_.NodesWithFreeGpu(1), std::vector<NodeIndex>{0});
  EXPECT_EQ(state_.NumTasksOn(0), 1);
  EXPECT_EQ(state_.TotalRequested()[core::kGpu], 3);
  // Adding the same key again moves it (an update seen twice by an informer).
  state_.AddForeignTask("default/other", 1, Res(2, 4, 3), Res(2, 4, 3));
  EXPECT_EQ(state_.Free(0)[core::kGpu], 4);
  EXPECT_EQ(state_.Free(1)[core::kGpu], 1);
  EXPECT_EQ(state_.NumForeignTasks(), 1);
  state_.RemoveForeignTask("default/other");
  state_.RemoveForeignTask("default/other");  // twice: no-op
  EXPECT_EQ(state_.Free(1)[core::kGpu], 4);
  EXPECT_EQ(state_.TotalRequested()[core::kGpu], 0);
}

TEST_F(CacheTest, AssumedBindHoldsUntilConfirmedOrForgotten) {
  const JobIndex a = Add(Job("a", 0, 0, 2, 2, 2));
  const TaskRef w0{a, Role::kWorker, 0}, w1{a, Role::kWorker, 1};
  state_.AssumeTask(w0, 0);
  state_.AssumeTask(w1, 0);
  EXPECT_TRUE(state_.IsAssumed(w0));
  EXPECT_EQ(state_.Free(0)[core::kGpu], 2);  // assumed binds count at once
  state_.ConfirmTask(w0);
  EXPECT_FALSE(state_.IsAssumed(w0));
  state_.ForgetTask(w1);  // its bind failed
  EXPECT_EQ(state_.Job(a).NodeOf(Role::kWorker, 1), kNoNode);
  EXPECT_EQ(state_.Free(0)[core::kGpu], 3);
  EXPECT_EQ(state_.NumAssumed(), 0);
  // Forgetting a confirmed task does nothing: only a failed bind is undone.
  state_.ForgetTask(w0);
  EXPECT_EQ(state_.Job(a).NodeOf(Role::kWorker, 0), 0);
}

TEST_F(CacheTest, ReleasingTaskHoldsItsResourcesUntilGone) {
  const JobIndex a = Add(Job("a", 0, 0, 2, 1, 2));
  const TaskRef w1{a, Role::kWorker, 1};
  state_.PlaceTask({a, Role::kWorker, 0}, 0);
  state_.PlaceTask(w1, 1);
  state_.ReleaseTask(w1);
  // The job no longer has it...
  EXPECT_EQ(state_.Job(a).placed_workers, 1);
  EXPECT_EQ(state_.Job(a).NodeOf(Role::kWorker, 1), kNoNode);
  // ...but node-1 does until the pod is gone.
  EXPECT_EQ(state_.Free(1)[core::kGpu], 3);
  EXPECT_EQ(state_.NumTasksOn(1), 1);
  EXPECT_EQ(state_.NumReleasing(), 1);
  // The slot may be placed again meanwhile, elsewhere.
  state_.PlaceTask(w1, 0);
  EXPECT_EQ(state_.Free(0)[core::kGpu], 2);
  state_.TaskGone(w1);
  EXPECT_EQ(state_.Free(1)[core::kGpu], 4);
  EXPECT_EQ(state_.NumTasksOn(1), 0);
  EXPECT_EQ(state_.NumReleasing(), 0);
  EXPECT_EQ(state_.Job(a).NodeOf(Role::kWorker, 1), 0);  // the new placement stays
  EXPECT_EQ(state_.TotalRequested()[core::kGpu], 2);
}

}  // namespace
}  // namespace dlsched::engine

namespace dlsched::engine {
namespace {

// An operator starts with no node and no job: every index answers, empty.
TEST(ClusterStateEmptyTest, IndicesAnswerBeforeAnyNodeOrJob) {
  const core::ClusterSpec none;
  ClusterState state(none);
  for (int p = 0; p < core::kNumJobPhases; ++p) {
    EXPECT_TRUE(state.JobsInPhase(static_cast<core::JobPhase>(p)).empty());
  }
  std::vector<JobIndex> pending = {7};
  state.PendingJobs(&pending);
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(state.FindJob("x"), -1);
  EXPECT_EQ(state.NumPresentNodes(), 0);
}

// Queues changed while jobs run (the operator's Queue objects): a queue
// created maps the jobs that name it; a quota lowered below what a queue
// holds keeps its tasks and admits nothing more; a queue deleted frees its
// jobs of any quota.
TEST(ClusterStateTest, QueuesChangedWhileJobsRun) {
  dlsched::testing::ClusterWithJobs w(Nodes(1, 32, 128, 8));
  core::JobSpec a = Job("a", 0, 0, 2, 2, 2);  // 2 workers of 1 GPU
  a.queue = "team";
  const JobIndex j = w.Add(a, core::JobPhase::kWaiting);
  w.state.PlaceTask({j, Role::kWorker, 0}, 0);
  w.state.PlaceTask({j, Role::kWorker, 1}, 0);
  EXPECT_EQ(w.state.Job(j).queue, -1);  // no queue declared yet
  core::Resources gpu;
  gpu[core::kGpu] = 1;

  core::QueueSpec team;
  team.name = "team";
  team.quota.push_back(core::QuotaLine{core::kGpu, 3, std::nullopt, std::nullopt});
  const uint64_t before = w.state.Quotas().TotalVersion();
  w.state.SetQueues(std::vector{team}, {});
  ASSERT_EQ(w.state.Job(j).queue, 0);
  EXPECT_EQ(w.state.Quotas().Usage(0)[core::kGpu], 2);
  EXPECT_EQ(w.state.Quotas().Tasks(0), 2);
  EXPECT_GT(w.state.Quotas().TotalVersion(), before);
  EXPECT_TRUE(w.state.QuotaAdmits(j, gpu));  // 2 + 1 <= 3

  team.quota[0].nominal = 1;  // below its usage
  w.state.SetQueues(std::vector{team}, {});
  EXPECT_EQ(w.state.Quotas().Usage(0)[core::kGpu], 2);
  EXPECT_FALSE(w.state.QuotaAdmits(j, gpu));
  EXPECT_EQ(*w.state.QuotaRefusal(j, gpu),
            "queue team's quota: needs 1 nvidia.com/gpu, 0 available (nominal 1, 2 in use)");
  // A task leaving gives its GPU back to the new book.
  w.state.RemoveTask({j, Role::kWorker, 1});
  EXPECT_EQ(w.state.Quotas().Usage(0)[core::kGpu], 1);

  w.state.SetQueues({}, {});
  EXPECT_EQ(w.state.Job(j).queue, -1);
  EXPECT_TRUE(w.state.QuotaAdmits(j, gpu));
}

// A queue's ElasticRest is what its running jobs below their maximum
// would take to reach it. Worked by hand, workers of 1 core, 2 GiB, 1 GPU:
//   e (2..4 workers) waiting, 2 placed        rest 0 (not running)
//   e running                                 rest 4 - 2 = 2 workers: 2 GPUs
//   a third worker placed                     1 GPU
//   its range edited to 2..3                  0
//   a worker removed                          1 GPU
//   e finished (tasks gone)                   0
// and a queue set replaced counts the running job again.
TEST(ClusterStateTest, ElasticRestFollowsRunningJobsBelowTheirMaximum) {
  dlsched::testing::ClusterWithJobs w(Nodes(1, 32, 128, 8));
  core::QueueSpec team;
  team.name = "team";
  team.quota.push_back(core::QuotaLine{core::kGpu, 8, std::nullopt, std::nullopt});
  w.state.SetQueues(std::vector{team}, {});
  core::JobSpec e = Job("e", 0, 0, 2, 2, 4);
  e.queue = "team";
  const JobIndex j = w.Add(e, core::JobPhase::kWaiting);
  auto rest = [&] { return w.state.ElasticRest(0)[core::kGpu]; };
  w.state.PlaceTask({j, Role::kWorker, 0}, 0);
  w.state.PlaceTask({j, Role::kWorker, 1}, 0);
  EXPECT_EQ(rest(), 0);
  w.state.SetPhase(j, core::JobPhase::kRunning, 1);
  EXPECT_EQ(rest(), 2);
  EXPECT_EQ(w.state.ElasticRest(0)[core::kCpu], 2000);
  w.state.PlaceTask({j, Role::kWorker, 2}, 0);
  EXPECT_EQ(rest(), 1);
  w.specs.back().role(Role::kWorker).max_replicas = 3;
  w.state.RangeChanged(j);
  EXPECT_EQ(rest(), 0);
  w.state.RemoveTask({j, Role::kWorker, 2});
  EXPECT_EQ(rest(), 1);
  w.state.SetQueues(std::vector{team}, {});
  EXPECT_EQ(rest(), 1);
  w.state.RemoveTask({j, Role::kWorker, 1});
  w.state.RemoveTask({j, Role::kWorker, 0});
  w.state.SetPhase(j, core::JobPhase::kCompleted, 2);
  EXPECT_EQ(rest(), 0);
}

// A job with a table per GPU type runs at the slowest type its workers
// are on. Worked by hand, 2 workers; node-0 is a v100, node-1 a k80,
// node-2 has no type; tables: own {2: 2}, v100 {2: 10}, k80 {2: 4},
// localitySensitivity 0.5:
//   both on node-0                 10
//   both on node-1                 4
//   one on node-0, one on node-1   min(10, 4) * (1 - 0.5) = 2
//   one on node-0, one on node-2   min(10, 2) * 0.5 = 1 (no type: own table)
TEST(ClusterStateTest, AGangAcrossGpuTypesRunsAtTheSlowest) {
  core::ClusterSpec cluster = Nodes(3, 32, 128, 8);
  cluster.nodes[0].labels[std::string(core::kGpuTypeLabel)] = "v100";
  cluster.nodes[1].labels[std::string(core::kGpuTypeLabel)] = "k80";
  dlsched::testing::ClusterWithJobs w(cluster);
  EXPECT_EQ(w.state.GpuType(0), "v100");
  EXPECT_EQ(w.state.GpuType(2), "");
  core::JobSpec e = Job("e", 0, 0, 2, 2, 2);
  e.throughput.steps_per_s = {{2, 2.0}};
  e.throughput.SetGpuTypes({{"v100", {{2, 10.0}}}, {"k80", {{2, 4.0}}}});
  e.throughput.locality_sensitivity = 0.5;
  const JobIndex j = w.Add(e, core::JobPhase::kWaiting);
  auto rate_on = [&](NodeIndex a, NodeIndex b) {
    w.state.PlaceTask({j, Role::kWorker, 0}, a);
    w.state.PlaceTask({j, Role::kWorker, 1}, b);
    const double r = w.state.PlacedRate(j);
    w.state.RemoveTask({j, Role::kWorker, 0});
    w.state.RemoveTask({j, Role::kWorker, 1});
    return r;
  };
  EXPECT_EQ(rate_on(0, 0), 10.0);
  EXPECT_EQ(rate_on(1, 1), 4.0);
  EXPECT_EQ(rate_on(0, 1), 2.0);
  EXPECT_EQ(rate_on(0, 2), 1.0);
}

// The speed model across nodes and switches, worked by hand. Four
// one-GPU workers, table {4: 8} steps/s, localitySensitivity 0.25,
// switchSensitivity 0.5; nodes 0-3 under switch s0, 4-5 under s1, node 6
// under none:
//   1 node  (all on node 0)            8
//   2 nodes (0, 0, 1, 1), one switch   8 x (1 - 0.25)           = 6
//   4 nodes (0, 1, 2, 3), one switch   8 x 0.75                 = 6
//   4 nodes (0, 1, 4, 5), two switches 8 x 0.75 x (1 - 0.5)     = 3
//   4 nodes (0, 1, 2, 6), one switch   6 (a node without a switch crosses none)
TEST(ClusterStateTest, SpeedAcrossNodesAndSwitches) {
  core::ClusterSpec cluster = Nodes(7, 32, 128, 8);
  for (int n = 0; n < 6; ++n) {
    cluster.nodes[n].labels[std::string(core::kSwitchLabel)] = n < 4 ? "s0" : "s1";
  }
  dlsched::testing::ClusterWithJobs w(cluster);
  EXPECT_EQ(w.state.SwitchOf(0), w.state.SwitchOf(3));
  EXPECT_NE(w.state.SwitchOf(0), w.state.SwitchOf(4));
  EXPECT_EQ(w.state.SwitchOf(6), -1);
  core::JobSpec e = Job("e", 0, 0, 4, 4, 4);
  e.throughput.steps_per_s = {{4, 8.0}};
  e.throughput.locality_sensitivity = 0.25;
  e.throughput.switch_sensitivity = 0.5;
  const JobIndex j = w.Add(e, core::JobPhase::kWaiting);
  ClusterState::Span span;
  auto rate_on = [&](std::vector<NodeIndex> nodes) {
    for (int i = 0; i < 4; ++i) w.state.PlaceTask({j, Role::kWorker, i}, nodes[i]);
    const double r = w.state.PlacedRate(j);
    span = w.state.SpanOf(j);
    for (int i = 0; i < 4; ++i) w.state.RemoveTask({j, Role::kWorker, i});
    return r;
  };
  EXPECT_EQ(rate_on({0, 0, 0, 0}), 8.0);
  EXPECT_EQ(span.nodes, 1);
  EXPECT_EQ(span.switches, 1);
  EXPECT_EQ(rate_on({0, 0, 1, 1}), 6.0);
  EXPECT_EQ(span.nodes, 2);
  EXPECT_EQ(rate_on({0, 1, 2, 3}), 6.0);
  EXPECT_EQ(span.nodes, 4);
  EXPECT_EQ(span.switches, 1);
  EXPECT_EQ(rate_on({0, 1, 4, 5}), 3.0);
  EXPECT_EQ(span.switches, 2);
  EXPECT_EQ(rate_on({0, 1, 2, 6}), 6.0);
  EXPECT_EQ(span.nodes, 4);
  EXPECT_EQ(span.switches, 1);
  // Relabelled: node 3 moves to s1.
  core::NodeSpec moved = w.state.NodeSpecOf(3);
  moved.labels[std::string(core::kSwitchLabel)] = "s1";
  w.state.UpdateNode(3, moved);
  EXPECT_EQ(rate_on({0, 1, 2, 3}), 3.0);
}

// Per-GPU-type quota (Kueue's resource flavors: quota lines R@T). Node 0
// is a v100, node 1 a k80, node 2 has no type, 8 GPUs each. Queue a has
// nvidia.com/gpu@v100 2 and nvidia.com/gpu@k80 4 and no line for the GPU
// itself; queue b has no quota. Job ja (queue a) asks 1 GPU a worker:
//   node 2 (no type)            refused: a has no quota of the GPU there
//   node 0, twice               admitted; a holds 2 v100 GPUs (and 2 GPUs)
//   node 0 a third time         refused: needs 1 nvidia.com/gpu@v100, 0 left
//   node 1                      admitted (its own line: 4)
//   one off node 0              node 0 admits again (1 in use)
// Job jb (queue b) is refused nowhere: b keys no type.
TEST(ClusterStateTest, QuotaPerGpuTypeChargesTheNodesType) {
  core::ClusterSpec cluster = Nodes(3, 32, 128, 8);
  cluster.nodes[0].labels[std::string(core::kGpuTypeLabel)] = "v100";
  cluster.nodes[1].labels[std::string(core::kGpuTypeLabel)] = "k80";
  dlsched::testing::ClusterWithJobs w(cluster);
  const core::ResourceId v100 = *core::InternResource("nvidia.com/gpu@v100");
  const core::ResourceId k80 = *core::InternResource("nvidia.com/gpu@k80");
  core::QueueSpec a;
  a.name = "a";
  a.quota = {core::QuotaLine{v100, 2, std::nullopt, std::nullopt},
             core::QuotaLine{k80, 4, std::nullopt, std::nullopt}};
  std::sort(a.quota.begin(), a.quota.end(),
            [](const core::QuotaLine& x, const core::QuotaLine& y) { return x.id < y.id; });
  core::QueueSpec b;
  b.name = "b";
  w.state.SetQueues(std::vector{a, b}, {});
  ASSERT_TRUE(w.state.HasFlavors());
  core::JobSpec ja_spec = Job("ja", 0, 0, 4, 4, 4);
  ja_spec.queue = "a";
  core::JobSpec jb_spec = Job("jb", 0, 0, 1, 1, 1);
  jb_spec.queue = "b";
  const JobIndex ja = w.Add(ja_spec, core::JobPhase::kWaiting);
  const JobIndex jb = w.Add(jb_spec, core::JobPhase::kWaiting);
  const core::Resources req = w.state.Request({ja, Role::kWorker, 0});
  ASSERT_EQ(req[core::kGpu], 1);
  EXPECT_EQ(w.state.FlavorRefusal(ja, req, 2),
            "queue a has no quota of nvidia.com/gpu on nodes without a GPU type");
  EXPECT_TRUE(w.state.FlavorAdmits(ja, req, 0));
  w.state.PlaceTask({ja, Role::kWorker, 0}, 0);
  w.state.PlaceTask({ja, Role::kWorker, 1}, 0);
  EXPECT_EQ(w.state.Quotas().Usage(0)[v100], 2);
  EXPECT_EQ(w.state.Quotas().Usage(0)[core::kGpu], 2);
  const std::optional<std::string> full = w.state.FlavorRefusal(ja, req, 0);
  ASSERT_TRUE(full.has_value());
  EXPECT_TRUE(full->starts_with("queue a's quota: needs 1 nvidia.com/gpu@v100, 0 available"))
      << *full;
  EXPECT_TRUE(w.state.FlavorAdmits(ja, req, 1));
  w.state.PlaceTask({ja, Role::kWorker, 2}, 1);
  EXPECT_EQ(w.state.Quotas().Usage(0)[k80], 1);
  w.state.RemoveTask({ja, Role::kWorker, 1});
  EXPECT_EQ(w.state.Quotas().Usage(0)[v100], 1);
  EXPECT_TRUE(w.state.FlavorAdmits(ja, req, 0));
  const core::Resources jb_req = w.state.Request({jb, Role::kWorker, 0});
  for (NodeIndex n = 0; n < 3; ++n) EXPECT_TRUE(w.state.FlavorAdmits(jb, jb_req, n)) << n;
  // The queues set again: the usage counted again, by type.
  w.state.SetQueues(std::vector{a, b}, {});
  EXPECT_EQ(w.state.Quotas().Usage(0)[v100], 1);
  EXPECT_EQ(w.state.Quotas().Usage(0)[k80], 1);
  // Node 1 relabelled a v100 with its task on it: charged to v100 now.
  core::NodeSpec relabelled = w.state.NodeSpecOf(1);
  relabelled.labels[std::string(core::kGpuTypeLabel)] = "v100";
  w.state.UpdateNode(1, relabelled);
  EXPECT_EQ(w.state.Quotas().Usage(0)[v100], 2);
  EXPECT_EQ(w.state.Quotas().Usage(0)[k80], 0);
}

}  // namespace
}  // namespace dlsched::engine
