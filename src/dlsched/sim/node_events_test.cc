// Nodes failing, leaving and joining during a simulation: jobs on a lost
// node restart from their last checkpoint through the shared life cycle,
// under KOD2 and F-scheduling, and nothing is lost or counted twice.
#include <gtest/gtest.h>

#include <string>

#include "dlsched/config/specs.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using core::Role;
using testing::MakeEngine;
using testing::Record;

core::NodeSpec GpuNode(const std::string& name, int gpus) {
  return dlsched::testing::Node(name, 8000, dlsched::testing::GiB(32), gpus);
}

core::NodeEvent At(core::Time t, core::NodeEvent::Kind kind, core::NodeSpec node) {
  core::NodeEvent e;
  e.time = t;
  e.kind = kind;
  e.node = std::move(node);
  return e;
}

// Workers of 1 cpu / 1 GiB / 1 GPU, no PS, elastic in [min, max], f(n) = n.
core::JobSpec GpuJob(std::string name, double arrival, int min, int max, double steps) {
  return testing::GpuJob(std::move(name), arrival, min, max, 1000, 1, steps);
}

SimResult RunChecked(const core::ClusterSpec& cluster, const config::WorkloadSpec& w,
                     const std::string& profile) {
  SimOptions options;
  options.check_invariants = true;  // no node over-committed, nothing left assumed/releasing
  auto r = Simulate(cluster, w, MakeEngine(profile), options);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r ? std::move(*r) : SimResult{};
}

// Two 4-GPU nodes; e elastic in [2, 8], f(n) = n, 4000 steps, no delays.
// t=0    KOD2 starts e with 2 workers on node-0 and scales it out at once:
//        8 workers (node-0 and node-1), 8 steps/s.
// t=100  e has 800 steps; node-1 fails with 4 of its workers. e has no
//        checkpoint yet (it never checkpointed): it restarts from 0 steps,
//        Stopping -> Standby, and is admitted again in the same cycle on
//        node-0: 2 workers, scaled out to 4, 4 steps/s.
// t=1100 e completes (4000 / 4). One reallocation (the restart), no
//        preemption.
TEST(NodeEventsTest, Kod2JobOnAFailedNodeRestartsFromItsCheckpoint) {
  core::ClusterSpec cluster;
  cluster.nodes = {GpuNode("node-0", 4), GpuNode("node-1", 4)};
  cluster.events = {At(100, core::NodeEvent::Kind::kFail, GpuNode("node-1", 0))};
  config::WorkloadSpec w;
  w.jobs.push_back(GpuJob("e", 0, 2, 8, 4000));
  const SimResult r = RunChecked(cluster, w, "kod2");
  const auto& e = Record(r, "e");
  EXPECT_EQ(e.final_phase, core::JobPhase::kCompleted);
  EXPECT_DOUBLE_EQ(e.first_start, 0);
  EXPECT_DOUBLE_EQ(e.completion, 1100);
  EXPECT_EQ(e.final_workers, 4);
  EXPECT_EQ(e.reallocations, 1);
  EXPECT_EQ(e.preemptions, 0);
  // 8 GPUs allocated until the failure, 4 after.
  bool saw8 = false, saw4_after = false;
  for (const auto& u : r.run.utilization) {
    saw8 = saw8 || (u.time < 100 && u.allocated[core::kGpu] == 8);
    saw4_after = saw4_after || (u.time >= 100 && u.allocated[core::kGpu] == 4);
    if (u.time >= 100) {
      EXPECT_LE(u.allocated[core::kGpu], 4) << u.time;
    }
  }
  EXPECT_TRUE(saw8);
  EXPECT_TRUE(saw4_after);
}

