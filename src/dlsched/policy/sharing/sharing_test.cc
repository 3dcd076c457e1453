// Shared GPUs (docs/sharing.md): the fragmentation measure, the target
// workload and the node and device choices of FGD and its baselines.
// Two kinds of expected values: the FGD authors' own (their simulator's
// unit tests, hkust-adsl/kubernetes-scheduler-simulator
// pkg/utils/frag_test.go at 8f3d641: an oracle nobody here wrote), and
// small examples worked by hand in the comments.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "dlsched/policy/sharing/sharing.h"

namespace dlsched::policy::sharing {
namespace {

Task T(int64_t cpu, int num_gpu, int gpu_milli, std::vector<std::string> types = {}) {
  Task t;
  t.cpu = cpu;
  t.num_gpu = num_gpu;
  t.gpu_milli = gpu_milli;
  t.gpu_types = std::move(types);
  return t;
}

Node N(int64_t cpu_left, std::vector<int> gpu_left, std::string type = "") {
  Node n;
  n.cpu_left = cpu_left;
  n.memory_left = 1 << 30;
  n.gpu_type = std::move(type);
  n.gpu_left = std::move(gpu_left);
  return n;
}

// The authors' "WithNonGpu" target workload (frag_test.go): 31 classes,
// three of them CPU-only, popularities as given (not renormalised).
std::vector<TaskClass> AuthorsWorkloadWithNonGpu() {
  const struct {
    int64_t cpu;
    int gpu_milli;
    int num_gpu;
    double percent;
  } rows[] = {{15700, 1000, 1, 28.69}, {11900, 1000, 1, 18.93}, {11400, 1000, 1, 12.27},
              {1000, 0, 0, 7.36},      {18710, 1000, 1, 4.85},  {8200, 1000, 1, 3.79},
              {16400, 1000, 1, 3.31},  {9810, 1000, 1, 1.97},   {15200, 1000, 1, 1.87},
              {11200, 1000, 1, 1.81},  {14200, 1000, 1, 1.76},  {12000, 0, 0, 1.65},
              {14900, 1000, 1, 1.39},  {60200, 1000, 4, 1.23},  {64200, 1000, 8, 1.07},
              {32200, 1000, 4, 1.01},  {17400, 1000, 2, 0.91},  {30200, 1000, 2, 0.69},
              {16000, 1000, 1, 0.64},  {15000, 1000, 1, 0.59},  {64000, 1000, 8, 0.53},
              {15000, 0, 0, 0.53},     {11910, 1000, 1, 0.53},  {120200, 1000, 8, 0.48},
              {11300, 1000, 1, 0.37},  {30000, 1000, 2, 0.32},  {9800, 1000, 1, 0.32},
              {8000, 1000, 1, 0.32},   {2000, 1000, 1, 0.27},   {2000, 80, 1, 0.27},
              {1000, 1000, 1, 0.27}};
  std::vector<TaskClass> w;
  for (const auto& r : rows) w.push_back({T(r.cpu, r.num_gpu, r.gpu_milli), r.percent / 100});
  return w;
}

// The authors' expected values (TestNodeGpuShareFragAmountWithNonGpu and
// TestNodeGpuShareFragAmountScore).
TEST(SharingFragmentationTest, MatchesTheFgdAuthorsTests) {
  const std::vector<TaskClass> w = AuthorsWorkloadWithNonGpu();
  const std::vector<int> full(8, 1000);
  EXPECT_NEAR(Fragmentation(64000, "P100", full, w), 887.20, 0.01);
  const std::vector<int> halved = {1000, 1000, 1000, 1000, 0, 0, 0, 0};
  EXPECT_NEAR(Fragmentation(32000, "P100", halved, w), 554.4, 0.01);
  EXPECT_NEAR(Fragmentation(0, "P100", halved, w), 4000, 0.01);
  // One class (6000m, 1 x 465, 9.33%) on a node with 1000m left: it lacks
  // CPU, so all 2,700 free milli-GPU are fragments: 0.0933 x 2700.
  const std::vector<TaskClass> one = {{T(6000, 1, 465), 0.0933}};
  EXPECT_NEAR(Fragmentation(1000, "1080", std::vector<int>{200, 1000, 1000, 500}, one), 251.91,
              0.01);
}

// Target workload M: m1 (4000m, 1 x 500, p 0.5), m2 (8000m, 1 x 1000, p
// 0.3), m3 (2000m, no GPU, p 0.2).
//   Node A: 16000m left, devices [1000, 1000, 600, 300] (2900 free).
//     m1 runs; fragments: devices below 500: 300 -> 0.5 x 300 = 150.
//     m2 runs; below 1000: 600 + 300 -> 0.3 x 900 = 270.
//     m3 needs no GPU: all 2900 -> 0.2 x 2900 = 580.       F_A = 1000.
//   Node B: 32000m, [1000 x 4]: m1 0, m2 0, m3 0.2 x 4000.  F_B = 800.
//   Node C, type T4, 6000m, [1000, 400] (1400 free), four classes of p 0.25:
//     a (8000m, 1 x 300): too little CPU -> 1400; b (4000m, 2 x 1000): one
//     device with room -> 1400; c (2000m, 1 x 500, V100M32 only): no access
//     -> 1400; d (1000m, 1 x 500): runs, fragments 400.
//     F_C = 0.25 x (1400 + 1400 + 1400 + 400) = 1150.
std::vector<TaskClass> SmallWorkload() {
  return {{T(4000, 1, 500), 0.5}, {T(8000, 1, 1000), 0.3}, {T(2000, 0, 0), 0.2}};
}

TEST(SharingFragmentationTest, HandWorkedNodes) {
  const std::vector<TaskClass> m = SmallWorkload();
  EXPECT_DOUBLE_EQ(Fragmentation(16000, "", std::vector<int>{1000, 1000, 600, 300}, m), 1000);
  EXPECT_DOUBLE_EQ(Fragmentation(32000, "", std::vector<int>(4, 1000), m), 800);
  const std::vector<TaskClass> c = {{T(8000, 1, 300), 0.25},
                                    {T(4000, 2, 1000), 0.25},
                                    {T(2000, 1, 500, {"V100M32"}), 0.25},
                                    {T(1000, 1, 500), 0.25}};
  EXPECT_DOUBLE_EQ(Fragmentation(6000, "T4", std::vector<int>{1000, 400}, c), 1150);
  // A node with no free GPU has no fragments.
  EXPECT_DOUBLE_EQ(Fragmentation(6000, "T4", std::vector<int>{0, 0}, c), 0);
}

// Counts 8, 6, 4, 1, 1 over 20 tasks; 95% is 19 tasks: classes are added
// until 8 + 6 + 4 + 1 = 19; of the two classes seen once the larger key
// (cpu 5000 over 1000) is kept. Popularities 8/19, 6/19, 4/19, 1/19.
TEST(SharingWorkloadTest, MostFrequentClassesUpToTheThreshold) {
  std::vector<Task> tasks;
  auto add = [&](const Task& t, int n) {
    for (int i = 0; i < n; ++i) {
      Task x = t;
      x.memory = i;  // memory is not part of a class
      tasks.push_back(x);
    }
  };
  add(T(1000, 1, 500), 8);
  add(T(2000, 1, 1000), 6);
  add(T(3000, 0, 0), 4);
  add(T(1000, 2, 1000), 1);
  add(T(5000, 2, 1000), 1);
  const std::vector<TaskClass> w = TargetWorkload(tasks, 0.95);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].task, T(1000, 1, 500));
  EXPECT_DOUBLE_EQ(w[0].popularity, 8.0 / 19);
  EXPECT_EQ(w[1].task, T(2000, 1, 1000));
  EXPECT_EQ(w[2].task, T(3000, 0, 0));
  EXPECT_EQ(w[3].task, T(5000, 2, 1000));
  EXPECT_DOUBLE_EQ(w[3].popularity, 1.0 / 19);
}

