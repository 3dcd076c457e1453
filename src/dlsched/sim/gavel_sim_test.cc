// Gavel's policies and round-based mechanism (policy/gavel/,
// docs/policies/gavel.md) in the simulator, on hand-worked runs.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "dlsched/core/job.h"
#include "dlsched/sim/test_util.h"
#include "sim/scenario.h"

namespace dlsched::sim {
namespace {

using dlsched::testing::ExpectOutcome;
using dlsched::testing::Scenario;
class GavelScenarioTest : public dlsched::testing::ScenarioTest {};

// One node per entry of `types`, of 16 cores, 64 GiB and `gpus` GPUs of
// that type (nvidia.com/gpu.product).
core::ClusterSpec TypedNodes(const std::vector<std::string>& types, int64_t gpus) {
  core::ClusterSpec c =
      dlsched::testing::Nodes(static_cast<int>(types.size()), 16, 64, gpus, "gpu-");
  for (size_t n = 0; n < types.size(); ++n) {
    c.nodes[n].labels[std::string(core::kGpuTypeLabel)] = types[n];
  }
  return c;
}

// A job of `workers` 1-GPU workers doing `steps` steps; its rate on each
// type is `rates` (at its size), and `rate` where none is given.
core::JobSpec Job(std::string name, double arrival, int workers, double steps, double rate,
                  std::map<std::string, double> rates = {}) {
  core::JobSpec j = dlsched::testing::JobBuilder(std::move(name))
                        .Submit(arrival)
                        .Workers(workers, workers, workers)
                        .WorkerResources(dlsched::testing::Res(1000, dlsched::testing::GiB(2), 1))
                        .Steps(steps, {{workers, rate}});
  core::GpuTypeRates by_type;
  for (const auto& [type, r] : rates) by_type[type] = {{workers, r}};
  j.throughput.SetGpuTypes(std::move(by_type));
  return j;
}

std::vector<Scenario> GavelScenarios() {
  std::vector<Scenario> table;
  // Time sharing in rounds of 360 s: one GPU, two identical 1-GPU jobs of
  // 540 steps at 1 step/s, both at 0. The LP gives each half the time.
  // Round 0: each one's time received is the prior of half a round, 180
  // s, of 360 in all: priority 0.5 / (180/360) = 1 for both; the tie goes
  // to the earlier (a). Round 360: a has 180 + 360 = 540 of 720, priority
  // 0.5 / 0.75 = 0.67; b 0.5 / 0.25 = 2: b runs, a is preempted. Round
  // 720: 540 each, a tie again: a runs its last 180 steps, 720..900. With
  // no job on a GPU the next round is at once (Gavel's round ends when its
  // jobs do): b runs 900..1080.
  table.push_back({
      .name = "RoundsShareOneGpuByTimeReceived",
      .cluster = TypedNodes({"v100"}, 1),
      .jobs = {Job("a", 0, 1, 540, 1), Job("b", 0, 1, 540, 1)},
      .profile = "gavel-las",
      .timelines = {"a", "b"},
      .expected = {"a 0..900 Completed workers=1 scales=0 preempted=1 reallocated=1",
                   "b 360..1080 Completed workers=1 scales=0 preempted=1 reallocated=1",
                   "a: 0 submitted",
                   "a: 0 started 1",
                   "a: 0 running 1",
                   "a: 360 preempted 0 by b",
                   "a: 360 checkpointing 0",
                   "a: 360 stopping 0",
                   "a: 360 standby 0",
                   "a: 360 waiting",
                   "a: 720 relaunching 1",
                   "a: 720 running 1",
                   "a: 900 completed 0",
                   "b: 0 submitted",
                   "b: 0 waiting",
                   "b: 360 started 1",
                   "b: 360 running 1",
                   "b: 720 preempted 0 by a",
                   "b: 720 checkpointing 0",
                   "b: 720 stopping 0",
                   "b: 720 standby 0",
                   "b: 720 waiting",
                   "b: 900 relaunching 1",
                   "b: 900 running 1",
                   "b: 1080 completed 0"},
  });
  // Heterogeneity: a v100 and a k80 node, one GPU each. Job "fast" runs 2
  // steps/s on v100 and 1 on k80; "even" 1 on both (the allocation of
  // GavelAllocationTest.MaxMinFairnessSendsEachJobWhereItGainsMost: fast
  // on v100, even on k80, all the time). v100 is picked first (the jobs'
  // rates there over their best sum to 2, on k80 to 1.5): fast, priority
  // 1 / (180/360) = 2, takes it; even takes k80. 720 steps each: fast ends
  // at 360, even at 720, no preemption.
  table.push_back({
      .name = "EachJobOnTheTypeItGainsMostOn",
      .cluster = TypedNodes({"k80", "v100"}, 1),
      .jobs = {Job("fast", 0, 1, 720, 1, {{"v100", 2}, {"k80", 1}}),
               Job("even", 0, 1, 720, 1, {{"v100", 1}, {"k80", 1}})},
      .profile = "gavel-las",
      .expected = {"fast 0..360 Completed workers=1 scales=0 preempted=0 reallocated=0",
                   "even 0..720 Completed workers=1 scales=0 preempted=0 reallocated=0"},
      .checks =
          [](const SimResult& r) {
            EXPECT_EQ(testing::Record(r, "fast").reason,
                      "started with 1 worker (this round's pick on v100)");
            EXPECT_EQ(testing::Record(r, "even").reason,
                      "started with 1 worker (this round's pick on k80)");
          },
  });
  // FIFO, aware: "first" (3 steps/s on v100, 1 on k80) takes v100,
  // "second" (2 on v100, 1 on k80; same arrival, behind it) the k80 left.
  // At 360 first is done (1080 steps); at the round at 360 second, now
  // first in line, moves to the faster v100 (preempted, placed again at
  // once): its 1440 steps are 360 on k80, then 1080 at 2 steps/s on v100,
  // 360..900.
  table.push_back({
      .name = "FifoMovesAJobToAFasterTypeThatFreesUp",
      .cluster = TypedNodes({"k80", "v100"}, 1),
      .jobs = {Job("first", 0, 1, 1080, 1, {{"v100", 3}, {"k80", 1}}),
               Job("second", 0, 1, 1440, 1, {{"v100", 2}, {"k80", 1}})},
      .profile = "gavel-fifo",
      .timelines = {"second"},
      .expected = {"first 0..360 Completed workers=1 scales=0 preempted=0 reallocated=0",
                   "second 0..900 Completed workers=1 scales=0 preempted=1 reallocated=1",
                   "second: 0 submitted", "second: 0 started 1", "second: 0 running 1",
                   "second: 360 preempted 0", "second: 360 checkpointing 0",
                   "second: 360 stopping 0", "second: 360 standby 0", "second: 360 relaunching 1",
                   "second: 360 running 1", "second: 900 completed 0"},
  });
  return table;
}

TEST_P(GavelScenarioTest, Run) { ExpectOutcome(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Gavel, GavelScenarioTest, ::testing::ValuesIn(GavelScenarios()),
                         dlsched::testing::ScenarioName);

}  // namespace
}  // namespace dlsched::sim
