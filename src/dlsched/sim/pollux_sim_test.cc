// Tiresias as Pollux's simulator ports it (profile pollux-tiresias, the
// baseline of the Pollux paper): hand-worked scenarios, and Pollux's own
// simulator's per-job completion times on its workloads
// (testing/pollux/tiresias-workload-N.csv; testing/pollux/README.md says
// how they were produced).

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "dlsched/config/trace.h"
#include "dlsched/engine/test_util.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using testing::EventDetail;
using testing::MakeEngine;
using testing::Record;

// Two nodes of 4 GPUs (and room for anything else).
core::ClusterSpec TwoNodes() { return engine::testing::Nodes(2, 64, 256, 4); }

// `gpus` one-GPU workers that run `duration` seconds once launched, paying
// Pollux's 30 s restart delay at every (re)start.
core::JobSpec PolluxJob(std::string name, double submit, int gpus, double duration) {
  core::JobSpec j = dlsched::testing::TraceJob(std::move(name), submit, gpus, duration);
  j.launch_delay = 30;
  return j;
}

SimResult RunJobs(const std::string& profile, const core::ClusterSpec& cluster,
                  std::vector<core::JobSpec> jobs) {
  config::WorkloadSpec w;
  w.source = "test";
  w.jobs = std::move(jobs);
  const engine::Engine engine = MakeEngine(profile);
  SimOptions o;
  o.check_invariants = true;
  o.timeline = true;
  auto r = Simulate(cluster, w, engine, o);
  EXPECT_TRUE(r) << r.error().message;
  return std::move(*r);
}

// (first start, completion, preemptions) of a job.
std::tuple<double, double, int> Times(const SimResult& r, const std::string& name) {
  const metrics::JobRecord& j = Record(r, name);
  return {j.first_start, j.completion, j.preemptions};
}

// Two nodes of 4 GPUs. a: 4 GPUs, 1000 s, at 10; e: 8 GPUs, 500 s, at 100;
// f: 2 GPUs, 2000 s, at 110. Decisions come at 60, 120, 180, ...
// 60: a starts on node-0 (both nodes have 4 free: the lowest index), launches
// until 90 and ends at 1090. 120: queue 0 holds a, e, f in the order they
// arrived; a takes 4 of the 8 GPUs, e (8) does not fit and is skipped, f
// takes 2, on node-1 (4 free against none on node-0). a ends at 1090, but nothing
// happens before the next round: 1140. Then e, which entered the queue
// before f, goes first: it takes all 8 GPUs and f, running, is preempted
// (it ran 150..1140, 1010 s left). e runs 1140 + 30 .. 1670; at 1680 f
// starts again on node-0 (a tie, the lowest index) and ends at 1680 + 30 +
// 1010 = 2720.
TEST(PolluxTiresiasTest, RoundsEveryMinuteQueueByEntryMostFreeNodesFirst) {
  const SimResult r = RunJobs(
      "pollux-tiresias", TwoNodes(),
      {PolluxJob("a", 10, 4, 1000), PolluxJob("e", 100, 8, 500), PolluxJob("f", 110, 2, 2000)});
  EXPECT_EQ(Times(r, "a"), std::make_tuple(60.0, 1090.0, 0));
  EXPECT_EQ(Times(r, "e"), std::make_tuple(1140.0, 1670.0, 0));
  EXPECT_EQ(Times(r, "f"), std::make_tuple(120.0, 2720.0, 1));
  EXPECT_EQ(EventDetail(r, "a", "started"), "started with 4 workers on node-0 (4)");
  EXPECT_EQ(EventDetail(r, "f", "started"), "started with 2 workers on node-1 (2)");
  EXPECT_EQ(EventDetail(r, "e", "started"), "started with 8 workers on node-0 (4) node-1 (4)");
  EXPECT_EQ(EventDetail(r, "f", "relaunching"), "started with 2 workers on node-0 (2)");
  EXPECT_EQ(EventDetail(r, "f", "waiting"), "waiting: decisions are made every 60s, next at 120s");
  EXPECT_EQ(EventDetail(r, "f", "preempted"), "preempted by e (ahead of it in the order)");
}

// Two nodes of 4 GPUs. a: 4 GPUs, 20000 s, at 10; d: 8 GPUs, 300 s, at 5000.
// a is placed at 60 and its service counts from then, launch included:
// 4 x (t - 60) GPU-s reaches 57,600 at t = 14460, a round. a drops to
// queue 1; d, in queue 0, takes all 8 GPUs and a is preempted (it trained
// 90..14460, 5630 s left). d runs 14460 + 30 .. 14790; a starts again at
// 14820 and ends at 14820 + 30 + 5630 = 20480. Counting only the seconds
// trained (las), a would reach the threshold at 14490 and drop at the
// round of 14520.
TEST(PolluxTiresiasTest, ServiceCountsFromThePlacementAndDemotesAtARound) {
  const SimResult r = RunJobs("pollux-tiresias", TwoNodes(),
                              {PolluxJob("a", 10, 4, 20000), PolluxJob("d", 5000, 8, 300)});
  EXPECT_EQ(Times(r, "d"), std::make_tuple(14460.0, 14790.0, 0));
  EXPECT_EQ(Times(r, "a"), std::make_tuple(60.0, 20480.0, 1));
  EXPECT_EQ(EventDetail(r, "a", "level"), "queue 1");
}

