// A run that continues from a moment of a live cluster (`dlsched snapshot`):
// the workload's `start`, jobs already placed (`running`), progress made
// (`stepsDone`) and nodes' `reserved` resources.
#include <gtest/gtest.h>

#include "dlsched/config/specs.h"
#include "dlsched/sim/generate.h"
#include "dlsched/sim/simulator.h"
#include "dlsched/sim/test_util.h"

namespace dlsched::sim {
namespace {

using testing::MakeEngine;
using testing::Record;

// Two nodes of 8 cpu / 4 GPUs; pods of other owners request 7 cpu of g-1.
constexpr const char* kCluster = R"(
nodes:
  - name: g-0
    resources: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}
  - name: g-1
    resources: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}
    reserved: {cpu: "7"}
)";

// `a` runs on g-0 since 10 with half its steps done; `b` arrived at 50 and
// waits; `c` launches since 95 on g-1.
constexpr const char* kWorkload = R"(
start: 100
jobs:
  - name: a
    arrival: 0
    worker: {replicas: 2, resources: {cpu: "1", nvidia.com/gpu: "2"}}
    totalSteps: 1000
    stepsDone: 500
    throughput: {table: {2: 5}}
    running: {phase: Running, since: 10, admissionOrder: 0, nodes: {worker-0: g-0, worker-1: g-0}}
  - name: b
    arrival: 50
    worker: {replicas: 1, resources: {cpu: "2", nvidia.com/gpu: "4"}}
    totalSteps: 100
    throughput: {table: {1: 1}}
  - name: c
    arrival: 90
    worker: {replicas: 1, resources: {cpu: "1"}}
    totalSteps: 100
    throughput: {table: {1: 1}}
    launchDelay: 10
    running: {phase: Launching, since: 95, admissionOrder: 1, nodes: {worker-0: g-1}}
)";

struct Inputs {
  core::ClusterSpec cluster;
  config::WorkloadSpec workload;
};

Inputs Parse(const std::string& cluster, const std::string& workload) {
  auto c = config::ParseCluster(cluster, "c.yaml");
  EXPECT_TRUE(c.has_value()) << c.error().message;
  auto w = config::ParseWorkload(workload, "w.yaml");
  EXPECT_TRUE(w.has_value()) << w.error().message;
  return {c ? *c : core::ClusterSpec{}, w ? *w : config::WorkloadSpec{}};
}

