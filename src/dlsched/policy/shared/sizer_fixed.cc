#include "dlsched/policy/shared/sizer_fixed.h"

#include <algorithm>

namespace dlsched::policy {

int StaticPartitionSizer::StartWorkers(const engine::ClusterState& state,
                                       engine::JobIndex j) const {
  const core::RoleSpec& w = state.Job(j).spec->role(core::Role::kWorker);
  const int64_t per_worker = std::max<int64_t>(w.resources[core::kGpu], 1);
  const int workers = static_cast<int>(std::max<int64_t>(slot_gpus_ / per_worker, 1));
  return std::clamp(workers, w.min_replicas, w.max_replicas);
}

}  // namespace dlsched::policy