// A job's speed follows its placement where its throughput lists it. Two
// nodes of 4 GPUs; h1 and h2 (2 GPUs each, 5000 s) and g (4 GPUs, 1000
// steps: 2 steps/s packed on one node, 1 step/s as 2 + 2) arrive at 0..2.
// At 60 h1 goes to node-0 (a tie), h2 to node-1 (4 free against 2), and g, which no
// node can hold whole, takes the 2 free GPUs of node-0 and then of node-1: it runs
// at 1 step/s, 90 .. 1090 (500 s later than packed).
TEST(PolluxTiresiasTest, ThePlacementSetsTheSpeed) {
  core::JobSpec g = PolluxJob("g", 2, 4, 1);
  g.total_steps = 1000;
  g.throughput.steps_per_s = {{4, 2.0}};
  g.throughput.placements = {{{4}, 2.0}, {{2, 2}, 1.0}};
  const SimResult r = RunJobs("pollux-tiresias", TwoNodes(),
                              {PolluxJob("h1", 0, 2, 5000), PolluxJob("h2", 1, 2, 5000), g});
  EXPECT_EQ(EventDetail(r, "h2", "started"), "started with 2 workers on node-1 (2)");
  EXPECT_EQ(EventDetail(r, "g", "started"), "started with 4 workers on node-0 (2) node-1 (2)");
  EXPECT_EQ(Times(r, "g"), std::make_tuple(60.0, 1090.0, 0));
}

// Pollux's simulator's completion times, job name -> (completion, restarts).
std::map<std::string, std::pair<double, int>> PolluxRun(int workload) {
  const std::string file =
      fmt::format("{}/testing/pollux/tiresias-workload-{}.csv", DLSCHED_SOURCE_DIR, workload);
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  std::map<std::string, std::pair<double, int>> out;
  std::string line;
  std::getline(in, line);  // name,submission_time,completion_time,jct,num_restarts
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string name, submit, completion, jct, restarts;
    std::getline(ss, name, ',');
    std::getline(ss, submit, ',');
    std::getline(ss, completion, ',');
    std::getline(ss, jct, ',');
    std::getline(ss, restarts, ',');
    out[name] = {std::stod(completion), std::stoi(restarts)};
  }
  return out;
}

struct WorkloadCase {
  int workload;
  // Jobs known to end more than 1% and 10 s away from Pollux's, and by how
  // much (docs/policies/tiresias.md, "How close").
  std::map<std::string, double> off;
};

class PolluxWorkloadTest : public ::testing::TestWithParam<WorkloadCase> {};

// Every job of the workload ends within 1% or 10 s of its completion in
// Pollux's own simulator, with as many preemptions (Pollux's restarts), and
// the mean JCT is within 1%; the jobs listed in `off` end where the
// documented divergence puts them instead.
TEST_P(PolluxWorkloadTest, EveryJobEndsAsInPolluxsSimulator) {
  const WorkloadCase& c = GetParam();
  config::TraceOptions o;
  o.format = config::TraceFormat::kPollux;
  o.path = fmt::format("{}/data/pollux/workloads/workload-{}.csv", DLSCHED_SOURCE_DIR, c.workload);
  auto trace = config::LoadTrace(o);
  ASSERT_TRUE(trace) << trace.error().message;
  auto cluster =
      config::LoadTiresiasCluster(std::string(DLSCHED_SOURCE_DIR) + "/examples/tiresias-n16g4.csv");
  ASSERT_TRUE(cluster) << cluster.error().message;
  const auto ref = PolluxRun(c.workload);
  ASSERT_EQ(ref.size(), 160u);
  const engine::Engine engine = MakeEngine("pollux-tiresias");
  auto r = Simulate(*cluster, trace->workload, engine, SimOptions{});
  ASSERT_TRUE(r) << r.error().message;
  double sum_ref = 0;
  double sum = 0;
  for (const auto& [name, want] : ref) {
    const metrics::JobRecord& j = Record(*r, name);
    const double jct_ref = want.first - j.submit;
    const double jct = j.completion - j.submit;
    sum_ref += jct_ref;
    sum += jct;
    if (auto it = c.off.find(name); it != c.off.end()) {
      EXPECT_NEAR(jct - jct_ref, it->second, 0.5) << name;
      continue;
    }
    EXPECT_LE(std::abs(jct - jct_ref), std::max(10.0, 0.01 * jct_ref))
        << name << ": " << jct << " s, Pollux " << jct_ref << " s";
    EXPECT_EQ(j.preemptions, want.second) << name;
  }
  EXPECT_LE(std::abs(sum - sum_ref), 0.01 * sum_ref);
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, PolluxWorkloadTest,
    ::testing::Values(WorkloadCase{1, {}}, WorkloadCase{2, {}}, WorkloadCase{3, {}},
                      WorkloadCase{4, {}}, WorkloadCase{5, {}}, WorkloadCase{6, {}},
                      // cifar10-146 ends a second early, at a round, on a
                      // five-node placement interpolated differently.
                      WorkloadCase{
                          7, {{"cifar10-152", -60}, {"cifar10-156", -60}, {"cifar10-158", -60}}},
                      WorkloadCase{8, {}}),
    [](const auto& info) { return fmt::format("workload{}", info.param.workload); });

}  // namespace
}  // namespace dlsched::sim