// The same under the Fail task-loss policy: the job fails at 100 s with
// the reason, and the run reports it.
TEST(NodeEventsTest, TaskLossFailPolicyFailsTheJob) {
  core::ClusterSpec cluster;
  cluster.nodes = {GpuNode("node-0", 4), GpuNode("node-1", 4)};
  cluster.events = {At(100, core::NodeEvent::Kind::kFail, GpuNode("node-1", 0))};
  config::WorkloadSpec w;
  w.jobs.push_back(GpuJob("e", 0, 2, 8, 4000));
  auto spec = policy::ResolveProfile("kod2");
  ASSERT_TRUE(spec.has_value());
  spec->restart_on_task_loss = false;
  auto built = policy::BuildProfile(*spec);
  ASSERT_TRUE(built.has_value());
  const engine::Engine engine(std::move(*built));
  auto r = Simulate(cluster, w, engine, SimOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& e = Record(*r, "e");
  EXPECT_EQ(e.final_phase, core::JobPhase::kFailed);
  EXPECT_DOUBLE_EQ(e.completion, 100);
  EXPECT_EQ(e.reason, "lost tasks: node node-1 failed");
}

// A node that joins is used by the next cycle: a gang of 8 one-GPU workers
// cannot fit on the initial 4-GPU node (never, on that cluster), so it
// waits; node-1 joins at 50 s and the gang starts in that instant.
TEST(NodeEventsTest, AddedNodeLetsAWaitingJobStart) {
  core::ClusterSpec cluster;
  cluster.nodes = {GpuNode("node-0", 4)};
  cluster.events = {At(50, core::NodeEvent::Kind::kAdd, GpuNode("node-1", 4))};
  config::WorkloadSpec w;
  w.jobs.push_back(GpuJob("big", 0, 8, 8, 800));
  const SimResult r = RunChecked(cluster, w, "gang-binpack");
  const auto& big = Record(r, "big");
  EXPECT_EQ(big.final_phase, core::JobPhase::kCompleted);
  EXPECT_DOUBLE_EQ(big.first_start, 50);
  EXPECT_DOUBLE_EQ(big.completion, 150);  // 800 steps at 8 steps/s
}

// F-scheduling, two jobs on two 2-GPU nodes, node-1 fails at 50 s and a
// node joins at 100 s. Whatever the reallocations in between, every job
// completes, the job that was on node-1 restarts once more than the other,
// and the invariants hold after every cycle (no over-commit, no task left
// on the gone node, nothing assumed or releasing).
TEST(NodeEventsTest, FschedSurvivesANodeFailureAndANodeJoining) {
  core::ClusterSpec cluster;
  cluster.nodes = {GpuNode("node-0", 2), GpuNode("node-1", 2)};
  cluster.events = {At(50, core::NodeEvent::Kind::kFail, GpuNode("node-1", 0)),
                    At(100, core::NodeEvent::Kind::kAdd, GpuNode("node-2", 2))};
  config::WorkloadSpec w;
  w.jobs.push_back(GpuJob("a", 0, 1, 2, 1000));
  w.jobs.push_back(GpuJob("b", 0, 1, 2, 1000));
  const SimResult base = [&] {
    core::ClusterSpec steady = cluster;
    steady.events.clear();
    return RunChecked(steady, w, "fsched");
  }();
  const SimResult r = RunChecked(cluster, w, "fsched");
  for (const char* name : {"a", "b"}) {
    EXPECT_EQ(Record(r, name).final_phase, core::JobPhase::kCompleted) << name;
    EXPECT_GE(Record(r, name).completion, Record(base, name).completion) << name;
  }
  const int extra_a = Record(r, "a").reallocations - Record(base, "a").reallocations;
  const int extra_b = Record(r, "b").reallocations - Record(base, "b").reallocations;
  EXPECT_GE(extra_a + extra_b, 1);
  EXPECT_EQ(r.run.utilization.back().allocated[core::kGpu], 0);
}

// An unreachable node's tasks stay 300 s (Kubernetes' default toleration
// of node.kubernetes.io/unreachable:NoExecute) before they are evicted.
// Two 4-GPU nodes; a: one worker, 1 step/s, 1000 steps, on node-0.
// t=100   node-0 gets the unreachable NoExecute taint (and NoSchedule, as
//         the node lifecycle controller puts both): a runs on.
// t=400   300 s later a is evicted: no checkpoint, back to 0 steps; it is
//         placed again at once, on node-1.
// t=1400  a completes. (Evicted at once it would have completed at 1100.)
TEST(NodeEventsTest, AnUnreachableNodesTasksStayForTheDefaultTolerationSeconds) {
  core::ClusterSpec cluster;
  cluster.nodes = {GpuNode("node-0", 4), GpuNode("node-1", 4)};
  core::NodeEvent e = At(100, core::NodeEvent::Kind::kUpdate, GpuNode("node-0", 0));
  e.taints = std::vector<core::Taint>{
      {std::string(core::kUnreachableTaint), "", core::TaintEffect::kNoExecute},
      {std::string(core::kUnreachableTaint), "", core::TaintEffect::kNoSchedule}};
  cluster.events = {e};
  config::WorkloadSpec w;
  w.jobs.push_back(GpuJob("a", 0, 1, 1, 1000));
  const SimResult r = RunChecked(cluster, w, "gang-binpack");
  const auto& a = Record(r, "a");
  EXPECT_EQ(a.final_phase, core::JobPhase::kCompleted);
  EXPECT_DOUBLE_EQ(a.completion, 1400);
  EXPECT_EQ(a.reallocations, 1);
}

}  // namespace
}  // namespace dlsched::sim
