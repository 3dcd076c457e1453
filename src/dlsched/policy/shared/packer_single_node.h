#pragma once

#include <vector>

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Puts the whole gang on one node: the best-scored node (the profile's
// scorers, judged for the first task) that has room for every task. Used by
// static partitioning, where a job's slot of n GPUs lives on one node.
class SingleNodePacker final : public engine::Packer {
 public:
  bool PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                 std::string* reason) const override;
};

}  // namespace dlsched::policy
