#include "dlsched/policy/kod2/packer_fewest_nodes.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/policy/shared/packer_task_by_task.h"

namespace dlsched::policy {
bool FewestNodesPacker::PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                                  std::string* reason) const {
  const engine::ClusterState& st = ctx.state();
  const engine::Session::Mark mark = ctx.session.GetMark();
  // 1. One node for the whole gang (this also runs the cluster-wide
  //    free-total check).
  std::string single_reason;
  if (single_.PlaceGang(ctx, j, workers, &single_reason)) {
    TracePlacedSince(ctx, j, mark, "whole job on one node");
    return true;
  }
  if (!GangFitsInFreeTotal(st, j, workers, reason)) return false;

  // 2. Fill the most idle nodes first, each with as many tasks as fit.
  std::vector<engine::TaskRef> slots;
  engine::GangSlots(st, j, workers, &slots);
  // Slots come grouped by role (PS, Chief, Worker): one cursor per role.
  size_t begin[core::kNumRoles];
  size_t end[core::kNumRoles];
  for (int r = 0; r < core::kNumRoles; ++r) begin[r] = end[r] = 0;
  int min_gpu = std::numeric_limits<int>::max();
  for (size_t i = 0; i < slots.size(); ++i) {
    const int r = static_cast<int>(slots[i].role);
    if (end[r] == 0) begin[r] = i;
    end[r] = i + 1;
    min_gpu = std::min(min_gpu, static_cast<int>(st.Request(slots[i])[core::kGpu]));
  }
  size_t placed = 0;
  idle_.ForEach(st, min_gpu, [&](engine::NodeIndex n) {
    for (int r = 0; r < core::kNumRoles; ++r) {
      while (begin[r] < end[r] && engine::Fits(ctx, slots[begin[r]], n)) {
        ctx.session.Assign(slots[begin[r]], n);
        ++begin[r];
        ++placed;
      }
    }
    return placed < slots.size();
  });
  if (placed == slots.size()) {
    TracePlacedSince(ctx, j, mark, "fewest nodes, most idle first");
    return true;
  }
  engine::TaskRef left = slots.back();
  for (int r = 0; r < core::kNumRoles; ++r) {
    if (begin[r] < end[r]) {
      left = slots[begin[r]];
      break;
    }
  }
  ctx.session.RollbackTo(mark);
  if (reason != nullptr) {
    *reason = fmt::format(
        "{}; filling the most idle nodes first, {} of {} tasks fit and {} ({}) found no room",
        single_reason, placed, slots.size(), core::RoleName(left.role),
        core::FormatResources(st.Request(left)));
  }
  return false;
}

}  // namespace dlsched::policy
