#pragma once

#include <array>
#include <string_view>

#include "dlsched/core/time.h"

namespace dlsched::core {

// The job life cycle (docs/formats.md, "Phases and figures"):
//
//   Submitted -> Waiting -> (Starving) -> Launching -> RunningProtected -> Running
//   Running -> Checkpointing -> Stopping -> Standby -> Launching  (reallocation)
//   Running/RunningProtected -> Completed | Failed
//
// and, when a job loses a task it did not give up (node failure, eviction):
//
//   Launching/RunningProtected/Running -> Stopping -> Standby  (restart)
enum class JobPhase : int {
  kSubmitted = 0,
  kWaiting,
  kStarving,
  kLaunching,
  kRunningProtected,
  kRunning,
  kCheckpointing,
  kStopping,
  kStandby,
  kCompleted,
  kFailed,
};
inline constexpr int kNumJobPhases = 11;

std::string_view PhaseName(JobPhase p);

// True when the life cycle allows going from `from` to `to`. Any non-final
// phase may go to Failed (deadline, deadlock); Completed and Failed are final.
bool IsValidTransition(JobPhase from, JobPhase to);

bool IsFinal(JobPhase p);
// Makes training progress.
bool IsRunning(JobPhase p);
// Neither takes nor gives resources in a reallocation (F-scheduling).
bool IsFrozen(JobPhase p);

// When the job entered each phase (kNever if it never did) and the total time
// spent in each. A phase may be entered several times (reallocations).
class PhaseClock {
 public:
  PhaseClock() { first_entered_.fill(kNever); }

  // Records the transition; returns false (and changes nothing) when the
  // transition is not valid.
  bool Enter(JobPhase to, Time now);

  JobPhase phase() const { return phase_; }
  Time since() const { return since_; }
  Time FirstEntered(JobPhase p) const { return first_entered_[static_cast<int>(p)]; }
  // Time spent in `p`, counting the current stay up to `now`.
  Time TimeIn(JobPhase p, Time now) const;

 private:
  JobPhase phase_ = JobPhase::kSubmitted;
  Time since_ = 0;
  std::array<Time, kNumJobPhases> first_entered_{};
  std::array<Time, kNumJobPhases> total_{};
};

}  // namespace dlsched::core
