#include "dlsched/policy/shared/resource_scorers.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/builders.h"
#include "dlsched/engine/cluster_state.h"

namespace dlsched::policy {
namespace {

using core::kCpu;
using core::kGpu;
using core::kMemory;
using engine::ClusterState;
using engine::NodeIndex;
using engine::TaskRef;
using ::testing::HasSubstr;

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

const std::vector<ResourceWeight> kCpuMem = {{kCpu, 1}, {kMemory, 1}};
const std::vector<ShapePoint> kBinpack = {{0, 0}, {100, 10}};
const std::vector<ShapePoint> kSpread = {{0, 10}, {100, 0}};

int64_t Rtcr(std::vector<int64_t> requested, std::vector<int64_t> allocatable,
             const std::vector<ResourceWeight>& weights, const std::vector<ShapePoint>& shape) {
  return RequestedToCapacityRatioScore(requested, allocatable, weights, ScaleShape(shape));
}

// ---------------------------------------------------------------------------
// The shape function (helper/shape_score.go).

TEST(ShapeTest, ScaledByTenBeforeInterpolating) {
  // Configured scores are 0..10; kube multiplies them by
  // MaxNodeScore / MaxCustomPriorityScore = 100 / 10 before building the
  // function, so utilisation 55 on {0:0, 100:10} scores 55, not 10*5.
  auto scaled = ScaleShape(kBinpack);
  ASSERT_EQ(scaled.size(), 2u);
  EXPECT_EQ(scaled[0].score, 0);
  EXPECT_EQ(scaled[1].score, 100);
  EXPECT_EQ(scaled[1].utilization, 100);
  EXPECT_EQ(BrokenLinear(scaled, 55), 55);
  // On the raw shape the same point truncates: 0 + 10*55/100 = 5.
  EXPECT_EQ(BrokenLinear(kBinpack, 55), 5);
}

TEST(ShapeTest, ThreePointsInterpolateAndTruncateTowardZero) {
  // {0:0, 50:10, 100:2} scaled is {0:0, 50:100, 100:20}.
  auto s = ScaleShape(std::vector<ShapePoint>{{0, 0}, {50, 10}, {100, 2}});
  EXPECT_EQ(BrokenLinear(s, 0), 0);     // at the first point
  EXPECT_EQ(BrokenLinear(s, 25), 50);   // 0 + 100*25/50
  EXPECT_EQ(BrokenLinear(s, 33), 66);   // 0 + 100*33/50 = 66.0
  EXPECT_EQ(BrokenLinear(s, 49), 98);   // 0 + 100*49/50 = 98
  EXPECT_EQ(BrokenLinear(s, 50), 100);  // at the middle point
  // Falling segment: 100 + (20-100)*(77-50)/50 = 100 + (-2160/50). -43.2
  // truncates toward zero to -43 (Go and C++ alike), so 57, not 56.
  EXPECT_EQ(BrokenLinear(s, 77), 57);
  EXPECT_EQ(BrokenLinear(s, 100), 20);
}

TEST(ShapeTest, FlatBelowTheFirstAndAboveTheLastPoint) {
  // {20:2, 80:8} scaled is {20:20, 80:80}.
  auto s = ScaleShape(std::vector<ShapePoint>{{20, 2}, {80, 8}});
  EXPECT_EQ(BrokenLinear(s, 0), 20);  // below the first point: its score
  EXPECT_EQ(BrokenLinear(s, 10), 20);
  EXPECT_EQ(BrokenLinear(s, 50), 50);  // 20 + 60*30/60
  EXPECT_EQ(BrokenLinear(s, 90), 80);  // above the last point: its score
  EXPECT_EQ(BrokenLinear(s, 100), 80);
  // A single point is a constant.
  auto one = ScaleShape(std::vector<ShapePoint>{{40, 7}});
  EXPECT_EQ(BrokenLinear(one, 0), 70);
  EXPECT_EQ(BrokenLinear(one, 100), 70);
}

// ---------------------------------------------------------------------------
// The pure scoring functions. `requested` already includes the task.

// Node 4000m cpu / 10Gi, already holding 1000m / 2Gi; the task asks for
// 1000m / 1Gi, so requested = 2000m / 3Gi.
//   Least: cpu (4000-2000)*100/4000 = 50, memory (10-3)*100/10 = 70,
//          (50*1 + 70*1) / 2 = 60.
//   Most:  cpu 2000*100/4000 = 50, memory 3*100/10 = 30, (50+30)/2 = 40.
TEST(LeastAllocatedTest, WorkedExampleCpuAndMemory) {
  EXPECT_EQ(LeastAllocatedScore(std::vector<int64_t>{2000, 3 * kGi},
                                std::vector<int64_t>{4000, 10 * kGi}, kCpuMem),
            60);
}

TEST(MostAllocatedTest, WorkedExampleCpuAndMemory) {
  EXPECT_EQ(MostAllocatedScore(std::vector<int64_t>{2000, 3 * kGi},
                               std::vector<int64_t>{4000, 10 * kGi}, kCpuMem),
            40);
}

// Node 3000m / 10Gi / 4 gpu; requested 1000m / 5Gi / 1 gpu; weights cpu 1,
// memory 1, gpu 3 (weight sum 5). Every division truncates.
const std::vector<ResourceWeight> kWeighted = {{kCpu, 1}, {kMemory, 1}, {kGpu, 3}};
const std::vector<int64_t> kWeightedReq = {1000, 5 * kGi, 1};
const std::vector<int64_t> kWeightedAlloc = {3000, 10 * kGi, 4};

TEST(LeastAllocatedTest, WeightedMeanTruncates) {
  // cpu 2000*100/3000 = 66 (66.7), memory 50, gpu 3*100/4 = 75:
  // (66 + 50 + 75*3) / 5 = 341/5 = 68 (68.2).
  EXPECT_EQ(LeastAllocatedScore(kWeightedReq, kWeightedAlloc, kWeighted), 68);
}

TEST(MostAllocatedTest, WeightedMeanTruncates) {
  // cpu 1000*100/3000 = 33 (33.3), memory 50, gpu 25:
  // (33 + 50 + 25*3) / 5 = 158/5 = 31 (31.6 truncated).
  EXPECT_EQ(MostAllocatedScore(kWeightedReq, kWeightedAlloc, kWeighted), 31);
}

TEST(RequestedToCapacityRatioTest, BinpackShapeRoundsTheMean) {
  // Utilisations 33, 50, 25 on {0:0, 100:100} score 33, 50, 25 — the same
  // as MostAllocated — but the mean 158/5 = 31.6 is rounded: 32, not 31.
  EXPECT_EQ(Rtcr(kWeightedReq, kWeightedAlloc, kWeighted, kBinpack), 32);
}

TEST(RequestedToCapacityRatioTest, SpreadShape) {
  // {0:100, 100:0}: cpu util 33 -> 100 + (0-100)*33/100 = 67, memory 50 ->
  // 50, gpu 25 -> 75: (67 + 50 + 75*3) / 5 = 342/5 = 68.4 -> 68.
  EXPECT_EQ(Rtcr(kWeightedReq, kWeightedAlloc, kWeighted, kSpread), 68);
  // Rounding half away from zero: scores 50 (weight 1) and 75 (weight 1)
  // average 62.5 -> 63.
  EXPECT_EQ(Rtcr({500, 1}, {1000, 4}, {{kCpu, 1}, {kGpu, 1}}, kSpread), 63);
}

TEST(RequestedToCapacityRatioTest, ThreePointShape) {
  // {0:0, 50:10, 100:2}: cpu util 2000*100/2600 = 76 (76.9 truncated) ->
  // 100 + (20-100)*(76-50)/50 = 100 - 41 (41.6 toward zero) = 59;
  // gpu util 1*100/4 = 25 -> 50. Weights 1 and 1: (59+50)/2 = 54.5 -> 55.
  EXPECT_EQ(Rtcr({2000, 1}, {2600, 4}, {{kCpu, 1}, {kGpu, 1}}, {{0, 0}, {50, 10}, {100, 2}}), 55);
}

// Requests above capacity happen through the 100m / 200Mi defaults (the
// filter would reject a real over-commit). Node 1000m / 1Gi, requested
// 1200m / 512Mi.
TEST(LeastAllocatedTest, RequestAboveCapacityScoresZero) {
  // cpu 0 (over), memory 50: (0+50)/2 = 25.
  EXPECT_EQ(LeastAllocatedScore(std::vector<int64_t>{1200, 512 * kMi},
                                std::vector<int64_t>{1000, kGi}, kCpuMem),
            25);
}

TEST(MostAllocatedTest, RequestAboveCapacityClampsTo100) {
  // cpu clamped to 1000 -> 100, memory 50: 150/2 = 75.
  EXPECT_EQ(MostAllocatedScore(std::vector<int64_t>{1200, 512 * kMi},
                               std::vector<int64_t>{1000, kGi}, kCpuMem),
            75);
}

TEST(RequestedToCapacityRatioTest, RequestAboveCapacityUsesMaxUtilization) {
  // cpu over -> utilisation 100 -> binpack 100; memory 50: 150/2 = 75.
  EXPECT_EQ(Rtcr({1200, 512 * kMi}, {1000, kGi}, kCpuMem, kBinpack), 75);
  // With the spread shape cpu scores 0 and drops out (the zero-score quirk
  // below): only memory's 50 is left.
  EXPECT_EQ(Rtcr({1200, 512 * kMi}, {1000, kGi}, kCpuMem, kSpread), 50);
}

// A resource the node has none of (allocatable 0) is skipped: neither its
// score nor its weight enters the mean. Node 4000m / 8Gi / 0 gpu, requested
// 1000m / 2Gi / 1 gpu, weights cpu 1, memory 1, gpu 5.
TEST(ResourceScorerTest, ZeroCapacitySkipped) {
  const std::vector<ResourceWeight> w = {{kCpu, 1}, {kMemory, 1}, {kGpu, 5}};
  const std::vector<int64_t> req = {1000, 2 * kGi, 1};
  const std::vector<int64_t> alloc = {4000, 8 * kGi, 0};
  // Least: cpu 75, memory 75, gpu skipped: 150/2 = 75 (not 150/7 = 21).
  EXPECT_EQ(LeastAllocatedScore(req, alloc, w), 75);
  // Most: 25 and 25: 25.
  EXPECT_EQ(MostAllocatedScore(req, alloc, w), 25);
  // RTCR binpack: 25 and 25: 25.
  EXPECT_EQ(Rtcr(req, alloc, w, kBinpack), 25);
  // Every resource skipped: the weight sum is 0 and so is the score.
  const std::vector<int64_t> none = {0, 0, 0};
  EXPECT_EQ(LeastAllocatedScore(req, none, w), 0);
  EXPECT_EQ(MostAllocatedScore(req, none, w), 0);
  EXPECT_EQ(Rtcr(req, none, w, kBinpack), 0);
}

// kube quirk: RTCR adds a resource's weight to the weight sum only when its
// shape score is positive. Spread shape, weights cpu 1, gpu 3; node 4000m /
// 4 gpu; requested 1000m / 4 gpu.
//   cpu util 25 -> 75; gpu util 100 -> 0, so gpu drops out: 75*1/1 = 75.
//   (A plain weighted mean would give (75 + 0*3)/4 = 18.75.)
TEST(RequestedToCapacityRatioTest, ZeroScoresLeaveTheWeightSum) {
  const std::vector<ResourceWeight> w = {{kCpu, 1}, {kGpu, 3}};
  EXPECT_EQ(Rtcr({1000, 4}, {4000, 4}, w, kSpread), 75);
  // Everything scoring 0 gives 0 (weight sum 0), not a division by zero.
  EXPECT_EQ(Rtcr({4000, 4}, {4000, 4}, w, kSpread), 0);
  // MostAllocated has no such quirk: util 0 still counts with its weight.
  // cpu 0, gpu 100 (weight 3): 300/4 = 75; Least: cpu 100, gpu 0: 100/4 = 25.
  EXPECT_EQ(MostAllocatedScore(std::vector<int64_t>{0, 4}, std::vector<int64_t>{4000, 4}, w), 75);
  EXPECT_EQ(LeastAllocatedScore(std::vector<int64_t>{0, 4}, std::vector<int64_t>{4000, 4}, w), 25);
}

// ---------------------------------------------------------------------------
// Score() through a real ClusterState.

using dlsched::testing::Node;
using dlsched::testing::Res;

// One PS requesting `ps` (none if `ps` is zero) and `workers` workers.
core::JobSpec Job(std::string name, core::Resources ps, int workers, core::Resources worker) {
  return dlsched::testing::JobBuilder(std::move(name))
      .Ps(ps.IsZero() ? 0 : 1, ps)
      .Workers(workers)
      .WorkerResources(worker);
}

TaskRef Ps(engine::JobIndex j) { return TaskRef{j, core::Role::kPS, 0}; }
TaskRef Worker(engine::JobIndex j, int i) { return TaskRef{j, core::Role::kWorker, i}; }

// A task asking for no cpu and no memory counts as 100m / 200Mi, on the node
// (NonZeroRequested) as well as for itself. Node 1000m / 1000Mi.
TEST(ResourceScorerTest, DefaultsForTasksWithoutCpuOrMemory) {
  core::ClusterSpec cluster;
  cluster.nodes = {Node("n0", 1000, 1000 * kMi, 4)};
  ClusterState state(cluster);
  core::JobSpec spec = Job("gpu-only", {}, 2, Res(0, 0, 1));
  const auto j = state.AddJob(&spec, 0);
  LeastAllocated least(DefaultResourceWeights());
  MostAllocated most(DefaultResourceWeights());
  // Empty node: requested 100m / 200Mi. Least: cpu 900*100/1000 = 90,
  // memory 800*100/1000 = 80: 85. Most: 10 and 20: 15.
  EXPECT_EQ(least.Score(state, Worker(j, 0), 0), 85);
  EXPECT_EQ(most.Score(state, Worker(j, 0), 0), 15);
  // With worker 0 placed the node's non-zero requests are 100m / 200Mi
  // (its plain Requested cpu/memory stay 0), so the next one sees
  // 200m / 400Mi. Least: 80 and 60: 70. Most: 20 and 40: 30.
  state.PlaceTask(Worker(j, 0), 0);
  EXPECT_EQ(state.Requested(0)[kCpu], 0);
  EXPECT_EQ(least.Score(state, Worker(j, 1), 0), 70);
  EXPECT_EQ(most.Score(state, Worker(j, 1), 0), 30);
}

// With containers, the defaults apply per container and only where a
// container leaves the key out; an explicit 0 stays 0 (kube's
// GetNonzeroRequests). Node 1000m / 1000Mi. Worker containers:
//   main:    cpu 0 (explicit), memory 100Mi  -> counts 0m,   100Mi
//   sidecar: nothing set                      -> counts 100m, 200Mi
// so a worker counts 100m / 300Mi (its request is 0m / 100Mi).
// Least: cpu 900*100/1000 = 90, memory 700*100/1000 = 70: 80.
// Most: 10 and 30: 20. The plain form with the same request (cpu 0,
// memory 100Mi, no containers) counts the 0 cpu as unset: 100m / 100Mi,
// Least (90 + 90) / 2 = 90.
TEST(ResourceScorerTest, ContainerDefaultsApplyPerContainerAndNotToAnExplicitZero) {
  core::ClusterSpec cluster;
  cluster.nodes = {Node("n0", 1000, 1000 * kMi, 4)};
  ClusterState state(cluster);
  core::JobSpec spec = Job("containers", {}, 2, Res(0, 100 * kMi, 0));
  auto& w = spec.role(core::Role::kWorker);
  core::ContainerSpec main;
  main.name = "main";
  main.requests = Res(0, 100 * kMi, 0);
  main.sets_cpu = main.sets_memory = true;
  core::ContainerSpec sidecar;
  sidecar.name = "sidecar";
  w.containers = {main, sidecar};
  const auto j = state.AddJob(&spec, 0);
  LeastAllocated least(DefaultResourceWeights());
  MostAllocated most(DefaultResourceWeights());
  EXPECT_EQ(least.Score(state, Worker(j, 0), 0), 80);
  EXPECT_EQ(most.Score(state, Worker(j, 0), 0), 20);
  state.PlaceTask(Worker(j, 0), 0);
  EXPECT_EQ(state.NonZeroRequested(0)[kCpu], 100);
  EXPECT_EQ(state.NonZeroRequested(0)[kMemory], 300 * kMi);
  EXPECT_EQ(state.Requested(0)[kMemory], 100 * kMi);

  core::JobSpec plain = Job("plain", {}, 1, Res(0, 100 * kMi, 0));
  ClusterState fresh(cluster);
  const auto p = fresh.AddJob(&plain, 0);
  EXPECT_EQ(least.Score(fresh, Worker(p, 0), 0), 90);
}

// A GPU weight does not make a CPU-only task prefer GPU-free nodes: an
// extended resource the task does not request is left out. Node 4000m /
// 16Gi / 4 gpu, one GPU worker already there; the PS asks 1000m / 1Gi.
TEST(ResourceScorerTest, ExtendedResourceNotRequestedIsSkipped) {
  core::ClusterSpec cluster;
  cluster.nodes = {Node("n0", 4000, 16 * kGi, 4)};
  ClusterState state(cluster);
  core::JobSpec spec = Job("j", Res(1000, kGi, 0), 1, Res(1000, 3 * kGi, 1));
  const auto j = state.AddJob(&spec, 0);
  state.PlaceTask(Worker(j, 0), 0);
  const std::vector<ResourceWeight> w = {{kCpu, 1}, {kGpu, 1}};
  // PS: cpu 1000+1000 = 2000 of 4000; gpu skipped.
  //   Least: 50 (not (50 + 75)/2 = 62 with gpu counted as 1 of 4 used).
  //   Most:  50 (not (50 + 25)/2 = 37).
  //   RTCR binpack: 50.
  EXPECT_EQ(LeastAllocated(w).Score(state, Ps(j), 0), 50);
  EXPECT_EQ(MostAllocated(w).Score(state, Ps(j), 0), 50);
  EXPECT_EQ(RequestedToCapacityRatio(w, kBinpack).Score(state, Ps(j), 0), 50);
  // Only gpu configured and not requested: nothing to score, 0.
  const std::vector<ResourceWeight> gpu = {{kGpu, 1}};
  EXPECT_EQ(MostAllocated(gpu).Score(state, Ps(j), 0), 0);
}

// The binpack demo (docs/experiments.md): 2 nodes x (32 cores, 128Gi, 4 gpu); a
// job of 1 PS (2 cores, 4Gi, no gpu) and 4 workers (4 cores, 16Gi, 1 gpu).
// Tasks are placed one by one on the feasible node with the highest score, ties
// to the lower index, as a task-by-task packer does.
struct Demo {
  core::ClusterSpec cluster;
  core::JobSpec spec;
  ClusterState state;
  engine::JobIndex j;

