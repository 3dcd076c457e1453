#pragma once

#include <string>

#include "dlsched/core/error.h"
#include "dlsched/engine/extension_points.h"
#include "dlsched/policy/shared/packer_single_node.h"
#include "dlsched/policy/shared/packer_task_by_task.h"

namespace YAML {
class Node;
}

namespace dlsched::policy {

// Packer `Consolidate`: Tiresias' consolidated placement (docs/topology.md).
// A job whose localitySensitivity is at least `min_sensitivity`:
//   1. on one node, when one has room for the whole gang (the best-scored
//      such node, as SingleNode);
//   2. else under one value of the topology key (a switch), when one has
//      room: of the values whose schedulable nodes have the gang's GPUs
//      free in all, the one with the fewest free (best fit; ties to the
//      value of the lowest node index) where every task fits, each task
//      on that value's best-scored node that fits it (ties to the lowest
//      index);
//   3. else task by task anywhere (TaskByTask) when `spread_otherwise`,
//      or not at all (the job waits: "no switch has room for the whole
//      gang").
// A job below `min_sensitivity` is placed task by task. All or nothing.
// Step 2 groups the nodes afresh for each gang: O(nodes) per gang placed.
class ConsolidatePacker final : public engine::Packer {
 public:
  ConsolidatePacker(std::string key, double min_sensitivity, bool spread_otherwise)
      : key_(std::move(key)),
        min_sensitivity_(min_sensitivity),
        spread_otherwise_(spread_otherwise) {}
  bool PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                 std::string* reason) const override;

 private:
  std::string key_;
  double min_sensitivity_;
  bool spread_otherwise_;
  SingleNodePacker single_;
  TaskByTaskPacker task_by_task_;
};

// From a profile's args: topologyKey (a node label key, default
// dlsched.io/switch), minLocalitySensitivity (0..1, default 0), otherwise
// (spread or wait, default spread).
core::Result<std::unique_ptr<engine::Packer>> MakeConsolidate(const YAML::Node& args,
                                                              const std::string& where);

}  // namespace dlsched::policy
