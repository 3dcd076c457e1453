// The FGD node scorer (scorer_fgd.h) on the engine's state, worked by hand,
// then one engine cycle where it keeps whole GPUs free that spreading
// fragments.
#include "dlsched/policy/sharing/scorer_fgd.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "dlsched/engine/engine.h"
#include "dlsched/engine/session.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/registry.h"

namespace dlsched::policy {
namespace {

using engine::ClusterState;
using engine::TaskRef;

// Two nodes of 16 cores and 2 GPUs taking shares.
core::ClusterSpec TwoSharedNodes() {
  core::ClusterSpec cluster = engine::testing::Nodes(2, 16, 64, 2);
  for (auto& n : cluster.nodes) n.allocatable[core::kGpuMilli] = 2000;
  return cluster;
}

// a, b: one worker of 1 core and half a GPU; c: one worker of 1 core and
// 2 whole GPUs.
std::deque<core::JobSpec> Jobs() {
  std::deque<core::JobSpec> specs;
  for (const char* name : {"a", "b"}) {
    core::JobSpec j = engine::testing::Job(name, 0, 0, 1, 1, 1, 0);
    j.role(core::Role::kWorker).resources[core::kGpuMilli] = 500;
    specs.push_back(j);
  }
  specs.push_back(engine::testing::Job("c", 0, 0, 1, 1, 1, 2));
  return specs;
}

// The target workload: 2 tasks of (1 core, 500 of one GPU) and 1 of
// (1 core, 2 GPUs): popularities 2/3 and 1/3 (both kept: 2 of 3 tasks is
// below 95%).
// With a on node 0's device 0: node 0 has devices [500, 1000] free, node 1
// [1000, 1000]. Fragmentation (milli-GPU), per class, of what it cannot use:
//   node 0: the half class uses both devices (0); the 2-GPU class finds
//     one whole device, so all 1500 free is lost to it: 1/3 x 1500 = 500.
//   node 1: both classes run, no device below their demand: 0.
// b (500) on node 0 goes on device 0 (tightest): [0, 1000] -> 1/3 x 1000
// = 333.3; increase -166.7, score floor(100 sigmoid(0.1667)) = 54.
// b on node 1: [500, 1000] -> 500; increase +500, score floor(100
// sigmoid(-0.5)) = 37. c (2 GPUs) on node 1: [0, 0] -> 0, increase 0,
// score 50; on node 0 it does not fit (not scored by the engine).
TEST(FgdScorerTest, ScoresTheFragmentationIncreaseByHand) {
  std::deque<core::JobSpec> specs = Jobs();
  ClusterState state(TwoSharedNodes());
  for (auto& s : specs) state.SetPhase(state.AddJob(&s, 0), core::JobPhase::kWaiting, 0);
  const auto workload = CensusWorkload(state);
  ASSERT_EQ(workload.size(), 2u);
  EXPECT_EQ(workload[0].task.gpu_milli, 500);
  EXPECT_DOUBLE_EQ(workload[0].popularity, 2.0 / 3);
  EXPECT_EQ(workload[1].task.num_gpu, 2);
  const FgdScorer fgd;
  const TaskRef a{0, core::Role::kWorker, 0};
  const TaskRef b{1, core::Role::kWorker, 0};
  const TaskRef c{2, core::Role::kWorker, 0};
  // Empty nodes: a half opens a device, [500, 1000]: 500 lost to the
  // 2-GPU class; increase 500 -> 37 on both.
  EXPECT_EQ(fgd.Score(state, a, 0), 37);
  EXPECT_EQ(fgd.Score(state, a, 1), 37);
  engine::Session session(state);
  session.Assign(a, 0);
  EXPECT_EQ(SharingNodeOf(state, 0).gpu_left, (std::vector<int>{500, 1000}));
  EXPECT_EQ(fgd.Score(state, b, 0), 54);
  EXPECT_EQ(fgd.Score(state, b, 1), 37);
  EXPECT_EQ(fgd.Score(state, c, 1), 50);
}

// One engine cycle with a placed, then b and c waiting (gang FIFO):
// spreading by CPU (LeastAllocated) puts b on node 1, and c (2 GPUs on one
// node) finds no node; FGD puts b beside a and c on node 1.
TEST(FgdScorerTest, KeepsWholeGpusFreeThatSpreadingFragments) {
  auto started = [](const std::string& scorer) {
    auto spec = config::ParseProfile(
        "name: p\nadmission: {name: Gang, args: {backfill: true}}\npacker: TaskByTask\n"
        "scorers:\n  - " +
            scorer + "\n",
        "p.yaml");
    EXPECT_TRUE(spec.has_value()) << spec.error().message;
    auto profile = BuildProfile(*spec);
    EXPECT_TRUE(profile.has_value()) << profile.error().message;
    const engine::Engine engine(std::move(*profile));
    std::deque<core::JobSpec> specs = Jobs();
    ClusterState state(TwoSharedNodes());
    for (auto& s : specs) state.AddJob(&s, 0);
    state.PlaceTask(TaskRef{0, core::Role::kWorker, 0}, 0);
    state.SetPhase(0, core::JobPhase::kRunning, 0);
    state.SetPhase(1, core::JobPhase::kWaiting, 0);
    state.SetPhase(2, core::JobPhase::kWaiting, 0);
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(state, pods, memos, 0);
    std::vector<std::pair<std::string, engine::NodeIndex>> binds;
    for (const engine::Action& a : plan.actions) {
      if (a.kind == engine::ActionKind::kBind) {
        binds.emplace_back(state.Job(a.task.job).spec->name, a.node);
        // b's half: beside a on node 0's device 0, or node 1's first device.
        if (a.task.job == 1) {
          EXPECT_EQ(a.device, 0);
        }
      }
    }
    return binds;
  };
  using V = std::vector<std::pair<std::string, engine::NodeIndex>>;
  EXPECT_EQ(started("{name: LeastAllocated, args: {resources: [{name: cpu, weight: 1}]}}"),
            (V{{"b", 1}}));
  EXPECT_EQ(started("{name: FragmentationGradient}"), (V{{"b", 0}, {"c", 1}}));
}

// A gang of 4 workers of half a GPU on one node of 2 GPUs: TaskByTask's
// quick check counts shares per device (2 per device, 4 in all), and the
// workers fill device 0, then device 1.
TEST(FgdScorerTest, AGangOfSharesFillsTheDevicesOfOneNode) {
  auto profile = policy::BuildProfile(*policy::ResolveProfile("gang-binpack"));
  ASSERT_TRUE(profile.has_value()) << profile.error().message;
  const engine::Engine engine(std::move(*profile));
  core::ClusterSpec cluster = engine::testing::Nodes(1, 16, 64, 2);
  cluster.nodes[0].allocatable[core::kGpuMilli] = 2000;
  std::deque<core::JobSpec> specs{engine::testing::Job("g", 0, 0, 4, 4, 4, 0)};
  specs[0].role(core::Role::kWorker).resources[core::kGpuMilli] = 500;
  ClusterState state(cluster);
  state.SetPhase(state.AddJob(&specs[0], 0), core::JobPhase::kWaiting, 0);
  engine::PodQueue pods;
  engine::Memos memos;
  const engine::Plan plan = engine.Cycle(state, pods, memos, 0);
  std::vector<int> devices;
  for (const engine::Action& a : plan.actions) {
    if (a.kind == engine::ActionKind::kBind) devices.push_back(a.device);
  }
  EXPECT_EQ(devices, (std::vector<int>{0, 0, 1, 1}));
}

}  // namespace
}  // namespace dlsched::policy
