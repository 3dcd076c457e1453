#include "dlsched/core/lifecycle.h"

namespace dlsched::core {

std::string_view PhaseName(JobPhase p) {
  switch (p) {
    case JobPhase::kSubmitted:
      return "Submitted";
    case JobPhase::kWaiting:
      return "Waiting";
    case JobPhase::kStarving:
      return "Starving";
    case JobPhase::kLaunching:
      return "Launching";
    case JobPhase::kRunningProtected:
      return "RunningProtected";
    case JobPhase::kRunning:
      return "Running";
    case JobPhase::kCheckpointing:
      return "Checkpointing";
    case JobPhase::kStopping:
      return "Stopping";
    case JobPhase::kStandby:
      return "Standby";
    case JobPhase::kCompleted:
      return "Completed";
    case JobPhase::kFailed:
      return "Failed";
  }
  return "?";
}

bool IsFinal(JobPhase p) { return p == JobPhase::kCompleted || p == JobPhase::kFailed; }

bool IsRunning(JobPhase p) { return p == JobPhase::kRunningProtected || p == JobPhase::kRunning; }

bool IsFrozen(JobPhase p) {
  switch (p) {
    case JobPhase::kStandby:
    case JobPhase::kLaunching:
    case JobPhase::kRunningProtected:
    case JobPhase::kCheckpointing:
    case JobPhase::kStopping:
      return true;
    default:
      return false;
  }
}

bool IsValidTransition(JobPhase from, JobPhase to) {
  using P = JobPhase;
  if (IsFinal(from)) return false;
  if (to == P::kFailed) return true;
  switch (from) {
    case P::kSubmitted:
      return to == P::kWaiting;
    case P::kWaiting:
      return to == P::kStarving || to == P::kLaunching;
    case P::kStarving:
      return to == P::kLaunching;
    case P::kLaunching:
      return to == P::kRunningProtected || to == P::kRunning || to == P::kStopping;
    case P::kRunningProtected:
      return to == P::kRunning || to == P::kCompleted || to == P::kCheckpointing ||
             to == P::kStopping;
    case P::kRunning:
      return to == P::kCheckpointing || to == P::kCompleted || to == P::kStopping;
    case P::kCheckpointing:
      return to == P::kStopping;
    case P::kStopping:
      return to == P::kStandby;
    case P::kStandby:
      return to == P::kLaunching;
    default:
      return false;
  }
}

bool PhaseClock::Enter(JobPhase to, Time now) {
  if (!IsValidTransition(phase_, to)) return false;
  total_[static_cast<int>(phase_)] += now - since_;
  phase_ = to;
  since_ = now;
  auto& first = first_entered_[static_cast<int>(to)];
  if (first == kNever) first = now;
  return true;
}

Time PhaseClock::TimeIn(JobPhase p, Time now) const {
  Time t = total_[static_cast<int>(p)];
  if (p == phase_) t += now - since_;
  return t;
}

}  // namespace dlsched::core