  Demo()
      : cluster{{Node("n0", 32000, 128 * kGi, 4), Node("n1", 32000, 128 * kGi, 4)}, {}, {}, {}, {}},
        spec(Job("demo", Res(2000, 4 * kGi, 0), 4, Res(4000, 16 * kGi, 1))),
        state(cluster),
        j(state.AddJob(&spec, 0)) {}

  NodeIndex Best(const engine::NodeScorer& scorer, TaskRef t) const {
    NodeIndex best = engine::kNoNode;
    int64_t best_score = -1;
    for (NodeIndex n = 0; n < state.NumNodes(); ++n) {
      if (!state.Request(t).FitsIn(state.Free(n))) continue;
      const int64_t s = scorer.Score(state, t, n);
      if (s > best_score) {
        best = n;
        best_score = s;
      }
    }
    return best;
  }
  NodeIndex Place(const engine::NodeScorer& scorer, TaskRef t) {
    const NodeIndex n = Best(scorer, t);
    if (n != engine::kNoNode) state.PlaceTask(t, n);
    return n;
  }
  int WorkersOn(NodeIndex n) const {
    int count = 0;
    for (int i = 0; i < 4; ++i) count += state.Job(j).NodeOf(core::Role::kWorker, i) == n;
    return count;
  }
};

TEST(ResourceScorerTest, BinpackDemoFirstChoice) {
  // Worker 0 is on n0; where does worker 1 go?
  Demo d;
  d.state.PlaceTask(Worker(d.j, 0), 0);
  const std::vector<ResourceWeight> gpu = {{kGpu, 1}};
  // MostAllocated on gpu: n0 (1+1)*100/4 = 50, n1 1*100/4 = 25 -> n0.
  MostAllocated most(gpu);
  EXPECT_EQ(most.Score(d.state, Worker(d.j, 1), 0), 50);
  EXPECT_EQ(most.Score(d.state, Worker(d.j, 1), 1), 25);
  // RTCR {0:0, 100:10} on gpu: utilisations 50 and 25 score the same.
  RequestedToCapacityRatio rtcr(gpu, kBinpack);
  EXPECT_EQ(rtcr.Score(d.state, Worker(d.j, 1), 0), 50);
  EXPECT_EQ(rtcr.Score(d.state, Worker(d.j, 1), 1), 25);
  // LeastAllocated (cpu, memory): n0 cpu 8000 of 32000 -> 75, memory 32 of
  // 128Gi -> 75: 75; n1 4000 -> 87 (87.5), 16Gi -> 87: 87 -> the empty n1.
  LeastAllocated least(DefaultResourceWeights());
  EXPECT_EQ(least.Score(d.state, Worker(d.j, 1), 0), 75);
  EXPECT_EQ(least.Score(d.state, Worker(d.j, 1), 1), 87);
}

TEST(ResourceScorerTest, BinpackDemoWholeJobThenFourGpuWorker) {
  core::JobSpec big = Job("big", {}, 1, Res(4000, 16 * kGi, 4));
  {
    // Binpack (MostAllocated on gpu). The PS does not request gpu, so every
    // node scores 0 and it goes to n0 on the tie. Workers: n0 scores
    // 25/50/75/100 against n1's 25 each time, so all four share n0.
    Demo d;
    MostAllocated binpack({{kGpu, 1}});
    EXPECT_EQ(d.Place(binpack, Ps(d.j)), 0);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d.Place(binpack, Worker(d.j, i)), 0) << i;
    EXPECT_EQ(d.WorkersOn(0), 4);
    EXPECT_EQ(d.WorkersOn(1), 0);
    // The later 4-gpu worker fits on n1.
    const auto b = d.state.AddJob(&big, 0);
    EXPECT_EQ(d.state.MaxFreeGpu(), 4);
    EXPECT_EQ(d.Best(binpack, Worker(b, 0)), 1);
  }
  {
    // Spread (LeastAllocated on cpu, memory), scores as (cpu, memory) -> mean:
    //   PS: tie (both empty) -> n0.
    //   w0: n0 cpu 2000+4000 = 6000 -> 81, memory 4+16 = 20Gi -> 84: 82;
    //       n1 4000 -> 87, 16Gi -> 87: 87 -> n1.
    //   w1: n0 82; n1 8000 -> 75, 32Gi -> 75: 75 -> n0.
    //   w2: n0 10000 -> 68, 36Gi -> 71: 69; n1 75 -> n1.
    //   w3: n0 69; n1 12000 -> 62, 48Gi -> 62: 62 -> n0.
    // 2 workers per node, 2 free GPUs on each: the 4-gpu worker fits nowhere.
    Demo d;
    LeastAllocated spread(DefaultResourceWeights());
    EXPECT_EQ(d.Place(spread, Ps(d.j)), 0);
    EXPECT_EQ(d.Place(spread, Worker(d.j, 0)), 1);
    EXPECT_EQ(d.Place(spread, Worker(d.j, 1)), 0);
    EXPECT_EQ(d.Place(spread, Worker(d.j, 2)), 1);
    EXPECT_EQ(d.Place(spread, Worker(d.j, 3)), 0);
    EXPECT_EQ(d.WorkersOn(0), 2);
    EXPECT_EQ(d.WorkersOn(1), 2);
    const auto b = d.state.AddJob(&big, 0);
    EXPECT_EQ(d.state.MaxFreeGpu(), 2);
    EXPECT_EQ(d.Best(spread, Worker(b, 0)), engine::kNoNode);
  }
  {
    // RTCR with the binpack shape on gpu behaves like MostAllocated here.
    Demo d;
    RequestedToCapacityRatio binpack({{kGpu, 1}}, kBinpack);
    EXPECT_EQ(d.Place(binpack, Ps(d.j)), 0);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d.Place(binpack, Worker(d.j, i)), 0) << i;
    EXPECT_EQ(d.WorkersOn(0), 4);
  }
}

