#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlsched/engine/cluster_state.h"
#include "dlsched/engine/cycle_context.h"

namespace dlsched::policy {

// The cluster's GPU types, as the heterogeneity-aware policies see them
// (Gavel's admission, KOD2's and F-scheduling's sizers with
// `heterogeneity: aware`): each schedulable node with GPUs, by its
// core::kGpuTypeLabel ("" for none), types in name order.
struct GpuTypes {
  std::vector<std::string> names;
  std::vector<double> capacity;                       // GPUs of each type
  std::vector<std::vector<engine::NodeIndex>> nodes;  // each type's nodes, by index

  static GpuTypes Of(const engine::ClusterState& st);
  // The index of type `name`, or -1.
  int IndexOf(std::string_view name) const;
  // How a type reads in a reason: its name, "untyped GPUs" for "", "no GPU
  // type" for -1.
  std::string Name(int w) const;
};

// The type (an index into `types`) of the node of job `j`'s first placed
// task with GPUs; -1 when none is placed (or its node is not in `types`).
int JobGpuType(const engine::ClusterState& st, const GpuTypes& types, engine::JobIndex j);

// Whether every placed task of job `j` with GPUs is on a node of one type.
bool OnOneGpuType(const engine::ClusterState& st, engine::JobIndex j);

// Places job `j`'s gang (its unplaced PS and Chief replicas and `workers`
// workers, engine::GangSlots) with its tasks that have GPUs on `nodes`:
// all on one node if one takes them (the one with the fewest free GPUs
// that does), else each on the node of `nodes` with the most free GPUs
// that takes it. Then the tasks without GPUs (parameter servers): on a
// node the job already uses if one takes them, else where the profile's
// scorers put them. All or nothing: on failure the session is as before
// and `why` says what did not fit ("its worker does not fit the free room
// of the v100 nodes", `where` naming the nodes).
bool PlaceGangOnNodes(engine::CycleContext& ctx, engine::JobIndex j, int workers,
                      std::span<const engine::NodeIndex> nodes, std::string_view where,
                      std::string* why);

}  // namespace dlsched::policy
