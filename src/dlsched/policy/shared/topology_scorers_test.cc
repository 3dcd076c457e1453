// TopologyPack and TopologySpread (topology_scorers.h): scores worked by
// hand, then one engine cycle placing a gang with and without packing.
#include "dlsched/policy/shared/topology_scorers.h"

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

// Five nodes of 2 GPUs: nodes 0 and 1 under switch s0 (rack r0 and r1),
// nodes 2 and 3 under s1 (racks r0 and r1), node 4 under none.
core::ClusterSpec FiveNodes() {
  core::ClusterSpec cluster = engine::testing::Nodes(5, 8, 32, 2);
  const char* switches[] = {"s0", "s0", "s1", "s1"};
  const char* racks[] = {"r0", "r1", "r0", "r1"};
  for (int n = 0; n < 4; ++n) {
    cluster.nodes[n].labels[std::string(core::kSwitchLabel)] = switches[n];
    cluster.nodes[n].labels[std::string(core::kRackLabel)] = racks[n];
  }
  return cluster;
}

core::JobSpec Gang(double locality) {
  core::JobSpec j = engine::testing::Job("j", 0, 0, 4, 4, 4);
  j.throughput.steps_per_s = {{4, 4.0}};
  j.throughput.locality_sensitivity = locality;
  return j;
}

