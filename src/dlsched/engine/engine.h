#pragma once

#include <cstdint>
#include <vector>

#include "dlsched/engine/plan.h"
#include "dlsched/engine/profile.h"

namespace dlsched::engine {

struct CycleOptions {
  int64_t cycle = 0;
  JobIndex trace_job = -1;                  // record this job's decisions
  std::vector<JobTrace>* traces = nullptr;  // where they go
};

// The pure scheduling engine: ClusterState in, Plan out.
//
// Cycle() works on a Session over `state` and rolls every tentative step
// back before returning, so `state` is unchanged but for the failures it
// remembers (JobState::WaitMemo, owned by one engine at a time); the
// backend then applies the plan (ApplyPlacements) and acts on the
// job-level actions. The same state, time and profile always give the same
// plan.
class Engine {
 public:
  explicit Engine(Profile profile);

  Plan Cycle(ClusterState& state, core::Time now, const CycleOptions& options = {}) const;

  const Profile& profile() const { return profile_; }

 private:
  Profile profile_;
  uint64_t id_;  // process-unique: whose memos a state holds
};

// Applies the plan's kBind and kUnbind actions to `state`, in order.
void ApplyPlacements(ClusterState& state, const Plan& plan);

}  // namespace dlsched::engine
