#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "dlsched/config/specs.h"
#include "dlsched/metrics/summary.h"
#include "dlsched/policy/framework/registry.h"
#include "dlsched/report/outputs.h"

namespace dlsched::sim {
namespace {

using dlsched::testing::ExpectOutcome;
using dlsched::testing::Scenario;
using testing::MakeEngine;
using testing::Record;
class SimulatorScenarioTest : public dlsched::testing::ScenarioTest {};

using core::Role;

// n nodes gpu-0.. of 16 cores, 64 GiB and `gpus` GPUs.
core::ClusterSpec GpuNodes(int n, int64_t gpus) {
  return dlsched::testing::Nodes(n, 16, 64, gpus, "gpu-");
}

// No PS; workers of 1 core, 2 GiB and 1 GPU.
core::JobSpec WorkerJob(std::string name, double arrival, int workers, int min, int max,
                        std::map<int, double> table, double steps) {
  return dlsched::testing::JobBuilder(std::move(name))
      .Submit(arrival)
      .Workers(workers, min, max)
      .WorkerResources(dlsched::testing::Res(1000, dlsched::testing::GiB(2), 1))
      .Steps(steps, std::move(table));
}

// Static partitioning of one 6-GPU node. Four jobs of 2000 steps arrive at
// 0, 100, 200 and 300 s; f(1)=1, f(2)=1.8, f(3)=2.4, f(6)=3.6 steps/s.
//   n=1: 6 slots, all start at once, 2000 s each: last ends at 300+2000 = 2300.
//   n=2: 3 slots, 2000/1.8 = 1111.1 s; j4 waits for j1 (ends 1111.1) and
//        ends at 1111.1 + 1111.1 = 2222.2.
//   n=3: 2 slots, 833.3 s; j3 waits for j1 (833.3 -> 1666.7), j4 for j2
//        (933.3 -> 1766.7).
//   n=6: 1 slot, 555.6 s each, back to back: 4 * 555.6 = 2222.2.
TEST(SimulatorTest, StaticPartitionMakespansMatchHandComputation) {
  const core::ClusterSpec cluster = GpuNodes(1, 6);
  config::WorkloadSpec w;
  const std::map<int, double> f = {{1, 1.0}, {2, 1.8}, {3, 2.4}, {6, 3.6}};
  for (int i = 0; i < 4; ++i) {
    w.jobs.push_back(WorkerJob("j" + std::to_string(i + 1), 100.0 * i, 1, 1, 6, f, 2000));
  }
  const std::map<int, double> expected = {
      {1, 2300.0}, {2, 2000.0 / 1.8 * 2}, {3, 100 + 2000.0 / 2.4 * 2}, {6, 2000.0 / 3.6 * 4}};
  for (const auto& [n, makespan] : expected) {
    auto r = Simulate(cluster, w, MakeEngine("static-" + std::to_string(n)), {});
    ASSERT_TRUE(r.has_value());
    const metrics::RunSummary s = metrics::Summarize(r->run);
    EXPECT_EQ(s.completed_jobs, 4) << "n=" << n;
    EXPECT_NEAR(s.makespan, makespan, 1e-6) << "n=" << n;
    for (const auto& j : r->run.jobs) EXPECT_EQ(j.final_workers, n) << "n=" << n;
  }
}

TEST(SimulatorTest, SameInputsGiveByteIdenticalSummary) {
  const core::ClusterSpec cluster = GpuNodes(3, 4);
  config::WorkloadSpec w;
  for (int i = 0; i < 30; ++i) {
    w.jobs.push_back(WorkerJob("j" + std::to_string(i), 7.0 * (i % 5), 1 + i % 4, 1 + i % 4,
                               1 + i % 4, {{1, 1.0 + i % 3}, {4, 3.0 + i % 2}}, 300 + 10 * i));
  }
  for (const char* profile : {"k8s-default", "gang-binpack", "static-2"}) {
    const engine::Engine e = MakeEngine(profile);
    auto r1 = Simulate(cluster, w, e, {});
    auto r2 = Simulate(cluster, w, e, {});
    ASSERT_TRUE(r1 && r2);
    EXPECT_EQ(report::SummaryJsonText(metrics::Summarize(r1->run)),
              report::SummaryJsonText(metrics::Summarize(r2->run)))
        << profile;
    EXPECT_EQ(report::JobsCsv(r1->run), report::JobsCsv(r2->run)) << profile;
  }
}

TEST(SimulatorTest, ExplainTracesEveryCycleTheJobWasConsidered) {
  const core::ClusterSpec cluster = GpuNodes(2, 3);
  config::WorkloadSpec w;
  w.jobs.push_back(WorkerJob("a", 0, 4, 4, 4, {{4, 4.0}}, 2000));
  w.jobs.push_back(WorkerJob("b", 0, 4, 4, 4, {{4, 4.0}}, 2000));
  SimOptions options;
  options.trace_job = "b";
  auto r = Simulate(cluster, w, MakeEngine("gang-binpack"), options);
  ASSERT_TRUE(r.has_value());
  // Cycle at t=0: b is second in FIFO order and waits; at t=500 it starts.
  ASSERT_EQ(r->traces.size(), 2u);
  EXPECT_EQ(r->traces[0].position, 1);
  EXPECT_NE(r->traces[0].outcome.find("waiting"), std::string::npos) << r->traces[0].outcome;
  EXPECT_DOUBLE_EQ(r->traces[1].time, 500);
  EXPECT_EQ(r->traces[1].outcome, "started with 4 workers");
  ASSERT_EQ(r->traces[1].tasks.size(), 4u);
  // First worker: both nodes empty and feasible, each scored.
  EXPECT_EQ(r->traces[1].tasks[0].candidates.size(), 2u);
  EXPECT_NE(r->traces[1].tasks[0].chosen, engine::kNoNode);
}

}  // namespace
}  // namespace dlsched::sim

