#include "dlsched/policy/shared/rounds.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace dlsched::policy {

core::Time Rounds::Next(core::Time t) const {
  if (t == core::kNever) return t;
  // (A time computed to fall on a round may come out a hair after it.)
  return std::max(first * interval, std::ceil((t - 1e-6) / interval) * interval);
}

bool Rounds::At(core::Time t) const {
  const double k = std::floor((t + 1e-6) / interval);
  return k >= first && t - k * interval <= kSlack;
}

void WaitForRound(engine::CycleContext& ctx, core::Time next, std::string_view reason) {
  const engine::ClusterState& st = ctx.state();
  ctx.decisions.RevisitAt(next);
  std::vector<engine::JobIndex> pending;
  st.PendingJobs(&pending);
  int position = 0;
  for (engine::JobIndex j : pending) {
    if (st.Job(j).phase_since < ctx.now) continue;
    if (engine::JobTrace* trace = ctx.BeginTrace(j, position++)) trace->outcome = reason;
    ctx.decisions.Wait(j, std::string(reason), engine::WaitStatus::kUnschedulable);
  }
}

}  // namespace dlsched::policy
