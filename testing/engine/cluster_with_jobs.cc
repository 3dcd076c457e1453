#include "engine/cluster_with_jobs.h"

#include <utility>

namespace dlsched::testing {

ClusterWithJobs::ClusterWithJobs(core::ClusterSpec spec)
    : cluster(std::move(spec)), state(cluster) {}

engine::JobIndex ClusterWithJobs::Add(core::JobSpec spec) {
  const core::Time t = spec.submit_time;
  return AddAt(t, std::move(spec));
}

engine::JobIndex ClusterWithJobs::Add(core::JobSpec spec, core::JobPhase phase) {
  const core::Time t = spec.submit_time;
  return AddAt(t, std::move(spec), phase);
}

engine::JobIndex ClusterWithJobs::AddAt(core::Time now, core::JobSpec spec,
                                        std::optional<core::JobPhase> phase) {
  specs.push_back(std::move(spec));
  const engine::JobIndex j = state.AddJob(&specs.back(), now);
  if (phase) state.SetPhase(j, *phase, now);
  return j;
}

}  // namespace dlsched::testing
