// Unit tests of the deadline unit (deadline.h; docs/writing-a-policy.md):
// each piece on its own, then one cycle of examples/profile-deadline.yaml,
// every number worked out by hand in the comments.
//
// The worked example (examples/workload-deadline.yaml on
// examples/cluster-2x4gpu.yaml): two nodes of 4 GPUs; four jobs arrive at
// 0 in this order, each worker 1 GPU, throughput f(1) = 1, f(2) = 1.8,
// f(3) = 2.4, f(4) = 2.8 steps/s, times 0.7 when a job spans two nodes:
//   sweep   no deadline, 4 workers (min 4, max 4), 1400 steps: 500 s at 4
//   demo-a  deadline 600, replicas 4 (min 1, max 4), 900 steps
//   demo-b  the same
//   demo-c  the same
// A demo takes 900 / 2.8 = 321.4 s at 4 workers, 900 / 1.8 = 500 s at 2,
// 900 s at 1; at 2 workers on two nodes 900 / (1.8 x 0.7) = 714.3 s.
//
// EarliestDeadline: keys demo-a/b/c 0 + 600 = 600, sweep none (kNever):
//   demo-a, demo-b, demo-c (arrival ties: file order), then sweep.
// DeadlineFit (headroom 1.1): budget 600 / 1.1 = 545.5 s; 1 worker 900 s
//   is over, 2 workers 500 s fit: each demo starts with 2. sweep: no
//   deadline, its replicas 4.
// Placement, LeastAllocated on GPUs (100 x free after / 4) + KeepTogether,
// weights 1, ties to the lowest node:
//   demo-a w0: both empty, 75 = 75 -> node-0. w1: node-0 100 + 50 = 150,
//              node-1 0 + 75 -> node-0.
//   demo-b w0: node-0 25, node-1 75 -> node-1. w1: node-1 150 > node-0 25
//              -> node-1.
//   demo-c w0: node-0 25 = node-1 25 -> node-0. w1: node-0 100 + 0 = 100,
//              node-1 0 + 25 -> node-0 (now full).
//   sweep: 4 workers, 2 GPUs free (node-1): waits.
// So every demo runs on one node at 1.8 steps/s and completes at 500 s,
// within its deadline; sweep starts at 500 on an empty cluster, all 4 on
// node-0, and completes at 1000 s. deadline_compare_test.cc runs this
// through `dlsched compare` beside gang-binpack and a variant without
// each piece.
#include "dlsched/policy/deadline/deadline.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dlsched/engine/engine.h"
#include "dlsched/engine/placement.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/policy/framework/registry.h"