// FGD on nodes A and B above (score floor(100 sigmoid(-d / 1000))):
//   share p (4000m, 1 x 500): on A, device 0 or 1 -> [500, 1000, 600, 300],
//     F 1050, d +50, score 48; device 2 -> [1000, 1000, 100, 300], F 800
//     (m1 now loses 100 + 300, m2 still 400, m3 0.2 x 2400), d -200, score
//     54; device 3 has no room. A scores 54 on device 2. On B any device
//     gives F 850, d +50: 48. FGD takes A, device 2; exact FGD too.
//   whole (8000m, 1 x 1000): A device 0 -> F 800 (d -200, 54); B device 0
//     -> F 600 (d -200, 54): a tie, to the lower rank.
//   no GPU (12000m): on A 4000m are left, m2 cannot run: F 1600, d +600,
//     35; on B nothing changes: 50. FGD takes B.
TEST(SharingFgdTest, NodeAndDeviceChoices) {
  FragmentationMemo memo(SmallWorkload());
  const std::vector<Node> nodes = {N(16000, {1000, 1000, 600, 300}),
                                   N(32000, {1000, 1000, 1000, 1000})};
  std::mt19937_64 rng(1);
  const std::vector<int> rank_ab = {0, 1};
  const std::vector<int> rank_ba = {1, 0};
  const Task share = T(4000, 1, 500);
  EXPECT_EQ(FgdScore(nodes[0], share, memo).score, 54);
  EXPECT_EQ(FgdScore(nodes[0], share, memo).devices, std::vector<int>{2});
  EXPECT_EQ(FgdScore(nodes[1], share, memo).score, 48);
  EXPECT_DOUBLE_EQ(FgdScore(nodes[0], share, memo, /*exact=*/true).score, 200);
  Choice c = Choose(nodes, rank_ba, share, Policy::kFgd, memo, rng);
  EXPECT_EQ(c.node, 0);
  EXPECT_EQ(c.devices, std::vector<int>{2});
  const Task whole = T(8000, 1, 1000);
  EXPECT_EQ(FgdScore(nodes[0], whole, memo).score, 54);
  EXPECT_EQ(FgdScore(nodes[1], whole, memo).score, 54);
  EXPECT_EQ(Choose(nodes, rank_ab, whole, Policy::kFgd, memo, rng).node, 0);
  EXPECT_EQ(Choose(nodes, rank_ba, whole, Policy::kFgd, memo, rng).node, 1);
  const Task cpu = T(12000, 0, 0);
  EXPECT_EQ(FgdScore(nodes[0], cpu, memo).score, 35);
  EXPECT_EQ(FgdScore(nodes[1], cpu, memo).score, 50);
  EXPECT_EQ(Choose(nodes, rank_ab, cpu, Policy::kFgd, memo, rng).node, 1);
}

