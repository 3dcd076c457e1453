#pragma once

#include "dlsched/engine/extension_points.h"

namespace dlsched::policy {

// First in, first out: key = submit time (ties: job index, by the engine).
class FifoOrder final : public engine::JobOrder {
 public:
  void Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
            core::Time now, std::span<double> keys) const override;
  bool StaticKeys() const override { return true; }
};

}  // namespace dlsched::policy