// Workers 0 and 1 on node 0 (s0), worker 2 on node 2 (s1). Scoring
// worker 3 (3 others placed):
//   TopologyPack (switch): s0 holds 2 -> 100 x 2/3 = 66 on nodes 0 and 1,
//     s1 holds 1 -> 33 on nodes 2 and 3, node 4 (no switch) 0.
//   TopologySpread (switch): 100 - those: 34, 34, 67, 67, and 0 on node 4.
//   TopologySpread (rack): r0 (nodes 0, 2) holds all 3 -> 0; r1 none -> 100.
//   TopologyPack with minLocalitySensitivity 0.5, job at 0.3: 0 everywhere.
// Scoring worker 0 (its own slot skipped; others: w1 on node 0, w2 on
// node 2): TopologyPack 50 on every switched node.
// Before any is placed: TopologyPack 0, TopologySpread 100 (0 on node 4).
TEST(TopologyScorersTest, ShareOfTheJobUnderTheNodesDomain) {
  std::deque<core::JobSpec> specs{Gang(0.3)};
  ClusterState state(FiveNodes());
  state.AddJob(&specs[0], 0);
  state.SetPhase(0, core::JobPhase::kWaiting, 0);
  const TopologyPack pack(std::string(core::kSwitchLabel), 0);
  const TopologyPack picky(std::string(core::kSwitchLabel), 0.5);
  const TopologySpread spread(std::string(core::kSwitchLabel));
  const TopologySpread racks(std::string(core::kRackLabel));
  const auto worker = [](int i) { return TaskRef{0, core::Role::kWorker, i}; };
  auto scores = [&](const engine::NodeScorer& s, TaskRef t) {
    std::vector<int64_t> out;
    for (engine::NodeIndex n = 0; n < 5; ++n) out.push_back(s.Score(state, t, n));
    return out;
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(scores(pack, worker(0)), (V{0, 0, 0, 0, 0}));
  EXPECT_EQ(scores(spread, worker(0)), (V{100, 100, 100, 100, 0}));
  engine::Session session(state);
  session.Assign(worker(0), 0);
  session.Assign(worker(1), 0);
  session.Assign(worker(2), 2);
  EXPECT_EQ(scores(pack, worker(3)), (V{66, 66, 33, 33, 0}));
  EXPECT_EQ(scores(spread, worker(3)), (V{34, 34, 67, 67, 0}));
  EXPECT_EQ(scores(racks, worker(3)), (V{0, 100, 0, 100, 0}));
  EXPECT_EQ(scores(picky, worker(3)), (V{0, 0, 0, 0, 0}));
  EXPECT_EQ(scores(pack, worker(0)), (V{50, 50, 50, 50, 0}));
}

// One engine cycle on the five nodes, the gang of 4 one-GPU workers,
// LeastAllocated on GPUs (100 x free after / 2), ties to the lowest node:
//   alone: w0 -> node 0 (50 on every node); w1: node 0 0, others 50 ->
//     node 1; w2: nodes 0, 1 at 0, node 2 50 -> node 2; w3 -> node 3:
//     four nodes, two switches.
//   with TopologyPack (weight 1): w0 -> node 0; w1: node 0 0 + 100, node 1
//     50 + 100 = 150, node 2 50 + 0 -> node 1; w2: nodes 0 and 1 0 + 100,
//     nodes 2, 3, 4 50 + 0 -> node 0; w3: node 1 100 -> node 1: two nodes,
//     one switch.
TEST(TopologyScorersTest, PackKeepsAGangUnderOneSwitch) {
  auto nodes_of = [](const std::string& scorers) {
    auto spec = config::ParseProfile("name: p\npacker: TaskByTask\nscorers:\n" + scorers, "p.yaml");
    EXPECT_TRUE(spec.has_value()) << spec.error().message;
    auto profile = BuildProfile(*spec);
    EXPECT_TRUE(profile.has_value()) << profile.error().message;
    const engine::Engine engine(std::move(*profile));
    std::deque<core::JobSpec> specs{Gang(0.3)};
    ClusterState state(FiveNodes());
    state.AddJob(&specs[0], 0);
    state.SetPhase(0, core::JobPhase::kWaiting, 0);
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(state, pods, memos, 0);
    std::vector<engine::NodeIndex> nodes;
    for (const engine::Action& a : plan.actions) {
      if (a.kind == engine::ActionKind::kBind) nodes.push_back(a.node);
    }
    return nodes;
  };
  const std::string least =
      "  - {name: LeastAllocated, args: {resources: [{name: nvidia.com/gpu, weight: 1}]}}\n";
  using V = std::vector<engine::NodeIndex>;
  EXPECT_EQ(nodes_of(least), (V{0, 1, 2, 3}));
  EXPECT_EQ(nodes_of(least + "  - {name: TopologyPack}\n"), (V{0, 1, 0, 1}));
  EXPECT_EQ(nodes_of(least + "  - {name: TopologyPack, args: {minLocalitySensitivity: 0.5}}\n"),
            (V{0, 1, 2, 3}));
}

// The Consolidate packer, one engine cycle on the five nodes with
// LeastAllocated on GPUs (100 x free after / 2, ties to the lowest node).
// Job `other` (1 worker) comes first and goes to node 0 (50 everywhere):
// switch s0 then has 3 GPUs free, s1 4, node 4 (no switch) 2. Then `gang`:
//   4 workers, TaskByTask: node 1 (50; node 0 would be 0), 2, 3, 4: it
//     spans both switches and the unlabelled node.
//   4 workers, Consolidate: no node holds 4; s0 has 3 free (too few), s1
//     has 4: nodes 2, 3, 2, 3 (LeastAllocated alternates within s1).
//   2 workers, Consolidate: node 1 holds both (SingleNode's pick: 50 on
//     nodes 1-4, ties to the lowest) -> 1, 1.
//   6 workers, Consolidate: no switch has 6 free: task by task -> 1, 2, 3,
//     4 (50 each time, the lowest such node), then every node scores 0
//     (1 GPU free or none): 0, then 1; with `otherwise: wait` it waits.
//   4 workers of localitySensitivity 0.05 under minLocalitySensitivity
//     0.1: task by task -> 1, 2, 3, 4.
TEST(TopologyScorersTest, ConsolidatePutsAGangUnderOneSwitchWhenOneHasRoom) {
  auto place = [](const std::string& packer, int workers, double locality) {
    auto spec = config::ParseProfile(
        "name: p\npacker: " + packer +
            "\nscorers:\n  - {name: LeastAllocated, args: {resources: [{name: nvidia.com/gpu, "
            "weight: 1}]}}\n",
        "p.yaml");
    EXPECT_TRUE(spec.has_value()) << spec.error().message;
    auto profile = BuildProfile(*spec);
    EXPECT_TRUE(profile.has_value()) << profile.error().message;
    const engine::Engine engine(std::move(*profile));
    std::deque<core::JobSpec> specs{engine::testing::Job("other", 0, 0, 1, 1, 1),
                                    engine::testing::Job("gang", 0, 0, workers, workers, workers)};
    specs[0].throughput.locality_sensitivity = 0.3;
    specs[1].throughput.locality_sensitivity = locality;
    ClusterState state(FiveNodes());
    for (int i = 0; i < 2; ++i) {
      state.AddJob(&specs[i], 0);
      state.SetPhase(i, core::JobPhase::kWaiting, 0);
    }
    engine::PodQueue pods;
    engine::Memos memos;
    const engine::Plan plan = engine.Cycle(state, pods, memos, 0);
    std::vector<engine::NodeIndex> nodes;
    for (const engine::Action& a : plan.actions) {
      if (a.kind != engine::ActionKind::kBind) continue;
      if (a.task.job == 0) {
        EXPECT_EQ(a.node, 0);
      } else {
        nodes.push_back(a.node);
      }
    }
    return nodes;
  };
  using V = std::vector<engine::NodeIndex>;
  EXPECT_EQ(place("TaskByTask", 4, 0.3), (V{1, 2, 3, 4}));
  EXPECT_EQ(place("Consolidate", 4, 0.3), (V{2, 3, 2, 3}));
  EXPECT_EQ(place("Consolidate", 2, 0.3), (V{1, 1}));
  EXPECT_EQ(place("Consolidate", 6, 0.3), (V{1, 2, 3, 4, 0, 1}));
  EXPECT_EQ(place("{name: Consolidate, args: {otherwise: wait}}", 6, 0.3), V{});
  EXPECT_EQ(place("{name: Consolidate, args: {minLocalitySensitivity: 0.1}}", 4, 0.05),
            (V{1, 2, 3, 4}));
  EXPECT_EQ(place("{name: Consolidate, args: {minLocalitySensitivity: 0.1}}", 4, 0.1),
            (V{2, 3, 2, 3}));
}

// Arguments: the key, the range of minLocalitySensitivity, unknown ones.
TEST(TopologyScorersTest, ArgumentsAreCheckedAndNamed) {
  const auto error = [](const std::string& yaml) {
    auto spec = config::ParseProfile(yaml, "p.yaml");
    EXPECT_TRUE(spec.has_value()) << spec.error().message;
    auto built = BuildProfile(*spec);
    return built ? std::string("built") : built.error().message;
  };
  EXPECT_EQ(error("name: p\nscorers: [{name: TopologySpread, args: {topologyKey: "
                  "topology.kubernetes.io/zone}}]\n"),
            "built");
  EXPECT_EQ(error("name: p\nscorers: [{name: TopologyPack, args: {topologyKey: [a]}}]\n"),
            "p.yaml: scorers[0].args.topologyKey: expected a node label key (a non-empty "
            "string), got 'a non-scalar'");
  EXPECT_EQ(error("name: p\nscorers: [{name: TopologyPack, args: {minLocalitySensitivity: 2}}]\n"),
            "p.yaml: scorers[0].args.minLocalitySensitivity: expected a number in 0..1, got '2'");
  EXPECT_EQ(error("name: p\npacker: {name: Consolidate, args: {otherwise: later}}\n"),
            "p.yaml: packer.args.otherwise: expected spread or wait, got 'later'");
  EXPECT_EQ(error("name: p\npacker: {name: Consolidate, args: {topologyKey: dlsched.io/rack, "
                  "minLocalitySensitivity: 0.2, otherwise: spread}}\n"),
            "built");
  EXPECT_EQ(
      error("name: p\nscorers: [{name: TopologySpread, args: {minLocalitySensitivity: 0}}]\n"),
      "p.yaml: scorers[0].args.minLocalitySensitivity: unknown argument (expected one of: "
      "topologyKey)");
}

}  // namespace
}  // namespace dlsched::policy