namespace dlsched::policy {
namespace {

using engine::ClusterState;
using engine::JobIndex;

// A job of the worked example: 1-GPU workers in [min, max] starting with
// `replicas`, the example's throughput table.
core::JobSpec Demo(std::string name, std::optional<core::Time> deadline, int replicas, int min,
                   int max, double steps) {
  core::JobSpec j = engine::testing::Job(std::move(name), 0, 0, replicas, min, max);
  j.deadline = deadline;
  j.total_steps = steps;
  j.throughput.steps_per_s = {{1, 1.0}, {2, 1.8}, {3, 2.4}, {4, 2.8}};
  j.throughput.locality_sensitivity = 0.3;
  return j;
}

// The jobs of the worked example, in the workload's order.
std::deque<core::JobSpec> ExampleJobs() {
  std::deque<core::JobSpec> jobs;
  jobs.push_back(Demo("sweep", std::nullopt, 4, 4, 4, 1400));
  for (const char* name : {"demo-a", "demo-b", "demo-c"}) {
    jobs.push_back(Demo(name, 600, 4, 1, 4, 900));
  }
  return jobs;
}

// `specs` added to `state`, each Waiting since its arrival.
void AddWaiting(ClusterState& state, const std::deque<core::JobSpec>& specs) {
  for (const core::JobSpec& s : specs) {
    const JobIndex j = state.AddJob(&s, s.submit_time);
    state.SetPhase(j, core::JobPhase::kWaiting, s.submit_time);
  }
}

// The names of `state`'s pending jobs in the order `order` serves them.
std::vector<std::string> Served(ClusterState& state, core::Time default_deadline, core::Time now) {
  engine::Profile profile;
  profile.order = std::make_unique<EarliestDeadlineOrder>(default_deadline);
  engine::Session session(state);
  engine::CycleState plan;
  engine::PodQueue pods_ctx;
  engine::Memos memos_ctx;
  engine::CycleContext ctx{session, plan, pods_ctx, memos_ctx, profile, now};
  std::vector<JobIndex> pending;
  state.PendingJobs(&pending);
  engine::OrderJobs(ctx, &pending);
  std::vector<std::string> names;
  for (JobIndex j : pending) names.push_back(state.Job(j).spec->name);
  return names;
}

// Arrivals and deadlines (absolute = arrival + deadline):
//   a  0    none          b  10   900 -> 910
//   c  20   300 -> 320    d  30   none
// Without a default: c (320), b (910), then a and d by arrival.
// defaultDeadline 500: a 500, d 530 -> c (320), a, d, b (910).
TEST(DeadlineTest, EarliestDeadlineServesTheNearestDeadlineFirst) {
  std::deque<core::JobSpec> specs;
  specs.push_back(Demo("a", std::nullopt, 1, 1, 1, 100));
  specs.push_back(Demo("b", 900, 1, 1, 1, 100));
  specs.push_back(Demo("c", 300, 1, 1, 1, 100));
  specs.push_back(Demo("d", std::nullopt, 1, 1, 1, 100));
  for (int i = 0; i < 4; ++i) specs[i].submit_time = 10 * i;
  const core::ClusterSpec cluster = engine::testing::Nodes(1, 8, 32, 4);
  ClusterState state(cluster);
  AddWaiting(state, specs);
  using Names = std::vector<std::string>;
  EXPECT_EQ(Served(state, 0, 40), (Names{"c", "b", "a", "d"}));
  EXPECT_EQ(Served(state, 500, 40), (Names{"c", "a", "d", "b"}));
  // The keys do not move with time (StaticKeys).
  EXPECT_EQ(Served(state, 0, 1e6), (Names{"c", "b", "a", "d"}));
}

// 900 steps, deadline 600, f as in the worked example:
//   headroom 1     budget 600: 1 worker 900 s > 600, 2 workers 500 s -> 2
//   headroom 1.25  budget 480: 2 -> 500 > 480, 3 -> 375 s -> 3
//   headroom 2     budget 300: 4 -> 321.4 > 300, no size fits -> replicas
//   launchDelay 200, headroom 1: budget 400 -> 3 (375 s)
//   450 steps done, headroom 1: 450 left, 1 worker 450 s -> 1
//   no deadline -> replicas
TEST(DeadlineTest, DeadlineFitStartsWithTheFewestWorkersThatMeetTheDeadline) {
  std::deque<core::JobSpec> specs;
  specs.push_back(Demo("plain", 600, 3, 1, 4, 900));
  specs.push_back(Demo("slow-launch", 600, 3, 1, 4, 900));
  specs.back().launch_delay = 200;
  specs.push_back(Demo("half-done", 600, 3, 1, 4, 900));
  specs.push_back(Demo("no-deadline", std::nullopt, 3, 1, 4, 900));
  const core::ClusterSpec cluster = engine::testing::Nodes(1, 8, 32, 4);
  ClusterState state(cluster);
  AddWaiting(state, specs);
  state.MutableJob(2).steps_done = 450;
  EXPECT_EQ(DeadlineFitSizer(1).StartWorkers(state, 0), 2);
  EXPECT_EQ(DeadlineFitSizer(1.25).StartWorkers(state, 0), 3);
  EXPECT_EQ(DeadlineFitSizer(2).StartWorkers(state, 0), 3);  // replicas
  EXPECT_EQ(DeadlineFitSizer(1).StartWorkers(state, 1), 3);
  EXPECT_EQ(DeadlineFitSizer(1).StartWorkers(state, 2), 1);
  EXPECT_EQ(DeadlineFitSizer(1).StartWorkers(state, 3), 3);
}

// One job of 4 workers on three nodes, workers 0 and 1 on node-0, worker
// 2 on node-1. Scoring worker 3 (not placed): node-0 100 x 2/3 = 66
// (integer division), node-1 33, node-2 0. Scoring worker 0 (placed, its
// own slot skipped): 1 of the other 2 on each of node-0 and node-1 -> 50,
// 50, 0. Before any task is placed: 0 everywhere.
TEST(DeadlineTest, KeepTogetherScoresTheShareOfTheJobOnTheNode) {
  std::deque<core::JobSpec> specs;
  specs.push_back(Demo("j", std::nullopt, 4, 4, 4, 100));
  const core::ClusterSpec cluster = engine::testing::Nodes(3, 8, 32, 4);
  ClusterState state(cluster);
  AddWaiting(state, specs);
  const KeepTogetherScorer scorer;
  const auto worker = [](int i) { return engine::TaskRef{0, core::Role::kWorker, i}; };
  EXPECT_EQ(scorer.Score(state, worker(0), 0), 0);
  EXPECT_EQ(scorer.Score(state, worker(0), 1), 0);
  engine::Session session(state);
  session.Assign(worker(0), 0);
  session.Assign(worker(1), 0);
  session.Assign(worker(2), 1);
  EXPECT_EQ(scorer.Score(state, worker(3), 0), 66);
  EXPECT_EQ(scorer.Score(state, worker(3), 1), 33);
  EXPECT_EQ(scorer.Score(state, worker(3), 2), 0);
  EXPECT_EQ(scorer.Score(state, worker(0), 0), 50);
  EXPECT_EQ(scorer.Score(state, worker(0), 1), 50);
  EXPECT_EQ(scorer.Score(state, worker(0), 2), 0);
}

// The first cycle of the worked example (top of the file) under
// examples/profile-deadline.yaml: the demos start with 2 workers each,
// demo-a and demo-c on node-0, demo-b on node-1; sweep waits.
TEST(DeadlineTest, TheWorkedExamplesFirstCycle) {
  auto spec = ResolveProfile(std::string(DLSCHED_SOURCE_DIR) + "/examples/profile-deadline.yaml");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  auto profile = BuildProfile(*spec);
  ASSERT_TRUE(profile.has_value()) << profile.error().message;
  const engine::Engine engine(std::move(*profile));
  const std::deque<core::JobSpec> specs = ExampleJobs();
  const core::ClusterSpec cluster = engine::testing::Nodes(2, 32, 128, 4);
  ClusterState state(cluster);
  AddWaiting(state, specs);
  engine::PodQueue pods;
  engine::Memos memos;
  const engine::Plan plan = engine.Cycle(state, pods, memos, 0);
  std::map<std::string, std::vector<int>> nodes;  // job -> node of each bound task
  std::map<std::string, int> started;             // job -> workers
  std::vector<std::string> waiting;
  for (const engine::Action& a : plan.actions) {
    const std::string& name = state.Job(a.task.job).spec->name;
    if (a.kind == engine::ActionKind::kBind) nodes[name].push_back(a.node);
    if (a.kind == engine::ActionKind::kStart) started[name] = a.workers;
    if (a.kind == engine::ActionKind::kWait) waiting.push_back(name);
  }
  EXPECT_EQ(started, (std::map<std::string, int>{{"demo-a", 2}, {"demo-b", 2}, {"demo-c", 2}}));
  EXPECT_EQ(nodes, (std::map<std::string, std::vector<int>>{
                       {"demo-a", {0, 0}}, {"demo-b", {1, 1}}, {"demo-c", {0, 0}}}));
  EXPECT_EQ(waiting, std::vector<std::string>{"sweep"});
}

// Arguments are read with ArgReader: defaults, ranges, unknown keys.
TEST(DeadlineTest, ArgumentsAreCheckedAndNamed) {
  const auto error = [](const std::string& yaml) {
    auto spec = config::ParseProfile(yaml, "p.yaml");
    EXPECT_TRUE(spec.has_value()) << spec.error().message;
    auto built = BuildProfile(*spec);
    return built ? std::string("built") : built.error().message;
  };
  EXPECT_EQ(error("name: p\norder: EarliestDeadline\nsizer: DeadlineFit\n"
                  "scorers: [{name: KeepTogether}]\n"),
            "built");
  EXPECT_EQ(error("name: p\nsizer: {name: DeadlineFit, args: {headroom: 0.5}}\n"),
            "p.yaml: sizer.args.headroom: expected a number in 1..100, got '0.5'");
  EXPECT_EQ(error("name: p\norder: {name: EarliestDeadline, args: {default: 60}}\n"),
            "p.yaml: order.args.default: unknown argument (expected one of: defaultDeadline)");
  EXPECT_EQ(error("name: p\nscorers: [{name: KeepTogether, args: {weight: 2}}]\n"),
            "p.yaml: scorers[0].args.weight: this plugin takes no arguments");
}

}  // namespace
}  // namespace dlsched::policy
