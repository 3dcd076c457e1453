#pragma once

// What the placement helpers of placement.h share between their files
// (placement.cc, placement_search.cc, placement_gang.cc): the per-node
// feasibility check in its fast form, and the wording of a shortfall. Not
// an interface of the layer.

#include <string_view>

#include "dlsched/core/resources.h"
#include "dlsched/engine/cycle_context.h"
#include "dlsched/engine/profile.h"

namespace dlsched::engine::internal {

// True when some filter of the profile may reject a node for `t`.
inline bool Filtered(const CycleContext& ctx, TaskRef t) {
  for (const auto& f : ctx.profile.filters) {
    if (f->AppliesTo(ctx.state(), t)) return true;
  }
  return false;
}

inline bool PassesFilters(const CycleContext& ctx, TaskRef t, NodeIndex n) {
  for (const auto& f : ctx.profile.filters) {
    if (f->AppliesTo(ctx.state(), t) && !f->Filter(ctx.state(), t, n).empty()) return false;
  }
  return true;
}

// Fits, with Filtered(ctx, t) known.
inline bool FitsKnown(const CycleContext& ctx, TaskRef t, NodeIndex n, bool filtered) {
  const ClusterState& st = ctx.state();
  // Cheapest first: the answer is all that is asked.
  if (!st.Schedulable(n) || !st.FreeHolds(st.Request(t), n)) return false;
  if (st.HasFlavors() && !st.FlavorAdmits(t.job, st.Request(t), n)) return false;
  return !filtered || PassesFilters(ctx, t, n);
}

// "<word> <resource>" for the first resource `need` has more of than `have`
// (free or allocatable), or "" when it fits. Worded once per thread and
// resource: a failure's count asks it of every node.
enum class Shortfall { kInsufficient, kTooSmall };
std::string_view Insufficient(const core::Resources& need, const core::Resources& have,
                              Shortfall word);

}  // namespace dlsched::engine::internal
