// How SelectNode searches the nodes: kube-scheduler's percentageOfNodesToScore
// (how many feasible nodes are enough, where the next search starts), the
// scores kept for the next task of the same gang (which must pick exactly
// the node a full scan picks), and NeverFits remembered until a node
// changes.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/engine/engine.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/policy/framework/test_util.h"

namespace dlsched::policy {
namespace {

using core::Role;
using engine::ClusterState;
using engine::JobIndex;
using engine::NodeIndex;
using engine::TaskRef;

using testing::MakeProfile;

engine::Profile Builtin(const std::string& name, int percentage = 100) {
  return dlsched::testing::BuiltinProfile(
      name, [&](config::ProfileSpec& spec) { spec.percentage_of_nodes_to_score = percentage; });
}

// kube-scheduler's numFeasibleNodesToFind, worked by hand:
//   99 nodes, any percentage: all 99 (below minFeasibleNodesToFind);
//   100 nodes, adaptive: 50 - 100/125 = 50% -> 50, raised to 100;
//   1000 nodes, adaptive: 50 - 8 = 42% -> 420;
//   5000 nodes, adaptive: 50 - 40 = 10% -> 500 (the docs' "10% at 5000");
//   10000 nodes, adaptive: 50 - 80 < 5, so 5% -> 500;
//   1000 nodes at 30%: 300; at 5%: 50, raised to 100; at 100%: all.
TEST(NodesToScoreTest, IsKubeSchedulersNumFeasibleNodesToFind) {
  EXPECT_EQ(engine::NodesToScore(0, 99), 99);
  EXPECT_EQ(engine::NodesToScore(1, 99), 99);
  EXPECT_EQ(engine::NodesToScore(0, 100), 100);
  EXPECT_EQ(engine::NodesToScore(0, 1000), 420);
  EXPECT_EQ(engine::NodesToScore(0, 5000), 500);
  EXPECT_EQ(engine::NodesToScore(0, 10000), 500);
  EXPECT_EQ(engine::NodesToScore(30, 1000), 300);
  EXPECT_EQ(engine::NodesToScore(5, 1000), 100);
  EXPECT_EQ(engine::NodesToScore(100, 1000), 1000);
}

TEST(NodesToScoreTest, TheProfileKeyIsValidated) {
  EXPECT_EQ(MakeProfile("name: p\npercentageOfNodesToScore: 0\n").percentage_of_nodes_to_score, 0);
  EXPECT_EQ(MakeProfile("name: p\n").percentage_of_nodes_to_score, 100);
  auto bad = config::ParseProfile("name: p\npercentageOfNodesToScore: 101\n", "p.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("p.yaml"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("percentageOfNodesToScore"), std::string::npos)
      << bad.error().message;
}

// `nodes` nodes of 8 cores, 64 GiB and 8 GPUs, empty; jobs of one-GPU workers.
struct Cluster {
  explicit Cluster(int nodes) : spec(engine::testing::Nodes(nodes, 8, 64, 8)), state(spec) {}
  JobIndex Add(int workers, int64_t gpus = 1) {
    specs.push_back(engine::testing::Job("j" + std::to_string(specs.size()), 0, 0, workers, workers,
                                         workers, gpus));
    const JobIndex j = state.AddJob(&specs.back(), 0);
    state.SetPhase(j, core::JobPhase::kWaiting, 0);
    return j;
  }
  core::ClusterSpec spec;
  std::deque<core::JobSpec> specs;
  ClusterState state;
};

// Gangs of one shape (per role: tasks, request, no node constraints) share
// a "fits the empty cluster" until a node or a hold changes; a "never" is
// worded for each job, and a job with node constraints is asked alone.
TEST(NodeSearchTest, AYesToNeverFitsIsSharedByGangsOfOneShape) {
  Cluster c(3);
  const JobIndex a = c.Add(1, 9);  // 9 GPUs, nodes have 8: never fits
  const JobIndex b = c.Add(1, 9);
  const JobIndex pinned = c.Add(1, 9);
  c.specs[static_cast<size_t>(pinned)].role(Role::kWorker).constraints.node_selector["zone"] = "a";
  const engine::Profile p = Builtin("gang-binpack");
  engine::CycleState decisions;
  engine::Session session(c.state);
  engine::PodQueue pods;
  engine::Memos memos;
  engine::CycleContext ctx{session, decisions, pods, memos, p, 0};
  engine::Memos::GangShape shape;
  shape.exact = true;
  shape.count[static_cast<int>(Role::kWorker)] = 1;
  shape.request[static_cast<int>(Role::kWorker)] = c.specs[0].role(Role::kWorker).resources;
  shape.scoring[static_cast<int>(Role::kWorker)] =
      c.state.Job(a).scoring_request[static_cast<int>(Role::kWorker)];
  const auto never = engine::NeverFits(ctx, a, 1, *p.packer, true);
  ASSERT_TRUE(never.has_value());
  EXPECT_FALSE(memos.FitsEmpty(c.state, shape));  // a "never" is not shared
  // A planted yes shows the shared answer is what answers b, not pinned.
  memos.NoteFitsEmpty(c.state, shape);
  EXPECT_EQ(engine::NeverFits(ctx, b, 1, *p.packer, true), std::nullopt);
  EXPECT_TRUE(engine::NeverFits(ctx, pinned, 1, *p.packer, true).has_value());
  // Another question (not exact, or 2 workers) is another shape.
  memos.Job(b).never_fits = {};
  EXPECT_EQ(engine::NeverFits(ctx, b, 1, *p.packer, false), never);
  // A node that changes voids it.
  memos.Job(b).never_fits = {};
  memos.NoteFitsEmpty(c.state, shape);
  core::NodeSpec relabelled = c.state.NodeSpecOf(0);
  relabelled.labels["zone"] = "b";
  c.state.UpdateNode(0, relabelled);
  EXPECT_FALSE(memos.FitsEmpty(c.state, shape));
  EXPECT_EQ(engine::NeverFits(ctx, b, 1, *p.packer, true), never);
  // A real yes is shared: a gang of 8 GPUs fits a node.
  const JobIndex small = c.Add(1, 8);
  EXPECT_EQ(engine::NeverFits(ctx, small, 1, *p.packer, true), std::nullopt);
  shape.request[static_cast<int>(Role::kWorker)] = c.specs.back().role(Role::kWorker).resources;
  shape.scoring[static_cast<int>(Role::kWorker)] =
      c.state.Job(small).scoring_request[static_cast<int>(Role::kWorker)];
  EXPECT_TRUE(memos.FitsEmpty(c.state, shape));
}

// 200 empty nodes and 30%: 200 x 30% = 60, raised to 100. Every node is
// feasible and scores the same (LeastAllocated on empty nodes), so the
// first node looked at wins: node 0, then node 100 (the search stopped
// after 100 nodes), then node 0 again. The trace lists the 100 scored
// nodes and says why no more.
TEST(NodeSearchTest, SamplingScoresEnoughNodesFromWhereTheLastSearchStopped) {
  Cluster c(200);
  const JobIndex j = c.Add(3);
  const engine::Profile p = MakeProfile("name: p\npercentageOfNodesToScore: 30\n");
  engine::CycleState decisions;
  engine::Session session(c.state);
  engine::PodQueue pods;
  engine::Memos memos;
  engine::CycleContext ctx{session, decisions, pods, memos, p, 0};
  EXPECT_EQ(engine::SelectNode(ctx, TaskRef{j, Role::kWorker, 0}, nullptr), 0);
  EXPECT_EQ(memos.next_start_node, 100);
  engine::TaskTrace trace;
  EXPECT_EQ(engine::SelectNode(ctx, TaskRef{j, Role::kWorker, 1}, &trace), 100);
  EXPECT_EQ(trace.candidates.size(), 100u);
  EXPECT_EQ(trace.chosen, 100);
  EXPECT_EQ(trace.note,
            "scored the first 100 feasible nodes of 200 from node-100 on "
            "(percentageOfNodesToScore: 30%)");
  EXPECT_EQ(memos.next_start_node, 0);  // 100 + 100 wraps
  EXPECT_EQ(engine::SelectNode(ctx, TaskRef{j, Role::kWorker, 2}, nullptr), 0);
  EXPECT_EQ(memos.next_start_node, 100);

  // When no more nodes have the GPUs than are to be scored, every
  // feasible node is scored and the next search starts where it did:
  // nodes 0..149 full, 50 candidates < 100, the lowest of them wins.
  const JobIndex filler = c.Add(150, 8);
  for (int w = 0; w < 150; ++w) c.state.PlaceTask(TaskRef{filler, Role::kWorker, w}, w);
  const JobIndex late = c.Add(1);
  EXPECT_EQ(engine::SelectNode(ctx, TaskRef{late, Role::kWorker, 0}, nullptr), 150);
  EXPECT_EQ(memos.next_start_node, 100);
}

// The scores kept between the tasks of one gang (all scorers node-local)
// must pick the node a full scan picks, through placements, evictions and
// rollbacks: 40 nodes of mixed size, part filled at random, a gang with a
// PS and 24 workers under gang-binpack (RequestedToCapacityRatio). The
// traced call scans every node afresh; the untraced one uses what is kept.
TEST(NodeSearchTest, KeptScoresPickWhatAFullScanPicks) {
  std::mt19937 rng(7);
  core::ClusterSpec spec;
  for (int i = 0; i < 40; ++i) {
    core::NodeSpec n;
    n.name = "n" + std::to_string(i);
    n.allocatable[core::kCpu] = (8 + 8 * static_cast<int64_t>(rng() % 3)) * 1000;
    n.allocatable[core::kMemory] = int64_t{64} << 30;
    n.allocatable[core::kGpu] = rng() % 2 == 0 ? 4 : 8;
    spec.nodes.push_back(n);
  }
  ClusterState state(spec);
  std::deque<core::JobSpec> specs;
  specs.push_back(engine::testing::Job("filler", 0, 0, 80, 80, 80, 1));
  const JobIndex filler = state.AddJob(&specs.back(), 0);
  for (int w = 0; w < 80; ++w) {
    const NodeIndex n = static_cast<NodeIndex>(rng() % 40);
    if (TaskRef t{filler, Role::kWorker, w}; state.Request(t).FitsIn(state.Free(n))) {
      state.PlaceTask(t, n);
    }
  }
  specs.push_back(engine::testing::Job("gang", 0, 1, 24, 24, 24, 1));
  const JobIndex gang = state.AddJob(&specs.back(), 0);
  state.SetPhase(gang, core::JobPhase::kWaiting, 0);
  const engine::Profile p = Builtin("gang-binpack");
  engine::CycleState decisions;
  engine::Session session(state);
  engine::PodQueue pods;
  engine::Memos memos;
  engine::CycleContext ctx{session, decisions, pods, memos, p, 0};
  auto place = [&](TaskRef t) {
    engine::TaskTrace trace;
    const NodeIndex full = engine::SelectNode(ctx, t, &trace);
    const NodeIndex kept = engine::SelectNode(ctx, t, nullptr);
    EXPECT_EQ(kept, full) << core::RoleName(t.role) << "[" << t.index << "]";
    if (kept != engine::kNoNode) session.Assign(t, kept);
  };
  place(TaskRef{gang, Role::kPS, 0});
  engine::Session::Mark mark = session.GetMark();
  int evicted = 0;
  for (int round = 0; round < 3; ++round) {
    for (int w = 0; w < 24; ++w) {
      if (state.Job(gang).NodeOf(Role::kWorker, w) != engine::kNoNode) continue;
      place(TaskRef{gang, Role::kWorker, w});
      if (w % 7 == 3) {  // another job's task leaves: room appears elsewhere
        for (; evicted < 80; ++evicted) {
          const TaskRef f{filler, Role::kWorker, evicted};
          if (state.Job(filler).NodeOf(Role::kWorker, evicted) != engine::kNoNode) {
            session.Evict(f);
            break;
          }
        }
      }
    }
    session.RollbackTo(mark);  // undone steps change their nodes back
    mark = session.GetMark();
  }
  EXPECT_GT(evicted, 0);
}

// The kept scores carry from one engine cycle to the next (the journal of
// touched nodes brings them up to date; a node change rebuilds them), so
// every plan must equal the plan a store of memos made afresh gives: 1000
// cycles of gangs of 1-4 one-GPU workers in three cpu shapes arriving and
// finishing on 12 identical nodes (totals tie, the lowest index must
// win), the journal outgrowing its bound several times, a node cordoned
// and uncordoned now and then; under both built-in profiles whose
// scorers are node-local.
TEST(NodeSearchTest, KeptScoresCarryOverCyclesAndPickWhatAFreshStorePicks) {
  for (const char* name : {"fifo", "gang-binpack"}) {
    const core::ClusterSpec cluster = dlsched::testing::Nodes(12, 16, 64, 8);
    ClusterState kept(cluster);
    ClusterState fresh(cluster);
    std::deque<core::JobSpec> specs;
    const engine::Engine engine = dlsched::testing::MakeEngine(name);
    engine::PodQueue kept_pods;
    engine::PodQueue fresh_pods;
    engine::Memos memos;
    std::mt19937 rng(11);
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    std::vector<JobIndex> running;
    int started = 0;
    int trims = 0;  // cycles that began by cutting the journal
    auto binds = [](const engine::Plan& plan) {
      std::vector<std::pair<int64_t, NodeIndex>> out;
      for (const engine::Action& a : plan.actions) {
        if (a.kind != engine::ActionKind::kBind) continue;
        out.emplace_back(
            int64_t{a.task.job} * 100 + static_cast<int>(a.task.role) * 10 + a.task.index, a.node);
      }
      return out;
    };
    for (int cycle = 0; cycle < 1000; ++cycle) {
      for (int k = pick(3); k > 0; --k) {
        const int workers = 1 + pick(4);
        specs.push_back(dlsched::testing::GpuJob("j" + std::to_string(specs.size()), cycle, workers,
                                                 workers, 1000 * (1 + pick(3)), 4, 100));
        for (ClusterState* s : {&kept, &fresh}) {
          const JobIndex j = s->AddJob(&specs.back(), cycle);
          s->SetPhase(j, core::JobPhase::kWaiting, cycle);
        }
      }
      for (int k = pick(3); k > 0 && !running.empty(); --k) {
        const size_t i = static_cast<size_t>(pick(static_cast<int>(running.size())));
        const JobIndex j = running[i];
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        for (ClusterState* s : {&kept, &fresh}) {
          for (int w = 0; w < s->Job(j).spec->role(Role::kWorker).max_replicas; ++w) {
            if (s->Job(j).NodeOf(Role::kWorker, w) != engine::kNoNode) {
              s->RemoveTask(TaskRef{j, Role::kWorker, w});
            }
          }
          s->SetPhase(j, core::JobPhase::kCompleted, cycle);
        }
      }
      if (cycle % 250 == 125) {
        const NodeIndex n = pick(12);
        const bool on = !kept.Schedulable(n);
        kept.SetSchedulable(n, on);
        fresh.SetSchedulable(n, on);
      }
      engine::Memos once;
      const uint64_t generation = kept.TouchedGeneration();
      const engine::Plan a = engine.Cycle(kept, kept_pods, memos, cycle);
      if (kept.TouchedGeneration() != generation) ++trims;
      const engine::Plan b = engine.Cycle(fresh, fresh_pods, once, cycle);
      ASSERT_EQ(binds(a), binds(b)) << name << ", cycle " << cycle;
      engine::ApplyPlacements(kept, a);
      engine::ApplyPlacements(fresh, b);
      for (const engine::Action& act : a.actions) {
        if (act.kind != engine::ActionKind::kStart) continue;
        for (ClusterState* s : {&kept, &fresh}) {
          s->SetPhase(act.task.job, core::JobPhase::kLaunching, cycle);
        }
        running.push_back(act.task.job);
        ++started;
      }
    }
    EXPECT_GT(started, 300) << name;
    EXPECT_GE(trims, 3) << name << " " << trims;
  }
}

// Whether a gang could ever fit does not change as tasks come and go; it
// is remembered until a node changes (or, for the exact check, a pod
// outside every job's placement comes or goes).
TEST(NodeSearchTest, NeverFitsIsRememberedUntilANodeChanges) {
  Cluster c(3);
  const JobIndex j = c.Add(1, 9);  // 9 GPUs, nodes have 8
  const engine::Profile p = Builtin("gang-binpack");
  engine::CycleState decisions;
  engine::Session session(c.state);
  engine::PodQueue pods;
  engine::Memos memos;
  engine::CycleContext ctx{session, decisions, pods, memos, p, 0};
  const auto first = engine::NeverFits(ctx, j, 1, *p.packer, false);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(memos.Job(j).never_fits.node_epoch, c.state.NodeEpoch());
  // A planted answer shows the memo is what answers.
  memos.Job(j).never_fits.never = "remembered";
  const JobIndex other = c.Add(1);
  c.state.PlaceTask(TaskRef{other, Role::kWorker, 0}, 0);
  c.state.RemoveTask(TaskRef{other, Role::kWorker, 0});
  EXPECT_EQ(engine::NeverFits(ctx, j, 1, *p.packer, false), "remembered");
  // A foreign pod: the plain check still holds; the exact one (another
  // question, so asked afresh) is remembered until such a pod goes.
  c.state.AddForeignTask("ns/pod", 1, core::Resources{}, core::Resources{});
  EXPECT_EQ(engine::NeverFits(ctx, j, 1, *p.packer, false), "remembered");
  EXPECT_EQ(engine::NeverFits(ctx, j, 1, *p.packer, true), first);
  memos.Job(j).never_fits.never = "remembered";
  EXPECT_EQ(engine::NeverFits(ctx, j, 1, *p.packer, true), "remembered");
  c.state.RemoveForeignTask("ns/pod");
  EXPECT_EQ(engine::NeverFits(ctx, j, 1, *p.packer, true), first);
  // Another gang size is another question.
  memos.Job(j).never_fits.never = "remembered";
  EXPECT_NE(engine::NeverFits(ctx, j, 2, *p.packer, true), "remembered");
  // A pod that comes and goes (a completion's releasing pods) leaves no
  // hold: an exact answer given with none stands.
  ASSERT_TRUE(memos.Job(j).never_fits.no_holds);
  memos.Job(j).never_fits.never = "remembered";
  c.state.AddForeignTask("ns/pod2", 1, core::Resources{}, core::Resources{});
  c.state.RemoveForeignTask("ns/pod2");
  EXPECT_EQ(engine::NeverFits(ctx, j, 2, *p.packer, true), "remembered");
  // A node grows to 16 GPUs: now it fits.
  memos.Job(j).never_fits.never = "remembered";
  core::NodeSpec bigger = c.state.NodeSpecOf(2);
  bigger.allocatable[core::kGpu] = 16;
  c.state.UpdateNode(2, bigger);
  EXPECT_EQ(engine::NeverFits(ctx, j, 1, *p.packer, false), std::nullopt);
}

}  // namespace
}  // namespace dlsched::policy