TEST(ContinueTest, PlacedJobsRunOnAndWaitingJobsQueueFromTheStart) {
  const Inputs in = Parse(kCluster, kWorkload);
  const engine::Engine engine = MakeEngine("gang-binpack");
  auto r = Simulate(in.cluster, in.workload, engine, {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  // a: 500 steps left at 5 steps/s from 100: done at 200. Its history
  // starts where the workload says: arrived 0, first started 10.
  const auto& a = Record(*r, "a");
  EXPECT_DOUBLE_EQ(a.completion, 200);
  EXPECT_DOUBLE_EQ(a.first_start, 10);
  EXPECT_DOUBLE_EQ(a.queueing, 10);
  EXPECT_EQ(a.admission_seq, 0);
  // c: launching since 95 with a 10 s launch: trains from 105, 100 steps
  // at 1 step/s: done at 205.
  EXPECT_DOUBLE_EQ(Record(*r, "c").completion, 205);
  // b needs 4 GPUs and 2 cpu: g-1 has the GPUs but no cpu left (7
  // reserved, 1 for c), g-0 has no GPU free until a ends at 200. So b
  // starts at 200 on g-0 and ends at 300.
  const auto& b = Record(*r, "b");
  EXPECT_DOUBLE_EQ(b.first_start, 200);
  EXPECT_DOUBLE_EQ(b.completion, 300);
  EXPECT_DOUBLE_EQ(b.queueing, 150);
  EXPECT_EQ(b.admission_seq, 2);  // after the adopted 0 and 1
}

TEST(ContinueTest, WithoutTheReservationTheWaitingJobStartsAtOnce) {
  // The same, minus the reserved cpu, and c not there: b fits g-1 at 100.
  std::string cluster = kCluster;
  cluster.erase(cluster.find("    reserved"));
  std::string workload = kWorkload;
  workload.erase(workload.find("  - name: c"));
  const Inputs in = Parse(cluster, workload);
  auto r = Simulate(in.cluster, in.workload, MakeEngine("gang-binpack"), {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_DOUBLE_EQ(Record(*r, "b").first_start, 100);
  EXPECT_DOUBLE_EQ(Record(*r, "b").completion, 200);
}

// A snapshot taken while an F-scheduling job checkpoints: `a` was shrunk
// 2 -> 1 and checkpoints 98..103; the worker it gave up (`held`) keeps its
// 2 GPUs of g-0 until then. b (2 GPUs) waits for them: it starts at 103,
// not 100, and ends at 203; a relaunches 103..113 and trains its 500 steps
// left at 5 steps/s: done at 213. Without `held` b starts at 100.
TEST(ContinueTest, HeldWorkersOfACheckpointingJobKeepTheirRoomUntilItsEnd) {
  constexpr const char* kOneNode = R"(
nodes:
  - name: g-0
    resources: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}
)";
  const std::string workload = R"(
start: 100
jobs:
  - name: a
    arrival: 0
    worker: {replicas: 2, minReplicas: 1, maxReplicas: 2, resources: {cpu: "1", nvidia.com/gpu: "2"}}
    totalSteps: 1000
    stepsDone: 500
    throughput: {table: {1: 5, 2: 10}}
    launchDelay: 10
    checkpointDelay: 5
    running: {phase: Checkpointing, since: 98, admissionOrder: 0, nodes: {worker-0: g-0}, held: {worker-1: g-0}}
  - name: b
    arrival: 50
    worker: {replicas: 1, resources: {cpu: "1", nvidia.com/gpu: "2"}}
    totalSteps: 100
    throughput: {table: {1: 1}}
)";
  Inputs in = Parse(kOneNode, workload);
  ASSERT_EQ(in.workload.jobs[0].initial->held.size(), 1u);
  SimOptions options;
  options.check_invariants = true;
  auto r = Simulate(in.cluster, in.workload, MakeEngine("gang-binpack"), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_DOUBLE_EQ(Record(*r, "b").first_start, 103);
  EXPECT_DOUBLE_EQ(Record(*r, "b").completion, 203);
  EXPECT_DOUBLE_EQ(Record(*r, "a").completion, 213);
  EXPECT_EQ(Record(*r, "a").final_workers, 1);
  // Written back as it was read.
  const std::string again = WorkloadToYaml(in.workload);
  EXPECT_NE(again.find("held: {worker-1: g-0}"), std::string::npos) << again;

  std::string without = workload;
  without.erase(without.find(", held: {worker-1: g-0}"), 23);
  in = Parse(kOneNode, without);
  r = Simulate(in.cluster, in.workload, MakeEngine("gang-binpack"), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_DOUBLE_EQ(Record(*r, "b").first_start, 100);

  std::string bad = workload;
  bad.replace(bad.find("phase: Checkpointing"), 20, "phase: Running");
  auto w = config::ParseWorkload(bad, "w.yaml");
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message,
            "w.yaml: jobs[0].running.held: only a Checkpointing job holds tasks it gave up");
}

TEST(ContinueTest, WorkloadAndClusterRoundTripThroughYaml) {
  std::string workload = std::string(kWorkload) + R"(
  - name: d
    namespace: team-x
    arrival: 99
    priority: high
    maxWaitMinutes: 3
    ps:
      replicas: 1
      containers: [{name: ps, resources: {cpu: "0", memory: 1Gi}}]
      initContainers: [{name: fetch, resources: {cpu: "3"}}]
      nodeSelector: {pool: "1"}
    worker:
      replicas: 2
      minReplicas: 1
      maxReplicas: 3
      resources: {nvidia.com/gpu: "1"}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions: [{key: zone, operator: In, values: [z1, "z 2"]}]
              - matchExpressions: [{key: gpu, operator: Exists}]
      tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}, {operator: Exists}]
    totalSteps: 50
    stepsDone: 7.25
    throughput: {table: {1: 1, 3: 2.5}, localitySensitivity: 0.1}
    running: {phase: Waiting, nodes: {ps-0: g-1}}
)";
  const std::string cluster = std::string(kCluster) + R"(
  - name: t
    resources: {}
    labels: {zone: z1, empty: ""}
    taints: [{key: dedicated, value: ml, effect: NoSchedule}, {key: x, effect: NoExecute}]
    schedulable: false
)";
  const Inputs in = Parse(cluster, workload);
  ASSERT_EQ(in.workload.jobs.size(), 4u);
  const core::JobSpec& d = in.workload.jobs[3];
  // The PS requests the larger of its containers' sum and its init
  // container: cpu 3 (init), memory 1Gi (containers).
  EXPECT_EQ(d.role(core::Role::kPS).resources[core::kCpu], 3000);
  EXPECT_EQ(d.role(core::Role::kPS).resources[core::kMemory], int64_t{1} << 30);
  // Written and read again, both files give the same text.
  const std::string w1 = WorkloadToYaml(in.workload);
  const std::string c1 = ClusterToYaml(in.cluster);
  const Inputs again = Parse(c1, w1);
  EXPECT_EQ(WorkloadToYaml(again.workload), w1);
  EXPECT_EQ(ClusterToYaml(again.cluster), c1);
  EXPECT_EQ(again.workload.start, 100);
  ASSERT_TRUE(again.workload.jobs[3].initial.has_value());
  EXPECT_EQ(again.workload.jobs[3].initial->phase, core::JobPhase::kWaiting);
  EXPECT_EQ(again.workload.jobs[3].steps_done, 7.25);
  EXPECT_EQ(again.cluster.reserved.at("g-1")[core::kCpu], 7000);
  const core::RoleSpec& ps = again.workload.jobs[3].role(core::Role::kPS);
  ASSERT_EQ(ps.containers.size(), 1u);
  EXPECT_TRUE(ps.containers[0].sets_cpu);  // the explicit 0 is kept
  EXPECT_EQ(ps.ScoringRequest()[core::kCpu], 3000);
  const auto& terms = again.workload.jobs[3].role(core::Role::kWorker).constraints.required_terms;
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0].match_expressions[0].values, (std::vector<std::string>{"z1", "z 2"}));
}

