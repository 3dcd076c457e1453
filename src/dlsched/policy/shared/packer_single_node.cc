#include "dlsched/policy/shared/packer_single_node.h"

#include <algorithm>

#include <fmt/format.h>

#include "dlsched/engine/placement.h"
#include "dlsched/engine/profile.h"
#include "dlsched/policy/shared/packer_task_by_task.h"

namespace dlsched::policy {

bool SingleNodePacker::PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                                 std::string* reason) const {
  const engine::ClusterState& st = ctx.state();
  if (!GangFitsInFreeTotal(st, j, workers, reason)) return false;
  std::vector<engine::TaskRef> slots;
  engine::GangSlots(st, j, workers, &slots);
  if (slots.empty()) return true;
  core::Resources need;
  for (const auto& t : slots) need += st.Request(t);
  const int need_gpu = static_cast<int>(need[core::kGpu]);
  engine::NodeIndex best = engine::kNoNode;
  double best_total = -1;
  // One task of each role stands for the others in the filters.
  std::vector<engine::TaskRef> roles;
  for (const auto& t : slots) {
    if (roles.empty() || roles.back().role != t.role) roles.push_back(t);
  }
  for (int g = need_gpu; g <= st.MaxGpuPerNode(); ++g) {
    for (engine::NodeIndex n : st.NodesWithFreeGpu(g)) {
      if (!st.FreeHolds(need, n) || !st.FlavorAdmits(j, need, n)) continue;
      if (std::any_of(roles.begin(), roles.end(), [&](const engine::TaskRef& t) {
            return !engine::StaticFailure(ctx, t, n).empty();
          })) {
        continue;
      }
      const double total = engine::TotalScore(ctx, slots.front(), n);
      if (total > best_total || (total == best_total && n < best)) {
        best = n;
        best_total = total;
      }
    }
  }
  if (best == engine::kNoNode) {
    if (reason != nullptr) {
      *reason = need_gpu > st.MaxFreeGpu()
                    ? fmt::format("needs {} nvidia.com/gpu on one node, largest free is {}",
                                  need_gpu, st.MaxFreeGpu())
                    : fmt::format("no single node has room for the whole job ({})",
                                  core::FormatResources(need));
    }
    return false;
  }
  for (const auto& t : slots) ctx.session.Assign(t, best);
  return true;
}

}  // namespace dlsched::policy
