#include "dlsched/policy/baselines/volcano/order_priority.h"

namespace dlsched::policy {

void PriorityOrder::Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
                         core::Time /*now*/, std::span<double> keys) const {
  for (size_t i = 0; i < jobs.size(); ++i) {
    keys[i] = -static_cast<double>(state.Job(jobs[i]).spec->priority);
  }
}

}  // namespace dlsched::policy
