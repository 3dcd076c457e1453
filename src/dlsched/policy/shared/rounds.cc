#include "dlsched/policy/shared/rounds.h"

#include <string>
#include <vector>

namespace dlsched::policy {

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
