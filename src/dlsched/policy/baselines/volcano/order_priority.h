#pragma once

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// Volcano's priority plugin (JobOrderFn): jobs by priority class, high
// before normal before low; within a class by submit time, then job index
// (the engine's tie rule). Key = -(class rank: low 0, normal 1, high 2).
class PriorityOrder final : public engine::JobOrder {
 public:
  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
  bool StaticKeys() const override { return true; }
};

}  // namespace dlsched::policy