// ---------------------------------------------------------------------------
// Arguments.

constexpr const char* kWhere = "p.yaml: scorers[0].args";

std::string LeastError(const std::string& yaml) {
  auto r = MakeLeastAllocated(YAML::Load(yaml), kWhere);
  return r ? "" : r.error().message;
}

std::string RtcrError(const std::string& yaml) {
  auto r = MakeRequestedToCapacityRatio(YAML::Load(yaml), kWhere);
  return r ? "" : r.error().message;
}

TEST(ResourceScorerArgsTest, DefaultsAreCpuAndMemoryWeightOne) {
  // Same 1-node state scored by the parsed and the hand-built scorer.
  core::ClusterSpec cluster;
  cluster.nodes = {Node("n0", 3000, 10 * kGi, 4)};
  ClusterState state(cluster);
  core::JobSpec spec = Job("j", {}, 1, Res(1000, 5 * kGi, 1));
  const auto j = state.AddJob(&spec, 0);
  for (const char* yaml : {"{}", "{resources: []}", "{resources: ~}"}) {
    auto s = MakeLeastAllocated(YAML::Load(yaml), kWhere);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ((*s)->Name(), "LeastAllocated");
    // cpu 2000*100/3000 = 66, memory 50: 58.
    EXPECT_EQ((*s)->Score(state, Worker(j, 0), 0), 58) << yaml;
  }
  auto undefined = MakeMostAllocated(YAML::Node(), kWhere);
  ASSERT_TRUE(undefined);
  EXPECT_EQ((*undefined)->Name(), "MostAllocated");
  EXPECT_EQ((*undefined)->Score(state, Worker(j, 0), 0), 41);  // (33 + 50) / 2
}

