#pragma once

#include <span>
#include <string>
#include <vector>

#include "dlsched/engine/extension_points.h"
#include "dlsched/engine/session.h"

namespace dlsched::policy {

// Places a gang one task at a time (PS, Chief, then workers), each on the
// node the profile's scorers like best, as kube-scheduler would place the
// pods one after another; rolls the whole gang back if any task fails.
class TaskByTaskPacker final : public engine::Packer {
 public:
  bool PlaceGang(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                 std::string* reason) const override;
};

// Quick cluster-wide check before any node is visited: what the gang still
// needs (its unplaced slots) must fit in its queue's quota
// (ClusterState::QuotaRefusal) and in the cluster's free resources. Every
// packer asks it first. Fills `reason` on failure.
bool GangFitsInFreeTotal(const engine::ClusterState& state, engine::JobIndex j, int workers,
                         std::string* reason);

// The next check, still before any scoring: for each role of the gang's
// unplaced `slots` (grouped by role, as engine::GangSlots lists them), the
// schedulable nodes' free resources must hold that many tasks of the role
// (a node holds min over resources of free / request). A necessary
// condition only (filters and the other roles are not counted), so a gang
// it refuses is one the packer would fail to place; it costs one pass over
// the nodes with enough free GPUs, where a failed placement scores them all
// for several tasks. Fills `reason` on failure, and `first_fits_nowhere`
// when the first role fails with no node holding even one of its tasks
// (then TaskByTaskPacker words the reason per node, as a failed placement
// of that task would).
bool GangFitsInNodes(const engine::ClusterState& state, std::span<const engine::TaskRef> slots,
                     std::string* reason, bool* first_fits_nowhere = nullptr);

// Records where each task of job `j` placed since `mark` went, with `note`,
// for `dlsched explain` (a packer that places without PlaceTaskByScore).
void TracePlacedSince(engine::CycleContext& ctx, engine::JobIndex j, engine::Session::Mark mark,
                      const char* note);

}  // namespace dlsched::policy