// Where FGD and the tightest device part: M = {(0, 1 x 500) 0.5, (0, 1 x
// 200) 0.5}; node [1000, 700, 550]; a 1 x 500 share. Device 0 -> [500,
// 700, 550]: nothing below 500 or 200, F 0, d 0, score 50. Device 1 ->
// [1000, 200, 550]: 200 below 500 -> F 100, 47. Device 2 -> [1000, 700,
// 50]: 50 below both -> F 50, 48. FGD: device 0; the tightest: device 2.
TEST(SharingFgdTest, DeviceChoiceDiffersFromTheTightest) {
  FragmentationMemo memo({{T(0, 1, 500), 0.5}, {T(0, 1, 200), 0.5}});
  const Node node = N(1000, {1000, 700, 550});
  const Task share = T(0, 1, 500);
  const Score s = FgdScore(node, share, memo);
  EXPECT_EQ(s.score, 50);
  EXPECT_EQ(s.devices, std::vector<int>{0});
  EXPECT_EQ(TightestDevices(node, share), std::vector<int>{2});
}

// The baselines on nodes A (holding two shared tasks) and B (empty) for the
// share (4000m, 1 x 500):
//   best-fit: A 0.5 (12000 / 128000) + 0.5 (2400 / 8000) = 0.196875 ->
//     trunc(80.3) = 80; B 0.5 (28000 / 128000) + 0.5 (3500 / 8000) =
//     0.328125 -> 67.
//   packing: A has used devices; its tightest device with room, 2 (600),
//     was in use: floor(600 x 100 / 1000) = 60 -> max(100 - 6, 50) = 94;
//     B all unused, 4 devices: max(33 - 4, 4) = 29.
//   clustering: A base floor(25 x (8000 - 2900) / 8000) = 15, holds only
//     shares -> 90; B base floor(25 x 4000 / 8000) = 12, empty -> 37.
//   dot product: A (16000/128000 x 4000/128000 + 2900/8000 x 500/8000) / 2
//     = 0.013 -> trunc(98.7) = 98; B (0.25 x 0.03125 + 0.5 x 0.0625) / 2 =
//     0.0195 -> 98: a tie.
// For a whole GPU (8000m, 1 x 1000): packing A 49 (one unused device
// taken), B 29; clustering A 15 (A holds another shape), B 37.
TEST(SharingBaselinesTest, HandWorkedScores) {
  Node a = N(16000, {1000, 1000, 600, 300});
  a.tags[0] = 2;
  const Node b = N(32000, {1000, 1000, 1000, 1000});
  const Task share = T(4000, 1, 500);
  EXPECT_EQ(BestFitScore(a, share).score, 80);
  EXPECT_EQ(BestFitScore(b, share).score, 67);
  EXPECT_EQ(BestFitScore(a, share).devices, std::vector<int>{2});
  EXPECT_EQ(PackingScore(a, share).score, 94);
  EXPECT_EQ(PackingScore(b, share).score, 29);
  EXPECT_EQ(ClusteringScore(a, share).score, 90);
  EXPECT_EQ(ClusteringScore(b, share).score, 37);
  EXPECT_EQ(DotProductScore(a, share).score, 98);
  EXPECT_EQ(DotProductScore(b, share).score, 98);
  const Task whole = T(8000, 1, 1000);
  EXPECT_EQ(PackingScore(a, whole).score, 49);
  EXPECT_EQ(PackingScore(b, whole).score, 29);
  EXPECT_EQ(ClusteringScore(a, whole).score, 15);
  EXPECT_EQ(ClusteringScore(b, whole).score, 37);
  EXPECT_EQ(TightestDevices(a, whole), std::vector<int>{0});
}

