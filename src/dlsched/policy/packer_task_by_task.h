#pragma once

#include <vector>

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Places a gang one task at a time (PS, Chief, then workers), each on the
// node the profile's scorers like best, as kube-scheduler would place the
// pods one after another; rolls the whole gang back if any task fails.
class TaskByTaskPacker final : public engine::Packer {
 public:
  bool PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                 std::string* reason) const override;
};

// Quick cluster-wide check before any node is visited: the gang's total
// demand must fit in the cluster's free resources. Fills `reason` on failure.
bool GangFitsInFreeTotal(const engine::ClusterState& state, engine::JobIndex j, int workers,
                         std::string* reason);

}  // namespace dlsched::policy
