// The FGD paper's experiment (sim/sharing.h, docs/sharing.md) on clusters
// small enough to follow by hand.
#include <gtest/gtest.h>

#include <vector>

#include "dlsched/sim/sharing.h"

namespace dlsched::sim {
namespace {

namespace sh = policy::sharing;

sh::Task T(int64_t cpu, int num_gpu, int gpu_milli) {
  sh::Task t;
  t.cpu = cpu;
  t.num_gpu = num_gpu;
  t.gpu_milli = gpu_milli;
  return t;
}

SharingCluster OneNode(int gpus, std::vector<sh::Task> tasks) {
  SharingCluster c;
  sh::Node n;
  n.cpu_left = 10000;
  n.memory_left = 1000;
  n.gpu_left.assign(static_cast<size_t>(gpus), sh::kMilli);
  c.nodes.push_back(n);
  c.gpu_milli = int64_t{gpus} * sh::kMilli;
  c.tasks = std::move(tasks);
  return c;
}

// One node of 2 GPUs; a share (1 x 500) and a whole GPU: 1,500 of 2,000
// milli-GPU, so tune 0.75 adds and removes nothing. Whatever the order,
// both are placed (the share on one device, the whole GPU on the other):
// 75% allocated when 75% has arrived. The target workload is the two
// tasks at 1/2 each; at the end one device has 500 free and the other
// none: the share's class could use the 500 (no fragment), the whole GPU's
// cannot run (all 500): 250 fragmented = 12.5% of the capacity.
TEST(SharingRunTest, EveryTaskPlacedAndTheFragmentsLeft) {
  const SharingCluster c = OneNode(2, {T(1000, 1, 500), T(1000, 1, 1000)});
  for (const sh::Policy p : sh::AllPolicies()) {
    SCOPED_TRACE(std::string(sh::PolicyName(p)));
    for (uint64_t seed : {1, 2, 3}) {
      SharingOptions o;
      o.policy = p;
      o.seed = seed;
      o.tune = 0.75;
      const SharingCurve curve = RunSharing(c, o);
      EXPECT_EQ(curve.tasks, 2);
      EXPECT_EQ(curve.placed, 2);
      EXPECT_EQ(curve.failed, 0);
      ASSERT_GT(curve.allocated.size(), 75u);
      EXPECT_DOUBLE_EQ(curve.allocated[75], 75);
      EXPECT_DOUBLE_EQ(curve.fragmented[75], 12.5);
    }
  }
}

// One node of 1 GPU; two shares of 600: the second finds 400 left and is
// dropped (never retried). At 60% arrived 60% is allocated; at 120%
// (both arrived) still 60%. A point with no event takes its neighbours'
// (61 from 60), one with neither the point before it (90: 60, as the
// cluster is until the next pod); the curve ends at the last pod, 120.
TEST(SharingRunTest, ATaskThatFitsNowhereIsDropped) {
  const SharingCluster c = OneNode(1, {T(1000, 1, 600), T(1000, 1, 600)});
  SharingOptions o;
  o.policy = sh::Policy::kFgd;
  o.tune = 1.2;
  const SharingCurve curve = RunSharing(c, o);
  EXPECT_EQ(curve.placed, 1);
  EXPECT_EQ(curve.failed, 1);
  EXPECT_DOUBLE_EQ(curve.allocated[60], 60);
  EXPECT_DOUBLE_EQ(curve.allocated[61], 60);
  EXPECT_DOUBLE_EQ(curve.allocated[90], 60);
  EXPECT_DOUBLE_EQ(curve.allocated[120], 60);
  EXPECT_EQ(curve.allocated.size(), 121u);
}

// Tuning: a trace of one task of 1 x 1000 on 4 GPUs with tune 1 is grown
// by copies to 4 tasks (4,000 milli-GPU), all placed; with tune 0.5 the
// trace of 4 such tasks is cut to 2.
TEST(SharingRunTest, TheTraceIsTunedToTheArrivedWorkload) {
  SharingOptions o;
  o.policy = sh::Policy::kBestFit;
  o.tune = 1;
  SharingCurve curve = RunSharing(OneNode(4, {T(100, 1, 1000)}), o);
  EXPECT_EQ(curve.tasks, 4);
  EXPECT_EQ(curve.placed, 4);
  EXPECT_DOUBLE_EQ(curve.allocated[100], 100);
  o.tune = 0.5;
  curve = RunSharing(OneNode(4, std::vector<sh::Task>(4, T(100, 1, 1000))), o);
  EXPECT_EQ(curve.tasks, 2);
}

}  // namespace
}  // namespace dlsched::sim
