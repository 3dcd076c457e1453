#include "dlsched/policy/shared/packer_task_by_task.h"

#include <algorithm>
#include <cstdint>

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
  if (auto why = state.QuotaRefusal(j, need)) {
    if (reason != nullptr) *reason = std::move(*why);
    return false;
  }
  const core::Resources free = state.TotalFree();
  const int r = core::FirstId(need, free, [&](core::ResourceId id) { return need[id] > free[id]; });
  if (r < 0) return true;
  if (reason != nullptr) {
    const auto id = static_cast<core::ResourceId>(r);
    *reason = fmt::format("gang of {} worker{} needs {} {}, the cluster has {} free", workers,
                          workers == 1 ? "" : "s", core::FormatResourceAmount(id, need[id]),
                          core::ResourceName(id), core::FormatResourceAmount(id, free[id]));
  }
  return false;
}

namespace {

// How many tasks of request `req` node `n`'s free resources could hold.
int64_t Holds(const engine::ClusterState& state, engine::NodeIndex n, const core::Resources& req) {
  int64_t k = INT64_MAX;
  core::FirstId(req, [&](core::ResourceId id) {
    if (req[id] > 0) k = std::min(k, std::max<int64_t>(0, state.FreeCount(n, id, req[id])));
    return k == 0;
  });
  return k;
}

}  // namespace

bool GangFitsInNodes(const engine::ClusterState& state, std::span<const engine::TaskRef> slots,
                     std::string* reason, bool* first_fits_nowhere) {
  if (first_fits_nowhere != nullptr) *first_fits_nowhere = false;
  for (size_t i = 0; i < slots.size();) {
    const bool first_role = i == 0;
    // Slots come grouped by role; all tasks of a role ask for the same.
    const core::Role role = slots[i].role;
    int64_t count = 0;
    while (i < slots.size() && slots[i].role == role) ++count, ++i;
    const core::Resources& req = state.Request(slots[i - 1]);
    const int gpus = static_cast<int>(std::min<int64_t>(req[core::kGpu], INT32_MAX));
    if (gpus > state.MaxGpuPerNode()) continue;  // the per-node check words this one
    int64_t room = 0;
    for (int g = std::max(gpus, 0); g <= state.MaxGpuPerNode() && room < count; ++g) {
      for (engine::NodeIndex n : state.NodesWithFreeGpu(g)) {
        if (state.Schedulable(n)) room += std::min(count, Holds(state, n, req));
        if (room >= count) break;
      }
    }
    if (room < count) {
      if (first_fits_nowhere != nullptr) *first_fits_nowhere = first_role && room == 0;
      if (reason != nullptr) {
        *reason = fmt::format("{} {} task{} of {} each, the nodes' free resources hold {}", count,
                              core::RoleName(role), count == 1 ? "" : "s",
                              core::FormatResources(req), room);
      }
      return false;
    }
  }
  return true;
}

void TracePlacedSince(engine::CycleContext& ctx, engine::JobIndex j, engine::Session::Mark mark,
                      const char* note) {
  engine::JobTrace* trace = ctx.TraceOf(j);
  if (trace == nullptr) return;
  const auto& steps = ctx.session.Steps();
  for (size_t i = mark; i < steps.size(); ++i) {
    if (steps[i].assigned && steps[i].task.job == j) {
      trace->tasks.push_back(engine::TaskTrace{steps[i].task, {}, steps[i].node, note, {}});
    }
  }
}

bool TaskByTaskPacker::PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                                 std::string* reason) const {
  if (!GangFitsInFreeTotal(ctx.state(), j, workers, reason)) return false;
  std::vector<engine::TaskRef> slots;
  engine::GangSlots(ctx.state(), j, workers, &slots);
  bool first_fits_nowhere = false;
  if (!GangFitsInNodes(ctx.state(), slots, reason, &first_fits_nowhere)) {
    // A first task no node holds: say why per node, as placing it does.
    if (reason != nullptr && first_fits_nowhere) {
      const auto mark = ctx.session.GetMark();
      if (engine::PlaceTaskByScore(ctx, slots[0], reason)) ctx.session.RollbackTo(mark);
    }
    return false;
  }
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
