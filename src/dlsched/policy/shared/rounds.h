#pragma once

#include <string_view>

#include "dlsched/core/time.h"
#include "dlsched/engine/cycle_context.h"

namespace dlsched::policy {

// Rounds every `interval` seconds (> 0), numbered from `first` (0: the
// first is at time 0; 1: at `interval`).
struct Rounds {
  double interval = 0;
  int first = 0;
  // A cycle this long after a round's time still holds the round: Pollux
  // counts whole seconds (a job ending within half a second after a round
  // ended at it), and an operator wakes up for a round a little late.
  static constexpr double kSlack = 0.5;

  // The first round at or after `t` (kNever for kNever).
  core::Time Next(core::Time t) const;
  // Whether `t` is a round, or less than kSlack after one.
  bool At(core::Time t) const;
};

// A cycle between the rounds of an admission that decides in rounds
// (Replan with an interval, Gavel): asks for a cycle at `next`, and tells
// the jobs that became pending in this instant `reason`; the others keep
// the verdict of the last round.
void WaitForRound(engine::CycleContext& ctx, core::Time next, std::string_view reason);

}  // namespace dlsched::policy
