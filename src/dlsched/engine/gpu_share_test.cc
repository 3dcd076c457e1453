// Shared GPUs in the cache (ClusterState): tasks asking for thousandths of
// one device, several to a device and never above a whole one, devices
// given back to whole-GPU tasks when their last share goes, and a session
// rolling back to the device a share was on.
#include <gtest/gtest.h>

#include "core/builders.h"
#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/session.h"
#include "engine/cluster_with_jobs.h"

namespace dlsched::engine {
namespace {

using core::Role;
using dlsched::testing::GiB;
using dlsched::testing::JobBuilder;
using dlsched::testing::Res;

core::Resources Share(int64_t milli) {
  core::Resources r = Res(1000, GiB(1));
  r[core::kGpuMilli] = milli;
  return r;
}

// node-0 and node-1: 16 cores, 64 GiB, 2 GPUs; node-0 takes shares
// (it lists dlsched.io/gpu-milli), node-1 does not.
core::ClusterSpec TwoNodes() {
  core::ClusterSpec c = dlsched::testing::Nodes(2, 16, 64, 2);
  c.nodes[0].allocatable[core::kGpuMilli] = 2000;
  return c;
}

class GpuShareTest : public ::testing::Test {
 protected:
  dlsched::testing::ClusterWithJobs w_{TwoNodes()};
  ClusterState& st_ = w_.state;

