#include "dlsched/policy/shared/order_fifo.h"

namespace dlsched::policy {

void FifoOrder::Keys(const engine::ClusterState& state, std::span<const engine::JobIndex> jobs,
                     core::Time /*now*/, std::span<double> keys) const {
  for (size_t i = 0; i < jobs.size(); ++i) keys[i] = state.Job(jobs[i]).spec->submit_time;
}

}  // namespace dlsched::policy
