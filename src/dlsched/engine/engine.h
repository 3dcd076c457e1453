#pragma once

#include <cstdint>
#include <vector>

#include "dlsched/engine/memos.h"
#include "dlsched/engine/plan.h"
#include "dlsched/engine/pod_queue.h"
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
// back before returning, so `state` is unchanged but for the event logs a
// cycle consumes (EnteredPending, LeftPending); `pods` is the per-pod
// admission's queue, `memos` what the engine remembers between cycles
// (engine::Memos: a store of one engine on one state at a time). The
// backend then applies the plan (ApplyPlacements) and acts on the
// job-level actions. The same state, queue, time and profile always give
// the same binds.
class Engine {
 public:
  explicit Engine(Profile profile);
  Plan Cycle(ClusterState& state, const PodQueue& pods, Memos& memos, core::Time now,
             const CycleOptions& options = {}) const;
  const Profile& profile() const { return profile_; }

 private:
  Profile profile_;
  uint64_t id_;  // process-unique: whose memos a store holds
};

// Applies the plan's kBind and kUnbind actions to `state`, in order.
void ApplyPlacements(ClusterState& state, const Plan& plan);

}  // namespace dlsched::engine
