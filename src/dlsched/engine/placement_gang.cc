#include "dlsched/engine/placement.h"

#include <vector>

#include <fmt/format.h>

#include "dlsched/engine/placement_internal.h"
#include "dlsched/engine/profile.h"

// A job's gang: whether it could ever be placed on this cluster
// (TaskNeverFits, NeverFits), and the slots it needs (GangSlots).

namespace dlsched::engine {

using internal::Insufficient;
using internal::Shortfall;

std::optional<std::string> TaskNeverFits(const CycleContext& ctx, TaskRef t) {
  const ClusterState& st = ctx.state();
  const core::Resources& req = st.Request(t);
  NodeFailures failures;
  for (NodeIndex n = 0; n < st.NumNodes(); ++n) {
    if (!st.Present(n)) continue;
    if (const std::string why = StaticFailure(ctx, t, n); !why.empty()) {
      failures.Add(why);
      continue;
    }
    const auto why = Insufficient(req, st.Allocatable(n), Shortfall::kTooSmall);
    if (why.empty()) return std::nullopt;
    failures.Add(why);
  }
  return fmt::format("{} ({}) even on an empty cluster", failures.Summary(t, st.NumPresentNodes()),
                     core::FormatResources(req));
}

namespace {

std::optional<std::string> ComputeNeverFits(CycleContext& ctx, JobIndex j, int workers,
                                            const Packer& packer, bool exact) {
  const ClusterState& st = ctx.state();
  const core::JobSpec& spec = *st.Job(j).spec;
  for (const core::Role role : {core::Role::kPS, core::Role::kChief, core::Role::kWorker}) {
    const int count = role == core::Role::kWorker ? workers : spec.role(role).replicas;
    if (count == 0) continue;
    if (auto why = TaskNeverFits(ctx, TaskRef{j, role, 0})) return why;
  }
  const core::Resources need = spec.Demand(workers);
  const core::Resources& capacity = st.Capacity();
  if (const int r = core::FirstId(need, capacity,
                                  [&](core::ResourceId id) { return need[id] > capacity[id]; });
      r >= 0) {
    const auto id = static_cast<core::ResourceId>(r);
    return fmt::format("its gang of {} worker{} needs {} {}, the cluster has {} in all", workers,
                       workers == 1 ? "" : "s", core::FormatResourceAmount(id, need[id]),
                       core::ResourceName(id), core::FormatResourceAmount(id, capacity[id]));
  }
  if (!exact) return std::nullopt;
  // The packer on the empty cluster: evict every placed task, try, undo.
  // Tracing is off meanwhile: these placements never happen.
  const JobIndex trace_job = ctx.trace_job;
  ctx.trace_job = -1;
  const Session::Mark mark = ctx.session.GetMark();
  for (int p = 0; p < core::kNumJobPhases; ++p) {
    const auto phase = static_cast<core::JobPhase>(p);
    if (phase == core::JobPhase::kSubmitted || core::IsFinal(phase)) continue;
    for (const JobIndex other : st.JobsInPhase(phase)) ctx.session.EvictJob(other);
  }
  std::string why;
  const bool ok = packer.PlaceGang(ctx, j, workers, &why);
  ctx.session.RollbackTo(mark);
  ctx.trace_job = trace_job;
  if (ok) return std::nullopt;
  return why + " even on an empty cluster";
}

// The shape of job `j`'s gang of `workers`, or nullopt when a role has
// node constraints (the answer then depends on the job).
std::optional<Memos::GangShape> ShapeOf(const ClusterState& st, JobIndex j, int workers,
                                        bool exact) {
  const JobState& js = st.Job(j);
  Memos::GangShape shape;
  shape.exact = exact;
  for (int r = 0; r < core::kNumRoles; ++r) {
    const auto role = static_cast<core::Role>(r);
    const core::RoleSpec& spec = js.spec->role(role);
    shape.count[r] = role == core::Role::kWorker ? workers : spec.replicas;
    if (shape.count[r] == 0) continue;
    if (!spec.constraints.Empty()) return std::nullopt;
    shape.request[r] = spec.resources;
    shape.scoring[r] = js.scoring_request[r];
  }
  return shape;
}

}  // namespace

std::optional<std::string> NeverFits(CycleContext& ctx, JobIndex j, int workers,
                                     const Packer& packer, bool exact) {
  // Nothing placed changes the answer (the exact check evicts every job's
  // tasks), so it is remembered until a node changes, or, when exact, a
  // foreign or releasing pod comes or goes.
  const ClusterState& st = ctx.state();
  // More than its queue could ever hold, whatever the other queues use.
  if (const int q = st.Job(j).queue; q >= 0) {
    if (auto why = st.Quotas().NeverHolds(q, st.Job(j).spec->Demand(workers))) return why;
  }
  const Memos::NeverFitsMemo& m = ctx.memos.Job(j).never_fits;
  // A pod released and gone since (the simulator's completions) leaves the
  // holds as they were: none.
  if (m.node_epoch == st.NodeEpoch() && m.workers == workers && m.exact == exact &&
      (!exact || m.hold_epoch == st.HoldEpoch() || (m.no_holds && !st.HasHolds()))) {
    return m.never;
  }
  // Gangs of one shape share a yes (a no is worded for its job).
  std::optional<Memos::GangShape> shape = ShapeOf(st, j, workers, exact);
  std::optional<std::string> never;
  if (!shape || !ctx.memos.FitsEmpty(st, *shape)) {
    never = ComputeNeverFits(ctx, j, workers, packer, exact);
    if (shape && !never) ctx.memos.NoteFitsEmpty(st, *shape);
  }
  // ComputeNeverFits may have grown the store: its own reference.
  ctx.memos.Job(j).never_fits = {st.NodeEpoch(), st.HoldEpoch(), workers,
                                 exact,          !st.HasHolds(), never};
  return never;
}

void GangSlots(const ClusterState& st, JobIndex j, int workers, std::vector<TaskRef>* out) {
  out->clear();
  const JobState& js = st.Job(j);
  for (int i = 0; i < js.NumPs(); ++i) {
    if (js.NodeOf(core::Role::kPS, i) == kNoNode) out->push_back({j, core::Role::kPS, i});
  }
  for (int i = 0; i < js.NumChief(); ++i) {
    if (js.NodeOf(core::Role::kChief, i) == kNoNode) out->push_back({j, core::Role::kChief, i});
  }
  const int max_w = js.spec->role(core::Role::kWorker).max_replicas;
  int missing = workers - js.placed_workers;
  for (int i = 0; i < max_w && missing > 0; ++i) {
    if (js.NodeOf(core::Role::kWorker, i) == kNoNode) {
      out->push_back({j, core::Role::kWorker, i});
      --missing;
    }
  }
}

}  // namespace dlsched::engine
