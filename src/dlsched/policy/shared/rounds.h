#pragma once

#include <string_view>

#include "dlsched/core/time.h"
#include "dlsched/engine/cycle_context.h"

namespace dlsched::policy {

// A cycle between the rounds of an admission that decides in rounds
// (Replan with an interval, Gavel): asks for a cycle at `next`, and tells
// the jobs that became pending in this instant `reason`; the others keep
// the verdict of the last round.
void WaitForRound(engine::CycleContext& ctx, core::Time next, std::string_view reason);

}  // namespace dlsched::policy