namespace dlsched::sim {
namespace {

// Per-pod parking, as kube-scheduler's queueing hints: only freed room (or
// a node change) can make a failed pod fit, so arrivals and binds leave it
// parked. One node of 2 GPUs; a (2 workers) runs 0..100; b arrives at 1
// and fails (backoff to 2); c arrives at 3 and fails. c's arrival does
// not retry b (it would fail again: the old rule counted any change). At
// 100 a's completion unparks both, whose backoffs ended long ago: b then c
// start at 100, each after exactly one failed attempt, and each job got
// one wait verdict (a verdict is given again only when it changes).
TEST(SimulatorTest, PerPodParkedPodIsRetriedOnlyAfterRoomIsFreed) {
  const core::ClusterSpec cluster = GpuNodes(1, 2);
  config::WorkloadSpec w;
  w.jobs.push_back(WorkerJob("a", 0, 2, 2, 2, {{2, 1.0}}, 100));
  w.jobs.push_back(WorkerJob("b", 1, 1, 1, 1, {{1, 1.0}}, 10));
  w.jobs.push_back(WorkerJob("c", 3, 1, 1, 1, {{1, 1.0}}, 10));
  std::map<engine::JobIndex, int> backoffs;
  std::map<engine::JobIndex, int> waits;
  SimOptions options;
  options.on_plan = [&](core::Time, const engine::Plan& plan) {
    for (const engine::Action& a : plan.actions) {
      if (a.kind == engine::ActionKind::kBackoff) ++backoffs[a.task.job];
      if (a.kind == engine::ActionKind::kWait) ++waits[a.task.job];
    }
  };
  auto r = Simulate(cluster, w, MakeEngine("k8s-default"), options);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(Record(*r, "b").first_start, 100);
  EXPECT_DOUBLE_EQ(Record(*r, "c").first_start, 100);
  EXPECT_EQ(backoffs, (std::map<engine::JobIndex, int>{{1, 1}, {2, 1}}));
  EXPECT_EQ(waits, (std::map<engine::JobIndex, int>{{1, 1}, {2, 1}}));
}

// A pod unparked while still in backoff is tried at the next whole second
// (kube flushes its backoff queue once a second). One node of 1 GPU; s
// runs 0..1; b arrives at 0.5, fails and backs off to 1.5. s's completion
// at 1 unparks b, still in backoff: b is tried, and starts, at 2, not 1.5.
TEST(SimulatorTest, PerPodBackoffEndsAtTheNextWholeSecond) {
  const core::ClusterSpec cluster = GpuNodes(1, 1);
  config::WorkloadSpec w;
  w.jobs.push_back(WorkerJob("s", 0, 1, 1, 1, {{1, 1.0}}, 1));
  w.jobs.push_back(WorkerJob("b", 0.5, 1, 1, 1, {{1, 1.0}}, 10));
  std::vector<core::Time> cycles;
  SimOptions options;
  options.on_plan = [&](core::Time now, const engine::Plan&) { cycles.push_back(now); };
  auto r = Simulate(cluster, w, MakeEngine("k8s-default"), options);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(Record(*r, "b").first_start, 2);
  EXPECT_EQ(std::count(cycles.begin(), cycles.end(), 1.5), 0);
}

TEST(SimulatorTest, TableThatCannotRunAtMinimumIsRejected) {
  config::WorkloadSpec w;
  w.source = "w.yaml";
  w.jobs.push_back(WorkerJob("x", 0, 1, 1, 2, {{2, 5.0}}, 10));
  auto r = Simulate(GpuNodes(1, 2), w, MakeEngine("gang-binpack"), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            "w.yaml: job 'x': throughput: the rate at minReplicas 1 workers is 0 (the table "
            "starts at 2 workers), so the job could never finish");
}

// Queueing, launching and running add up to the JCT, and a wait after a
// stop is queueing (docs/formats.md, "Phases and figures"): one node of 2
// GPUs, launch 10 s, checkpoint 5 s, every job 2 one-GPU workers at 1
// step/s in all.
core::JobSpec Delayed(std::string name, double arrival, double steps,
                      core::PriorityClass priority) {
  core::JobSpec j = WorkerJob(std::move(name), arrival, 2, 2, 2, {{2, 1.0}}, steps);
  j.priority = priority;
  j.launch_delay = 10;
  j.checkpoint_delay = 5;
  return j;
}

std::vector<Scenario> SimulatorScenarios() {
  std::vector<Scenario> table;
  // Two jobs of 4 one-GPU workers arrive together on two nodes of 3 GPUs.
  // Their pods are created interleaved: a0 b0 a1 b1 a2 b2 a3 b3.
  // LeastAllocated spreads them, the first six take all 6 GPUs (3 per job),
  // a3 and b3 find no GPU and back off for ever: both jobs are stuck, each
  // holding 3 GPUs.
  const std::vector<core::JobSpec> two_gangs = {
      WorkerJob("a", 0, 4, 4, 4, {{1, 1.0}, {4, 4.0}}, 2000),
      WorkerJob("b", 0, 4, 4, 4, {{1, 1.0}, {4, 4.0}}, 2000)};
  table.push_back({
      .name = "PerPodSchedulingDeadlocks",
      .cluster = GpuNodes(2, 3),
      .jobs = two_gangs,
      .profile = "k8s-default",
      .expected = {"a -..- Waiting workers=3 scales=0 preempted=0 reallocated=0 stuck",
                   "b -..- Waiting workers=3 scales=0 preempted=0 reallocated=0 stuck"},
      .checks =
          [](const SimResult& r) {
            EXPECT_TRUE(r.run.deadlocked);
            // Every GPU is allocated, none is effective.
            ASSERT_FALSE(r.run.utilization.empty());
            EXPECT_EQ(r.run.utilization.back().allocated[core::kGpu], 6);
            EXPECT_EQ(r.run.utilization.back().effective[core::kGpu], 0);
          },
  });
  // Gang: a takes 4 GPUs (3 + 1) at t=0 and runs at 4 steps/s for 500 s;
  // b cannot fit its gang in the 2 GPUs left, waits, and runs 500..1000.
  table.push_back({
      .name = "GangSchedulingDoesNotDeadlock",
      .cluster = GpuNodes(2, 3),
      .jobs = two_gangs,
      .profile = "gang-binpack",
      .expected = {"a 0..500 Completed workers=4 scales=0 preempted=0 reallocated=0",
                   "b 500..1000 Completed workers=4 scales=0 preempted=0 reallocated=0"},
      .checks =
          [](const SimResult& r) {
            EXPECT_FALSE(r.run.deadlocked);
            EXPECT_EQ(Record(r, "a").admission_seq, 0);
            EXPECT_EQ(Record(r, "b").admission_seq, 1);
          },
  });
  // Launch delay and locality: a job with 2 workers spread over two 1-GPU
  // nodes runs at f(2) * (1 - 0.5) = 2 steps/s after a 10 s launch: 1000
  // steps end at 10 + 500 = 510 s.
  core::JobSpec spread = WorkerJob("spread", 0, 2, 2, 2, {{1, 2.0}, {2, 4.0}}, 1000);
  spread.launch_delay = 10;
  spread.throughput.locality_sensitivity = 0.5;
  table.push_back({
      .name = "LaunchDelayAndLocalityFactor",
      .cluster = GpuNodes(2, 1),
      .jobs = {spread},
      .profile = "gang-binpack",
      .phases = true,
      .expected = {"spread 0..510 Completed workers=2 scales=0 preempted=0 reallocated=0",
                   "spread queued=0 launching=10 running=500"},
  });
  // Switches: four 1-GPU nodes, 0 and 1 under switch s0, 2 and 3 under
  // s1; a job of 4 workers, f(4) = 8 steps/s, localitySensitivity 0.25,
  // switchSensitivity 0.5, spans all four: 8 x 0.75 x 0.5 = 3 steps/s, so
  // 600 steps take 200 s. Its record: 4 nodes, 2 switches.
  core::ClusterSpec switched = GpuNodes(4, 1);
  for (int n = 0; n < 4; ++n) {
    switched.nodes[n].labels[std::string(core::kSwitchLabel)] = n < 2 ? "s0" : "s1";
  }
  core::JobSpec wide = WorkerJob("wide", 0, 4, 4, 4, {{4, 8.0}}, 600);
  wide.throughput.locality_sensitivity = 0.25;
  wide.throughput.switch_sensitivity = 0.5;
  table.push_back({
      .name = "SpeedAcrossSwitchesAndTheRecordOfTheSpan",
      .cluster = switched,
      .jobs = {wide, WorkerJob("one", 300, 1, 1, 1, {{1, 1.0}}, 10)},
      .profile = "gang-binpack",
      .expected = {"wide 0..200 Completed workers=4 scales=0 preempted=0 reallocated=0",
                   "one 300..310 Completed workers=1 scales=0 preempted=0 reallocated=0"},
      .checks =
          [](const SimResult& r) {
            EXPECT_EQ(Record(r, "wide").max_nodes, 4);
            EXPECT_EQ(Record(r, "wide").max_switches, 2);
            EXPECT_EQ(Record(r, "one").max_nodes, 1);
            EXPECT_EQ(Record(r, "one").max_switches, 1);
          },
  });
  // A deadline fails a job that cannot finish in time and frees its GPUs:
  // "slow" needs 1000 s but has a 100 s deadline; "next" (2 GPUs) waits
  // for them and starts at 100.
  core::JobSpec slow = WorkerJob("slow", 0, 2, 2, 2, {{2, 1.0}}, 1000);
  slow.deadline = 100;
  table.push_back({
      .name = "DeadlineFailsTheJobAndReleasesItsResources",
      .cluster = GpuNodes(1, 2),
      .jobs = {slow, WorkerJob("next", 1, 2, 2, 2, {{2, 1.0}}, 50)},
      .profile = "gang-binpack",
      .expected = {"slow 0..100 Failed workers=2 scales=0 preempted=0 reallocated=0",
                   "next 100..150 Completed workers=2 scales=0 preempted=0 reallocated=0"},
  });
  // A job larger than the cluster never starts; the run ends (no hang) and
  // reports it stuck with the reason.
  table.push_back({
      .name = "JobThatCanNeverFitIsReportedStuck",
      .cluster = GpuNodes(1, 2),
      .jobs = {WorkerJob("huge", 0, 4, 4, 4, {{4, 1.0}}, 10),
               WorkerJob("ok", 5, 1, 1, 1, {{1, 1.0}}, 10)},
      .profile = "gang-binpack",
      .expected = {"huge -..- Waiting workers=4 scales=0 preempted=0 reallocated=0 stuck",
                   "ok 5..15 Completed workers=1 scales=0 preempted=0 reallocated=0"},
      .checks =
          [](const SimResult& r) {
            EXPECT_NE(Record(r, "huge").reason.find("nvidia.com/gpu"), std::string::npos)
                << Record(r, "huge").reason;
          },
  });
  // Per-pod backoff: b's pod fails at t=1 and backs off 1 s. Retrying it
  // before anything changes cannot succeed, so it is not retried (as
  // kube-scheduler parks it as unschedulable until a cluster event). a
  // finishes at 100 and frees its GPUs: b, whose backoff ended long ago, is
  // retried at once and starts at 100; it must not be reported stuck.
  table.push_back({
      .name = "PerPodBackoffRetriesAfterResourcesAreFreed",
      .cluster = GpuNodes(1, 2),
      .jobs = {WorkerJob("a", 0, 2, 2, 2, {{2, 1.0}}, 100),
               WorkerJob("b", 1, 1, 1, 1, {{1, 1.0}}, 10)},
      .profile = "k8s-default",
      .expected = {"a 0..100 Completed workers=2 scales=0 preempted=0 reallocated=0",
                   "b 100..110 Completed workers=1 scales=0 preempted=0 reallocated=0"},
      .checks = [](const SimResult& r) { EXPECT_FALSE(r.run.deadlocked); },
  });
  // X (40 steps) holds the node 0..50 (launch 0..10, runs 10..50); A,
  // submitted at 0, waits 0..50, launches 50..60 and runs 60..1060: a wait
  // before the first start is queueing.
  table.push_back({
      .name = "AWaitBeforeTheFirstStartIsQueueing",
      .cluster = GpuNodes(1, 2),
      .jobs = {Delayed("x", 0, 40, core::PriorityClass::kNormal),
               Delayed("a", 0, 1000, core::PriorityClass::kNormal)},
      .profile = "gang-binpack",
      .phases = true,
      .expected = {"x 0..50 Completed workers=2 scales=0 preempted=0 reallocated=0",
                   "a 50..1060 Completed workers=2 scales=0 preempted=0 reallocated=0",
                   "x queued=0 launching=10 running=40", "a queued=50 launching=10 running=1000"},
  });
  // volcano-priority, A low priority (1000 steps), B and C high (100 steps
  // each) at 100 and 300:
  //   A  launches 0..10, runs 10..100 (90 steps)
  //   B  arrives at 100: A checkpoints 100..105 and waits in Standby
  //      105..210; B launches 100..110, runs 110..210
  //   A  relaunches 210..220, runs 220..300 (170 steps)
  //   C  arrives at 300: A checkpoints 300..305, waits 305..410; C runs
  //      310..410
  //   A  relaunches 410..420, runs 420..1250 (830 steps left)
  // A: queueing 105 + 105 = 210 (before, the waits in Standby counted as
  // launching: 250), launching 3 x 10 + 2 x 5 = 40, running 90 + 80 + 830
  // = 1000, JCT 1250: a job preempted twice queues after each stop.
  table.push_back({
      .name = "AJobPreemptedTwiceQueuesAfterEachStop",
      .cluster = GpuNodes(1, 2),
      .jobs = {Delayed("a", 0, 1000, core::PriorityClass::kLow),
               Delayed("b", 100, 100, core::PriorityClass::kHigh),
               Delayed("c", 300, 100, core::PriorityClass::kHigh)},
      .profile = "volcano-priority",
      .phases = true,
      .expected = {"a 0..1250 Completed workers=2 scales=0 preempted=2 reallocated=2",
                   "b 100..210 Completed workers=2 scales=0 preempted=0 reallocated=0",
                   "c 300..410 Completed workers=2 scales=0 preempted=0 reallocated=0",
                   "a queued=210 launching=40 running=1000", "b queued=0 launching=10 running=100",
                   "c queued=0 launching=10 running=100"},
  });
  return table;
}

TEST_P(SimulatorScenarioTest, Run) { ExpectOutcome(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Simulator, SimulatorScenarioTest,
                         ::testing::ValuesIn(SimulatorScenarios()), dlsched::testing::ScenarioName);

// A node lists any number of resource names, and a job may ask for any of
// them. Eight filler names interned first put rdma past the inline ids.
// big (8 GPUs) lists eleven names but no rdma; small (4 GPUs) the same and
// 2 rdma devices. Jobs of 1-GPU workers, 1 step/s per worker, no delays:
//   t=0    a (2 workers, 1 rdma each, 100 steps) starts on small: 50 s.
//          b (1 worker, 1 rdma, arrives at 0) waits: small's rdma is taken,
//          big has GPUs but none of it.
//   t=50   a completes; b starts: 100 steps alone, completes at 150.
//   never  c (1 worker, 3 rdma) fits no node: stuck, not run.
TEST(SimulatorTest, NodesListingManyResourceNamesServeJobsAskingForAnyOfThem) {
  for (int i = 0; i < core::kInlineResources; ++i) {
    ASSERT_TRUE(core::InternResource("example.com/filler-" + std::to_string(i)).has_value());
  }
  const std::string many =
      "ephemeral-storage: 100Gi, hugepages-2Mi: 64Mi, example.com/fpga: 1, "
      "nvidia.com/mig-1g.10gb: 7, nvidia.com/mig-2g.20gb: 3, nvidia.com/mig-3g.40gb: 2, "
      "nvidia.com/mig-7g.80gb: 1, smarter-devices/fuse: 20";
  auto cluster = config::ParseCluster(
      "nodes:\n"
      "  - {name: big, resources: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 8, " +
          many +
          "}}\n"
          "  - {name: small, resources: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 4, " +
          many + ", rdma/hca_shared_devices_a: 2}}\n",
      "c.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto job = [](const std::string& name, int workers, int rdma, int steps) {
    return fmt::format(
        "  - {{name: {}, arrival: 0, totalSteps: {}, throughput: {{table: {{1: 1, 2: 2}}}},\n"
        "     worker: {{replicas: {}, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: 1, "
        "rdma/hca_shared_devices_a: {}}}}}}}\n",
        name, steps, workers, rdma);
  };
  auto workload = config::ParseWorkload(
      "jobs:\n" + job("a", 2, 1, 100) + job("b", 1, 1, 100) + job("c", 1, 3, 100), "w.yaml");
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  ASSERT_TRUE(ResolveWorkload(*workload).has_value());
  EXPECT_GE(core::FindResource("rdma/hca_shared_devices_a"), core::kInlineResources);
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(*cluster, *workload, MakeEngine("gang-binpack"), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_DOUBLE_EQ(Record(*r, "a").completion, 50);
  EXPECT_DOUBLE_EQ(Record(*r, "b").first_start, 50);
  EXPECT_DOUBLE_EQ(Record(*r, "b").completion, 150);
  EXPECT_EQ(Record(*r, "c").first_start, core::kNever);
}

// GPU types: node v is a v100, node k a k80 (2 GPUs each). Both jobs run
// 2 one-GPU workers for 100 steps at {2: 1} steps/s, 2 on a v100 and 1 on
// a k80. Worked by hand:
//   t=0    a asks for a k80 (its nodeSelector): k; b takes v.
//   t=50   b completes (100 steps at 2/s).
//   t=100  a completes (100 steps at 1/s).
TEST(SimulatorTest, JobsRunAtTheRateOfTheirGpuTypeAndMayRequireOne) {
  auto cluster = config::ParseCluster(
      "nodes:\n"
      "  - {name: v, gpuType: v100, resources: {cpu: 8, memory: 32Gi, nvidia.com/gpu: 2}}\n"
      "  - {name: k, gpuType: k80, resources: {cpu: 8, memory: 32Gi, nvidia.com/gpu: 2}}\n",
      "c.yaml");
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  auto job = [](const std::string& name, const std::string& selector) {
    return fmt::format(
        "  - {{name: {}, arrival: 0, totalSteps: 100,\n"
        "     throughput: {{table: {{2: 1}}, gpuTypes: {{v100: {{2: 2}}, k80: {{2: 1}}}}}},\n"
        "     worker: {{replicas: 2, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}}{}}}}}\n",
        name, selector);
  };
  auto workload = config::ParseWorkload(
      "jobs:\n" + job("a", ", nodeSelector: {nvidia.com/gpu.product: k80}") + job("b", ""),
      "w.yaml");
  ASSERT_TRUE(workload.has_value()) << workload.error().message;
  ASSERT_TRUE(ResolveWorkload(*workload).has_value());
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(*cluster, *workload, MakeEngine("gang-binpack"), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_DOUBLE_EQ(Record(*r, "a").completion, 100);
  EXPECT_DOUBLE_EQ(Record(*r, "b").completion, 50);
}

}  // namespace
}  // namespace dlsched::sim
