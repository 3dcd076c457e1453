#include "dlsched/engine/cycle_context.h"

#include <utility>
#include <vector>

#include "dlsched/engine/placement.h"

// The cycle's traces, and the plan it ends with (EmitPlan, declared in
// placement.h).

namespace dlsched::engine {

JobTrace* CycleContext::StartTrace(int position) {
  JobTrace t;
  t.time = now;
  t.cycle = cycle;
  t.position = position;
  traces->push_back(std::move(t));
  return &traces->back();
}

JobTrace* CycleContext::OpenTrace() {
  if (traces->empty()) return nullptr;
  JobTrace& t = traces->back();
  return t.cycle == cycle ? &t : nullptr;
}

void EmitPlan(const Session& session, CycleState& decisions, Plan* plan) {
  plan->revisit_at = decisions.revisit_at();
  std::vector<Action> jobs = decisions.TakeActions();
  plan->actions.clear();
  const auto& steps = session.Steps();
  plan->actions.reserve(steps.size() + jobs.size());
  // A task placed and taken off again in the same cycle (F-scheduling takes
  // back a start that must wait for held room) was never bound: neither
  // step goes to the backend.
  std::vector<char> drop;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].assigned) continue;
    for (size_t k = i; k-- > 0;) {
      if (!(steps[k].task == steps[i].task)) continue;
      if (steps[k].assigned && steps[k].node == steps[i].node &&
          steps[k].device == steps[i].device) {
        drop.resize(steps.size(), 0);
        drop[k] = drop[i] = 1;
      }
      break;
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!drop.empty() && drop[i]) continue;
    const auto& s = steps[i];
    Action a{s.assigned ? ActionKind::kBind : ActionKind::kUnbind, s.task, s.node, 0, {}};
    a.device = s.device;
    plan->actions.push_back(std::move(a));
  }
  for (auto& a : jobs) plan->actions.push_back(std::move(a));
}

}  // namespace dlsched::engine
