// F-scheduling (profile `fsched`) end to end in the simulator: reallocation
// costs, RunningProtected, the minGain rule, and the SPEC section 7
// experiment against static partitioning.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dlsched/metrics/summary.h"
#include "dlsched/policy/registry.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/model_zoo.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using testing::MakeEngine;
using testing::Record;

using core::Role;

// `fsched` with `minGain` and `protectFactor` overridden when >= 0.
engine::Engine FschedEngine(double min_gain = -1, double protect_factor = -1) {
  auto spec = policy::ResolveProfile("fsched");
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  if (min_gain >= 0) spec->sizer.args["minGain"] = min_gain;
  if (protect_factor >= 0) spec->protect_factor = protect_factor;
  auto built = policy::BuildProfile(*spec);
  EXPECT_TRUE(built.has_value()) << built.error().message;
  return engine::Engine(std::move(*built));
}

core::ClusterSpec OneNode(int64_t gpus) {
  core::ClusterSpec c;
  core::NodeSpec node;
  node.name = "gpu-0";
  node.allocatable[core::kCpu] = 16000;
  node.allocatable[core::kMemory] = int64_t{64} << 30;
  node.allocatable[core::kGpu] = gpus;
  c.nodes.push_back(node);
  return c;
}

// No PS; one-GPU workers elastic in [1, 6]; launch 10 s, checkpoint 5 s.
core::JobSpec Elastic(std::string name, double arrival, std::map<int, double> table, double steps) {
  core::JobSpec j;
  j.name = std::move(name);
  j.submit_time = arrival;
  auto& w = j.role(Role::kWorker);
  w.replicas = 1;
  w.min_replicas = 1;
  w.max_replicas = 6;
  w.resources[core::kCpu] = 1000;
  w.resources[core::kMemory] = int64_t{2} << 30;
  w.resources[core::kGpu] = 1;
  j.total_steps = steps;
  j.throughput.steps_per_s = std::move(table);
  j.launch_delay = 10;
  j.checkpoint_delay = 5;
  return j;
}

// f_A = 4, 7, 9 for 1..3 workers, then +0.2 per worker to 9.6 at 6.
// f_B = 3, 5.5, 7.5 for 1..3, then 8, 8.5, 9.
const std::map<int, double> kA = {{1, 4}, {2, 7}, {3, 9}, {6, 9.6}};
const std::map<int, double> kB = {{1, 3}, {2, 5.5}, {3, 7.5}, {6, 9}};

