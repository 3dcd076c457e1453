// The limits of a whole cluster or job, whatever made it (a parser, a trace
// importer, a snapshot): each rule with the field it names.
#include "dlsched/core/spec_limits.h"

#include <gtest/gtest.h>

#include "core/builders.h"
#include "dlsched/core/limits.h"

namespace dlsched::core {
namespace {

std::string Text(const LimitCheck& p) { return p ? p->field + ": " + p->what : "ok"; }

// Two workers of 1 GPU and 8 GiB, 100 s.
JobSpec SmallJob() {
  using dlsched::testing::GiB;
  return dlsched::testing::JobBuilder("j")
      .Workers(2)
      .WorkerResources(dlsched::testing::Res(0, GiB(8), 1))
      .Duration(100);
}

NodeSpec Node(const std::string& name, int64_t memory) {
  return dlsched::testing::Node(name, 0, memory);
}

TEST(SpecLimitsTest, Amounts) {
  EXPECT_EQ(AmountProblem(kMemory, kMaxAmount), std::nullopt);
  EXPECT_EQ(AmountProblem(kMemory, kMaxAmount + 1).value_or(""),
            "1125899906842625 is more than the limit of 1Pi");
  EXPECT_EQ(AmountProblem(kMemory, int64_t{1} << 60).value_or(""),
            "1Ei is more than the limit of 1Pi");
  EXPECT_EQ(AmountProblem(kCpu, -1).value_or(""), "-1 is negative");
  EXPECT_EQ(AmountProblem(kGpu, 4096), std::nullopt);  // a task's: no per-node limit
  EXPECT_EQ(NodeAmountProblem(kGpu, 1025).value_or(""),
            "1025 GPUs on one node is more than the limit of 1024");
  EXPECT_EQ(NodeCountProblem(kMaxNodes + 1).value_or(""),
            "the cluster would have 200001 nodes; at most 200000 are supported");
  EXPECT_EQ(TimeProblem(kMaxTime), std::nullopt);
  EXPECT_EQ(TimeProblem(3.2e11).value_or(""),
            "320000000000 s is more than the limit of 1000000000 s (31.7 years)");
  EXPECT_EQ(TimeProblem(0, /*positive=*/true).value_or(""), "0 s is outside (0, 1000000000] s");
  EXPECT_EQ(TimeProblem(std::numeric_limits<double>::quiet_NaN()).value_or(""),
            "nan s is outside [0, 1000000000] s");
}

TEST(SpecLimitsTest, Jobs) {
  EXPECT_EQ(Text(CheckJobLimits(SmallJob())), "ok");
  auto broken = [](auto change) {
    JobSpec job = SmallJob();
    change(job);
    return Text(CheckJobLimits(job));
  };
  EXPECT_EQ(broken([](JobSpec& j) { j.submit_time = 3.2e11; }),
            "arrival: 320000000000 s is more than the limit of 1000000000 s (31.7 years)");
  EXPECT_EQ(broken([](JobSpec& j) { j.deadline = 0; }),
            "deadline: 0 s is outside (0, 1000000000] s");
  EXPECT_EQ(broken([](JobSpec& j) { j.role(Role::kWorker).max_replicas = 1; }),
            "worker.maxReplicas: 1 is outside the integers 2 to 100000");
  EXPECT_EQ(broken([](JobSpec& j) { j.role(Role::kChief).replicas = 2; }),
            "chief.replicas: 2 is outside the integers 0 to 1");
  EXPECT_EQ(broken([](JobSpec& j) {
              RoleSpec& ps = j.role(Role::kPS);
              ps.replicas = ps.min_replicas = ps.max_replicas = 99'999;
            }),
            "worker.maxReplicas: the job would have 100001 tasks (PS, Chief and maxReplicas "
            "workers); at most 100000 are supported");
  EXPECT_EQ(broken([](JobSpec& j) { j.role(Role::kWorker).resources[kMemory] = int64_t{1} << 60; }),
            "worker.resources.memory: 1Ei is more than the limit of 1Pi");
  EXPECT_EQ(broken([](JobSpec& j) {
              RoleSpec& w = j.role(Role::kWorker);
              w.max_replicas = 4097;
              w.resources[kMemory] = kMaxAmount;
              j.SetDuration(100, ScalingCurve{});
            }),
            ": the job's total memory at maxReplicas exceeds the limit of 4Ei");
  EXPECT_EQ(broken([](JobSpec& j) { j.throughput.steps_per_s[1] = 1e-300; }),
            "throughput.table.1: a rate of 1e-300 steps/s is neither 0 nor within [1e-06, "
            "1000000000000]");
  EXPECT_EQ(broken([](JobSpec& j) { j.steps_done = 1e6; }),
            "stepsDone: 1000000 is outside [0, 100]");
  EXPECT_EQ(broken([](JobSpec& j) {
              j.name =
                  "a\x1b"
                  "b";
            }),
            "name: 'a\\x1bb' contains a control character");
  EXPECT_EQ(broken([](JobSpec& j) { j.initial.emplace().since = -1; }),
            "running.since: -1 s is outside [0, 1000000000] s");
  // An unresolved model (no table yet) passes.
  EXPECT_EQ(broken([](JobSpec& j) {
              j.duration.reset();
              j.throughput = ThroughputProfile{};
              j.throughput.model = "resnet50";
            }),
            "ok");
}

TEST(SpecLimitsTest, Workloads) {
  std::vector<JobSpec> jobs = {SmallJob(), SmallJob()};
  jobs[1].name = "late";
  EXPECT_EQ(Text(CheckJobsLimits(jobs, 0)), "ok");
  jobs[1].submit_time = 2e9;
  EXPECT_EQ(Text(CheckJobsLimits(jobs, 0)),
            "job 'late': arrival: 2000000000 s is more than the limit of 1000000000 s (31.7 "
            "years)");
  EXPECT_EQ(Text(CheckJobsLimits({}, -5)), "start: -5 s is outside [0, 1000000000] s");
}

// The cluster's total of each resource is the nodes present at each
// instant: additions, updates and removals move it.
TEST(SpecLimitsTest, ClusterTotalsThroughEvents) {
  ClusterLimits limits;
  for (int i = 0; i < 4095; ++i) {
    ASSERT_EQ(Text(limits.AddNode(Node("n" + std::to_string(i), kMaxAmount))), "ok");
  }
  ASSERT_EQ(Text(limits.AddNode(Node("small", 1))), "ok");
  EXPECT_EQ(Text(limits.UpdateNode("small", Node("", kMaxAmount).allocatable)), "ok");
  EXPECT_EQ(Text(limits.AddNode(Node("one-more", 1))),
            "resources.memory: the cluster's total memory would exceed the limit of 4Ei");
  limits.RemoveNode("n0");
  EXPECT_EQ(Text(limits.AddNode(Node("one-more", 1))), "ok");
  EXPECT_EQ(Text(limits.UpdateNode("n0", Node("", 1).allocatable)),
            "name: no node 'n0' is present");
  EXPECT_EQ(limits.nodes_ever(), 4097);
}

TEST(SpecLimitsTest, Clusters) {
  ClusterSpec c;
  c.nodes = {Node("a", int64_t{192} << 30), Node("b", int64_t{1} << 60)};
  EXPECT_EQ(Text(CheckClusterLimits(c)),
            "node 'b'.resources.memory: 1Ei is more than the limit of 1Pi");
  c.nodes[1].allocatable[kMemory] = 1;
  c.reserved["a"][kMemory] = int64_t{1} << 50;
  EXPECT_EQ(Text(CheckClusterLimits(c)),
            "node 'a'.reserved.memory: 1Pi is more than the node has (192Gi)");
  c.reserved["a"][kMemory] = int64_t{4} << 30;
  EXPECT_EQ(Text(CheckClusterLimits(c)), "ok");
  NodeEvent shrink;
  shrink.time = 10;
  shrink.kind = NodeEvent::Kind::kUpdate;
  shrink.node.name = "a";
  shrink.allocatable = Node("", int64_t{1} << 30).allocatable;
  c.events.push_back(shrink);
  EXPECT_EQ(Text(CheckClusterLimits(c)),
            "events[0].update.resources.memory: 1Gi is less than the node's `reserved` (4Gi)");
  c.events[0].allocatable = Node("", int64_t{1} << 60).allocatable;
  EXPECT_EQ(Text(CheckClusterLimits(c)),
            "events[0].update.resources.memory: 1Ei is more than the limit of 1Pi");
  c.events[0].allocatable.reset();
  c.events[0].time = 2e9;
  EXPECT_EQ(Text(CheckClusterLimits(c)),
            "events[0].time: 2000000000 s is more than the limit of 1000000000 s (31.7 years)");
}

}  // namespace
}  // namespace dlsched::core