TEST(ResourceScorerArgsTest, ParsesResourcesAndShape) {
  core::ClusterSpec cluster;
  cluster.nodes = {Node("n0", 3000, 10 * kGi, 4)};
  ClusterState state(cluster);
  core::JobSpec spec = Job("j", {}, 1, Res(1000, 5 * kGi, 1));
  const auto j = state.AddJob(&spec, 0);
  auto most = MakeMostAllocated(YAML::Load(R"(
resources:
  - {name: cpu}
  - {name: memory, weight: 1}
  - {name: nvidia.com/gpu, weight: 3}
)"),
                                kWhere);
  ASSERT_TRUE(most) << most.error().message;
  EXPECT_EQ((*most)->Score(state, Worker(j, 0), 0), 31);  // the weighted example above
  auto rtcr = MakeRequestedToCapacityRatio(YAML::Load(R"(
resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 3}]
shape:
  - {utilization: 0, score: 10}
  - {utilization: 100, score: 0}
)"),
                                           kWhere);
  ASSERT_TRUE(rtcr) << rtcr.error().message;
  EXPECT_EQ((*rtcr)->Name(), "RequestedToCapacityRatio");
  EXPECT_EQ((*rtcr)->Score(state, Worker(j, 0), 0), 68);  // the spread example above
}