  JobIndex Add(const std::string& name, int workers, const core::Resources& each) {
    return w_.Add(JobBuilder(name).Workers(workers).WorkerResources(each).Steps(10, {{1, 1.0}}),
                  core::JobPhase::kWaiting);
  }
  static TaskRef W(JobIndex j, int i) { return TaskRef{j, Role::kWorker, i}; }
};

// Hand-worked on node-0 (2 devices): three shares of 400 go 400 -> device
// 0 (fresh, lowest), 400 -> device 0 (tightest: 600 left there), 400 ->
// device 1 (device 0 has 200 left). Both devices now hold shares, so no
// whole GPU is free and the largest share left is 600 (device 1). A 700
// share does not fit; a 600 one does, on device 1 (1000 exactly), then the
// node has 200 left.
TEST_F(GpuShareTest, SharesOnADeviceSumToAtMostOneGpu) {
  const JobIndex a = Add("a", 3, Share(400));
  const JobIndex big = Add("big", 1, Share(700));
  const JobIndex fill = Add("fill", 1, Share(600));
  const JobIndex whole = Add("whole", 1, Res(1000, GiB(1), 1));
  EXPECT_EQ(st_.ShareRoom(0), 1000);
  EXPECT_EQ(st_.FreeCount(0, core::kGpuMilli, 400), 4);  // 2 per device
  EXPECT_EQ(st_.ShareRoom(1), 0);                        // node-1 lists no dlsched.io/gpu-milli
  EXPECT_FALSE(st_.FreeHolds(Share(100), 1));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(st_.FreeHolds(st_.Request(W(a, i)), 0));
    st_.PlaceTask(W(a, i), 0);
  }
  EXPECT_EQ(st_.DeviceOf(W(a, 0)), 0);
  EXPECT_EQ(st_.DeviceOf(W(a, 1)), 0);
  EXPECT_EQ(st_.DeviceOf(W(a, 2)), 1);
  EXPECT_EQ(st_.Requested(0)[core::kGpuMilli], 1200);
  EXPECT_EQ(st_.Requested(0)[core::kGpu], 2);  // both devices taken from whole GPUs
  EXPECT_EQ(st_.FreeGpuOf(0), 0);
  EXPECT_EQ(st_.ShareRoom(0), 600);
  EXPECT_EQ(st_.FreeOf(0, core::kGpuMilli), 600);
  // Room for shares of 200: one on device 0 (200 left), three on device 1.
  EXPECT_EQ(st_.FreeCount(0, core::kGpuMilli, 200), 4);
  EXPECT_FALSE(st_.FreeHolds(st_.Request(W(big, 0)), 0));
  EXPECT_FALSE(st_.FreeHolds(st_.Request(W(whole, 0)), 0));
  ASSERT_TRUE(st_.FreeHolds(st_.Request(W(fill, 0)), 0));
  st_.PlaceTask(W(fill, 0), 0);
  EXPECT_EQ(st_.DeviceOf(W(fill, 0)), 1);
  ASSERT_EQ(st_.SharesOn(0).size(), 2u);
  EXPECT_EQ(st_.SharesOn(0)[0], 800);
  EXPECT_EQ(st_.SharesOn(0)[1], 1000);
  EXPECT_EQ(st_.ShareRoom(0), 200);
  // The shares of device 1 go: it is a whole GPU again.
  st_.RemoveTask(W(a, 2));
  st_.RemoveTask(W(fill, 0));
  EXPECT_EQ(st_.SharesOn(0)[1], 0);
  EXPECT_EQ(st_.FreeGpuOf(0), 1);
  EXPECT_EQ(st_.NodesWithFreeGpu(1), std::vector<NodeIndex>{0});
  ASSERT_TRUE(st_.FreeHolds(st_.Request(W(whole, 0)), 0));
  st_.PlaceTask(W(whole, 0), 0);
  // Device 0 holds 800 of shares, the other device a whole-GPU task.
  EXPECT_EQ(st_.ShareRoom(0), 200);
  EXPECT_EQ(st_.Requested(0)[core::kGpu], 2);
  EXPECT_EQ(st_.TotalRequested()[core::kGpu], 2);
  EXPECT_EQ(st_.Requested(0)[core::kGpuMilli], 800);
}

// A session that evicts a share and rolls back puts it on the device it
// was on, though the tightest device is another: device 0 holds x (600),
// device 1 holds y (300, put there) and a (300). With a evicted, a share
// of 300 would go to device 0 (400 left, tighter than device 1's 700).
TEST_F(GpuShareTest, RollbackPutsAShareBackOnItsDevice) {
  const JobIndex x = Add("x", 1, Share(600));
  const JobIndex y = Add("y", 1, Share(300));
  const JobIndex a = Add("a", 1, Share(300));
  st_.PlaceTask(W(x, 0), 0);
  st_.PlaceTask(W(y, 0), 0, 1);
  st_.PlaceTask(W(a, 0), 0, 1);
  ASSERT_EQ(st_.DeviceOf(W(a, 0)), 1);
  Session session(st_);
  session.Evict(W(a, 0));
  EXPECT_EQ(st_.TightestDevice(0, 300), 0);
  EXPECT_EQ(session.Steps().back().device, 1);
  session.RollbackTo(0);
  EXPECT_EQ(st_.DeviceOf(W(a, 0)), 1);
  EXPECT_EQ(st_.SharesOn(0)[0], 600);
  EXPECT_EQ(st_.SharesOn(0)[1], 600);
}

// A released share keeps its device until its pod is gone; a foreign pod's
// share counts on the device it names.
TEST_F(GpuShareTest, ReleasedAndForeignSharesHoldTheirDevice) {
  const JobIndex a = Add("a", 1, Share(700));
  st_.PlaceTask(W(a, 0), 0, 1);
  st_.ReleaseTask(W(a, 0));
  EXPECT_EQ(st_.SharesOn(0)[1], 700);
  EXPECT_EQ(st_.FreeGpuOf(0), 1);
  st_.AddForeignTask("default/other", 0, Share(500), Share(500), 0);
  EXPECT_EQ(st_.SharesOn(0)[0], 500);
  EXPECT_EQ(st_.FreeGpuOf(0), 0);
  EXPECT_EQ(st_.ShareRoom(0), 500);
  st_.TaskGone(W(a, 0));
  EXPECT_EQ(st_.SharesOn(0)[1], 0);
  EXPECT_EQ(st_.ShareRoom(0), 1000);
  st_.RemoveForeignTask("default/other");
  EXPECT_EQ(st_.FreeGpuOf(0), 2);
  EXPECT_EQ(st_.Requested(0)[core::kGpuMilli], 0);
}

// The census counts each PS and Chief replica and a job's minimum workers
// by shape.
TEST_F(GpuShareTest, CensusCountsTasksByShape) {
  Add("a", 2, Share(500));
  Add("b", 1, Share(500));
  Add("c", 1, Res(1000, GiB(1), 2));
  const auto& census = st_.TaskCensus();
  ASSERT_EQ(census.size(), 2u);
  EXPECT_EQ(census[0].first, (ClusterState::TaskShape{1000, 500, 1}));
  EXPECT_EQ(census[0].second, 3);
  EXPECT_EQ(census[1].first, (ClusterState::TaskShape{1000, 1000, 2}));
  EXPECT_EQ(census[1].second, 1);
}

}  // namespace
}  // namespace dlsched::engine