// One node with 6 GPUs; launch 10 s, checkpoint 5 s, protectFactor 3.
//   t=0    A (1854 steps) arrives alone: started at its minimum 1 and grown
//          in the same cycle to all 6 GPUs (no restart: it has not
//          launched). Launching 0..10, RunningProtected 10..40 (3 x 10).
//          Runs at f_A(6) = 9.6: 864 steps by t=100.
//   t=100  B (750 steps) arrives; no GPU is free, admission leaves it
//          waiting. Allocation: step 1 A 1, B 1; then A+1 (+3) over B+1
//          (+2.5); B+1 (+2.5) over A+1 (+2); A+1 and B+1 tie at +2 -> A
//          (earlier); B+1 (+2) over A+1 (+0.2): A 3, B 3, 9 + 7.5 = 16.5
//          steps/s. B had nothing, so it is applied whatever the gain:
//          A checkpoints 100..105 (no progress), relaunches 105..115, is
//          protected 115..145; B launches 100..110, protected 110..140.
//   t=140, 145: protections end; the allocation is the same: no change.
//   t=210  B ends (7.5 x 100 = 750). Alone, A would go back to 6 workers:
//          9.6 - 9 = 0.6 steps/s < minGain 1: no reallocation.
//   t=225  A ends: 864 + 9 x (225 - 115) = 1854.
// With minGain 0.5 A does restart at 210 (checkpoint 210..215, launch
// 215..225) and ends later: it has 864 + 9 x 95 = 1719 steps at 210, the
// last 135 take 135 / 9.6 = 14.0625 s after 225: 239.0625. minGain exists
// for exactly this.
TEST(FschedSimTest, ReallocationChargesCheckpointAndLaunchAndMinGainStopsAPointlessOne) {
  config::WorkloadSpec w;
  w.jobs.push_back(Elastic("A", 0, kA, 1854));
  w.jobs.push_back(Elastic("B", 100, kB, 750));
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(OneNode(6), w, FschedEngine(), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& a = Record(*r, "A");
  const auto& b = Record(*r, "B");
  EXPECT_DOUBLE_EQ(a.first_start, 0);
  EXPECT_DOUBLE_EQ(a.completion, 225);
  EXPECT_EQ(a.reallocations, 1);
  EXPECT_DOUBLE_EQ(a.launching, 10 + 5 + 10);  // launch, then checkpoint + relaunch
  EXPECT_DOUBLE_EQ(a.running, 90 + 110);       // 10..100 and 115..225
  EXPECT_EQ(a.final_workers, 3);
  EXPECT_NE(a.reason.find("reallocated: 6 -> 3 workers (total throughput 9.6 -> 16.5 steps/s"),
            std::string::npos)
      << a.reason;
  EXPECT_DOUBLE_EQ(b.first_start, 100);
  EXPECT_DOUBLE_EQ(b.queueing, 0);
  EXPECT_DOUBLE_EQ(b.completion, 210);
  EXPECT_EQ(b.final_workers, 3);
  EXPECT_EQ(b.reason,
            "started with 3 workers by reallocation (total throughput 9.6 -> 16.5 steps/s, "
            "variance 0.0027)");

  // A's timeline: shrunk for B's start (a preemption by B), checkpoint
  // (its 3 GPUs are B's already), stop, relaunch with 3 workers. B is
  // started by the reallocation in the cycle that admission left it
  // waiting, so it has no waiting row.
  EXPECT_EQ(
      testing::Timeline(*r, "A"),
      (std::vector<std::string>{"0 submitted", "0 started 6", "10 running 6", "100 resized 3 by B",
                                "100 checkpointing 3", "105 stopping 3", "105 standby 3",
                                "105 relaunching 3", "115 running 3", "225 completed 0"}));
  EXPECT_EQ(testing::Timeline(*r, "B"),
            (std::vector<std::string>{"100 submitted", "100 started 3", "110 running 3",
                                      "210 completed 0"}));
  EXPECT_EQ(a.preemptions, 1);

  auto eager = Simulate(OneNode(6), w, FschedEngine(/*min_gain=*/0.5), options);
  ASSERT_TRUE(eager.has_value()) << eager.error().message;
  EXPECT_EQ(Record(*eager, "A").reallocations, 2);
  EXPECT_EQ(Record(*eager, "A").final_workers, 6);
  EXPECT_DOUBLE_EQ(Record(*eager, "A").completion, 239.0625);
  EXPECT_DOUBLE_EQ(Record(*eager, "B").completion, 210);
}

// RunningProtected lasts protectFactor x the last launch. A arrives at 0,
// launches 0..10 on all 6 GPUs and is protected (frozen) 10..40. B arrives
// at 20: A's GPUs cannot be taken, so B waits until 40, when A becomes
// Running and the reallocation (A 3, B 3, as above) starts B. With
// protectFactor 0, A is Running from 10 and B starts on arrival at 20.
TEST(FschedSimTest, ProtectedJobKeepsItsGpusForThreeTimesItsLaunch) {
  config::WorkloadSpec w;
  w.jobs.push_back(Elastic("A", 0, kA, 2000));
  w.jobs.push_back(Elastic("B", 20, kB, 750));
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(OneNode(6), w, FschedEngine(), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_DOUBLE_EQ(Record(*r, "B").first_start, 40);
  EXPECT_DOUBLE_EQ(Record(*r, "B").queueing, 20);
  // A: 30 s protected + 60 s running at 9.6 before the checkpoint at 40.
  EXPECT_EQ(Record(*r, "A").reallocations, 1);

  auto unprotected = Simulate(OneNode(6), w, FschedEngine(-1, /*protect_factor=*/0), options);
  ASSERT_TRUE(unprotected.has_value()) << unprotected.error().message;
  EXPECT_DOUBLE_EQ(Record(*unprotected, "B").first_start, 20);
}

// SPEC section 7, F-scheduling vs static partitioning: one machine with 6
// GPUs; ResNet-50 at 0 s, InceptionV3 at 100 s, ResNet-50 at 200 s,
// InceptionV3 at 300 s; 2000 steps each; vBound 0.5 against static slots
// of 1, 2, 3 and 6 GPUs.
//
// Stand-ins (the model zoo has no InceptionV3 and no fixed-global-batch
// tables): ResNet-50 is the zoo's `resnet50` (Gavel, v100, batch 64 per
// GPU: 4.395, 7.922, 9.452, 17.30 steps/s at 1, 2, 4, 8 GPUs, interpolated
// at 3, 5, 6) and InceptionV3 is replaced by the zoo's `transformer`
// (Gavel, v100: 8.618, 15.88, 19.66, 49.65), another model with a
// different scaling curve. Workers are 1 GPU, elastic in [1, 6]; static-n
// sizes every job to n.
//
// SPEC gives no launch or checkpoint delays for this experiment, so the
// assertion is on the experiment as specified (no delays). The same
// workload is also run with delays (launch / checkpoint 5 / 2, 10 / 5,
// 30 / 10 s) and printed: each reallocation then costs a checkpoint, a
// relaunch and 3 x launch of protection (idle GPUs when a job ends while
// the others are frozen), and F-scheduling's lead shrinks and then turns
// (docs/policies/fsched.md has the numbers).
struct ExperimentRow {
  std::string profile;
  metrics::RunSummary s;
};

std::vector<ExperimentRow> RunExperiment(double launch, double checkpoint, std::string* table) {
  const core::ThroughputProfile* resnet = FindModel("resnet50");
  const core::ThroughputProfile* inception_standin = FindModel("transformer");
  EXPECT_NE(resnet, nullptr);
  EXPECT_NE(inception_standin, nullptr);
  config::WorkloadSpec w;
  const char* names[] = {"resnet50-1", "inception-1", "resnet50-2", "inception-2"};
  for (int i = 0; i < 4; ++i) {
    core::JobSpec j = Elastic(names[i], 100.0 * i, {}, 2000);
    j.throughput = i % 2 == 0 ? *resnet : *inception_standin;
    j.launch_delay = launch;
    j.checkpoint_delay = checkpoint;
    w.jobs.push_back(std::move(j));
  }
  SimOptions options;
  options.check_invariants = true;
  std::vector<ExperimentRow> rows;
  *table = fmt::format(
      "launch {:g} s, checkpoint {:g} s\n"
      "  profile    makespan  mean JCT  GPU alloc  GPU eff  reallocations\n",
      launch, checkpoint);
  for (const char* p : {"fsched", "static-1", "static-2", "static-3", "static-6"}) {
    auto r = Simulate(OneNode(6), w, MakeEngine(p), options);
    EXPECT_TRUE(r.has_value()) << p << ": " << r.error().message;
    if (!r) return rows;
    rows.push_back({p, metrics::Summarize(r->run)});
    const metrics::RunSummary& s = rows.back().s;
    EXPECT_EQ(s.completed_jobs, 4) << p;
    double alloc = 0;
    double eff = 0;
    for (const auto& u : s.utilization) {
      if (u.id == core::kGpu) {
        alloc = u.allocated;
        eff = u.effective;
      }
    }
    *table += fmt::format("  {:<10} {:>8.1f}  {:>8.1f}  {:>8.1f}%  {:>6.1f}%  {:>13}\n", p,
                          s.makespan, s.jct_mean, 100 * alloc, 100 * eff, s.reallocations);
  }
  return rows;
}

double BestStatic(const std::vector<ExperimentRow>& rows) {
  double best = rows.at(1).s.makespan;
  for (size_t i = 2; i < rows.size(); ++i) best = std::min(best, rows[i].s.makespan);
  return best;
}

TEST(FschedSimTest, FschedFinishesNoLaterThanTheBestStaticPartition) {
  std::string table;
  const std::vector<ExperimentRow> rows = RunExperiment(0, 0, &table);
  std::cout << table;
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_LE(rows[0].s.makespan, BestStatic(rows)) << table;
}

// The margin of F-scheduling over the best static split (its makespan minus
// the best static makespan) grows with the delays: every reallocation
// charges a checkpoint, a relaunch and 3 x launch of protection, while a
// static job launches once. Observed: -20.6 s (no delays), -14.9 s (5 / 2),
// +1.7 s (10 / 5), +43.0 s (30 / 10; static-2 is then best and static-6
// worst).
TEST(FschedSimTest, ReallocationDelaysEatFschedsLead) {
  double previous = -1e9;
  for (const auto& [launch, checkpoint] :
       std::vector<std::pair<double, double>>{{0, 0}, {5, 2}, {10, 5}, {30, 10}}) {
    std::string table;
    const std::vector<ExperimentRow> rows = RunExperiment(launch, checkpoint, &table);
    std::cout << table;
    ASSERT_EQ(rows.size(), 5u);
    const double margin = rows[0].s.makespan - BestStatic(rows);
    EXPECT_GT(margin, previous) << table;
    previous = margin;
  }
}

// Generated workloads (60 jobs, 80% elastic, launch and checkpoint delays)
// on four 4-GPU nodes: every cycle keeps the invariants (no node
// over-committed, gangs whole, workers within [min, max]) and every job
// completes.
TEST(FschedSimTest, GeneratedWorkloadsKeepTheInvariantsAndFinish) {
  core::ClusterSpec cluster;
  for (int i = 0; i < 4; ++i) {
    core::ClusterSpec one = OneNode(4);
    one.nodes[0].name = "gpu-" + std::to_string(i);
    cluster.nodes.push_back(one.nodes[0]);
  }
  int64_t reallocations = 0;
  int64_t scale_events = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    GenerateOptions o;
    o.jobs = 60;
    o.seed = seed;
    o.mean_interarrival = 30;
    o.elastic_fraction = 0.8;
    o.max_workers = 6;
    o.min_steps = 500;
    o.max_steps = 5000;
    auto w = GenerateWorkload(o);
    ASSERT_TRUE(w.has_value()) << w.error().message;
    for (size_t i = 0; i < w->jobs.size(); ++i) {
      w->jobs[i].launch_delay = static_cast<double>(i % 3) * 5;
      w->jobs[i].checkpoint_delay = static_cast<double>(i % 2) * 4;
    }
    SimOptions options;
    options.check_invariants = true;
    auto r = Simulate(cluster, *w, FschedEngine(), options);
    ASSERT_TRUE(r.has_value()) << "seed " << seed << ": " << r.error().message;
    const metrics::RunSummary s = metrics::Summarize(r->run);
    EXPECT_EQ(s.completed_jobs, 60) << "seed " << seed;
    EXPECT_FALSE(s.deadlocked) << "seed " << seed;
    reallocations += s.reallocations;
    scale_events += s.scale_events;
  }
  // The sizer did shrink and grow jobs in these runs.
  std::cout << "reallocations " << reallocations << ", scale events " << scale_events << "\n";
  EXPECT_GT(reallocations, 0);
}

}  // namespace
}  // namespace dlsched::sim