TEST(ResourceScorerArgsTest, ResourceErrors) {
  EXPECT_EQ(LeastError("{resource: []}"),
            "p.yaml: scorers[0].args.resource: unknown argument (expected one of: resources); did "
            "you mean 'resources'?");
  EXPECT_EQ(LeastError("[1, 2]"), "p.yaml: scorers[0].args: expected a map of arguments");
  EXPECT_EQ(LeastError("{resources: cpu}"),
            "p.yaml: scorers[0].args.resources: expected a list of {name, weight}, got 'cpu'");
  EXPECT_EQ(LeastError("{resources: [cpu]}"),
            "p.yaml: scorers[0].args.resources[0]: expected a map with name and weight, got 'cpu'");
  EXPECT_EQ(LeastError("{resources: [{weight: 2}]}"),
            "p.yaml: scorers[0].args.resources[0].name: missing, expected a resource name such as "
            "cpu or nvidia.com/gpu");
  EXPECT_EQ(LeastError("{resources: [{name: [cpu]}]}"),
            "p.yaml: scorers[0].args.resources[0].name: expected a resource name, got a list");
  EXPECT_EQ(LeastError("{resources: [{name: cpu, wieght: 2}]}"),
            "p.yaml: scorers[0].args.resources[0].wieght: unknown argument (expected one of: "
            "name, weight); did you mean 'weight'?");
  EXPECT_EQ(LeastError("{resources: [{name: cpu, weight: 0}]}"),
            "p.yaml: scorers[0].args.resources[0].weight: expected an integer in 1..100, got '0'");
  EXPECT_THAT(LeastError("{resources: [{name: cpu, weight: 101}]}"),
              HasSubstr("resources[0].weight: expected an integer in 1..100, got '101'"));
  EXPECT_THAT(LeastError("{resources: [{name: cpu, weight: 1.5}]}"),
              HasSubstr("resources[0].weight: expected an integer in 1..100, got '1.5'"));
  EXPECT_EQ(LeastError("{resources: [{name: cpu}, {name: memory}, {name: cpu, weight: 2}]}"),
            "p.yaml: scorers[0].args.resources[2].name: 'cpu' is listed twice (also "
            "resources[0])");
  // LeastAllocated takes no shape.
  EXPECT_EQ(LeastError("{shape: []}"),
            "p.yaml: scorers[0].args.shape: unknown argument (expected one of: resources)");
  auto most = MakeMostAllocated(YAML::Load("{resources: [{name: gpu}], typo: 1}"), kWhere);
  ASSERT_FALSE(most);
  EXPECT_EQ(most.error().message,
            "p.yaml: scorers[0].args.typo: unknown argument (expected one of: resources)");
}