TEST(ContinueTest, BadRunningEntriesAreReportedWithTheirPath) {
  struct Bad {
    std::string replace, with, error;
  };
  const std::vector<Bad> cases = {
      {"start: 100\n", "",
       "w.yaml: jobs[0].running: needs the workload's 'start' (the time the run begins)"},
      {"nodes: {worker-0: g-0, worker-1: g-0}", "nodes: {worker-0: g-0, worker-2: g-0}",
       "w.yaml: jobs[0].running.nodes.worker-2: the job has at most 2 worker tasks "
       "(maxReplicas)"},
      {"nodes: {worker-0: g-0, worker-1: g-0}", "nodes: {worker-1: g-0}",
       "w.yaml: jobs[0].running.nodes: a Running job needs at least minReplicas 2 workers; got 1"},
      {"nodes: {worker-0: g-0, worker-1: g-0}", "nodes: {gpu-0: g-0}",
       "w.yaml: jobs[0].running.nodes.gpu-0: expected a task named ps-<i>, chief-0 or worker-<i>"},
      {"phase: Running", "phase: Stopping",
       "w.yaml: jobs[0].running.phase: expected one of Running, RunningProtected, Launching, "
       "Checkpointing, Waiting, got 'Stopping'"},
      {"start: 100", "start: 5",
       "w.yaml: jobs[0].running: expected arrival <= firstStart <= since <= start, got 0 10 10 5"},
      {"stepsDone: 500", "stepsDone: 1001",
       "w.yaml: jobs[0].stepsDone: expected a number in [0, 1000], got '1001'"},
  };
  for (const Bad& c : cases) {
    std::string text = kWorkload;
    const size_t at = text.find(c.replace);
    ASSERT_NE(at, std::string::npos) << c.replace;
    text.replace(at, c.replace.size(), c.with);
    auto w = config::ParseWorkload(text, "w.yaml");
    ASSERT_FALSE(w.has_value()) << c.error;
    EXPECT_EQ(w.error().message, c.error);
  }
}

TEST(ContinueTest, PlacementsThatDoNotExistOrFitStopTheRun) {
  const engine::Engine engine = MakeEngine("gang-binpack");
  std::string workload = kWorkload;
  workload.replace(workload.find("worker-0: g-1"), 13, "worker-0: g-9");
  Inputs in = Parse(kCluster, workload);
  auto r = Simulate(in.cluster, in.workload, engine, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            "w.yaml: job 'c': running.nodes.worker-0: no node 'g-9' in the cluster");
  workload = kWorkload;
  workload.replace(workload.find("worker-1: g-0"), 13, "worker-1: g-1");
  in = Parse(kCluster, workload);
  r = Simulate(in.cluster, in.workload, engine, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            "w.yaml: job 'c': running.nodes.worker-0: node 'g-1' has memory=32Gi, nvidia.com/gpu=2 "
            "free, not enough for cpu=1");
}

}  // namespace
}  // namespace dlsched::sim
