// Shared GPUs in the simulator (docs/sharing.md): the example of
// examples/workload-gpu-shares.yaml, hand-worked, with the simulator's
// invariants on (no device above one GPU, the shares' sum the node's).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dlsched/core/job.h"
#include "dlsched/sim/test_util.h"
#include "sim/scenario.h"

namespace dlsched::sim {
namespace {

using dlsched::testing::ExpectOutcome;
using dlsched::testing::Scenario;
class GpuShareScenarioTest : public dlsched::testing::ScenarioTest {};

// Two nodes of 16 cores and 2 GPUs taking shares.
core::ClusterSpec SharedNodes() {
  core::ClusterSpec c = dlsched::testing::Nodes(2, 16, 64, 2, "gpu-");
  for (auto& n : c.nodes) n.allocatable[core::kGpuMilli] = 2000;
  return c;
}

// One worker of 2 cores, 8 GiB and `milli` thousandths of a GPU (or
// `gpus` whole ones) running `seconds` at 1 step/s.
core::JobSpec Job(std::string name, double arrival, int64_t milli, int64_t gpus, double seconds) {
  core::Resources r = dlsched::testing::Res(2000, dlsched::testing::GiB(8), gpus);
  r[core::kGpuMilli] = milli;
  return dlsched::testing::JobBuilder(std::move(name))
      .Submit(arrival)
      .Workers(1)
      .WorkerResources(r)
      .Steps(seconds, {{1, 1.0}});
}

std::vector<Scenario> GpuShareScenarios() {
  // half-a (500) at 0 opens device 0 of gpu-0; half-b (500) at 10; the
  // 2-GPU job at 20 runs 600 s.
  // k8s-default spreads by CPU: half-b goes to gpu-1 (emptier), opening a
  // device there; neither node keeps 2 whole GPUs, so two-gpus waits for
  // half-a to end at 3600 and runs 3600..4200.
  // FGD: half-b beside half-a on gpu-0's device 0 (score 54 against 37,
  // FgdScorerTest), gpu-1 keeps both GPUs: two-gpus runs 20..620.
  const std::vector<core::JobSpec> jobs = {Job("half-a", 0, 500, 0, 3600),
                                           Job("half-b", 10, 500, 0, 3600),
                                           Job("two-gpus", 20, 0, 2, 600)};
  std::vector<Scenario> table;
  table.push_back(
      {.name = "SpreadingFragmentsTheSharedGpus",
       .cluster = SharedNodes(),
       .jobs = jobs,
       .profile = "k8s-default",
       .expected = {"half-a 0..3600 Completed workers=1 scales=0 preempted=0 reallocated=0",
                    "half-b 10..3610 Completed workers=1 scales=0 preempted=0 reallocated=0",
                    "two-gpus 3600..4200 Completed workers=1 scales=0 preempted=0 reallocated=0"}});
  table.push_back(
      {.name = "FgdKeepsWholeGpusFree",
       .cluster = SharedNodes(),
       .jobs = jobs,
       .profile = std::string(DLSCHED_SOURCE_DIR) + "/examples/profile-fgd.yaml",
       .expected = {"half-a 0..3600 Completed workers=1 scales=0 preempted=0 reallocated=0",
                    "half-b 10..3610 Completed workers=1 scales=0 preempted=0 reallocated=0",
                    "two-gpus 20..620 Completed workers=1 scales=0 preempted=0 reallocated=0"}});
  return table;
}

TEST_P(GpuShareScenarioTest, Run) { ExpectOutcome(GetParam()); }
INSTANTIATE_TEST_SUITE_P(GpuShare, GpuShareScenarioTest, ::testing::ValuesIn(GpuShareScenarios()),
                         dlsched::testing::ScenarioName);

}  // namespace
}  // namespace dlsched::sim