// Shares on one device never sum above a whole GPU; whole GPUs take unused
// devices only; types and CPU are checked.
TEST(SharingFitTest, SharesNeverExceedADevice) {
  Node n = N(8000, {1000, 1000});
  const Task share = T(1000, 1, 600);
  ASSERT_TRUE(Fits(n, share));
  Take(n, share, TightestDevices(n, share));  // device 0: 400 left
  EXPECT_EQ(n.gpu_left, (std::vector<int>{400, 1000}));
  Take(n, share, TightestDevices(n, share));  // 400 < 600: device 1
  EXPECT_EQ(n.gpu_left, (std::vector<int>{400, 400}));
  EXPECT_FALSE(Fits(n, share));
  EXPECT_TRUE(Fits(n, T(1000, 1, 400)));
  EXPECT_FALSE(Fits(n, T(1000, 1, 1000)));  // no unused device
  EXPECT_FALSE(Fits(n, T(9000, 0, 0)));     // CPU
  EXPECT_EQ(n.cpu_left, 6000);
  const Node typed = N(8000, {1000}, "T4");
  EXPECT_TRUE(Fits(typed, T(1000, 1, 500, {"V100M16", "T4"})));
  EXPECT_FALSE(Fits(typed, T(1000, 1, 500, {"V100M16"})));
  EXPECT_FALSE(Fits(N(8000, {1000}), T(1000, 1, 500, {"T4"})));  // an untyped node
}

}  // namespace
}  // namespace dlsched::policy::sharing
