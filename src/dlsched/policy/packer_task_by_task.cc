#include "dlsched/policy/packer_task_by_task.h"

#include <fmt/format.h>

#include "dlsched/engine/placement.h"

namespace dlsched::policy {

using engine::JobState;

bool GangFitsInFreeTotal(const engine::ClusterState& state, engine::JobIndex j, int workers,
                         std::string* reason) {
  const JobState& js = state.Job(j);
  core::Resources need = js.spec->Demand(workers);
  // Already placed tasks hold their resources.
  for (int s = 0; s < static_cast<int>(js.task_node.size()); ++s) {
    if (js.task_node[s] != engine::kNoNode) need -= state.Request(js.TaskAt(j, s));
  }
  const core::Resources free = state.TotalFree();
  for (int r = 0; r < core::NumResources(); ++r) {
    const auto id = static_cast<core::ResourceId>(r);
    if (need[id] > free[id]) {
      if (reason != nullptr) {
        *reason = fmt::format("gang of {} worker{} needs {} {}, the cluster has {} free", workers,
                              workers == 1 ? "" : "s", core::FormatResourceAmount(id, need[id]),
                              core::ResourceName(id), core::FormatResourceAmount(id, free[id]));
      }
      return false;
    }
  }
  return true;
}

bool TaskByTaskPacker::PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                                 std::string* reason) const {
  if (!GangFitsInFreeTotal(ctx.state(), j, workers, reason)) return false;
  std::vector<engine::TaskRef> slots;
  engine::GangSlots(ctx.state(), j, workers, &slots);
  const auto mark = ctx.session.GetMark();
  for (const engine::TaskRef& t : slots) {
    if (!engine::PlaceTaskByScore(ctx, t, reason)) {
      ctx.session.RollbackTo(mark);
      return false;
    }
  }
  return true;
}

}  // namespace dlsched::policy
