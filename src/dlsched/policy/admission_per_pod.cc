#include "dlsched/policy/admission_per_pod.h"

#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"

namespace dlsched::policy {

void PerPodAdmission::Admit(engine::CycleContext& ctx, const engine::Profile& /*profile*/) const {
  const engine::ClusterState& st = ctx.state();
  std::vector<engine::JobIndex> touched;
  std::vector<std::string> last_reason(st.NumJobs());
  std::vector<uint8_t> seen(st.NumJobs(), 0);
  int position = 0;
  for (const engine::PendingPod& pod : st.Pods()) {
    const engine::JobIndex j = pod.task.job;
    const engine::JobState& js = st.Job(j);
    if (!js.IsPending() || js.NodeOf(pod.task.role, pod.task.index) != engine::kNoNode) continue;
    if (!seen[j]) {
      seen[j] = 1;
      touched.push_back(j);
      ctx.BeginTrace(j, position++);
    }
    if (pod.not_before > ctx.now) {
      last_reason[j] = fmt::format("{}[{}] in backoff until {:.1f}s", core::RoleName(pod.task.role),
                                   pod.task.index, pod.not_before);
      continue;
    }
    std::string reason;
    if (!engine::PlaceTaskByScore(ctx, pod.task, &reason)) {
      last_reason[j] = reason;
      ctx.plan.actions.push_back(engine::Action{engine::ActionKind::kBackoff, pod.task,
                                                engine::kNoNode, 0, std::move(reason)});
    }
  }
  for (engine::JobIndex j : touched) {
    const engine::JobState& js = st.Job(j);
    const int total = js.spec->NumTasks(js.target_workers);
    engine::JobTrace* trace = ctx.TraceOf(j);
    if (js.placed_tasks == total) {
      std::string outcome = fmt::format("started: all {} pods bound", total);
      if (trace != nullptr) trace->outcome = outcome;
      ctx.AddAction(engine::ActionKind::kStart, j, std::move(outcome), js.target_workers);
    } else {
      std::string why = fmt::format("waiting: {} of {} pods bound (no gang); {}", js.placed_tasks,
                                    total, last_reason[j]);
      if (trace != nullptr) trace->outcome = why;
      ctx.AddAction(engine::ActionKind::kWait, j, std::move(why));
    }
  }
}

}  // namespace dlsched::policy