TEST(ResourceScorerArgsTest, ShapeErrors) {
  EXPECT_EQ(RtcrError("{}"),
            "p.yaml: scorers[0].args.shape: missing, expected a list of {utilization, score} "
            "points");
  EXPECT_EQ(RtcrError("{shape: []}"),
            "p.yaml: scorers[0].args.shape: expected at least one point, got none");
  EXPECT_EQ(RtcrError("{shape: {utilization: 0, score: 0}}"),
            "p.yaml: scorers[0].args.shape: expected a list of {utilization, score} points, got "
            "a map");
  EXPECT_EQ(RtcrError("{shape: [{utilization: 80, score: 1}, {utilization: 50, score: 2}]}"),
            "p.yaml: scorers[0].args.shape[1].utilization: 50 is not greater than the previous "
            "point's 80");
  EXPECT_EQ(RtcrError("{shape: [{utilization: 50, score: 1}, {utilization: 50, score: 2}]}"),
            "p.yaml: scorers[0].args.shape[1].utilization: 50 is not greater than the previous "
            "point's 50");
  EXPECT_EQ(RtcrError("{shape: [{utilization: 150, score: 1}]}"),
            "p.yaml: scorers[0].args.shape[0].utilization: expected an integer in 0..100, got "
            "'150'");
  EXPECT_EQ(RtcrError("{shape: [{utilization: -1, score: 1}]}"),
            "p.yaml: scorers[0].args.shape[0].utilization: expected an integer in 0..100, got "
            "'-1'");
  EXPECT_EQ(RtcrError("{shape: [{utilization: 0, score: 11}]}"),
            "p.yaml: scorers[0].args.shape[0].score: expected an integer in 0..10, got '11'");
  EXPECT_EQ(RtcrError("{shape: [{utilization: 0}]}"),
            "p.yaml: scorers[0].args.shape[0].score: missing, expected an integer in 0..10");
  EXPECT_EQ(RtcrError("{shape: [{score: 3}]}"),
            "p.yaml: scorers[0].args.shape[0].utilization: missing, expected an integer in 0..100");
  EXPECT_EQ(RtcrError("{shape: [{utilization: 0, score: 1, scor: 2}]}"),
            "p.yaml: scorers[0].args.shape[0].scor: unknown argument (expected one of: "
            "utilization, score); did you mean 'score'?");
  EXPECT_EQ(RtcrError("{shape: [5]}"),
            "p.yaml: scorers[0].args.shape[0]: expected a map with utilization and score, got "
            "'5'");
  EXPECT_EQ(RtcrError("{shapes: []}"),
            "p.yaml: scorers[0].args.shapes: unknown argument (expected one of: resources, "
            "shape); did you mean 'shape'?");
  // Resource errors come through the same path.
  EXPECT_THAT(RtcrError("{resources: [{name: cpu, weight: 0}], shape: [{utilization: 0, "
                        "score: 0}]}"),
              HasSubstr("resources[0].weight: expected an integer in 1..100"));
}

}  // namespace
}  // namespace dlsched::policy
